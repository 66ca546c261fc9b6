"""Diff equivalence groups: which runtimes produced the same diff, the agreeing one first."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widgets import Static

from uh_core.workspace.state import ComparisonView, RuntimeView
from uh_tui import look

SHOWN_HUNKS = 8


def describe(comparison: ComparisonView | None, runtimes: tuple[RuntimeView, ...]) -> Group | Text:
    if comparison is None:
        live = [r.runtime for r in runtimes if r.status == "running"]
        if live:
            return Text(f"running: {', '.join(live)} — groups when the comparison is written")
        return Text("No comparison yet: press a to run every runtime.", style="dim")
    lines: list[Text] = [Text("diff groups", style="bold")]
    for index, group in enumerate(comparison.groups):
        style = look.GROUP_STYLES[index % len(look.GROUP_STYLES)]
        line = Text("■ ", style=style)
        line.append(group.diff_hash, style=f"bold {style}")
        line.append(f"  ×{len(group.runtimes)}  ")
        line.append(", ".join(group.runtimes))
        if group.agreeing:
            line.append("  agreeing", style="green")
        lines.append(line)
    failed = [r.runtime for r in runtimes if r.role == "failed"]
    if failed:
        lines.append(Text(f"no diff (failed): {', '.join(failed)}", style="red"))
    for finding in comparison.findings:
        lines.append(Text(f"⚠ {look.short(finding, 120)}", style="yellow"))
    if comparison.interrupted:
        lines.append(Text("interrupted before every runtime finished", style="yellow"))
    if comparison.consensus is not None:
        verified = comparison.consensus.startswith("consensus: VERIFIED")
        lines.append(
            Text(look.short(comparison.consensus, 160), style="green" if verified else "yellow")
        )
        shown = comparison.consensus_hunks[:SHOWN_HUNKS]
        lines += [Text(f"  {look.short(item, 120)}", style="dim") for item in shown]
        if len(comparison.consensus_hunks) > SHOWN_HUNKS:
            more = len(comparison.consensus_hunks) - SHOWN_HUNKS
            lines.append(Text(f"  … {more} more in runtime-comparison.md", style="dim"))
    return Group(*lines)


class DiffGroups(Static):
    def show(self, comparison: ComparisonView | None, runtimes: tuple[RuntimeView, ...]) -> None:
        self.update(describe(comparison, runtimes))
