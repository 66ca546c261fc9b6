"""The translation layer: documents written by the TypeScript uh, mapped onto uh's models.

uh's models stay strict about what uh writes; a document in the TypeScript tool's shape is
recognised by what it lacks (a ``verification.yaml`` without ``run_id``, a ``promotion.yaml``
without ``source``, a sandbox entry with ``path`` and no ``worktree``) and rewritten here, as
plain data, before the model validates it. Every rule is listed in docs/compat.md; each
translated document says so in ``translated_from`` (verification, promotion) or keeps the
TypeScript keys beside uh's (the sandbox index), so a rewrite by uh stays readable by the
TypeScript tool.

Pure functions over plain data: no file is read here except where a rule needs a second
file (a sandbox's ``metadata.yaml``), and that is passed in.
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, date, datetime
from typing import Any

TS = "ts-uh"
TDD_ID = "ac-tdd-tests-precede-code"
_AC_FINDING = re.compile(r"^acceptance criterion (?P<ac>\S+) (?P<what>failed|blocked)\b")
_CHECK_FINDING = re.compile(r"^(?:required )?check (?P<name>.+?) (?P<what>failed|blocked)\b")
_LISTS = ("checks", "findings", "acceptance_criteria")
_NOTE_LINE = re.compile(r"^(exit_code|stdout|stderr): ?(.*)$")


def stamp(value: Any) -> Any:
    """A timestamp as uh writes it (RFC 3339 UTC, milliseconds, ``Z``). YAML loads an unquoted
    ``2026-12-01T11:09:51.119Z`` as a datetime; the TypeScript tool writes them unquoted."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    if isinstance(value, date):
        return value.isoformat() + "T00:00:00.000Z"
    return value


