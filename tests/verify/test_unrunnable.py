"""What cannot run is refused where the mission is read, with file, line and field; a check
that cannot start at all is that criterion's ``blocked`` with the reason — never a
traceback, never a mission left ``running``."""

from __future__ import annotations

from tests.conftest import Repo
from uh_core.verify.execute import CheckRunner, Job


def test_a_nul_byte_in_a_command_is_refused_by_validate_naming_the_field(repo: Repo) -> None:
    repo.mission(
        "nul",
        'id: nul\nacceptance_criteria:\n  - id: a\n    check_command: "echo a\\0b"\n'
        'verification:\n  required_checks:\n    - name: r\n      command: "true\\0"\n',
    )
    validated = repo.uh("mission", "validate", "nul")
    assert validated.code == 2 and "Traceback" not in validated.stderr
    assert ".harness/missions/nul/mission.yaml:4:" in validated.stderr
    assert "acceptance_criteria[0].check_command" in validated.stderr and "NUL" in validated.stderr
    verified = repo.uh("verify", "nul")
    assert verified.code == 2 and "Traceback" not in verified.stderr
    listed = repo.uh("mission", "list")
    assert "running" not in listed.stdout


def test_a_check_that_cannot_start_is_unobserved_with_the_reason(repo: Repo) -> None:
    runner = CheckRunner(
        cwd=repo.root, log_dir=repo.root / "logs", env={}, repeat=1, grace=1.0, rel=str
    )
    job = Job("echo a\x00b", "bad", timeout=10)
    evidence = runner.run(job)
    assert evidence.status == "unobserved"
    assert "could not start" in evidence.stderr_snippet
