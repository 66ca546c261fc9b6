"""Jobs as data, without a cluster: the source bundle and the workspace made from it, the
job models' round trip, and landing — above all what a forged or broken result cannot do
(write outside its folders, land a commit that is not one commit on the base, pass off a
change whose hash differs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from uh_core.errors import ExecutorError
from uh_core.jobs import evidence
from uh_core.jobs.model import (
    EvidenceFile,
    HarnessJob,
    JobResult,
    NodeInfo,
    RuntimeJob,
    parse_job,
)
from uh_core.jobs.source import bundle_branch, make_source, materialise
from uh_core.layout import Layout


def test_source_bundle_makes_a_workspace_at_the_base(repo: Repo, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv("UH_WORKER_DIR", str(tmp_path / "worker"))
    repo.write("a.txt", "base\n")
    repo.commit("base")
    base = git(repo.root, "rev-parse", "HEAD").strip()
    refs_before = git(repo.root, "for-each-ref")
    source = make_source(Layout(repo.root), base)
    assert git(repo.root, "for-each-ref") == refs_before  # the operator's refs untouched
    repo.write("a.txt", "later\n")
    repo.commit("later")  # the job still starts from the base
    layout = materialise(source, "job-1")
    assert (layout.root / "a.txt").read_text() == "base\n"
    assert git(layout.root, "rev-parse", "HEAD").strip() == base
    assert (layout.root / ".harness").is_dir()


def test_job_models_round_trip() -> None:
    run = RuntimeJob(job_id="j", mission_id="m", mission_text="id: m\n", manifest={"id": "x"},
                     sandbox_id="sbx-m-x-1")  # fmt: skip
    mission = HarnessJob(job_id="k", mission_id="m", run_id="harness-1", base_commit="0" * 40,
                         settings={"max_attempts": 2})  # fmt: skip
    assert parse_job(run.model_dump_json(by_alias=True)) == run
    assert parse_job(mission.model_dump_json(by_alias=True)) == mission
    result = JobResult(job_id="j", kind="runtime", patch=b"\x00\xffbinary",
                       evidence=[EvidenceFile(path="sandboxes/s/x", data=b"\x01")])  # fmt: skip
    assert JobResult.model_validate_json(result.model_dump_json()) == result


@pytest.mark.parametrize(
    "name",
    ["../escape", "sandboxes/s/../../escape", "/etc/passwd", "prompts", "other/x", "sandboxes/t/x"],
)
def test_evidence_outside_its_folders_is_refused_before_anything_is_written(
    tmp_path: Path, name: str
) -> None:
    files = [
        EvidenceFile(path="sandboxes/s/ok.txt", data=b"ok"),
        EvidenceFile(path=name, data=b"x"),
    ]
    with pytest.raises(ExecutorError, match="outside its folders"):
        evidence.unpack(tmp_path, files, ("sandboxes/s/", "prompts/"))
    assert not (tmp_path / "sandboxes").exists()


def test_evidence_does_not_follow_a_symlink_out(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    (root / "sandboxes").mkdir(parents=True)
    os.symlink(outside, root / "sandboxes" / "s")
    with pytest.raises(ExecutorError, match="symlink"):
        evidence.unpack(root, [EvidenceFile(path="sandboxes/s/x", data=b"x")], ("sandboxes/s/",))
    assert list(outside.iterdir()) == []


def test_evidence_keeps_decisions_whole_and_cuts_logs(tmp_path: Path) -> None:
    big = b"x" * (evidence.FILE_KEEP * 3)
    (tmp_path / "diff.patch").write_bytes(big)
    (tmp_path / "agent.log").write_bytes(big)
    packed = {f.path: f for f in evidence.pack(tmp_path, ["diff.patch", "agent.log"])}
    assert packed["diff.patch"].data == big and packed["diff.patch"].cut == 0
    assert packed["agent.log"].cut == len(big) - evidence.FILE_KEEP
    assert b"bytes cut by the worker" in packed["agent.log"].data


def _forged_bundle(repo: Repo, parent: str, commits: int) -> tuple[bytes, str]:
    """A bundle of ``harness/calc`` with ``commits`` commits on ``parent``."""
    other = repo.root.parent / f"forger-{commits}"
    git(repo.root.parent, "clone", "-q", str(repo.root), str(other))
    git(other, "checkout", "-q", "-b", "harness/calc", parent)
    for n in range(commits):
        (other / f"f{n}.txt").write_text(str(n))
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", f"c{n}")
    tip = git(other, "rev-parse", "HEAD").strip()
    return bundle_branch(Layout(other), "harness/calc", parent), tip


def test_a_result_must_be_one_commit_on_the_base(repo: Repo) -> None:
    from uh_core.jobs.harness_job import _land_commit, _receive
    from uh_core.jobs.objects import Tampered
    from uh_core.models.ledger import AttemptRecord, RequirementRecord

    base = git(repo.root, "rev-parse", "HEAD").strip()
    git(repo.root, "update-ref", "refs/heads/harness/calc", base)
    job = HarnessJob(job_id="k", mission_id="calc", run_id="harness-1", base_commit=base,
                     settings={})  # fmt: skip
    data, tip = _forged_bundle(repo, base, commits=2)
    other = repo.root.parent / "forger-2"
    tree = git(other, "rev-parse", f"{tip}^{{tree}}").strip()
    judged = AttemptRecord(attempt=1, started_at="t", outcome="pass", tree=tree)
    record = RequirementRecord(mission_id="calc", branch="harness/calc", commit=tip,
                               attempts=[judged])  # fmt: skip
    result = JobResult(job_id="k", kind="harness", bundle=data)
    with pytest.raises(Tampered, match="not one commit on the base"):
        _receive(Layout(repo.root), job, result, record, None)
    assert git(repo.root, "rev-parse", "harness/calc").strip() == base  # not moved
    one, tip = _forged_bundle(repo, base, commits=1)
    record.commit = "f" * 40  # the record and the bundle disagree
    result = JobResult(job_id="k", kind="harness", bundle=one)
    with pytest.raises(Tampered, match="the record says"):
        _receive(Layout(repo.root), job, result, record, None)
    record.commit = tip  # the tree the gate judged is not the commit's
    with pytest.raises(Tampered, match="the gate judged"):
        _receive(Layout(repo.root), job, result, record, None)
    judged.tree = git(repo.root.parent / "forger-1", "rev-parse", f"{tip}^{{tree}}").strip()
    with pytest.raises(Tampered, match=r"the head's re-judge of .* says: red"):
        _receive(Layout(repo.root), job, result, record, lambda _commit: "red")
    _receive(Layout(repo.root), job, result, record, lambda _commit: None)
    _land_commit(Layout(repo.root), job, result, "harness/calc", record)
    assert git(repo.root, "rev-parse", "harness/calc").strip() == tip


def test_a_change_whose_hash_differs_does_not_land_as_the_workers(repo: Repo) -> None:
    from uh_core.jobs.runtime_job import land_runtime
    from uh_core.sandbox.worktree import create_sandbox

    repo.write("a.txt", "a\n")
    repo.commit("a")
    layout = Layout(repo.root)
    sandbox = create_sandbox(layout, "m", "one")
    patch = b"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"
    job = RuntimeJob(job_id="j", mission_id="m", mission_text="", manifest={"id": "one"},
                     sandbox_id=sandbox.id)  # fmt: skip
    claimed = {"mission_id": "m", "runtime": "one", "status": "succeeded",
               "diff_hash": "0123456789abcdef"}  # fmt: skip
    result = JobResult(job_id="j", kind="runtime", outcome=claimed, patch=patch)
    outcome = land_runtime(layout, sandbox, job, result, NodeInfo(node_id="abc", host="w"))
    assert outcome.status == "error"
    assert "the worker's 0123456789abcdef" in (outcome.error or "")
    broken = JobResult(job_id="j", kind="runtime", outcome=claimed, patch=b"not a patch\n")
    other = create_sandbox(layout, "m", "two")
    outcome = land_runtime(layout, other, job, broken, NodeInfo(node_id="abc", host="w"))
    assert outcome.status == "error" and "did not apply" in (outcome.error or "")
