"""Whole-file writes (temporary file, fsync, rename) and YAML text (``yamldoc`` reads it).

Every YAML/JSON document the engine writes goes through ``write_text_atomic``, so a
reader never sees half a file and a crash never leaves one behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml


def current_umask() -> int:
    """This process's umask, read without changing it (``/proc/self/status`` on Linux; the
    set-and-restore dance elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets here: what ``open()`` would give (0644 under umask 022).
    Temporary files are made 0600 by ``mkstemp``; a document replaced through one must not
    end up readable by its owner only."""
    return 0o666 & ~current_umask()


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path``, whole or not at all (a temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# libyaml when present (several times faster); the pure-Python class behaves the same.
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Block style, multi-line strings as literal blocks, keys in model order."""


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        # Literal blocks cannot hold trailing spaces on lines or some control characters;
        # PyYAML falls back to quoted style by itself when needed.
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(data: Any) -> str:
    """Block-style YAML. Plain data (what the models dump) goes through ``yamlfast`` (the same
    text, several times faster); anything else through PyYAML."""
    from uh_core.yamlfast import dump

    fast = dump(data)
    return fast if fast is not None else dump_yaml_pyyaml(data)


def dump_yaml_pyyaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def write_yaml(path: Path, data: Any) -> None:
    write_text_atomic(path, dump_yaml(data))


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
