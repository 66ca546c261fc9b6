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
