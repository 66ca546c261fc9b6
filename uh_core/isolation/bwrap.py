"""OS isolation with bubblewrap: the agent sees the machine read-only, a private ``/tmp``
and its own PID namespace, and writes only where it was given a writable path.

``wrap_argv`` builds the ``bwrap`` command line; ``resolve_mode`` decides whether it is used
(``auto`` falls back to unconfined, with a note saying why, when bubblewrap cannot run here).
The network is shared (agents call their model's API) and the environment passes through.

What the sandbox guarantees, checked by ``tests/isolation``: writes outside the writable
paths fail (``EROFS``); ``/tmp`` is private; no process started inside outlives the command
(setsid and double-forked daemons included) nor a SIGKILL of bwrap's group, because the
PID namespace dies with its init. Capabilities are dropped (``--cap-drop ALL``): run as root,
bwrap would otherwise keep them and the agent could remount a read-only bind read-write.
"""

from __future__ import annotations

import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from uh_core.errors import IsolationError, ProcError
from uh_core.isolation.command import command_binds
from uh_core.proc import run_capture

IsolationMode = Literal["auto", "bwrap", "none"]
PROBE_TIMEOUT_S = 10.0
_PROBE_ARGS = (
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-pid", "--die-with-parent", "--", "/bin/true",
)  # fmt: skip
_FIX = (
    "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
    "kernel.apparmor_restrict_unprivileged_userns=0), or use --isolation auto or none"
)


@dataclass(frozen=True)
class Resolved:
    """The isolation a run gets: ``mode`` is what is used, ``note`` says why it is unconfined."""

    mode: Literal["bwrap", "none"]
    requested: IsolationMode
    note: str | None


@functools.cache
def find_bwrap() -> str | None:
    """The bwrap binary on PATH, else ``/usr/bin/bwrap`` when it exists, else None."""
    found = shutil.which("bwrap")
    if found:
        return found
    return "/usr/bin/bwrap" if Path("/usr/bin/bwrap").is_file() else None


def probe_bwrap(binary: str | None) -> tuple[bool, str]:
    """Start a throwaway sandbox with ``binary``: (works, why not) — uncached."""
    if binary is None:
        return False, "bubblewrap (bwrap) is not installed"
    try:
        done = run_capture([binary, *_PROBE_ARGS], cwd=Path("/"), timeout=PROBE_TIMEOUT_S)
    except ProcError as exc:
        return False, f"{binary} cannot be started: {exc.message}"
    if done.timed_out:
        return False, f"{binary} did not start a sandbox within {PROBE_TIMEOUT_S:g} s"
    if done.returncode != 0:
        first = _first_line(done.stderr) or "no message"
        return False, f"{binary} cannot create namespaces here (exit {done.returncode}): {first}"
    return True, f"{binary} works"


def _first_line(data: bytes) -> str:
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


@functools.cache
def bwrap_available() -> tuple[bool, str]:
    """Whether bubblewrap can sandbox a process here, probed once per process; the reason
    says why not (binary missing, namespaces refused: bwrap's first line of stderr)."""
    return probe_bwrap(find_bwrap())


def resolve_mode(requested: IsolationMode) -> Resolved:
    """The isolation to use for ``requested``; ``bwrap`` when it cannot work is an error."""
    if requested not in get_args(IsolationMode):
        raise IsolationError(f"unknown isolation mode {requested!r}", fix="use auto, bwrap or none")
    if requested == "none":
        return Resolved("none", requested, "unconfined: --isolation none")
    ok, reason = bwrap_available()
    if ok:
        return Resolved("bwrap", requested, None)
    if requested == "bwrap":
        raise IsolationError(f"--isolation bwrap: bubblewrap cannot run here ({reason})", fix=_FIX)
    return Resolved("none", requested, f"unconfined: bubblewrap unavailable here ({reason})")


