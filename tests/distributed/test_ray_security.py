"""Issue 30, attack 7 on a real loopback cluster: an unconfined agent on a Ray worker plants
an object under the id of a file it honestly wrote (refused as ``tampered``, nothing lands);
a driver without the cluster's token cannot connect; ``--trust-workers`` is recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

from tests.conftest import git
from tests.harness.conftest import Project
from uh_core.distributed.localcluster import LocalCluster

# Writes the honest implementation the gate judges, and under its blob id, in the object
# store its sandbox borrows (objects/info/alternates), other content: what would land.
PLANTING_AGENT = """\
import hashlib, zlib
write("src/calc.py", GOOD)
planted = GOOD.replace("return a + b", "__import__('os').system('id'); return a + b")
oid = hashlib.sha1(b"blob %d\\0" % len(GOOD) + GOOD.encode()).hexdigest()
git_dir = pathlib.Path(".git")
if git_dir.is_file():  # a linked work tree: .git names its git dir
    git_dir = pathlib.Path(git_dir.read_text().split(":", 1)[1].strip())
stores = [git_dir / "objects"]
alternates = git_dir / "objects/info/alternates"
if alternates.exists():
    stores += [pathlib.Path(p) for p in alternates.read_text().split() if p]
for store in stores:
    (store / oid[:2]).mkdir(parents=True, exist_ok=True)
    target = store / oid[:2] / oid[2:]
    if target.exists():
        target.chmod(0o644)
    target.write_bytes(zlib.compress(b"blob %d\\0" % len(planted) + planted.encode()))
print("```uh-runtime-final-message\\nfixed add\\n```")
"""
GOOD_AGENT = 'write("src/calc.py", GOOD)\nprint("```uh-runtime-final-message\\nfixed add\\n```")\n'


def _ray(cluster: LocalCluster) -> tuple[str, ...]:
    return ("--executor", "ray", "--ray-address", cluster.address, "--isolation", "none")


def test_an_object_planted_on_a_worker_is_tampered_and_nothing_lands(
    project: Project, cluster: LocalCluster
) -> None:
    agent = project.agent("planting", PLANTING_AGENT)
    result, ledger = project.run_json("--agent", agent, *_ray(cluster))
    assert result.code != 0
    [record] = ledger["requirements"]
    last = record["attempts"][-1]
    assert last["outcome"] == "tampered", (record, result.stderr[-3000:])
    # named by the head's check of what the worker sent, or already by the worker's own gate,
    # which reads the store back after an unconfined attempt (uh_core/judge/objects.py)
    said = last["tampered"][0]
    assert ("planted" in said and "holds content whose id is" in said) or (
        said.startswith("object store: object ") and "does not hash to its name" in said
    ), said
    assert record["outcome"] == "fail" and record["commit"] is None
    assert ledger["status"] == "tampered" and ledger["tampered"]
    # Nothing landed: no branch, no sandbox; promote has nothing to take.
    assert git(project.root, "branch", "--list", "harness/calc").strip() == ""
    assert json.loads(project.repo.uh("sandbox", "list", "--json").stdout)["sandboxes"] == []
    promoted = project.repo.uh("promote", "calc", "--approved-by", "t", "--branch", "harness/calc")
    assert promoted.code != 0


def test_an_honest_worker_lands_and_trusting_workers_is_recorded(
    project: Project, cluster: LocalCluster
) -> None:
    agent = project.agent("good", GOOD_AGENT)
    result, ledger = project.run_json("--agent", agent, *_ray(cluster), "--trust-workers")
    assert result.code == 0, result.stderr[-3000:]
    [record] = ledger["requirements"]
    assert record["outcome"] == "pass" and ledger["settings"]["trust_workers"] is True
    assert git(project.root, "rev-parse", "harness/calc").strip() == record["commit"]
    git(project.root, "rev-list", "--objects", "--missing=error", record["commit"])
    text = project.run("--agent", agent, *_ray(cluster), "--trust-workers", "--force")
    assert "TRUSTED WORKERS" in text.stdout, text.stderr[-3000:]
    local = project.run("--agent", agent, "--trust-workers", "--force")
    assert local.code == 2 and "--trust-workers is for --executor ray" in local.stderr


CONNECT = """
import sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print("CONNECTED", flush=True)
"""


def _refused(address: str, env: dict[str, str]) -> str:
    """A driver's attempt to connect, until the cluster refuses it: Ray retries for 20 s
    before it gives up, the first refusal comes at once; the driver is stopped then."""
    driver = subprocess.Popen(
        [sys.executable, "-c", CONNECT, address], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    said = []
    try:
        assert driver.stderr is not None
        for line in driver.stderr:
            said.append(line)
            if "Authentication token is missing or incorrect" in line:
                break
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        out, _ = driver.communicate(timeout=60)
    assert "CONNECTED" not in out
    return "".join(said)


def test_a_driver_without_the_token_cannot_connect(cluster: LocalCluster) -> None:
    assert cluster.auth["RAY_AUTH_MODE"] == "token"
    bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    wrong = {**bare, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": "0" * 64}
    for env in (bare, wrong):
        said = _refused(cluster.address, env)
        assert "Authentication token is missing or incorrect" in said, said[-2000:]
    right = subprocess.run(
        [sys.executable, "-c", CONNECT, cluster.address],
        capture_output=True, text=True, env={**bare, **cluster.auth}, timeout=180,
    )  # fmt: skip
    assert right.returncode == 0 and "CONNECTED" in right.stdout, right.stderr[-2000:]
