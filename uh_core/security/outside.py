"""The operator's git configuration outside the repository, for the tamper snapshot.

The engine's own git reads none of it (``uh_core.git``), but the operator's git does: a
``filter.<x>.smudge`` and a ``core.attributesFile`` appended to ``~/.gitconfig`` by code an
agent or the gate ran would execute the next time the operator checks out. So these files
are compared before and after each agent and its gate like the repository's own:

- ``~/.gitconfig``;
- everything under ``$XDG_CONFIG_HOME/git/`` (default ``~/.config/git/``: ``config``,
  ``attributes``, ``ignore``, and anything else planted there), or the folder itself when
  it is a link or a file;
- the file ``$GIT_CONFIG_GLOBAL`` names, when the operator set it;
- the system files: ``$GIT_CONFIG_SYSTEM`` (default ``/etc/gitconfig``) and
  ``/etc/gitattributes``.

Fingerprints never follow a link (``uh_core.security.files``). Names under ``HOME`` are shown
as ``~/…``; others as absolute paths. Files these include (``include.path``) are not
followed: a new include is a change of the including file, but an edit of a file already
included is not seen.
"""

from __future__ import annotations

import os
from pathlib import Path

from uh_core.security.files import ABSENT, DIR, fingerprint, walk

KIND = "global git config"
SYSTEM_FILES = ("/etc/gitconfig", "/etc/gitattributes")


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def display(path: Path) -> str:
    """``~/…`` under the home folder, else the absolute path."""
    home = str(_home()).rstrip("/")
    text = str(path)
    if home and text.startswith(home + "/"):
        return "~/" + text[len(home) + 1 :]
    return text


def xdg_git() -> Path:
    """``$XDG_CONFIG_HOME/git`` (an absolute ``XDG_CONFIG_HOME`` only, as git reads it)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else _home() / ".config"
    return base / "git"


def outside_files() -> list[Path]:
    """The single files compared (the XDG folder is walked on its own)."""
    files = [_home() / ".gitconfig"]
    for variable in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        named = os.environ.get(variable, "")
        if named and os.path.isabs(named) and named != os.devnull:
            files.append(Path(named))
    files += [Path(name) for name in SYSTEM_FILES]
    return list(dict.fromkeys(files))


def snapshot_outside() -> dict[str, str]:
    """Display name → fingerprint of every path above (``absent`` ones included)."""
    found = {display(path): fingerprint(path) for path in outside_files()}
    folder = xdg_git()
    top = fingerprint(folder)
    if top == DIR:
        found.update(walk(folder, display(folder)))
    elif top != ABSENT:
        found[display(folder)] = top
    return found
