"""``harness run --promote-green --approved-by NAME``: a green is promoted right after its gate
passes, through the same promote path as ``uh-core promote`` — and never a green that path
refuses (unconfined, needs review), which waits for a human as before."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.harness.conftest import Project

GOOD_AGENT = """
write("src/calc.py", GOOD)
write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
print("UH_FINAL: done")
"""
# green too, but one added line has the shape of judge tampering: it reads needs review
SHAPED_AGENT = """
write("src/calc.py", GOOD + "\\n\\ndef _never():\\n    os._exit(0)\\n")
write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
print("UH_FINAL: done")
"""


def test_a_green_is_promoted_as_the_run_goes(project: Project) -> None:
    head = git(project.root, "rev-parse", "HEAD").strip()
    agent = project.agent("good", GOOD_AGENT)
    result, data = project.run_json("--agent", agent, "--promote-green", "--approved-by", "ana")
    [record] = data["requirements"]
    assert result.code == 0 and record["outcome"] == "pass", result.stderr
    promotion = record["promotion"]
    assert promotion["approved_by"] == "ana" and promotion["refused"] is None
    now = git(project.root, "rev-parse", "HEAD").strip()
    assert now == promotion["commit"] != head  # one commit on the operator's branch
    assert git(project.root, "rev-parse", "HEAD~1").strip() == head
    body = git(project.root, "log", "-1", "--format=%B")
    assert "Approved-by: ana" in body and "--promote-green" in body
    assert "return a + b" in (project.root / "src/calc.py").read_text()
    assert git(project.root, "status", "--porcelain") == ""  # the tree is clean after it
    recorded = (project.root / ".harness/missions/calc/promotion.yaml").read_text()
    assert "auto: true" in recorded and "approved_by: ana" in recorded
    kinds = [e["event"] for e in project.events(".harness/missions/calc/events.ndjson")]
    assert kinds.index("promotion.auto-triggered") < kinds.index("promotion.recorded")


def test_a_green_the_promote_path_refuses_waits_for_a_human(project: Project) -> None:
    head = git(project.root, "rev-parse", "HEAD").strip()
    agent = project.agent("shaped", SHAPED_AGENT)
    result, data = project.run_json("--agent", agent, "--promote-green", "--approved-by", "ana")
    [record] = data["requirements"]
    assert result.code == 0 and record["outcome"] == "pass" and record["review"], result.stderr
    refused = record["promotion"]["refused"]
    assert refused and "review" in refused and record["promotion"]["commit"] is None
    assert git(project.root, "rev-parse", "HEAD").strip() == head  # nothing landed
    kinds = [e["event"] for e in project.events(".harness/missions/calc/events.ndjson")]
    assert "promotion.auto-failed" in kinds and "promotion.recorded" not in kinds
    # unconfined: its checks ran with the operator's rights, so it is not landed either
    good = project.agent("good", GOOD_AGENT)
    result, data = project.run_json(
        "--agent", good, "--force", "--isolation", "none", "--promote-green", "--approved-by", "ana"
    )  # fmt: skip
    [record] = data["requirements"]
    assert record["outcome"] == "pass", result.stderr
    assert "unconfined" in record["promotion"]["refused"]
    assert git(project.root, "rev-parse", "HEAD").strip() == head


def test_promote_green_is_refused_before_anything_runs(project: Project) -> None:
    agent = project.agent("good", GOOD_AGENT)
    for args, expected in (
        (("--promote-green",), "needs --approved-by NAME"),
        (("--approved-by", "ana"), "--approved-by without --promote-green"),
        (("--promote-green", "--approved-by", "ana", "--jobs", "2"), "one mission at a time"),
        (("--promote-green", "--approved-by", "a\nb"), "needs --approved-by NAME"),
    ):
        done = project.run("--agent", agent, *args)
        assert done.code == 2 and expected in done.stderr, (args, done.stderr)
    assert not list((project.root / ".harness/runs").glob("harness-*.json"))  # nothing ran
    assert json.loads(project.repo.uh("status", "--json").stdout)["missions"]
