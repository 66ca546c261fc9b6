"""A mission delivered: its ``mission.yaml`` set to ``status: done`` in a tree about to be
committed — by the harness on ``harness/<id>`` (the green commit) and by ``promote`` on the
current branch (a whole source promoted). One line changed, comments and layout kept.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from uh_core.errors import HarnessError
from uh_core.fileio import dump_yaml
from uh_core.git import git
from uh_core.yamldoc import parse_yaml

_STATUS_LINE = re.compile(
    r"^(?P<key>status[ \t]*:[ \t]*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^#\s][^#\n]*?)?"
    r"(?P<rest>[ \t]+#[^\n]*)?[ \t]*$"
)


def done_text(text: str) -> str:
    """``text`` of a mission.yaml with ``status: done``: one line changed (comments and
    layout kept) when that is provably the same document; else the document re-dumped."""
    doc = parse_yaml(text)
    if not isinstance(doc.data, dict):
        raise HarnessError("mission.yaml is not a mapping")
    wanted = {**doc.data, "status": "done"}
    position = doc.positions.get(("status",))
    lines = text.splitlines(keepends=True)
    if position is not None and position.column == 1:
        index = position.line - 1
        ending = "\n" if lines[index].endswith("\n") else ""
        matched = _STATUS_LINE.match(lines[index].rstrip("\r\n"))
        if matched:
            lines[index] = f"{matched['key']}done{matched['rest'] or ''}{ending}"
        candidate = "".join(lines)
    elif position is None:
        candidate = text + ("" if not text or text.endswith("\n") else "\n") + "status: done\n"
    else:
        candidate = ""
    try:
        if candidate and parse_yaml(candidate).data == wanted:
            return candidate
    except Exception:  # any doubt: re-dump below
        pass
    return dump_yaml(wanted)


def done_tree(root: Path, tree: str, mission_id: str) -> tuple[str, bool]:
    """``tree`` with the mission's ``mission.yaml`` set to ``status: done`` (objects only,
    through a temporary index), and whether the tree holds that file at all."""
    path = f".harness/missions/{mission_id}/mission.yaml"
    with tempfile.TemporaryDirectory(prefix="uh-done-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(root, "read-tree", tree, env=env)
        listed = git(root, "ls-files", "-s", "--", path, env=env).split()
        if not listed:
            return tree, False
        mode, blob = listed[0], listed[1]
        text = git(root, "cat-file", "blob", blob)
        done = git(root, "hash-object", "-w", "--stdin", stdin=done_text(text).encode()).strip()
        git(root, "update-index", "--cacheinfo", f"{mode},{done},{path}", env=env)
        return git(root, "write-tree", env=env).strip(), True
