"""One runtime's work on one mission: its result, per-file +/− counts and the coloured diff.

The patch is read in a thread worker (it may be large), from the runtime's sandbox
worktree, where ``uh-core mission run`` left ``.harness/missions/<id>/diff.patch`` and
``runtime-session.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header, Static

from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.base import load_yaml_model
from uh_core.models.runtime import RuntimeResult
from uh_core.workspace.state import RuntimeView, Snapshot
from uh_tui import look
from uh_tui.screens.live import showing
from uh_tui.widgets.diff_view import DiffView
from uh_tui.widgets.file_stats import FileStatsTable
from uh_tui.widgets.footer import UhFooter
from uh_tui.widgets.status_line import StatusLine

if TYPE_CHECKING:  # unidiff is imported when a diff is first shown, not at start
    from uh_core.diff.stats import FileStat

MAX_PATCH = 8 << 20  # bytes of a patch shown; the rest is cut with a note


class RuntimeScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="app.back")]

    def __init__(self, snapshot: Snapshot, mission_id: str, runtime: str) -> None:
        super().__init__()
        self.ready = False
        self.snapshot = snapshot
        self.mission_id = mission_id
        self.runtime = runtime
        self._loaded_for: tuple[str | None, str | None, str] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="runtime-head")
        with Horizontal(id="runtime-body"):
            yield FileStatsTable(id="runtime-files")
            yield DiffView(id="runtime-diff")
        yield StatusLine(id="status-line")
        yield UhFooter()

    def on_mount(self) -> None:
        self.query_one("#runtime-files", FileStatsTable).border_title = "files"
        self.query_one("#runtime-diff", DiffView).border_title = "diff"
        self.sub_title = f"{self.mission_id} · {self.runtime}"
        self.show(self.snapshot)
        self.ready = True
        self.query_one("#runtime-diff", DiffView).focus()

    def selected_mission(self) -> str:
        return self.mission_id

    def selected_sandbox(self) -> str | None:
        row = self._row()
        return row.sandbox if row else None

    def _row(self) -> RuntimeView | None:
        mission = self.snapshot.mission(self.mission_id)
        if mission is None:
            return None
        return next((r for r in mission.runtimes if r.runtime == self.runtime), None)

    def add_events(self, _: object) -> None:
        """Events arrive while the diff is open: the head and diff follow ``show``."""

    def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        row = self._row()
        self.query_one("#runtime-head", Static).update(_head(self.mission_id, self.runtime, row))
        key = (row.sandbox, row.diff_hash, row.status) if row else None
        if key != self._loaded_for:
            self._loaded_for = key
            if row is None or not row.sandbox:
                self.query_one("#runtime-diff", DiffView).show_message(
                    "no sandbox: nothing to show"
                )
            elif row.status == "running":
                self.query_one("#runtime-diff", DiffView).show_message(
                    "running — the diff is captured when it finishes"
                )
            else:
                self._load(row.sandbox)

    def _worktree(self, sandbox_id: str) -> Path | None:
        found = next((s for s in self.snapshot.sandboxes if s.id == sandbox_id), None)
        if found is None:
            return None
        return self.snapshot.root / found.worktree

    @work(thread=True, exclusive=True, group="runtime-diff")
    def _load(self, sandbox_id: str) -> None:
        worktree = self._worktree(sandbox_id)
        if worktree is None or not worktree.is_dir():
            message = f"sandbox {sandbox_id} was discarded: its diff is gone"
            self.app.call_from_thread(self._show_message, message)
            return
        # uh's records about the sandbox live in the operator's .harness/sandboxes/<id>/
        inner = Layout(worktree, records=Layout(self.snapshot.root).sandbox_evidence(sandbox_id))
        patch_path = inner.diff_file(self.mission_id)
        session_path = inner.session_file(self.mission_id)
        session: RuntimeResult | str | None = None
        try:
            session = load_yaml_model(session_path, RuntimeResult, session_path.name)
        except UhError as exc:
            session = exc.one_line() if session_path.exists() else None
        try:
            with open(patch_path, "rb") as handle:
                data = handle.read(MAX_PATCH + 1)
        except OSError:
            self.app.call_from_thread(self._show_message, "no diff.patch recorded for the sandbox")
            return
        from uh_core.diff.stats import hunk_stats

        cut = len(data) > MAX_PATCH
        text = data[:MAX_PATCH].decode("utf-8", "replace")
        try:
            stats = hunk_stats(text)
        except UhError as exc:
            stats = []
            session = f"{session_path.name}: {exc.one_line()}" if session is None else session
        self.app.call_from_thread(self._show_patch, text, stats, session, cut)

    def _show_message(self, message: str) -> None:
        if not showing(self):
            return  # closed before the diff was read
        self.query_one("#runtime-diff", DiffView).show_message(message)
        self.query_one("#runtime-files", FileStatsTable).show([])

    def _show_patch(
        self, text: str, stats: list[FileStat], session: RuntimeResult | str | None, cut: bool
    ) -> None:
        if not showing(self):
            return  # closed before the diff was read
        diff = self.query_one("#runtime-diff", DiffView)
        if text.strip():
            diff.show_patch(text)
            if cut:
                diff.write(Text(f"… cut at {MAX_PATCH >> 20} MB", style="dim"))
        else:
            diff.show_message("empty diff: the runtime changed nothing")
        self.query_one("#runtime-files", FileStatsTable).show(stats)
        files = self.query_one("#runtime-files", FileStatsTable)
        files.border_title = (
            f"files · +{sum(s.added for s in stats)} −{sum(s.removed for s in stats)}"
        )
        if isinstance(session, str):
            diff.border_title = f"diff · ⚠ {look.short(session, 60)}"
        elif session is not None:
            diff.border_title = f"diff · session {session.status}, exit {session.exit_code}"


def _head(mission_id: str, runtime: str, row: RuntimeView | None) -> Group | Text:
    line = Text(f"{mission_id} · {runtime}", style="bold")
    if row is None:
        line.append("  not in this mission's runs any more", style="dim")
        return line
    line.append("  ")
    line.append_text(look.status(row.status))
    if row.role:
        line.append("  ")
        line.append_text(look.status(row.role))
    line.append(
        f"   exit {row.exit_code if row.exit_code is not None else '-'}"
        f" · {look.duration(row.duration_ms)} · diff {row.diff_hash or '-'}"
        f" · sandbox {row.sandbox or '-'}",
        style="dim",
    )
    parts = [line]
    message = row.final_message or row.last_message
    if message:
        parts.append(Text("“" + look.short(message, 200) + "”", style="italic"))
    if row.error:
        parts.append(Text(f"⚠ {look.short(row.error, 200)}", style="red"))
    return Group(*parts)
