"""Ray's token authentication for uh's cluster: only nodes and drivers holding the token
join it or submit to it (Ray ≥ 2.52, ``RAY_AUTH_MODE=token``).

Where the token comes from, in Ray's own order: ``RAY_AUTH_TOKEN`` (the token itself, in
the environment), ``RAY_AUTH_TOKEN_PATH`` (a file the operator names), else uh's own file
``<state home>/ray/auth_token`` (``$UH_STATE_DIR`` or ``~/.local/state/uh``), made by
``uh-core worker --head`` with 256 random bits, in a folder of mode 0700, itself 0600. uh
never writes the token anywhere else and never prints it; a token file others can read is
refused. Every node and the head's driver get ``RAY_AUTH_MODE=token`` and the file's path
(``RAY_AUTH_TOKEN_PATH``), never the token itself, unless the operator gave it inline.

Agents and checks never receive these variables: every name here is ``RAY_AUTH_*``, which
the agents' environment allow-list drops with ``RAY_ADDRESS`` (``AUTH_VARIABLES``). The file
itself is readable by the worker's user: an agent run unconfined there can read it
(docs/scale.md says what that leaves; confinement hides the folder, ``token_folder``).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from uh_core.errors import ExecutorError
from uh_core.layout import state_home

MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
AUTH_VARIABLES = (MODE, TOKEN, TOKEN_PATH, "RAY_ADDRESS")  # never in an agent's or check's env
_FIX = (
    "copy the head's token file there (chmod 600), or set RAY_AUTH_TOKEN_PATH to it; "
    "`uh-core worker --head` makes one"
)


def token_folder() -> Path:
    """uh's folder for the token (hidden from confined agents and checks)."""
    return state_home() / "ray"


def token_file() -> Path:
    """The file the token is read from: ``$RAY_AUTH_TOKEN_PATH``, else uh's own."""
    given = os.environ.get(TOKEN_PATH)
    return Path(given).expanduser() if given else token_folder() / "auth_token"


def _check_private(path: Path) -> None:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ExecutorError(
            f"the Ray cluster's token file {path} does not exist", fix=_FIX
        ) from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ExecutorError(
            f"the Ray cluster's token file {path} can be read by others "
            f"(mode {stat.S_IMODE(info.st_mode):o})",
            fix=f"chmod 600 {path}",
        )
    if not path.read_text(encoding="utf-8").strip():
        raise ExecutorError(f"the Ray cluster's token file {path} is empty", fix=_FIX)


def make_token(path: Path | None = None) -> Path:
    """A new random token in ``path`` (default: uh's own file) unless one is there: 0600,
    written through a fresh file so it is never readable by others, even for a moment."""
    path = path or token_file()
    if path.exists():
        _check_private(path)
        return path
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode())
    finally:
        os.close(fd)
    os.replace(fresh, path)
    return path


def auth_env(*, create: bool = False) -> dict[str, str]:
    """The variables a Ray node or driver of uh's cluster starts with. ``create``: make
    uh's token file when there is none (the head does); else a missing token is an error
    naming the file."""
    if os.environ.get(TOKEN, "").strip():
        return {MODE: "token"}  # the operator's token, already in the environment
    path = make_token() if create else token_file()
    _check_private(path)
    return {MODE: "token", TOKEN_PATH: str(path)}


def apply() -> None:
    """This process (a driver about to connect) set for token authentication."""
    os.environ.update(auth_env())
