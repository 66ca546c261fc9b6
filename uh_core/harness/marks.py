"""False-failure marks: ``harness report --mark-false-failure ID --reason TEXT`` appends one
JSON object to ``.harness/false-failures.jsonl``; a mark applies to the mission (every run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uh_core.clock import timestamp
from uh_core.errors import NotFoundError, UsageError, ValidationError
from uh_core.events.writer import append_line
from uh_core.git import is_repository
from uh_core.harness.ledger import read_all
from uh_core.harness.workspace import require_ignored
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.yamllimits import YamlLimitError, read_json_lines

MARKS_FILE = "false-failures.jsonl"


def marks_path(layout: Layout) -> Path:
    return layout.harness / MARKS_FILE


def read_marks(layout: Layout) -> list[dict[str, Any]]:
    path = marks_path(layout)
    if not path.is_file():
        return []
    marks = []
    try:  # bounded (uh_core.yamllimits): a line over the caps refuses the file, in one line
        for _number, data in read_json_lines(path):
            if isinstance(data, dict) and isinstance(data.get("mission_id"), str):
                marks.append(data)  # anything else (a torn line, not JSON) is skipped
    except YamlLimitError as exc:
        raise ValidationError(
            [f"{layout.rel(path)}: refused: {exc} (fix: remove the line or raise the cap)"]
        ) from None
    return marks


def mark_false_failure(layout: Layout, mission_id: str, reason: str | None) -> dict[str, Any]:
    """Append one mark; a mark without a reason is refused (exit 2)."""
    if reason is None or not reason.strip():
        raise UsageError(
            "--mark-false-failure needs --reason TEXT",
            fix="say why the failure was not the agent's (a flaky test, a broken check, …)",
        )
    check_id(mission_id, "mission")
    if is_repository(layout.root):
        require_ignored(layout, (f".harness/{MARKS_FILE}",))
    ledgers = read_all(layout)[0]
    seen = {record.mission_id for ledger in ledgers for record in ledger.requirements}
    if mission_id not in seen and mission_id not in layout.mission_ids():
        raise NotFoundError(
            f"--mark-false-failure {mission_id}: no such mission in .harness/missions/ or in "
            "any ledger",
            fix="check the id (`uh-core harness report` lists the missions that failed)",
        )
    failed_in = [
        ledger.run_id
        for ledger in ledgers
        for record in ledger.requirements
        if record.mission_id == mission_id
        and (record.outcome == "fail" or record.handover is not None)
    ]
    mark = {
        "mission_id": mission_id,
        "reason": reason.strip(),
        "marked_at": timestamp(),
        "failed_runs": failed_in,
    }
    line = json.dumps(mark, ensure_ascii=False, separators=(",", ":")) + "\n"
    append_line(marks_path(layout), line.encode("utf-8"))
    return mark
