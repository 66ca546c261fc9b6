"""User key remapping: every binding has an id; a keymap maps ids to keys.

From ``$UH_KEYMAP`` (``id=key,id=key``) and the file ``$UH_KEYMAP_FILE`` or
``${XDG_CONFIG_HOME:-~/.config}/uh/keymap.yaml`` (a mapping ``id: key``); the variable wins.
Applied with Textual's ``App.set_keymap``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

KEYMAP_HELP = (
    "Remap a key by its binding id: UH_KEYMAP='mission.verify=V,app.quit=ctrl+q', "
    "or ~/.config/uh/keymap.yaml with lines like  mission.verify: V"
)


def keymap_file(env: Mapping[str, str]) -> Path:
    explicit = env.get("UH_KEYMAP_FILE")
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "uh" / "keymap.yaml"


def load_keymap(env: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """(id → key, problems): a bad keymap is reported, never fatal."""
    env = os.environ if env is None else env
    keymap: dict[str, str] = {}
    problems: list[str] = []
    path = keymap_file(env)
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: not readable YAML ({exc.__class__.__name__})")
            data = {}
        if isinstance(data, dict):
            keymap.update({str(k): str(v) for k, v in data.items() if v})
        else:
            problems.append(f"{path}: expected a mapping of binding id to key")
    for item in filter(None, (part.strip() for part in env.get("UH_KEYMAP", "").split(","))):
        binding_id, sep, key = item.partition("=")
        if not sep or not binding_id.strip() or not key.strip():
            problems.append(f"UH_KEYMAP: {item!r} is not id=key")
            continue
        keymap[binding_id.strip()] = key.strip()
    return keymap, problems


def unknown_ids(keymap: Mapping[str, str], known: Iterable[str]) -> list[str]:
    """One line per id in ``keymap`` that no binding has, naming the known ids close to it
    (a misspelled id would otherwise be silently ignored)."""
    ids = sorted(set(known))
    problems = []
    for binding_id in keymap:
        if binding_id in ids:
            continue
        close = difflib.get_close_matches(binding_id, ids, n=3, cutoff=0.8)
        if not close:  # same group, e.g. "mission.*"
            group = binding_id.partition(".")[0] + "."
            close = [i for i in ids if i.startswith(group)][:6]
        hint = f" — did you mean {' or '.join(close)}?" if close else " (? lists every id)"
        problems.append(f"keymap: unknown binding id {binding_id!r}{hint}")
    return problems
