#!/usr/bin/env python3
"""What suite non-regression adds to ``uh-core harness run``'s tests stage.

Builds a throw-away git repository (``src/calc.py``, ``--tests`` trivially-passing pytest
tests, one mission, a scripted agent that adds a function and a test) and times, in
interleaved rounds after one uncounted warm-up round:

1. the test command alone: the exact command the stage runs (``test_cmd`` plus its
   ``--junitxml``), directly in a checkout carrying the agent's change, once just before and
   once just after the warm run (their mean is that round's figure);
2. ``uh-core harness run --force`` with the base-results cache COLD (deleted first): the
   stage also runs the suite at the base commit in a clean checkout;
3. the same with the cache WARM. For 2 and 3: the tests stage's ``duration_ms`` from the
   ledger (``--format json``) and the whole run's wall time.

Target: warm, the tests stage adds <= 10 % over the command alone. Nothing is asserted.
``UH_STATE_DIR`` points into the temporary folder, removed at the end, also on Ctrl-C.

    python benchmarks/gate_overhead.py [--tests 500] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PY = sys.executable
TEST_CMD = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PY} -m pytest -q -p no:cacheprovider"
TARGET_PCT = 10.0
PER_FILE = 50
GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh bench",
    "GIT_AUTHOR_EMAIL": "bench@uh.invalid",
    "GIT_COMMITTER_NAME": "uh bench",
    "GIT_COMMITTER_EMAIL": "bench@uh.invalid",
}
AGENT = """\
import pathlib
calc = pathlib.Path("src/calc.py")
calc.write_text(calc.read_text() + "\\n\\ndef sub(a, b):\\n    return a - b\\n")
test = pathlib.Path({test_file!r})
text = test.read_text().replace("import add\\n", "import add, sub\\n", 1)
test.write_text(text + "\\n\\ndef test_sub():\\n    assert sub(5, 3) == 2\\n")
"""


def spawn(command: str | list[str], cwd: Path, ok: int = 0, **env: str) -> tuple[float, bytes]:
    """Run to the end (``str``: through a shell, as ``run_logged`` does); (wall ms, stdout).
    On Ctrl-C the child (same process group: it got the SIGINT too) may stop its own
    children before the temporary folder goes; it is killed after 30 s."""
    began = time.perf_counter()
    proc = subprocess.Popen(
        command, shell=isinstance(command, str), cwd=cwd, env={**os.environ, **GIT_ENV, **env},
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = proc.communicate()
    except KeyboardInterrupt:
        try:
            proc.wait(timeout=30)
        finally:
            proc.kill()
        raise
    elapsed = (time.perf_counter() - began) * 1000
    if proc.returncode not in (0, ok):
        sys.exit(f"{command} exited {proc.returncode}: {err.decode()[-2000:]}")
    return elapsed, out


def build_project(root: Path, agents: Path, tests: int) -> str:
    """The repository, committed; returns the ``--agent`` command."""
    from uh_core.init import init_project
    from uh_core.layout import Layout

    root.mkdir(parents=True)
    spawn(["git", "init", "-q", "-b", "main"], root)
    init_project(Layout(root))
    (root / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n*.log\n")
    (root / "src").mkdir()
    (root / "src/calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    files = max(1, -(-tests // PER_FILE))
    for index in range(files):
        count = min(PER_FILE, tests - index * PER_FILE)
        body = "".join(
            f"\n\ndef test_{n}():\n    assert add({n}, 1) == {n + 1}\n" for n in range(count)
        )
        (root / f"tests/test_calc_{index}.py").write_text(f"from src.calc import add\n{body}")
    mission = root / ".harness/missions/m/mission.yaml"
    mission.parent.mkdir(parents=True, exist_ok=True)
    mission.write_text(
        "id: m\ntitle: Add sub\nobjective: sub(a, b) returns a minus b.\nstatus: pending\n"
        "acceptance_criteria:\n  - id: adds\n    description: add(2, 3) is 5\n"
        f'    check_command: {PY} -c "from src.calc import add; assert add(2, 3) == 5"\n'
        "tests:\n  - tests/test_calc_0.py::test_0\n"
    )
    (root / "harness.config.yaml").write_text(
        f"harness_version: 1\ntest_cmd: {TEST_CMD}\nmax_attempts: 1\n"
        f"isolation_writable: ['{agents}']\n"
    )
    spawn(["git", "add", "-A"], root)
    spawn(["git", "commit", "-q", "-m", "project"], root)
    agents.mkdir()
    (agents / "agent.py").write_text(AGENT.format(test_file=f"tests/test_calc_{files - 1}.py"))
    return f"{PY} {agents / 'agent.py'} {{prompt_file}}"


def plain_checkout(root: Path, target: Path, agent: str) -> None:
    """A checkout of HEAD with the agent's change applied, for the test command alone."""
    spawn(["git", "worktree", "add", "-q", "--detach", str(target), "HEAD"], root)
    (prompt := target.parent / "prompt.md").write_text("bench\n")
    spawn(agent.replace("{prompt_file}", str(prompt)), target)


def test_alone(checkout: Path, command: str) -> float:
    """Wall ms of the stage's command run directly, with the stage's environment."""
    return spawn(command, checkout, MISSION_ID="m", UH_ROOT=str(checkout), UH_RUN_ID="b")[0]


