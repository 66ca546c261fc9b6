"""Test infrastructure is part of the judge: the agent may not change how pytest runs.

An agent can loosen the gate without touching one test: a root ``conftest.py`` whose
``pytest_runtest_makereport`` hook wrapper turns failures into passes, a ``pytest.ini`` with
``addopts = -p tests.plug``, a ``sitecustomize.py`` or a ``*.pth`` file that patches pytest at
start-up. So any change (created, modified, deleted, type changed) between the base commit
and the judged tree to one of these, at any folder depth, is refused, naming the file:

- ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py`` and any ``*.pth`` file;
- anything in a ``*.dist-info`` or ``*.egg-info`` folder: a distribution's entry points,
  which load a ``pytest11`` plugin into any pytest that finds them on ``sys.path``;
- the files the judge's commands run (``uh_core.judge.commandfiles``: a check's script, the
  ``Makefile`` of ``make test``), and a module created where their Python imports from
  first under the name of one the judge imports (``pluggy.py`` beside ``python -m pytest``);
- pytest's own configuration files: ``pytest.ini``, ``.pytest.ini``, ``tox.ini``,
  ``pytest.toml``, ``.pytest.toml`` (the whole file);
- ``setup.cfg``: only its ``[tool:pytest]`` section (its keys and values; other sections are
  free);
- ``pyproject.toml``: only ``[tool.pytest]`` (which holds ``[tool.pytest.ini_options]``), so a
  new dependency is not refused.

A side that does not parse holds no settings (pytest itself refuses such a file), but a file
that parsed at the base and no longer does is a change: its settings cannot be judged. A
``setup.cfg`` or ``pyproject.toml`` that is a symlink (or submodule) on either side is
judged as a whole file, since pytest follows the link to content this check cannot see.

The caller's ``allow`` globs (``uh_core.diff.globs`` syntax) permit paths, e.g. a mission
that asks for a fixture in ``tests/conftest.py``. Git runs in the operator's repository,
which holds the base commit's objects and the judged tree.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from uh_core.diff.globs import compile_globs
from uh_core.errors import GitError
from uh_core.git import git, git_run
from uh_core.judge.shadowing import shadowed

JUDGE_FILE_CODE = "agent_changed_the_judge"

# Judged whole, by their last path segment.
JUDGE_NAMES = frozenset(
    {
        "conftest.py",
        "sitecustomize.py",
        "usercustomize.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "pytest.toml",
        ".pytest.toml",
    }
)
JUDGE_SUFFIXES = (".pth",)
# A distribution's metadata folder: its entry points load plugins (``pytest11``) into every
# pytest whose ``sys.path`` holds the folder, as ``-p`` would.
_METADATA = re.compile(r"(?:^|/)[^/]+\.(?:dist-info|egg-info)(?:/|$)")
# Judged by their test-runner section only.
SETUP_CFG = "setup.cfg"
PYPROJECT = "pyproject.toml"
SETUP_CFG_SECTION = "tool:pytest"

NO_LONGER_PARSES = "no longer parses"
_STATUS = {"A": "created", "M": "modified", "D": "deleted", "T": "type changed"}
_REGULAR_MODES = frozenset({"100644", "100755"})
_PLAIN_GLOB = re.compile(r"[A-Za-z0-9_./@+-]+")
_GLOB_SPECIAL = re.compile(r"([*?\[\]{}\\,])")


@dataclass(frozen=True)
class JudgeChange:
    """One judge file the agent changed: its repository-relative path and how."""

    path: str
    how: str  # "created" | "modified" | "deleted" | "type changed" | "test-runner section
    # added" | "test-runner section removed" | "test-runner section changed" | "no longer parses"

    def message(self) -> str:
        permit = f"(permit it with judge_allow: [{allow_entry(self.path)}])"
        if self.how == NO_LONGER_PARSES:
            return (
                f"{self.path} no longer parses: the test runner's settings cannot be judged "
                f"{permit}"
            )
        return f"{self.path} {self.how}: test infrastructure is part of the judge {permit}"


def allow_entry(path: str) -> str:
    """``path`` as an allow glob matching exactly it, quoted when YAML needs it."""
    glob = _GLOB_SPECIAL.sub(r"\\\1", path)
    return glob if _PLAIN_GLOB.fullmatch(glob) else json.dumps(glob, ensure_ascii=False)


def _basename(path: str) -> str:
    return path[path.rfind("/") + 1 :]


def is_judge_file(path: str) -> bool:
    """Whether ``path`` is judged whole (any folder depth)."""
    name = _basename(path)
    if name in JUDGE_NAMES or name.endswith(JUDGE_SUFFIXES):
        return True
    return _METADATA.search(path) is not None


def is_judge_config(path: str) -> bool:
    """Whether ``path`` is judged by its test-runner section (any folder depth)."""
    return _basename(path) in (SETUP_CFG, PYPROJECT)


@dataclass(frozen=True)
class _Entry:
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    status: str
    path: str


def _changed(repo_root: Path, base_commit: str, tree: str) -> list[_Entry]:
    for rev in (base_commit, tree):
        if not rev or rev.startswith("-"):
            raise GitError(f"invalid revision {rev!r}", fix="pass a commit or tree id")
    out = git(
        repo_root, "diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", "--raw",
        base_commit, tree,
    )  # fmt: skip
    fields = out.split("\0")
    entries: list[_Entry] = []
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        if not meta.startswith(":"):
            raise GitError(f"unexpected git diff-tree output {meta!r} in {repo_root}")
        old_mode, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
        entries.append(_Entry(old_mode, new_mode, old_blob, new_blob, status[:1], path))
    return entries


def _blob(repo_root: Path, mode: str, blob: str) -> bytes:
    """A side's bytes; an absent side is empty."""
    if mode == "000000" or not blob.strip("0"):
        return b""
    done = git_run(repo_root, "cat-file", "blob", blob, timeout=60)
    if done.returncode != 0 or done.timed_out:
        raise GitError(f"git cat-file blob {blob} failed in {repo_root}")
    return done.stdout