def _stamps(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {**data, **{k: stamp(data[k]) for k in keys if k in data}}


# -- verification.yaml ---------------------------------------------------------------------


def is_ts_verification(data: Any) -> bool:
    return isinstance(data, dict) and "run_id" not in data


def _status(value: Any, where: str, findings: list[dict[str, Any]]) -> Any:
    """``waived`` (the TypeScript tool's operator waiver) is not a verdict uh gives: nothing
    was shown to pass, so it reads ``blocked``, with a finding saying why."""
    if value == "waived":
        findings.append(
            {
                "severity": "warning",
                "code": "ts_waived",
                "message": f"{where} was waived in the TypeScript uh; uh shows it blocked",
            }
        )
        return "blocked"
    return value


def _check(check: dict[str, Any], findings: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(check)
    out["status"] = _status(out.get("status"), f"check {out.get('name')}", findings)
    notes = out.get("notes")
    if isinstance(notes, str):  # "exit_code: 0\nstdout: hi"
        for line in notes.splitlines():
            found = _NOTE_LINE.match(line)
            if not found:
                continue
            key, value = found.groups()
            if key == "exit_code" and "exit_code" not in out:
                with contextlib.suppress(ValueError):
                    out["exit_code"] = int(value)
            elif key != "exit_code" and f"{key}_snippet" not in out:
                out[f"{key}_snippet"] = value
    if out.get("type") not in ("command", "manual"):
        out["type"] = "command" if out.get("command") else "manual"
    return out


def _finding(finding: dict[str, Any]) -> dict[str, Any]:
    """A finding without ``code``: named from its message (``ac_failed``, ``check_failed``,
    else ``ts_finding``), the criterion's id taken from the message when it names one."""
    out = dict(finding)
    message = str(out.get("message", ""))
    if out.get("severity") not in ("error", "warning"):
        out["severity"] = "error" if out.get("severity") in ("critical", "high") else "warning"
    if "code" in out:
        return out
    found = _AC_FINDING.match(message)
    if found:
        out["code"] = "ac_failed" if found["what"] == "failed" else "ac_without_command"
        out.setdefault("ac_id", found["ac"].rstrip(":"))
    elif message == "no verification checks configured":
        out["code"] = "nothing_can_fail"
    elif _CHECK_FINDING.match(message):
        out["code"] = "check_failed"
    else:
        out["code"] = "ts_finding"
    return out


def verification(data: dict[str, Any], written_at: str) -> dict[str, Any]:
    """A TypeScript ``verification.yaml`` as a ``VerificationResult`` document.

    It has no run id and no start or end time: ``run_id`` is ``ts-<written_at digits>`` and
    both times are ``written_at`` (the file's modification time). The summary, which it does
    not write, is counted from its checks and criteria by uh's own rules."""
    from uh_core.models.verification import ACResult, CheckResult
    from uh_core.verify.rules import summarise

    if any(not isinstance(data.get(k, []), list) for k in _LISTS):
        return data  # not a shape either tool writes: the model names what is wrong
    findings = [_finding(f) for f in data.get("findings") or [] if isinstance(f, dict)]
    checks = [_check(c, findings) for c in data.get("checks") or [] if isinstance(c, dict)]
    criteria = []
    for ac in data.get("acceptance_criteria") or []:
        if not isinstance(ac, dict):
            continue
        row = dict(ac)
        row["status"] = _status(row.get("status"), f"criterion {row.get('id')}", findings)
        if row.get("id") == TDD_ID:
            row.setdefault("synthetic", True)
        criteria.append(row)
    out = {
        k: v
        for k, v in data.items()
        if k not in ("checks", "findings", "acceptance_criteria", "approvals")
    }
    out["status"] = _status(out.get("status"), "the verdict", findings)
    out["run_id"] = "ts-" + re.sub(r"\D", "", written_at)[:17]
    out.setdefault("started_at", written_at)
    out.setdefault("finished_at", written_at)
    out.update(checks=checks, findings=findings, acceptance_criteria=criteria)
    if "summary" not in data:
        try:
            parsed_checks = [CheckResult.model_validate(c) for c in checks]
            parsed_acs = [ACResult.model_validate(a) for a in criteria]
        except Exception:  # the model's own validation names the problem
            pass
        else:
            out["summary"] = summarise(parsed_checks, parsed_acs).model_dump()
    out["translated_from"] = TS
    return out


# -- promotion.yaml ------------------------------------------------------------------------


def is_ts_promotion(data: Any) -> bool:
    return isinstance(data, dict) and "source" not in data


def promotion(data: dict[str, Any]) -> dict[str, Any]:
    """A TypeScript ``promotion.yaml`` as a ``PromotionRecord`` document.

    It records who decided what, when, and on which sandbox (when there was one); it has no
    base commit, tree or diff hash (the TypeScript tool promotes by merging a branch). Those
    read as empty strings: the decision is shown, and nothing can be re-applied from it."""
    out = _stamps(dict(data), "promoted_at")
    out.setdefault("approved_by", "unknown")
    out.setdefault("promoted_at", "")
    out.setdefault("audit_event_id", "")
    out["source"] = "sandbox" if out.get("sandbox_id") else "branch"
    out.setdefault("base_commit", "")
    out.setdefault("source_tree", "")
    out.setdefault("diff_hash", "")
    if out.get("approved_by") == "auto-on-verify":
        out.setdefault("auto", True)
    out["history"] = [promotion(h) for h in out.get("history") or [] if isinstance(h, dict)]
    out["translated_from"] = TS
    return out


# -- sandboxes/index.yaml ------------------------------------------------------------------


def sandbox_entry(entry: Any, metadata: dict[str, Any] | None = None) -> Any:
    """A TypeScript sandbox entry (``path`` relative to the root, no ``base_commit``) as a
    ``SandboxEntry``: ``worktree`` is its ``path``; ``base_commit`` its ``metadata.yaml``'s
    ``base_ref`` (a ref, resolved by git where used), else ``HEAD``; its branch from the
    metadata. ``path`` is kept, so an index uh writes back still has what that tool reads."""
    if not isinstance(entry, dict) or "worktree" in entry:
        return entry
    out = _stamps(dict(entry), "created_at", "updated_at")
    meta = metadata or {}
    if "path" in out:
        out["worktree"] = out["path"]
    out.setdefault("base_commit", str(meta.get("base_ref") or "HEAD"))
    if meta.get("branch"):
        out.setdefault("branch", meta["branch"])
    out.setdefault("created_at", out.get("updated_at", ""))
    out.setdefault("translated_from", TS)
    return out


def is_ts_sandbox_index(data: Any) -> bool:
    entries = data.get("sandboxes") if isinstance(data, dict) else None
    return isinstance(entries, list) and any(
        isinstance(e, dict) and "worktree" not in e for e in entries
    )


def sandbox_index(data: dict[str, Any], metadata: dict[str, dict[str, Any]]) -> dict[str, Any]:
    entries = data.get("sandboxes") or []
    out = dict(data)
    out["sandboxes"] = [
        sandbox_entry(e, metadata.get(str(e.get("id")))) if isinstance(e, dict) else e
        for e in entries
    ]
    return out


# -- runtime-result.yaml (missions/<id>/ and runs/<run>/) ------------------------------------

_RUNTIME_STATUS = {"passed": "completed", "failed": "failed", "blocked": "blocked"}


def is_ts_runtime_result(data: Any) -> bool:
    return isinstance(data, dict) and ("stdout_path" in data or "prompt_path" in data)


def runtime_result(data: dict[str, Any]) -> dict[str, Any]:
    """The TypeScript ``runtime-result.yaml`` (``passed`` for a run that completed, paths to
    its logs, an optional operator verdict) as a ``RuntimeResult``: ``status`` ``passed``
    reads ``completed``; the log paths go under ``logs``, the diff under ``changes.diff_ref``,
    ``errors`` are ``blockers``, the verdict is kept as ``verdict``."""
    out = _stamps(dict(data), "started_at", "finished_at")
    out["status"] = _RUNTIME_STATUS.get(str(out.get("status")), out.get("status"))
    logs = {k[: -len("_path")]: out.pop(k) for k in list(out) if k.endswith("_path")}
    diff = logs.pop("diff", None)
    out["logs"] = {**logs, **(out.get("logs") or {})}
    if diff:
        out["changes"] = {"diff_ref": diff, "files_changed": []}
    out["blockers"] = [str(e) for e in out.pop("errors", None) or []]
    verdict = out.get("verdict")
    if isinstance(verdict, dict):
        out["verdict"] = _stamps(verdict, "recorded_at")
    out["translated_from"] = TS
    return out


# -- events ----------------------------------------------------------------------------------


# The names ``event`` may rewrite; every other payload passes through it as it is (a reader
# that skips it for those, ``uh_core.events.reader.parse_event``, relies on this).
REWRITTEN_EVENTS = frozenset(
    {"verification.finished", "verification.started", "promotion.recorded"}
)


def event(data: dict[str, Any]) -> dict[str, Any]:
    """The TypeScript payload spellings of shared event names, onto uh's.

    ``verification.finished`` carries ``checks_total``/``acceptance_total``/
    ``acceptance_failed_block`` instead of a ``summary``; ``verification.started`` carries no
    totals (they read as unknown, not zero: ``totals_known`` is false); ``promotion.recorded``
    has its id in ``id``; ``promotion.auto-triggered`` names a decision, not a sandbox."""
    kind = data.get("event")
    if kind == "verification.finished" and "summary" not in data and "checks_total" in data:
        out = dict(data)
        out["summary"] = {
            "checks": {"total": data.get("checks_total", 0)},
            "acceptance": {
                "total": data.get("acceptance_total", 0),
                "block_failed": data.get("acceptance_failed_block", 0),
            },
        }
        return out
    if kind == "verification.started" and "total_checks" not in data:
        return {**data, "totals_known": False}
    if kind == "promotion.recorded" and "event_id" not in data and "id" in data:
        return {**data, "event_id": data["id"]}
    return data


# -- audit.log (one verdict a line) ----------------------------------------------------------

_AUDIT_LINE = re.compile(
    r"^(?P<ts>\S+) (?P<event>verdict\.recorded) (?P<mission>\S+) (?P<value>\S+)"
    r"(?: by=(?P<by>\S+))?"
)


def audit_line(line: str) -> dict[str, Any] | None:
    """One line of the TypeScript ``.harness/audit.log`` (``<ts> verdict.recorded <mission>
    <value> by=<who>``) as an event document, or None when it is not such a line."""
    found = _AUDIT_LINE.match(line.strip())
    if not found:
        return None
    return {
        "event": found["event"],
        "timestamp": found["ts"],
        "mission_id": found["mission"],
        "value": found["value"],
        "recorded_by": found["by"] or "",
    }