def harness_run(root: Path, agent: str, expect_cached: bool) -> tuple[float, float]:
    """(wall ms of the whole run, the tests stage's duration_ms from the ledger)."""
    argv = [PY, "-m", "uh_core", "harness", "run", "--agent", agent, "--force"]
    argv += ["--format", "json", "--root", str(root)]
    elapsed, out = spawn(argv, root, ok=1)  # 1: mission not done, judged from the ledger
    try:
        ledger: dict[str, Any] = json.loads(out)
        stages = ledger["requirements"][0]["attempts"][-1]["stages"]
        stage = next(s for s in stages if s["stage"] == "tests")
    except (ValueError, KeyError, IndexError, StopIteration):
        sys.exit(f"no tests stage in the harness run's ledger: {out.decode()[-2000:]}")
    if not stage["passed"]:
        sys.exit(f"the tests stage failed: {stage.get('detail')}\n{stage.get('output', '')}")
    base = stage.get("evidence", {}).get("base", {})
    if base.get("problem") or base.get("cached") is not expect_cached:
        sys.exit(f"unexpected base evidence (wanted cached={expect_cached}): {base}")
    return elapsed, float(stage["duration_ms"])


def pct(value: float, reference: float) -> float:
    return (value - reference) / reference * 100 if reference > 0 else float("inf")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=500, help="fast tests (default 500)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.tests < 1 or args.rounds < 1:
        parser.error("--tests and --rounds must be at least 1")

    tmp = Path(tempfile.mkdtemp(prefix="uh-gate-bench-"))
    os.environ["UH_STATE_DIR"] = str(tmp / "state")  # the harness runs inherit it
    try:
        from uh_core.judge.testreports import with_junit_report
        from uh_core.layout import Layout

        root = tmp / "repo"
        agent = build_project(root, tmp / "agents", args.tests)
        checkout = tmp / "plain" / "checkout"
        plain_checkout(root, checkout, agent)
        command, _ = with_junit_report(TEST_CMD, tmp / "plain" / "junit.xml")
        cache = Layout(root).state_dir / "base-results"

        names = ("alone", "cold_wall", "cold_stage", "base_run", "warm_wall", "warm_stage")
        samples: dict[str, list[float]] = {name: [] for name in names}
        for round_no in range(args.rounds + 1):  # round 0 warms up and is not counted
            shutil.rmtree(cache, ignore_errors=True)
            cold = harness_run(root, agent, expect_cached=False)
            base_run = float(json.loads(next(cache.glob("*.json")).read_text())["duration_ms"])
            # Two runs of the command alone bracket the warm run: others' load hits both.
            before = test_alone(checkout, command)
            warm = harness_run(root, agent, expect_cached=True)
            alone = (before + test_alone(checkout, command)) / 2
            if round_no:
                for name, value in zip(names, (alone, *cold, base_run, *warm), strict=True):
                    samples[name].append(value)
            times = f"alone {alone:.0f}, warm stage {warm[1]:.0f}, cold stage {cold[1]:.0f} ms"
            print(f"round {round_no or 'warm-up'}: {times}", file=sys.stderr)
        med = {name: statistics.median(values) for name, values in samples.items()}
        low = {name: min(values) for name, values in samples.items()}
        paired = statistics.median(
            pct(w, a) for w, a in zip(samples["warm_stage"], samples["alone"], strict=True)
        )
        over = pct(med["warm_stage"], med["alone"])
        figures = {
            "tests": args.tests,
            "rounds": args.rounds,
            "cores": os.cpu_count(),
            "median_ms": {name: round(value, 1) for name, value in med.items()},
            "min_ms": {name: round(value, 1) for name, value in low.items()},
            "warm_overhead_pct": round(over, 1),
            "warm_overhead_pct_paired": round(paired, 1),
            "warm_overhead_pct_min": round(pct(low["warm_stage"], low["alone"]), 1),
            "cold_extra_ms": round(med["cold_stage"] - med["warm_stage"], 1),
            "target_pct": TARGET_PCT,
        }
        if args.json:
            print(json.dumps(figures, indent=2))
            return 0
        print(
            f"\nharness tests-stage overhead  ({args.tests} tests, median of {args.rounds} "
            f"interleaved rounds, {os.cpu_count()} cores)\npython {sys.version.split()[0]}\n"
        )
        rows = [
            ("test command alone (the stage's command, direct)", "alone"),
            ("tests stage, warm base cache (ledger duration_ms)", "warm_stage"),
            ("tests stage, cold base cache (ledger duration_ms)", "cold_stage"),
            ("  of which the base run (cache file's duration_ms)", "base_run"),
            ("whole harness run, warm (wall)", "warm_wall"),
            ("whole harness run, cold (wall)", "cold_wall"),
        ]
        print(f"{'measurement':52s} {'median ms':>10s} {'min ms':>10s}\n{'-' * 74}")
        for label, name in rows:
            print(f"{label:52s} {med[name]:10.0f} {low[name]:10.0f}")
        verdict = "MET" if over <= TARGET_PCT else "MISSED"
        print(
            f"\nwarm: the tests stage takes {med['warm_stage']:.0f} ms vs {med['alone']:.0f} ms "
            f"for the test command alone = {over:+.1f} % (target <= {TARGET_PCT:.0f} %) "
            f"{verdict}\n      paired (median of each round's own): {paired:+.1f} %; "
            f"from minimums: {figures['warm_overhead_pct_min']:+.1f} %"
        )
        print(
            f"cold: +{figures['cold_extra_ms']:.0f} ms for the base run (median cold - warm "
            f"stage; the run itself {med['base_run']:.0f} ms), once per base commit + command"
        )
        print(
            f"context: the whole harness run takes {med['warm_wall']:.0f} ms warm, "
            f"{med['cold_wall']:.0f} ms cold; the tests stage is "
            f"{med['warm_stage'] / med['warm_wall'] * 100:.0f} % of the warm run"
        )
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
