"""User key remapping: every binding has an id; a keymap maps ids to keys.

From ``$UH_KEYMAP`` (``id=key,id=key``) and the file ``$UH_KEYMAP_FILE`` or
``${XDG_CONFIG_HOME:-~/.config}/uh/keymap.yaml`` (a mapping ``id: key``); the variable wins.
Applied with Textual's ``App.set_keymap``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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
