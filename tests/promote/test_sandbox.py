"""Promoting a sandbox: one commit on the current branch, or nothing changed at all."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.promote.conftest import BAD, GOOD, Project
from tests.runtime.helpers import add_manifest


def test_promote_a_verified_sandbox_from_mission_run(project: Project) -> None:
    add_manifest(
        project.repo,
        "fix",
        "runtime_kind: script\nconfig:\n"
        "  script: printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py; "
        "echo new > NEW.md; rm docs/notes.md\n",
    )
    project.repo.commit("manifest")
    run = json.loads(project.repo.uh("mission", "run", "calc", "--runtime", "fix", "--json").stdout)
    assert run["status"] == "succeeded"
    sandbox = project.layout.root / ".harness/sandboxes" / run["sandbox"]
    assert project.repo.uh("verify", "calc", "--sandbox", run["sandbox"]).code == 0
    base = git(project.root, "rev-parse", "HEAD").strip()

    result = project.promote("--approved-by", "Ada Lovelace", "--note", "reviewed the diff")
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"[PROMOTED] calc  sandbox {run['sandbox']} (runtime fix)")
    assert "record: .harness/missions/calc/promotion.yaml" in result.stdout

    # One commit on main, on top of the old HEAD, with exactly the sandbox's change.
    head = git(project.root, "rev-parse", "HEAD").strip()
    assert git(project.root, "rev-parse", "HEAD~1").strip() == base
    assert git(project.root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    # ...plus the mission's `status: done` (the whole sandbox was promoted: it is delivered).
    mission_file = ".harness/missions/calc/mission.yaml"
    assert project.changed() == [mission_file, "NEW.md", "docs/notes.md", "src/calc.py"]
    assert project.show("HEAD", mission_file) == project.show("HEAD~1", mission_file) + (
        "status: done\n"
    )
    assert (project.root / "src/calc.py").read_text() == GOOD
    assert not (project.root / "docs/notes.md").exists()
    assert git(project.root, "status", "--porcelain", "--untracked-files=all") == ""
    message = git(project.root, "log", "-1", "--format=%B")
    assert message.startswith(f"promote calc: sandbox {run['sandbox']} (runtime fix)\n")
    for line in (
        "Mission: calc (Implement add)",
        "Verification: passed (verify-",
        "Approved-by: Ada Lovelace",
        "Note: reviewed the diff",
        f"Uh-Source: sandbox {run['sandbox']} (runtime fix)",
    ):
        assert line in message

    record = project.record()
    assert record["schema_version"] == "uh.promotion.v0"
    assert record["decision"] == "promoted" and record["approved_by"] == "Ada Lovelace"
    assert record["sandbox_id"] == run["sandbox"] and record["runtime"] == "fix"
    assert record["changes"] == ["NEW.md", "docs/notes.md", "src/calc.py"]
    assert record["commit"] == head and record["parent_commit"] == base
    assert record["onto_branch"] == "main" and record["base_commit"] == base
    assert record["verification_status"] == "passed" and record["forced"] is False
    assert record["diff_hash"] == run["diff_hash"]  # the very change mission run hashed
    assert record["audit_event_id"] in message
    assert record["history"] == []
    assert sandbox.is_dir()  # the sandbox stays for inspection

    # One promotion.recorded in the mission log and the same one in the audit log.
    [mission_event] = [
        e
        for e in project.events(".harness/missions/calc/events.ndjson")
        if e["event"] == "promotion.recorded"
    ]
    [audit_event] = [
        e for e in project.events(".harness/audit/events.ndjson") if e["event"].startswith("promo")
    ]
    assert mission_event == audit_event
    assert mission_event["event_id"] == record["audit_event_id"]
    assert mission_event["commit"] == head and mission_event["decision"] == "promoted"
    # The tail of every log shows it once.
    tail = project.repo.uh("tail")
    assert tail.stdout.count("promotion.recorded") == 1
    assert "promoted " + run["sandbox"] in tail.stdout


def test_harness_state_and_ignored_files_are_never_promoted(project: Project) -> None:
    entry = project.sandbox(
        {
            "src/calc.py": GOOD,
            ".harness/missions/calc/mission.yaml": "id: calc\nacceptance_criteria: []\n",
            ".harness/missions/calc/notes.txt": "agent scratch\n",
            "src/__pycache__/calc.cpython-311.pyc": "bytes",
        }
    )
    # One gate for every route: the sandbox's verify runs the harness's write-scope stage,
    # which refuses the edited mission file...
    verified = project.verify(entry)
    assert verified.code == 1 and "agent_touched_protected_path" in verified.stdout
    # ...and a forced promotion still carries none of .harness/ nor ignored files.
    data = project.promote_json("--approved-by", "ada", "--force")
    assert data["changes"] == ["src/calc.py"]
    # The mission file changes only by the promotion's own `status: done`, never the agent's.
    assert project.changed() == [".harness/missions/calc/mission.yaml", "src/calc.py"]
    mission = (project.root / ".harness/missions/calc/mission.yaml").read_text()
    assert "acceptance_criteria: []" not in mission and mission.endswith("status: done\n")


def test_unverified_needs_force_and_the_record_says_so(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1
    assert "verification is unverified (never verified)" in refused.stderr
    assert "needs --force" in refused.stderr and refused.stderr.count("\n") == 1
    assert project.picture() == before
    assert not (project.root / ".harness/missions/calc/promotion.yaml").exists()
    assert project.promotion_events() == []

    forced = project.promote_json("--approved-by", "ada", "--force")
    assert forced["forced"] is True and forced["verification_status"] == "unverified"
    assert "Uh-Verification: unverified (forced)" in git(project.root, "log", "-1", "--format=%B")
    assert forced["sandbox_id"] == entry.id


def test_a_failed_verify_needs_force(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": BAD})
    assert project.verify(entry).code == 1
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1 and "verification is failed" in refused.stderr
    assert project.picture() == before
    forced = project.promote_json("--approved-by", "ada", "--force")
    assert forced["forced"] is True and forced["verification_status"] == "failed"
    assert (project.root / "src/calc.py").read_text() == BAD


def test_a_sandbox_changed_after_its_verify_is_stale(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    (project.root / entry.worktree / "src/calc.py").write_text(BAD)  # after the verdict
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1 and "verification is stale" in refused.stderr
    assert project.picture() == before
    assert project.verify(entry).code == 1  # verified again: now it is simply failed
    assert "verification is failed" in project.promote("--approved-by", "ada").stderr


def test_force_is_not_recorded_when_the_verification_passed(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    data = project.promote_json("--approved-by", "ada", "--force")
    assert data["forced"] is False and data["verification_status"] == "passed"


def test_a_dirty_tree_is_refused(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    (project.root / "docs/notes.md").write_text("edited, not committed\n")
    (project.root / "scratch.txt").write_text("untracked\n")
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1
    assert "uncommitted changes: docs/notes.md, scratch.txt" in refused.stderr
    assert project.picture() == before
    assert project.promotion_events() == []
    git(project.root, "add", "docs/notes.md")  # staged counts too
    (project.root / "scratch.txt").unlink()
    staged = project.picture()
    assert project.promote("--approved-by", "ada").code == 1
    assert project.picture() == staged


def test_a_conflicting_promotion_is_refused_naming_the_files(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD, "docs/notes.md": "agent notes\n", "x.md": "x\n"})
    assert project.verify(entry).code == 0
    project.repo.write("src/calc.py", "def add(a, b):\n    return b + a  # main moved on\n")
    project.repo.write("docs/notes.md", "human notes\n")
    project.repo.commit("main moves on")
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1
    assert "does not apply cleanly onto main: conflicts in docs/notes.md, src/calc.py" in (
        refused.stderr
    )
    assert project.picture() == before
    assert not (project.root / "x.md").exists()
    assert not (project.root / ".harness/missions/calc/promotion.yaml").exists()
    # The paths that do not conflict can still go, chosen with --change.
    data = project.promote_json("--approved-by", "ada", "--change", "x.md")
    assert data["changes"] == ["x.md"] and project.changed() == ["x.md"]


def test_a_change_main_made_elsewhere_in_the_file_merges(project: Project) -> None:
    project.repo.write("docs/notes.md", "one\ntwo\nthree\nfour\nfive\nsix\n")
    project.repo.commit("longer notes")
    entry = project.sandbox({"docs/notes.md": "one\ntwo\nthree\nfour\nfive\nSIX\n"})
    assert project.verify(entry).code == 1  # src/calc.py unchanged: the criterion fails
    project.repo.write("docs/notes.md", "ONE\ntwo\nthree\nfour\nfive\nsix\n")
    project.repo.commit("main edits the top")
    project.promote_json("--approved-by", "ada", "--force")
    assert (project.root / "docs/notes.md").read_text() == "ONE\ntwo\nthree\nfour\nfive\nSIX\n"


def test_change_limits_the_promotion(project: Project) -> None:
    entry = project.sandbox(
        {
            "src/calc.py": GOOD,
            "src/extra.py": "X = 1\n",
            "docs/notes.md": "agent notes\n",
            "docs/guide/a.md": "a\n",
            "README.md": "# agent readme\n",
        }
    )
    assert project.verify(entry).code == 0
    data = project.promote_json(
        "--approved-by",
        "ada",
        "--change",
        "src/calc.py",
        "--change",
        "docs/guide",
        "--change",
        "*.md",
    )
    assert data["changes"] == ["README.md", "docs/guide/a.md", "src/calc.py"]
    assert data["change_filter"] == ["src/calc.py", "docs/guide", "*.md"]
    assert project.changed() == ["README.md", "docs/guide/a.md", "src/calc.py"]
    assert (project.root / "docs/notes.md").read_text() == "notes\n"
    assert not (project.root / "src/extra.py").exists()
    message = git(project.root, "log", "-1", "--format=%B")
    assert "Changes: 3 path(s), limited by --change src/calc.py docs/guide *.md" in message


def test_change_naming_nothing_in_the_diff_is_refused(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    before = project.picture()
    for args, named in (
        (
            ["--change", "src/calk.py"],
            "--change src/calk.py: not among the changed paths (src/calc.py)",
        ),
        (["--change", "src/calc.py", "--change", "docs/"], "--change docs/: not among"),
        (["--change", "../etc/passwd"], "'..' is not allowed"),
        (["--change", "/etc/passwd"], "outside the root"),
    ):
        refused = project.promote("--approved-by", "ada", *args)
        assert refused.code == 2, args
        assert named in refused.stderr
    assert project.picture() == before
    absolute = str(project.root / "src/calc.py")
    assert project.promote_json("--approved-by", "ada", "--change", absolute)["changes"] == [
        "src/calc.py"
    ]


def test_rejected_and_deferred_change_no_code_and_history_is_kept(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": BAD})
    (project.root / "docs/notes.md").write_text("dirty is fine for a decision without code\n")
    before = project.picture()
    deferred = project.promote_json("--approved-by", "bob", "--decision", "deferred")
    assert deferred["decision"] == "deferred" and deferred["commit"] is None
    assert (
        deferred["changes"] == ["src/calc.py"] and deferred["verification_status"] == "unverified"
    )
    rejected = project.promote(
        "--approved-by", "ada", "--decision", "rejected", "--note", "subtracts"
    )
    assert rejected.code == 0 and rejected.stdout.startswith("[REJECTED] calc  sandbox " + entry.id)
    assert "no code changed" in rejected.stdout
    assert project.picture() == before

    record = project.record()
    assert record["decision"] == "rejected" and record["approved_by"] == "ada"
    assert record["note"] == "subtracts" and record["forced"] is False
    assert [h["decision"] for h in record["history"]] == ["deferred"]
    assert record["history"][0]["approved_by"] == "bob"
    assert record["history"][0]["audit_event_id"] == deferred["audit_event_id"]
    assert project.promotion_events() == ["promotion.recorded", "promotion.recorded"]
    audit = project.promotion_events(".harness/audit/events.ndjson")
    assert audit == ["promotion.recorded", "promotion.recorded"]

    # A later promotion keeps both earlier decisions, oldest first.
    (project.root / "docs/notes.md").write_text("notes\n")
    project.promote_json("--approved-by", "carol", "--force")
    record = project.record()
    assert record["decision"] == "promoted"
    assert [h["decision"] for h in record["history"]] == ["deferred", "rejected"]


def test_nothing_to_promote_twice(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    project.promote_json("--approved-by", "ada")
    before = project.picture()
    again = project.promote("--approved-by", "ada")
    assert again.code == 1 and "nothing to apply: main already has the changes" in again.stderr
    assert project.picture() == before
    assert [h["decision"] for h in project.record()["history"]] == []


def test_an_empty_sandbox_promotes_nothing(project: Project) -> None:
    entry = project.sandbox({})
    assert project.verify(entry).code == 1
    refused = project.promote("--approved-by", "ada", "--force")
    assert refused.code == 1 and "changes nothing against its base" in refused.stderr
    assert project.promote("--approved-by", "ada", "--decision", "rejected").code == 0


def test_detached_head_is_refused(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    git(project.root, "switch", "--detach", "-q", "HEAD")
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 1 and "HEAD is detached" in refused.stderr
    assert project.picture() == before


def test_a_broken_promotion_yaml_refuses_before_any_change(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    (project.root / ".harness/missions/calc/promotion.yaml").write_text("decision: [\n")
    before = project.picture()
    refused = project.promote("--approved-by", "ada")
    assert refused.code == 2 and "promotion.yaml" in refused.stderr
    assert project.picture() == before


def test_binary_and_executable_files_are_promoted_as_they_are(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    worktree = project.root / entry.worktree
    (worktree / "logo.bin").write_bytes(bytes(range(256)))
    script = worktree / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    assert project.verify(entry).code == 0
    project.promote_json("--approved-by", "ada")
    assert (project.root / "logo.bin").read_bytes() == bytes(range(256))
    assert (project.root / "run.sh").stat().st_mode & 0o111
    assert git(project.root, "ls-files", "-s", "run.sh").startswith("100755 ")
