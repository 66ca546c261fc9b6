"""The operator's review of what an agent produced, and the decision.

Reads ``uh_core.promote.review`` in a thread worker (the same source, patch and verification
``uh-core promote`` will judge), shows the diff with per-file counts, the verification, the
comparison group and the last decision; the approver types their name and presses Promote,
Reject or Defer. The decision is a ``uh-core promote`` launch; its outcome arrives through
the event log (the mission's ``promotion.yaml`` and ``promotion.recorded``) like any other.
A refusal (dirty tree, conflict, not verified) is shown in place. ``ctrl+x`` discards the
sandbox, wherever the focus is (``x`` would type into the name box); a branch has none, and
its review does not offer the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Checkbox, Header, Input, Static

from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.workspace.state import MissionView, Snapshot
from uh_tui import look, ticking
from uh_tui.screens.live import showing
from uh_tui.widgets.diff_view import DiffView
from uh_tui.widgets.file_stats import FileStatsTable
from uh_tui.widgets.footer import UhFooter
from uh_tui.widgets.status_line import StatusLine

if TYPE_CHECKING:  # the engine side is imported when a review opens, not at start
    from uh_core.promote.review import Review

DECISIONS = ("promoted", "rejected", "deferred")


class ReviewScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="app.back"),
        # ctrl+x, not x: the name box has the focus, and x typed an x there. A priority
        # binding works wherever the focus is (in this screen it replaces the box's "cut").
        Binding("ctrl+x", "discard", "Discard sandbox", id="review.discard", priority=True),
    ]

    def __init__(
        self,
        snapshot: Snapshot,
        mission_id: str,
        *,
        sandbox_id: str | None = None,
        branch: str | None = None,
    ) -> None:
        super().__init__()
        self.ready = False
        self.snapshot = snapshot
        self.mission_id = mission_id
        self.sandbox_id = sandbox_id
        self.branch = branch
        self.review: Review | None = None
        self.problem: str | None = None
        self._head: str | None = None  # the head's text as last drawn

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="review-head")
        with Horizontal(id="review-body"):
            yield FileStatsTable(id="review-files")
            yield DiffView(id="review-diff")
        with Horizontal(id="review-form"):
            yield Input(placeholder="approver (your name)", id="review-approver")
            yield Input(placeholder="note (optional)", id="review-note")
            yield Checkbox("force", id="review-force")
            yield Button("Promote", variant="success", id="review-promoted")
            yield Button("Reject", variant="error", id="review-rejected")
            yield Button("Defer", id="review-deferred")
        yield StatusLine(id="status-line")
        yield UhFooter()

    def on_mount(self) -> None:
        self.query_one("#review-files", FileStatsTable).border_title = "files"
        self.query_one("#review-diff", DiffView).border_title = "diff"
        self.query_one("#review-diff", DiffView).show_message("reading the change…")
        self.sub_title = f"review · {self.mission_id}"
        self._render_head()
        self.ready = True
        for box in self.query(Input):
            box.cursor_blink = False  # a steady cursor: a frame does not depend on when it is taken
        self.query_one("#review-approver", Input).focus()
        self._load()
        ticking.every_few_seconds(self, self._tick)

    def _tick(self) -> None:
        """``last decision … 3m ago`` moves with the clock."""
        if showing(self):
            self._render_head()

    # -- what the app's keys act on --------------------------------------------------------

    def selected_mission(self) -> str:
        return self.mission_id

    def selected_sandbox(self) -> str | None:
        if self.review is not None:
            return self.review.source.sandbox_id
        return self.sandbox_id

    def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._render_head()

    def add_events(self, _: object) -> None:
        pass

    # -- loading -----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="review")
    def _load(self) -> None:
        from uh_core.promote.review import review

        try:
            found = review(
                Layout(self.snapshot.root),
                self.mission_id,
                sandbox_id=self.sandbox_id,
                branch=self.branch,
            )
        except UhError as exc:
            self.app.call_from_thread(self._failed, exc.one_line())
            return
        self.app.call_from_thread(self._loaded, found)

    def _failed(self, message: str) -> None:
        self.problem = message
        if not showing(self):
            return  # closed before the change was read
        self.query_one("#review-diff", DiffView).show_message(f"nothing to review: {message}")
        for button in self.query(Button):
            button.disabled = True
        self._render_head()

    def _loaded(self, found: Review) -> None:
        self.review = found
        if not showing(self):
            return  # closed before the change was read
        diff = self.query_one("#review-diff", DiffView)
        if found.patch.strip():
            diff.show_patch(found.patch)
            if found.cut:
                diff.write(Text("… cut: the patch is larger than shown", style="dim"))
        else:
            diff.show_message("empty change: nothing would be promoted")
        files = self.query_one("#review-files", FileStatsTable)
        files.show(found.stats)
        added, removed = sum(s.added for s in found.stats), sum(s.removed for s in found.stats)
        files.border_title = f"files · +{added} −{removed}"
        self.query_one("#review-force", Checkbox).value = False
        self._render_head()
        self.refresh_bindings()  # the change names its sandbox (or none: a branch)

    def _render_head(self) -> None:
        head = _head(
            self.mission_id, self.review, self.problem, self.snapshot.mission(self.mission_id)
        )
        key = "\n".join(part.plain for part in head.renderables if isinstance(part, Text))
        if key != self._head:  # an unchanged head is not drawn again
            self._head = key
            self.query_one("#review-head", Static).update(head)

    # -- the decision ------------------------------------------------------------------------

    @on(Button.Pressed)
    def _decide(self, event: Button.Pressed) -> None:
        decision = (event.button.id or "").removeprefix("review-")
        if decision not in DECISIONS or self.review is None:
            return
        approver = self.query_one("#review-approver", Input).value.strip()
        if not approver:
            self.app.say(  # type: ignore[attr-defined]
                Text("✗ type your name first: who approves this decision?", style="bold red")
            )
            self.query_one("#review-approver", Input).focus()
            return
        from uh_tui import launch as launches

        self.app.start(  # type: ignore[attr-defined]
            launches.promote(
                self.snapshot.root,
                self.mission_id,
                self.review.flags,
                decision,
                approver,
                force=self.query_one("#review-force", Checkbox).value,
                note=self.query_one("#review-note", Input).value.strip(),
            )
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A branch under review has no sandbox: ``ctrl+x`` is not offered (hidden from the
        footer and the keys) rather than offered and then refused."""
        if action == "discard":
            return self.selected_sandbox() is not None
        return True

    def action_discard(self) -> None:
        sandbox = self.selected_sandbox()
        if sandbox is not None:
            self.app.confirm_discard(sandbox)  # type: ignore[attr-defined]