class _Broken:
    """A side that does not parse."""


_BROKEN = _Broken()
_Settings = object  # the section's value (None: no section) or _BROKEN


def _setup_cfg_section(data: bytes) -> _Settings:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    try:
        parser.read_string(data.decode("utf-8"))
    except (UnicodeDecodeError, configparser.Error):
        return _BROKEN
    if not parser.has_section(SETUP_CFG_SECTION):
        return None
    return dict(parser.items(SETUP_CFG_SECTION, raw=True))


def _pyproject_section(data: bytes) -> _Settings:
    try:
        parsed = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return _BROKEN
    tool = parsed.get("tool", {})
    return tool.get("pytest") if isinstance(tool, dict) else None


def _section_change(repo_root: Path, entry: _Entry) -> str | None:
    """How the test-runner section of a setup.cfg or pyproject.toml changed, or None."""
    read = _pyproject_section if _basename(entry.path) == PYPROJECT else _setup_cfg_section
    before = read(_blob(repo_root, entry.old_mode, entry.old_blob))
    after = read(_blob(repo_root, entry.new_mode, entry.new_blob))
    if after is _BROKEN:
        return None if before is _BROKEN else NO_LONGER_PARSES
    if before is _BROKEN:
        before = None
    if before == after:
        return None
    if before is None:
        return "test-runner section added"
    if after is None:
        return "test-runner section removed"
    return "test-runner section changed"


def _regular(mode: str) -> bool:
    return mode in _REGULAR_MODES or mode == "000000"


def judge_changes(
    repo_root: Path,
    base_commit: str,
    tree: str,
    allow: tuple[str, ...] = (),
    named: frozenset[str] = frozenset(),
    roots: tuple[str, ...] = (),
) -> list[JudgeChange]:
    """Every judge file that differs between ``base_commit`` and the tree object ``tree``
    (both in ``repo_root``'s object store) and that no ``allow`` glob permits, by path.
    ``named``: files the judge's commands run (``command_files``), judged whole; ``roots``:
    folders their Python imports from first, where a created module must not take the name
    of one the judge imports (``shadowing.shadowed``)."""
    allowed = compile_globs(tuple(allow))
    found: list[JudgeChange] = []
    for entry in _changed(repo_root, base_commit, tree):
        module = shadowed(entry.path, roots) if entry.status == "A" else None
        whole = is_judge_file(entry.path) or entry.path in named or module is not None
        config = not whole and is_judge_config(entry.path)
        if not (whole or config) or allowed.match(entry.path):
            continue
        how = _STATUS.get(entry.status, "modified")
        if module is not None:
            how = f"created, in place of the module {module!r} the judge imports"
        if config and _regular(entry.old_mode) and _regular(entry.new_mode):
            section = _section_change(repo_root, entry)
            if section is None:
                continue
            how = section
        found.append(JudgeChange(entry.path, how))
    return sorted(found, key=lambda change: change.path)
