"""The cluster's token (``uh_core.distributed.auth``), without a cluster: uh's file is made
private, a file others can read is refused, the variables never carry the token from a
file, and ``uh-core worker --dry-run`` shows where the token is, never the token."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.conftest import Repo
from uh_core.distributed import auth
from uh_core.errors import ExecutorError


def test_uh_makes_its_token_private_and_refuses_one_others_read(
    _state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(auth.TOKEN, raising=False)
    monkeypatch.delenv(auth.TOKEN_PATH, raising=False)
    with pytest.raises(ExecutorError, match="does not exist"):
        auth.auth_env()  # a node joining without the head's token
    env = auth.auth_env(create=True)
    path = Path(env[auth.TOKEN_PATH])
    assert path == _state_dir / "ray/auth_token" and env[auth.MODE] == "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    token = path.read_text()
    assert len(token) == 64 and token not in json.dumps(env)
    assert auth.auth_env(create=True) == env and path.read_text() == token  # kept
    path.chmod(0o640)
    with pytest.raises(ExecutorError, match="can be read by others"):
        auth.auth_env()
    monkeypatch.setenv(auth.TOKEN, "inline")  # the operator's, in the environment
    assert auth.auth_env() == {auth.MODE: "token"}
    assert set(auth.AUTH_VARIABLES) == {
        "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS",
    }  # fmt: skip


def test_worker_dry_run_names_the_token_file_and_makes_nothing(
    repo: Repo, _state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(auth.TOKEN, raising=False)
    monkeypatch.delenv(auth.TOKEN_PATH, raising=False)  # the session cluster's, if started
    result = repo.uh_raw("worker", "--head", "--dry-run", "--json", "--root", str(repo.root))
    assert result.code == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["env"] == {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(_state_dir / "ray/auth_token"),
    }
    assert not (_state_dir / "ray").exists()