MAX_EDITS = 5  # human edits listed in the head (human.json holds them all)
_HUMAN = {
    "Uh-Steered": "steered {}",
    "Uh-Answered": "answered {}",
    "Uh-Human-Lines": "{} line(s) by hand",
}


def _human(trailers: tuple[str, ...]) -> str:
    """The promotion's human trailers (``Uh-Steered: 2`` …) as the review says them:
    ``steered 2, answered 1, 14 line(s) by hand``."""
    said = []
    for trailer in trailers:
        key, _, value = trailer.partition(": ")
        said.append(_HUMAN.get(key, key + " {}").format(value))
    return ", ".join(said)


def _head(
    mission_id: str, found: Review | None, problem: str | None, mission: MissionView | None
) -> Group:
    line = Text(f"{mission_id} · review", style="bold")
    parts: list[Text] = [line]
    if problem:
        parts.append(Text(f"⚠ {problem}", style="red"))
    elif found is None:
        line.append("  reading…", style="dim")
    else:
        source = found.source
        line.append(f"  {source.label}", style="bold")
        line.append(f"  base {source.base_commit[:10]} · diff {source.diff_hash}", style="dim")
        verified = Text("verification ")
        verified.append_text(look.status(source.verified.status))
        if source.verified.detail:
            verified.append(f"  {look.short(source.verified.detail, 90)}", style="dim")
        if source.verified.status != "passed":
            verified.append("   promoting needs force", style="yellow")
        parts.append(verified)
        if source.verified.proof:  # do the tests test the change?
            vacuous = " vacuous 0" not in source.verified.proof
            parts.append(Text(source.verified.proof, style="yellow" if vacuous else "dim"))
        if source.verified.human:  # a human steered, answered or edited: said, in yellow
            parts.append(Text("a human took part: " + _human(source.verified.human), "yellow"))
        for edit in found.human[:MAX_EDITS]:  # the lines that are the human's, not the agent's
            files = ", ".join(look.short(path, 60) for path in edit.files[:4])
            more = f" +{len(edit.files) - 4} more" if len(edit.files) > 4 else ""
            line = Text(f"  by hand ({look.short(edit.by, 40)}): {files}{more} ", "yellow")
            line.append(f"+{edit.added} -{edit.removed}  {look.short(edit.patch, 90)}", "dim")
            parts.append(line)
        if found.group is not None:
            group = found.group
            text = Text(f"comparison {group.comparison_status}: group {group.diff_hash} ")
            text.append(", ".join(group.runtimes), style="bold")
            text.append(" (agreeing)" if group.agreeing else " (divergent)", style="dim")
            if not group.current:
                text.append("  — the sandbox changed since it was compared", style="yellow")
            parts.append(text)
        if found.review_lines:  # the agent's code the judge ran could have lied about it
            from uh_core.judge.scan import headline

            head = look.badge("needs review")
            head.append(f" {headline(found.review_lines, 0)}:", style="yellow")
            parts.append(head)
            parts += [Text(f"  {line}", style="yellow") for line in found.review_lines[:8]]
        for note in found.notes:
            parts.append(Text(f"⚠ {note}", style="yellow"))
    decided = mission.promotion if mission else None
    if decided is not None:
        last = Text("last decision ")
        last.append_text(look.status(decided.decision))
        last.append(
            f" by {decided.approved_by} · {decided.source} · {look.ago(decided.promoted_at)}"
            + (" · forced" if decided.forced else "")
            + (" · auto" if decided.auto else "")
            + (f" · commit {decided.commit[:10]}" if decided.commit else ""),
            style="dim",
        )
        parts.append(last)
    return Group(*parts)
