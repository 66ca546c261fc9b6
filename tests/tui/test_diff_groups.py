"""The runtimes view's diff groups pane (uh_tui/widgets/diff_groups.py): the consensus under
the groups, as uh_core's runtime view reads it from the comparison."""

from __future__ import annotations

import io

from rich.console import Console

from uh_core.events.fold import MissionFold
from uh_core.models.comparison import Comparison, Consensus, ConsensusHunk, DiffGroup, RuntimeRow
from uh_core.workspace.runtime_view import runtime_views
from uh_tui.widgets.diff_groups import SHOWN_HUNKS, describe


def _text(comparison: Comparison) -> str:
    view, rows = runtime_views(MissionFold("m"), comparison)
    out = io.StringIO()
    Console(file=out, width=160, color_system=None).print(describe(view, rows))
    return out.getvalue()


def _comparison(consensus: Consensus | None) -> Comparison:
    rows = [RuntimeRow(runtime=f"r{n}", status="succeeded", diff_hash=f"h{n}") for n in (1, 2)]
    groups = [DiffGroup(diff_hash=f"h{n}", runtimes=[f"r{n}"]) for n in (1, 2)]
    return Comparison(
        mission_id="m", status="divergent", runtimes=rows, groups=groups, consensus=consensus
    )


def test_the_consensus_shows_under_the_groups_agreed_first() -> None:
    agreed = [ConsensusHunk(file="a.py", at=2, changed=2, runtimes=["r1", "r2"])]
    disputed = [ConsensusHunk(file=f"f{n}.py", at=n, changed=1, runtimes=["r1"]) for n in range(12)]
    found = Consensus(
        status="verified", detail="applied and verified in sbx-m-consensus-1", agree_min=2,
        considered=["r1", "r2"], hunks=agreed, disputed=disputed, sandbox="sbx-m-consensus-1",
    )  # fmt: skip
    text = _text(_comparison(found))
    assert "consensus: VERIFIED: 1 hunk(s) made by >= 2 of 2, 12 disputed" in text
    assert "agreed a.py:2: r1, r2" in text and "disputed f0.py:0: r1" in text
    assert f"… {13 - SHOWN_HUNKS} more in runtime-comparison.md" in text


def test_no_consensus_line_when_none_was_built() -> None:
    text = _text(_comparison(Consensus(status="not_built", detail="fewer than two")))
    assert "consensus" not in text
    assert "consensus" not in _text(_comparison(None))
