"""What an operator looks at before deciding: the change, its verification, its comparison group.

``review(layout, mission_id, sandbox_id=..., branch=...)`` resolves the source exactly as
``uh-core promote`` will (``source.resolve``: the same tree, diff hash and verification
status), renders its patch (``.harness/`` left out for a sandbox, as promote does), counts
lines per file, finds the runtime's group in ``runtime-comparison.json`` and reads the
mission's last decision. Mission Control's review screen shows this; nothing here writes.

It also scans the whole patch for the shapes of judge tampering (``uh_core.judge.scan``):
``review_lines``, the added lines a human should read before trusting a green, read from the
source itself whatever any record says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.diff.stats import FileStat, hunk_stats
from uh_core.errors import UhError
from uh_core.git import git
from uh_core.judge.scan import scan_text
from uh_core.layout import Layout
from uh_core.models.comparison import read_comparison
from uh_core.models.promotion import PromotionRecord
from uh_core.models.sandbox import HumanEdit
from uh_core.promote.record import read_promotion
from uh_core.promote.source import Source, resolve

MAX_PATCH = 8 << 20  # characters of patch kept for display; the rest is cut (``cut``)


@dataclass(frozen=True)
class Group:
    """The runtime's diff-equivalence group in the mission's last comparison."""

    diff_hash: str
    runtimes: tuple[str, ...]
    agreeing: bool
    comparison_status: str
    current: bool  # the sandbox's diff is still the one compared


@dataclass(frozen=True)
class Review:
    source: Source
    patch: str
    stats: list[FileStat]
    cut: bool = False
    group: Group | None = None
    last: PromotionRecord | None = None
    notes: list[str] = field(default_factory=list)  # files that did not read, shown, not fatal
    # added lines with a shape of judge tampering ("path:line: code: text"): needs review
    review_lines: list[str] = field(default_factory=list)
    # what a human changed by hand in the source's sandbox (sandbox shell), apart from its agent
    human: list[HumanEdit] = field(default_factory=list)

    @property
    def flags(self) -> tuple[str, ...]:
        """The ``uh-core promote`` arguments that name this source."""
        if self.source.kind == "branch" and self.source.branch:
            return ("--branch", self.source.branch)
        assert self.source.sandbox_id is not None
        return ("--sandbox", self.source.sandbox_id)


def review(
    layout: Layout, mission_id: str, *, sandbox_id: str | None = None, branch: str | None = None
) -> Review:
    """Raises ``UhError`` (one line, naming what is missing) when there is nothing to review."""
    source = resolve(layout, mission_id, sandbox_id, branch)
    exclude = [":(exclude).harness"] if source.exclude_harness else []
    patch = git(
        layout.root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M",
        source.base_commit, source.tree, "--", ".", *exclude,
    )  # fmt: skip
    cut = len(patch) > MAX_PATCH
    shown = patch[:MAX_PATCH]
    notes: list[str] = []
    stats: list[FileStat] = []
    try:
        stats = hunk_stats(shown)
    except UhError as exc:  # a cut patch may end mid-hunk
        notes.append(f"per-file counts unavailable: {exc.one_line()}")
    last: PromotionRecord | None = None
    try:
        last = read_promotion(layout, mission_id)
    except UhError as exc:
        notes.append(exc.one_line())
    suspect = [str(hit) for hit in scan_text(patch)]  # the whole patch, not the part shown
    group = _group(layout, source, notes)
    return Review(source, shown, stats, cut, group, last, notes, suspect, _by_hand(layout, source))


def _by_hand(layout: Layout, source: Source) -> list[HumanEdit]:
    """The human edits of the source's sandbox: its own, or the one behind a harness branch."""
    from uh_core.sandbox.human import read_edits
    from uh_core.sandbox.worktree import list_sandboxes

    sandbox_id = source.sandbox_id
    if sandbox_id is None and source.branch is not None:
        behind = [e for e in list_sandboxes(layout) if e.branch == source.branch]
        sandbox_id = behind[-1].id if behind else None
    if sandbox_id is None:
        return []
    try:
        return list(read_edits(layout, sandbox_id).edits)
    except UhError:
        return []


def _group(layout: Layout, source: Source, notes: list[str]) -> Group | None:
    if source.kind != "sandbox" or not source.runtime:
        return None
    path = layout.comparison_file(source.mission_id)
    if not path.is_file():
        return None
    try:
        comparison = read_comparison(path, layout.rel(path))
    except FileNotFoundError:
        return None
    except UhError as exc:  # over the reading caps, not JSON, not a comparison
        notes.append(exc.one_line())
        return None
    for group in comparison.groups:
        if source.runtime in group.runtimes:
            return Group(
                group.diff_hash,
                tuple(group.runtimes),
                bool(set(group.runtimes) & set(comparison.agreement_runtimes)),
                comparison.status,
                current=group.diff_hash == source.diff_hash,
            )
    return None
