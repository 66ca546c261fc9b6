"""Sandboxes from the index: id, mission, runtime, kind, branch, base, created, state."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import SandboxView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, Row


class SandboxesTable(KeyedTable):
    COLUMNS = (
        ("id", "sandbox"),
        ("mission", "mission"),
        ("runtime", "runtime"),
        ("kind", "kind"),
        ("branch", "branch"),
        ("base", "base"),
        ("created", "created"),
        ("state", "state"),
    )
    MAX_WIDTHS = {"id": 40}
    FLEX = "branch"
    SHRINK = ("created", "base", "kind", "id", "mission")

    def show(self, sandboxes: list[SandboxView], errors: dict[str, str]) -> None:
        self.set_rows([_row(s, s.id in errors) for s in sandboxes])


def _state(s: SandboxView, launch_failed: bool) -> Text:
    if launch_failed:
        return Text("✗ discard failed", style="bold red")
    if s.in_use:
        return Text("● in use", style="bold cyan")
    if not s.exists:
        return Text("⚠ no worktree", style="bold red")
    return look.status(s.status)


def _row(s: SandboxView, launch_failed: bool) -> Row:
    return (
        s.id,
        (
            Text(s.id, style="bold"),
            s.mission_id,
            s.runtime or "-",
            s.kind,
            s.branch or "-",
            Text(s.base_commit[:7], style="dim"),
            look.ago(s.created_at),
            _state(s, launch_failed),
        ),
    )
