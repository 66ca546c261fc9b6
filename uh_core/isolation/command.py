"""What a confined command resolves to that its private ``/tmp`` would hide.

An agent installed under ``/tmp`` (a virtualenv, an npm prefix, a script) is invisible inside
bubblewrap, whose ``/tmp`` is an empty tmpfs: bwrap then fails with ``execvp: No such file or
directory`` and the agent never starts. ``command_binds`` follows the command the way the
kernel will: ``argv[0]`` on ``PATH`` (and the first command of ``sh -c LINE``), every symlink
on the way (an npm CLI's link into its package), and a script's ``#!`` interpreter
(``/usr/bin/env NAME`` looked up on ``PATH``), and
returns, for each path under ``/tmp``, the folder to bind read-only:

- inside a virtualenv (an ancestor holds ``pyvenv.cfg``): the virtualenv;
- inside ``node_modules``: the outermost ``node_modules`` folder (the package and the
  dependencies npm hoisted beside it);
- in a ``bin`` folder: its parent (an install prefix: ``lib/`` sits beside ``bin/``);
- otherwise the file's folder, or the file alone when that folder is ``/tmp`` itself.

A command under ``/tmp`` that cannot be followed (a dangling link, a loop) is refused before
anything starts (``IsolationError`` naming the path and the fix).
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
from pathlib import Path

from uh_core.errors import IsolationError

MAX_HOPS = 8  # interpreters of interpreters; more is a loop
_SHEBANG_BYTES = 256
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})

FIX = (
    "install the agent outside /tmp (a virtualenv or npm prefix under your home, say), or name "
    "its folder in isolation_readable (harness.config.yaml or the adapter's manifest)"
)


def _under(path: Path, tmp: Path) -> bool:
    return path != tmp and path.is_relative_to(tmp)


def bind_root(path: Path, tmp: Path) -> Path:
    """The folder (or file) to bind so ``path``, under ``tmp``, works as installed."""
    parents = [p for p in path.parents if _under(p, tmp)]
    for parent in parents:
        if (parent / "pyvenv.cfg").is_file():
            return parent
    modules = [p for p in parents if p.name == "node_modules"]
    if modules:
        return modules[-1]  # the outermost
    folder = path.parent
    if folder.name == "bin" and _under(folder.parent, tmp):
        return folder.parent
    return folder if _under(folder, tmp) else path


def interpreter(path: Path, path_env: str | None = None) -> str | None:
    """The program a ``#!`` script is run by (``env NAME`` resolved on ``path_env``)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return names[0] if names else None
    return words[0]


def _resolve(word: str, path_env: str | None) -> Path | None:
    """``word`` as exec would find it; a name found on ``PATH`` only as an entry that is not
    an executable file (a dangling link, say) is returned as that entry."""
    if "/" in word:
        return Path(word) if word.startswith("/") else None  # relative: the cwd, bound already
    found = shutil.which(word, path=path_env)
    if found:
        return Path(found)
    for folder in (path_env or "").split(os.pathsep):
        entry = Path(folder or ".") / word
        if folder.startswith("/") and os.path.lexists(entry):
            return entry
    return None


def _links(path: Path) -> list[Path]:
    """``path`` and every symlink target on the way to the file, each made absolute."""
    chain = [path]
    current = path
    for _ in range(40):
        if not current.is_symlink():
            return chain
        target = Path(os.readlink(current))
        current = target if target.is_absolute() else current.parent / target
        chain.append(Path(os.path.normpath(current)))
    return chain


def programs(argv: list[str]) -> list[str]:
    """The programs ``argv`` starts: its first word, and for ``sh -c SCRIPT`` (how a command
    runtime runs its line) the script's first command too."""
    if not argv:
        return []
    found = [argv[0]]
    if Path(argv[0]).name in _SHELLS and len(argv) > 2 and argv[1] == "-c":
        try:
            words = shlex.split(argv[2])
        except ValueError:
            return found
        words = list(itertools.dropwhile(lambda w: "=" in w and not w.startswith("="), words))
        if words and words[0] == "exec":
            words = words[1:]
        if words:
            found.append(words[0])
    return found


def command_binds(argv: list[str], path_env: str | None = None) -> list[Path]:
    """Folders (or files) under ``/tmp`` the command in ``argv`` needs, to bind read-only."""
    if path_env is None:
        path_env = os.environ.get("PATH")
    found: list[Path] = []
    for program in programs(argv):
        found += _follow(program, path_env)
    return list(dict.fromkeys(found))


def _follow(program: str, path_env: str | None) -> list[Path]:
    tmp = Path("/tmp").resolve()
    found: list[Path] = []
    word: str | None = program
    for _ in range(MAX_HOPS):
        if word is None:
            break
        path = _resolve(word, path_env)
        if path is None:
            break  # not found: the agent's own check (or its exit) says so
        chain = _links(path)
        hidden = [p for p in chain if _under(p, tmp)]
        real = path.resolve()
        if hidden and not real.is_file():
            raise IsolationError(
                f"the agent's command {word} is {path}, under /tmp (private inside the "
                f"sandbox), and does not lead to a file ({real} does not exist or is not one)",
                fix=FIX,
            )
        found += [bind_root(p, tmp) for p in hidden]
        if _under(real, tmp):
            found.append(bind_root(real, tmp))
        word = interpreter(real, path_env)
    return found
