#!/usr/bin/env python3
"""Fail-to-pass (issue 34, uh_core/judge/failtopass.py): what proving that the tests test the
change adds to the tests stage.

A project with a 500-test suite (ten files of fifty) and a mission that requires five tests
of a file the agent adds, with the function they test. ``uh-core harness run --force`` runs the
same mission again and again (the agent writes the same files: the same judged tree), so after
the first run both the base commit's results and the fail-to-pass results are in the cache.
Interleaved rounds:

- **without**: ``uh_core.judge.failtopass.judge`` replaced by a no-op in that ``uh-core``
  process (the tests stage as it was before fail-to-pass);
- **with**: the code as it ships.

Printed: the tests stage's duration (from the ledger) per round, the medians, and their ratio
(the target: at most 1.10 with a warm cache); the first, cold run's fail-to-pass figures (the
relevant file alone runs, not the suite). Nothing is judged: the figures are the output.

    python3 benchmarks/fail_to_pass.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TEST_CMD = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PY} -m pytest -q -p no:cacheprovider"
FEATURE_TESTS = "from src.feature import double\n\n\n" + "".join(
    f"def test_double_{n}():\n    assert double({n}) == {2 * n}\n\n\n" for n in range(5)
)
AGENT = f"""\
import pathlib
pathlib.Path("src/feature.py").write_text("def double(x):\\n    return 2 * x\\n")
pathlib.Path("tests/test_feature.py").write_text({FEATURE_TESTS!r})
"""
MISSION = """\
id: double
title: double(x)
objective: double(x) returns 2 * x, with its tests.
acceptance_criteria:
  - id: exists
    description: the module exists
    check_command: test -f src/feature.py
tests:
""" + "".join(f"  - tests/test_feature.py::test_double_{n}\n" for n in range(5))
# runs uh-core; "without" makes fail-to-pass a no-op in this process only
WRAPPER = """\
import sys
if sys.argv.pop(1) == "without":
    import uh_core.judge.failtopass as f2p
    f2p.judge = lambda *args, **kwargs: None
from uh_core.cli.main import main
sys.argv[0] = "uh-core"
main()
"""


def git(root: Path, *args: str) -> None:
    who = {"NAME": "bench", "EMAIL": "bench@uh.invalid"}
    env = {
        **os.environ,
        **{f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER") for k, v in who.items()},
    }
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def build(root: Path, agents: Path) -> str:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src/__init__.py").write_text("")
    (root / "tests").mkdir()
    for f in range(10):
        body = "".join(f"def test_{f}_{n}():\n    assert {n} + 1 > {n}\n\n\n" for n in range(50))
        (root / f"tests/test_suite_{f}.py").write_text(body)
    (root / ".gitignore").write_text("__pycache__/\n")
    subprocess.run([PY, "-m", "uh_core", "init", "--root", str(root)], check=True,
                   capture_output=True)  # fmt: skip
    (root / ".harness/missions/double").mkdir(parents=True, exist_ok=True)
    (root / ".harness/missions/double/mission.yaml").write_text(MISSION)
    (root / "harness.config.yaml").write_text(
        f"harness_version: 1\ntest_cmd: {TEST_CMD}\nmax_attempts: 1\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    script = agents / "agent.py"
    script.write_text(AGENT)
    return f"{PY} {script} {{prompt_file}}"


def one(root: Path, agent: str, mode: str, env: dict[str, str]) -> dict[str, object]:
    argv = [PY, "-c", WRAPPER, mode, "harness", "run", "--agent", agent, "--force",
            "--format", "json", "--root", str(root)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"harness run ({mode}) exited {done.returncode}: {done.stderr[-2000:]}")
    [req] = json.loads(done.stdout)["requirements"]
    [tests] = [s for s in req["attempts"][-1]["stages"] if s["stage"] == "tests"]
    return tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uh-bench-f2p-") as scratch:
        base = Path(scratch)
        (base / "agents").mkdir()
        env = {**os.environ, "UH_STATE_DIR": str(base / "state")}
        agent = build(base / "repo", base / "agents")
        cold = one(base / "repo", agent, "with", env)
        proof = cold["evidence"]["fail_to_pass"]
        print(f"suite: {cold['evidence']['counts']['passed']} tests passed; mission: 5 required")
        print(
            f"cold run: tests stage {cold['duration_ms']} ms; fail-to-pass ran "
            f"{proof['command'].split('cacheprovider', 1)[1].strip()!r} over the base's source "
            f"in {proof['duration_ms']} ms (cached: {proof['cached']}); "
            f"fail_to_pass {len(proof['fail_to_pass'])}, vacuous {len(proof['vacuous'])}"
        )
        times: dict[str, list[int]] = {"without": [], "with": []}
        for n in range(args.rounds):
            for mode in ("without", "with") if n % 2 == 0 else ("with", "without"):
                stage = one(base / "repo", agent, mode, env)
                if mode == "with":
                    assert stage["evidence"]["fail_to_pass"]["cached"] is True
                times[mode].append(int(stage["duration_ms"]))
        for mode, values in times.items():
            print(f"{mode:>7} fail-to-pass: tests stage {values} ms, median "
                  f"{statistics.median(values):.0f} ms")  # fmt: skip
        ratio = statistics.median(times["with"]) / statistics.median(times["without"])
        print(f"warm cache: with / without = {ratio:.3f} (target <= 1.10)")


if __name__ == "__main__":
    main()
