"""Per-file line counts of a patch: path, +added, −removed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from uh_core.diff.stats import FileStat
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable


class FileStatsTable(KeyedTable):
    COLUMNS = (("path", "file"), ("added", "+"), ("removed", "−"))
    SHRINK = ("path",)

    def show(self, stats: list[FileStat]) -> None:
        rows = []
        for stat in stats:
            path = stat.path if not stat.old_path else f"{stat.old_path} → {stat.path}"
            rows.append(
                (
                    stat.path,
                    (
                        Text(path),
                        Text("bin" if stat.binary else f"+{stat.added}", style="green"),
                        Text("" if stat.binary else f"−{stat.removed}", style="red"),
                    ),
                )
            )
        total_added = sum(s.added for s in stats)
        total_removed = sum(s.removed for s in stats)
        rows.append(
            (
                "\0total",
                (
                    Text(look.plural(len(stats), "file"), style="bold"),
                    Text(f"+{total_added}", style="bold green"),
                    Text(f"−{total_removed}", style="bold red"),
                ),
            )
        )
        self.set_rows(rows)
