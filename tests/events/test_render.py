"""``describe``: one line per event, its counts agreeing with their nouns."""

from __future__ import annotations

from uh_core.events.render import describe
from uh_core.models.events import DiffCaptured, VerificationStarted
from uh_core.shown import plural


def test_counts_agree_with_their_nouns() -> None:
    assert (
        describe(VerificationStarted(total_checks=1, total_acceptance=1)) == "1 check, 1 criterion"
    )
    assert (
        describe(VerificationStarted(total_checks=0, total_acceptance=3)) == "0 checks, 3 criteria"
    )
    one = describe(DiffCaptured(path="d.patch", base="abc", files=1, bytes=1))
    assert one == "d.patch: 1 file, 1 byte against abc"
    assert plural(2, "sandbox") == "2 sandboxes" and plural(1, "sandbox") == "1 sandbox"


def test_a_generic_line_shows_lists_as_json_and_no_process_identity() -> None:
    """``tail`` printed Python's repr (``owner={'pid': 11158, …}``, ``['alpha', 'beta']``):
    lists and mappings read as JSON, and the runner's identity is left to ``tail --json``."""
    from uh_core.models.events import Owner, RuntimeComparisonSummary, RuntimeStarted

    started = RuntimeStarted(
        runtime="fake", sandbox_id="sbx-1", owner=Owner(pid=11158, start_time=142132, host="vm")
    )
    assert describe(started) == "runtime=fake sandbox_id=sbx-1"
    summary = RuntimeComparisonSummary(status="divergent", agreement_runtimes=["alpha", "beta"])
    assert 'agreement_runtimes=["alpha","beta"]' in describe(summary)
