"""``--resume``: continue a mission on its existing ``harness/<id>`` branch.

An interrupted run (``kill -9``, a power cut) leaves no ledger, so where to continue is
recovered from what every attempt leaves before its agent starts: the prompt archive
(``.harness/prompts/<id>-<ts>-attempt-<n>.md``). The highest attempt archived since the
branch's worktree was made is the last one that began; it is charged against
``--max-attempts`` only when its gate verdict was recorded (a ``harness.attempt.finished``
event with ``pass``/``fail``/``error`` in the mission's events). The failure fed into the
next prompt is that verdict's, or else the one the last prompt itself carried.

The worktree is re-attached when git still has it registered — the agent's uncommitted work
is kept — and otherwise checked out again from the branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from uh_core.harness import workspace
from uh_core.harness.prompt import PREVIOUS_HEADING, Feedback, branch_name
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.sandbox.worktree import list_sandboxes
from uh_core.yamllimits import read_json_lines

_PROMPT_NAME = re.compile(r"^(?P<id>.+)-(?P<stamp>\d{8}T\d{9}Z)-attempt-(?P<n>\d+)(?:-\d+)?\.md$")
_FEEDBACK = re.compile(
    re.escape(PREVIOUS_HEADING)
    + r"\n\nAttempt (?P<n>\d+) failed at the `(?P<stage>[^`]+)` stage: (?P<detail>[^\n]*)"
    r"\n\n(?P<fence>`{3,})text\n(?P<output>.*?)\n(?P=fence)",
    re.DOTALL,
)
JUDGED = frozenset({"pass", "fail", "error"})


@dataclass
class Resumed:
    entry: SandboxEntry | None  # the sandbox re-attached (None: checked out again)
    base_commit: str
    charged: int  # attempts whose gate verdict is known: counted against --max-attempts
    feedback: Feedback | None
    last_attempt: int  # the highest attempt that began (0: none)
    note: str

    def answered(self, why: str) -> None:
        """The hand-over was answered: the rounds continue after the last one, charged anew."""
        self.charged = 0
        self.note = f"{why}; rounds continue after attempt {self.last_attempt}"

    def as_dict(self) -> dict[str, object]:
        return {
            "charged_attempts": self.charged,
            "last_attempt_begun": self.last_attempt,
            "uncharged": self.last_attempt - self.charged,
            "sandbox_id": self.entry.id if self.entry is not None else None,
            "note": self.note,
        }


def stamp_of(timestamp: str) -> str:
    """An RFC 3339 UTC timestamp with milliseconds as the prompt archive spells it."""
    return timestamp.replace("-", "").replace(":", "").replace(".", "")


def archived_prompts(layout: Layout, mission_id: str, since: str = "") -> dict[int, Path]:
    """Attempt number → its latest archived prompt, for prompts stamped at or after ``since``."""
    found: dict[int, tuple[str, Path]] = {}
    if not layout.prompts_dir.is_dir():
        return {}
    for path in layout.prompts_dir.glob(f"{mission_id}-*-attempt-*.md"):
        matched = _PROMPT_NAME.match(path.name)
        if matched is None or matched["id"] != mission_id or matched["stamp"] < since:
            continue
        n = int(matched["n"])
        if n not in found or found[n][0] <= matched["stamp"]:
            found[n] = (matched["stamp"], path)
    return {n: path for n, (_, path) in found.items()}


def feedback_in(prompt: str) -> Feedback | None:
    matched = _FEEDBACK.search(prompt)
    if matched is None:
        return None
    return Feedback(int(matched["n"]), matched["stage"], matched["detail"], matched["output"])


def _events(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        return []
    # Bounded, line by line (uh_core.yamllimits); a line over the caps is skipped, as the
    # event readers skip any malformed line.
    return [data for _, data in read_json_lines(path, tolerant=True) if isinstance(data, dict)]


def verdict_of(layout: Layout, mission_id: str, attempt: int, since: str) -> Feedback | str | None:
    """The recorded verdict of ``attempt`` begun at ``since``: a Feedback when it failed,
    the outcome when it was judged otherwise, None when no verdict was recorded."""
    events = [
        e
        for e in _events(layout.mission_events(mission_id))
        if stamp_of(str(e.get("timestamp", ""))) >= since and e.get("attempt") == attempt
    ]
    finished = [e for e in events if e.get("event") == "harness.attempt.finished"]
    if not finished or finished[-1].get("outcome") not in JUDGED:
        return None
    outcome = str(finished[-1]["outcome"])
    if outcome != "fail":
        return outcome
    failed = [
        e for e in events if e.get("event") == "harness.gate.checked" and e.get("passed") is False
    ]
    stage = str(finished[-1].get("stage") or (failed[-1].get("stage") if failed else "gate"))
    detail = str(failed[-1].get("detail", "")) if failed else "failed"
    return Feedback(attempt, stage, detail, detail)


def _sandbox_for(layout: Layout, branch: str) -> SandboxEntry | None:
    entries = [e for e in list_sandboxes(layout) if e.branch == branch and e.kind == "harness"]
    return entries[-1] if entries else None


def _rate_limited(layout: Layout, mission_id: str, since: str, below: int) -> int:
    """Attempts numbered under ``below`` that ended ``rate_limited`` since ``since``."""
    found: set[int] = set()
    for e in _events(layout.mission_events(mission_id)):
        attempt = e.get("attempt")
        if (
            e.get("event") == "harness.attempt.finished"
            and e.get("outcome") == "rate_limited"
            and stamp_of(str(e.get("timestamp", ""))) >= since
            and isinstance(attempt, int)
            and attempt < below
        ):
            found.add(attempt)
    return len(found)


def recover(layout: Layout, mission_id: str, fallback_base: str) -> Resumed:
    """Where to continue ``mission_id`` on its branch; the worktree is re-attached by
    :func:`attach`. Reads only."""
    branch = branch_name(mission_id)
    entry = _sandbox_for(layout, branch)
    registered = entry is not None and (workspace.worktree_root(layout, entry) / ".git").is_dir()
    since = stamp_of(entry.created_at) if entry is not None else ""
    base = entry.base_commit if entry is not None else workspace.fork_point(layout, branch)
    prompts = archived_prompts(layout, mission_id, since)
    last = max(prompts, default=0)
    charged, feedback = 0, None
    note = "no earlier attempt found in the prompt archive"
    if last:
        stamp = _PROMPT_NAME.match(prompts[last].name)
        begun = stamp["stamp"] if stamp is not None else since
        verdict = verdict_of(layout, mission_id, last, begun)
        if verdict is None:
            charged = last - 1
            feedback = feedback_in(prompts[last].read_text(encoding="utf-8"))
            note = f"attempt {last} was stopped before its gate verdict: not charged"
        else:
            charged = last
            feedback = verdict if isinstance(verdict, Feedback) else None
            note = f"attempt {last} was judged ({getattr(verdict, 'stage', verdict)})"
        limited = _rate_limited(
            layout, mission_id, since, below=last if verdict is None else last + 1
        )
        if limited:  # refused by the provider: never charged (uh_core/harness/parking.py)
            charged -= limited
            note += f"; {limited} rate-limited attempt(s) not charged"
    return Resumed(entry if registered else None, base or fallback_base, charged, feedback,
                   last, note)  # fmt: skip
