"""Best of N of one agent: ``mission run-all --repeat N`` and ``--runtimes NAME*N``
(uh_core/runall/repeat.py): N runs in N sandboxes, compared as N runtimes."""

from __future__ import annotations

import json

from tests.conftest import Repo
from tests.runall.test_run_all import FIX, _run_all, _setup
from tests.runtime.helpers import add_manifest

# the second run of three writes something else: what one agent does now and then
WOBBLY = (
    "runtime_kind: script\nstatus: active\nconfig:\n  script: >-\n"
    '    case "$UH_RUNTIME" in *.2) echo other > a.txt;; *) echo fixed > a.txt;; esac\n'
)


def _sandboxes(repo: Repo) -> list[str]:
    folder = repo.root / ".harness/sandboxes"
    return sorted(p.name for p in folder.glob("sbx-*")) if folder.is_dir() else []


def test_one_runtime_three_times_is_three_runtimes_compared(repo: Repo) -> None:
    _setup(repo, wobbly=WOBBLY, steady=FIX)
    code, data, stderr = _run_all(repo, "--runtimes", "wobbly*3,steady")
    assert code == 1, stderr  # one of the three disagrees
    rows = {row["runtime"]: row for row in data["runtimes"]}
    assert sorted(rows) == ["steady", "wobbly.1", "wobbly.2", "wobbly.3"]
    assert {row["status"] for row in rows.values()} == {"succeeded"}
    assert len({row["sandbox"] for row in rows.values()}) == 4  # a sandbox each
    assert data["status"] == "divergent"
    assert sorted(data["agreement_runtimes"]) == ["steady", "wobbly.1", "wobbly.3"]
    assert data["divergent_runtimes"] == ["wobbly.2"]
    patch = repo.root / ".harness/sandboxes" / rows["wobbly.2"]["sandbox"] / "missions/m"
    assert "+other" in (patch / "diff.patch").read_text()
    report = (repo.root / ".harness/missions/m/runtime-comparison.md").read_text()
    assert "wobbly.2" in report


def test_repeat_applies_to_every_runtime(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX)
    code, data, stderr = _run_all(repo, "--repeat", "2")
    assert code == 0, stderr
    assert sorted(data["agreement_runtimes"]) == ["one.1", "one.2", "two.1", "two.2"]
    assert len(_sandboxes(repo)) == 4


def test_bad_repeats_are_refused_before_anything_runs(repo: Repo) -> None:
    _setup(repo, one=FIX)
    add_manifest(repo, "one.2", FIX)
    repo.commit("a runtime whose id is a repeat's label")
    for args, said in [
        (["--repeat", "0"], "from 1 to 20, not '0'"),
        (["--repeat", "21"], "from 1 to 20, not '21'"),
        (["--runtimes", "one*0"], "from 1 to 20, not '0'"),
        (["--runtimes", "one*x"], "not 'x'"),
        (["--runtimes", "one*2*2"], "is not NAME or NAME*N"),
        (["--runtimes", "one*2,one"], "names a runtime twice"),
        (["--runtimes", "one*2,one.2"], "a repeat's label is also a runtime asked for: one.2"),
    ]:
        result = repo.uh("mission", "run-all", "m", *args)
        assert result.code == 2, (args, result)
        assert said in result.stderr, (args, result.stderr)
    assert _sandboxes(repo) == []
    assert not (repo.root / ".harness/missions/m/runtime-comparison.json").exists()
    shown = json.loads(repo.uh("status", "--json").stdout)
    assert shown  # the workspace still reads