def _within(path: Path, roots: list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _ensure_dir(path: Path) -> None:
    if path.exists():
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IsolationError(
            f"cannot create the sandbox's writable path {path}: {exc.strerror}",
            fix="choose a writable path this user can create",
        ) from None


# Credentials under the operator's home that nothing confined needs to read: hidden (an
# empty folder, or /dev/null for a file) from agents and checks alike.
SECRETS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".config/gcloud",
    ".azure", ".kube", ".docker/config.json", ".pypirc", ".npmrc", ".vault-token",
    ".config/hub", ".terraform.d/credentials.tfrc.json",
)  # fmt: skip
# Agents' own homes (their API keys): hidden from the judge's checks, never from the agent.
AGENT_HOMES: tuple[str, ...] = (
    ".codex", ".claude", ".claude.json", ".pi", ".omp", ".hermes", ".aider", ".config/aider",
)  # fmt: skip


def secret_paths(*, checks: bool) -> list[Path]:
    """The credential paths of this user's home that exist (``checks``: agents' homes too)."""
    home = Path.home()
    names = (*SECRETS, *AGENT_HOMES) if checks else SECRETS
    return [home / name for name in names if os.path.lexists(home / name)]


def _hide_args(hide: list[Path]) -> list[str]:
    line: list[str] = []
    for path in dict.fromkeys(hide):
        if not os.path.lexists(path):
            continue
        real = path.resolve()
        if real.is_dir():
            line += ["--tmpfs", str(real)]
        elif real.exists():
            line += ["--ro-bind", "/dev/null", str(real)]
    return line


def wrap_argv(
    argv: list[str],
    *,
    writable: list[Path],
    readable: list[Path],
    cwd: Path,
    network: bool = True,
    hide: list[Path] | None = None,
) -> list[str]:
    """``argv`` run under bwrap: ``/`` read-only, a private ``/tmp``, ``writable`` bound
    read-write (created when missing), ``readable`` paths visible read-only, own PID
    namespace and session, no capabilities; the environment shared, and the network too
    unless ``network`` is False (then only a loopback of its own: the judge's checks).

    A readable path is bound only where it would otherwise be hidden (under ``/tmp``) or
    writable (inside a writable path); one that does not exist is skipped. Binds go
    parents before children, so the most specific path decides (a sandbox inside a
    read-only repository stays writable). Symlinks are resolved first. What ``argv``'s command
    resolves to under ``/tmp`` is readable too (``command.command_binds``: a virtualenv, an
    npm package, a script's folder; one that cannot be followed is refused). ``hide`` paths
    (credentials: ``secret_paths``) are covered by an empty folder or ``/dev/null``, after
    every bind.
    """
    if not argv:
        raise IsolationError("no command to run in the sandbox", fix="pass the agent's argv")
    # the command itself (on PATH, its links, its script's interpreter) when /tmp would hide it
    readable = [*readable, *command_binds(argv)]
    for path in writable:
        _ensure_dir(path)
    tmp = Path("/tmp").resolve()
    rw = list(dict.fromkeys(path.resolve() for path in writable))
    ro = [
        path
        for path in dict.fromkeys(p.resolve() for p in readable if p.exists())
        if path not in rw and ((path.is_relative_to(tmp) and path != tmp) or _within(path, rw))
    ]
    binds = [(path, "--ro-bind") for path in ro] + [(path, "--bind") for path in rw]
    binds.sort(key=lambda bind: len(bind[0].parts))  # stable: at one depth, ro before rw
    where = cwd.resolve()
    if where.is_relative_to(tmp) and not _within(where, [path for path, _ in binds]):
        raise IsolationError(
            f"the working directory {where} would not exist in the sandbox (its /tmp is private)",
            fix="pass it (or a parent) as a writable or readable path",
        )
    line = [find_bwrap() or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    line += ["--tmpfs", str(tmp)]
    for path, flag in binds:
        line += [flag, str(path), str(path)]
    line += _hide_args(hide or [])  # last: a bind of a parent must not show them again
    line += ["--unshare-pid", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if not network:
        line.append("--unshare-net")
    return [*line, "--chdir", str(where), "--", *argv]
