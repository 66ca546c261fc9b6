"""``uh-core mcp --http`` serves only its operator (uh_core/mcp/token.py): a raw HTTP client,
no SDK, without the token, with a wrong one, from a foreign origin; the token file's rules;
a bind other machines could reach."""

from __future__ import annotations

import http.client
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

from tests.conftest import Repo
from tests.mcp.conftest import Served, http_server

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def post(served: Served, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    where = urlsplit(served.url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
    try:
        connection.request(
            "POST",
            where.path,
            body=json.dumps(INITIALIZE),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        reply = connection.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        connection.close()


def uh_mcp(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", "mcp", "--root", str(repo.root), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_only_the_token_gets_in_and_the_sdk_origin_checks_stay(repo: Repo, tmp_path: Path) -> None:
    with http_server(repo.root, tmp_path / "server.log") as served:
        token = served.token
        assert len(token) >= 32 and token not in (tmp_path / "server.log").read_text()
        mode = served.token_file.stat().st_mode
        assert stat.S_IMODE(mode) == 0o600 and served.token_file.stat().st_uid == os.getuid()
        missing = post(served, {})
        wrong = post(served, {"Authorization": f"Bearer {token[:-1]}x"})
        other = post(served, {"Authorization": f"Basic {token}"})
        for status, headers, body in (missing, wrong, other):  # one answer for all of them
            assert status == 401
            assert headers["www-authenticate"] == 'Bearer realm="uh"'
            assert json.loads(body)["error"] == "unauthorized"
        assert missing[2] == wrong[2] == other[2]
        status, _, body = post(served, served.headers())
        assert status == 200, body
        # the token does not let a web page in: the SDK's checks still answer
        foreign = {**served.headers(), "Origin": "http://evil.example"}
        assert post(served, foreign)[0] == 403
        assert post(served, {**served.headers(), "Host": "evil.example"})[0] == 421
        # a second server for the same root uses the same token
        with http_server(repo.root, tmp_path / "second.log") as again:
            assert again.token_file == served.token_file and again.token == token


def test_a_chosen_token_file_and_the_files_refused(repo: Repo, tmp_path: Path) -> None:
    chosen = tmp_path / "keys" / "uh-token"
    with http_server(repo.root, tmp_path / "server.log", "--token-file", str(chosen)) as served:
        assert served.token_file == chosen and stat.S_IMODE(chosen.stat().st_mode) == 0o600
        assert post(served, served.headers())[0] == 200
    chosen.chmod(0o644)  # readable by others: refused, nothing served
    result = uh_mcp(repo, "--http", "127.0.0.1:0", "--token-file", str(chosen))
    assert result.returncode == 2
    assert f"{chosen}: the token file can be read by others (mode 644)" in result.stderr
    assert f"chmod 600 {chosen}" in result.stderr
    short = tmp_path / "short"
    short.write_text("abc\n")
    short.chmod(0o600)
    result = uh_mcp(repo, "--http", "127.0.0.1:0", "--token-file", str(short))
    assert result.returncode == 2 and "not a token" in result.stderr
    link = tmp_path / "link"
    link.symlink_to(chosen)
    result = uh_mcp(repo, "--http", "127.0.0.1:0", "--token-file", str(link))
    assert result.returncode == 2 and "not a symbolic link" in result.stderr
    result = uh_mcp(repo, "--token-file", str(chosen))  # stdio: no token to take
    assert result.returncode == 2 and "are for --http" in result.stderr


def test_a_bind_other_machines_reach_needs_allow_remote(repo: Repo, tmp_path: Path) -> None:
    refused = uh_mcp(repo, "--http", "0.0.0.0:0")
    assert refused.returncode == 2
    assert "0.0.0.0 is not a loopback address" in refused.stderr
    assert "--allow-remote" in refused.stderr
    log = tmp_path / "remote.log"
    with http_server(repo.root, log, "--allow-remote", host="0.0.0.0") as served:
        assert served.url.startswith("http://0.0.0.0:")
        loopback = Served(served.url.replace("0.0.0.0", "127.0.0.1"), served.token_file)
        assert post(loopback, {})[0] == 401  # reachable, and still only with the token
