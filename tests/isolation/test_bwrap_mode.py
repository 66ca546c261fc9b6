"""The bwrap command line, the probe and the choice of mode (no sandbox is started here
except by the probe itself)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from uh_core.errors import IsolationError
from uh_core.isolation import (
    Resolved,
    bwrap_available,
    probe_bwrap,
    resolve_mode,
    wrap_argv,
)
from uh_core.isolation import bwrap as bw


def _binds(line: list[str]) -> list[tuple[str, str]]:
    """(flag, path) of every bind after the tmpfs, in order."""
    out = []
    for i, arg in enumerate(line):
        if arg in ("--bind", "--ro-bind") and line[i + 1] != "/":
            assert line[i + 1] == line[i + 2]
            out.append((arg, line[i + 1]))
    return out


def test_the_command_line_has_the_agreed_shape(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    sandbox = repo / ".harness" / "sandboxes" / "s1"  # missing: created
    line = wrap_argv(["agent", "--flag"], writable=[sandbox], readable=[repo], cwd=sandbox)
    assert sandbox.is_dir()
    tmp = str(Path("/tmp").resolve())
    assert line[1:9] == ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs"]
    assert line[9] == tmp
    for flag in ("--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in line
    assert line[line.index("--cap-drop") + 1] == "ALL"
    assert "--unshare-net" not in line and "--unshare-all" not in line
    assert "--clearenv" not in line
    assert line[-5:] == ["--chdir", str(sandbox.resolve()), "--", "agent", "--flag"]
    binds = _binds(line)
    if str(repo.resolve()).startswith(tmp + "/"):  # the repository would be hidden by the tmpfs
        assert binds == [("--ro-bind", str(repo.resolve())), ("--bind", str(sandbox.resolve()))]
        assert line.index("--tmpfs") < line.index(str(repo.resolve()))
    else:
        assert binds == [("--bind", str(sandbox.resolve()))]


def test_readable_paths_bound_only_where_needed_and_missing_ones_skipped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    inner = work / "keep-read-only"
    inner.mkdir(parents=True)
    line = wrap_argv(
        ["true"],
        writable=[work],
        readable=[tmp_path / "missing", Path("/usr"), inner],
        cwd=work,
    )
    binds = _binds(line)
    assert ("--ro-bind", "/usr") not in binds  # visible read-only already
    assert all("missing" not in path for _, path in binds)
    # Parents before children: the read-only path inside the writable one stays read-only.
    assert binds == [("--bind", str(work.resolve())), ("--ro-bind", str(inner.resolve()))]


def test_symlinks_are_resolved(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    line = wrap_argv(["true"], writable=[link], readable=[], cwd=link)
    assert ("--bind", str(real.resolve())) in _binds(line)
    assert line[line.index("--chdir") + 1] == str(real.resolve())


def test_a_working_directory_the_sandbox_would_hide_is_refused(tmp_path: Path) -> None:
    hidden = Path("/tmp").resolve() / f"uh-iso-{tmp_path.name}"
    with pytest.raises(IsolationError, match="would not exist in the sandbox"):
        wrap_argv(["true"], writable=[tmp_path / "w"], readable=[], cwd=hidden)
    with pytest.raises(IsolationError, match="no command"):
        wrap_argv([], writable=[], readable=[], cwd=Path("/"))


def test_resolve_mode_when_bubblewrap_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bw, "bwrap_available", lambda: (True, "bwrap works"))
    assert resolve_mode("auto") == Resolved("bwrap", "auto", None)
    assert resolve_mode("bwrap") == Resolved("bwrap", "bwrap", None)
    assert resolve_mode("none") == Resolved("none", "none", "unconfined: --isolation none")


def test_resolve_mode_when_bubblewrap_cannot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        bw, "bwrap_available", lambda: (False, "bubblewrap (bwrap) is not installed")
    )
    assert resolve_mode("auto") == Resolved(
        "none",
        "auto",
        "unconfined: bubblewrap unavailable here (bubblewrap (bwrap) is not installed)",
    )
    assert resolve_mode("none").mode == "none"
    with pytest.raises(IsolationError) as caught:
        resolve_mode("bwrap")
    assert caught.value.exit_code == 2
    assert caught.value.fix and "apt-get install bubblewrap" in caught.value.fix
    assert "not installed" in caught.value.one_line()
    with pytest.raises(IsolationError, match="unknown isolation mode"):
        resolve_mode("docker")  # type: ignore[arg-type]


def test_probe_says_why_not(tmp_path: Path) -> None:
    assert probe_bwrap(None) == (False, "bubblewrap (bwrap) is not installed")
    ok, reason = probe_bwrap(str(tmp_path / "no-such-bwrap"))
    assert not ok and "cannot be started" in reason
    refusing = tmp_path / "bwrap"
    refusing.write_text(
        "#!/bin/sh\n"
        "echo 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\n"
        "echo 'second line' >&2\n"
        "exit 1\n"
    )
    refusing.chmod(refusing.stat().st_mode | stat.S_IXUSR)
    ok, reason = probe_bwrap(str(refusing))
    assert not ok
    assert "exit 1" in reason and "No permissions to create new namespace" in reason
    assert "second line" not in reason


def test_availability_is_probed_once_and_matches_a_fresh_probe() -> None:
    first = bwrap_available()
    assert bwrap_available() is first
    assert first[0] == probe_bwrap(bw.find_bwrap())[0]
    if not first[0]:
        pytest.skip(f"bubblewrap unavailable here: {first[1]}")
