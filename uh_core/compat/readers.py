"""The loaders of files both tools write: uh's shape validated as is, the TypeScript uh's
translated first (``uh_core.compat.ts``), then validated by the same model. Every reader of
``verification.yaml``, ``promotion.yaml`` and ``sandboxes/index.yaml`` goes through here.

Also the readers of files only the TypeScript uh writes: ``latest.json``, ``runs/index.json``,
``runs/<run>/`` (``runtime-result.yaml``, ``events.ndjson``), ``audit.log`` and a
``runtime-comparison.md`` with no ``.json`` beside it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uh_core.compat import ts
from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.base import read_document, validate_document
from uh_core.models.comparison import Comparison
from uh_core.models.project import Project
from uh_core.models.promotion import PromotionRecord
from uh_core.models.runtime import RuntimeResult
from uh_core.models.sandbox import SandboxIndex
from uh_core.models.verification import VerificationResult


def _modified(path: Path) -> str:
    from datetime import UTC, datetime

    try:
        moment = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    except OSError:
        moment = datetime.now(UTC)
    return str(ts.stamp(moment))


def load_verification(path: Path, display: str | None = None) -> VerificationResult:
    shown = display or str(path)
    doc = read_document(path, shown)
    if ts.is_ts_verification(doc.data):
        doc.data = ts.verification(doc.data, _modified(path))
    return validate_document(doc, VerificationResult, shown)


def load_promotion(path: Path, display: str | None = None) -> PromotionRecord:
    shown = display or str(path)
    doc = read_document(path, shown)
    if ts.is_ts_promotion(doc.data):
        doc.data = ts.promotion(doc.data)
    return validate_document(doc, PromotionRecord, shown)


def _metadata(sandboxes_dir: Path, sandbox_id: str) -> dict[str, Any]:
    """A TypeScript sandbox's ``metadata.yaml`` (its branch and base ref), or nothing."""
    from uh_core.ids import is_slug

    if not is_slug(sandbox_id):
        return {}
    path = sandboxes_dir / sandbox_id / "metadata.yaml"
    if not path.is_file():
        return {}
    try:
        data = read_document(path, path.name).data
    except Exception:  # a bad metadata file leaves the entry as the index has it
        return {}
    return data if isinstance(data, dict) else {}


def load_sandbox_index(path: Path, display: str | None = None) -> SandboxIndex:
    shown = display or str(path)
    doc = read_document(path, shown)
    if ts.is_ts_sandbox_index(doc.data):
        ids = [
            str(e.get("id"))
            for e in doc.data.get("sandboxes") or []
            if isinstance(e, dict) and "worktree" not in e
        ]
        meta = {i: _metadata(path.parent, i) for i in ids}
        doc.data = ts.sandbox_index(doc.data, meta)
    return validate_document(doc, SandboxIndex, shown)


def load_project(path: Path, display: str | None = None) -> Project:
    """``project.yaml``; the TypeScript uh writes ``created_at`` unquoted (a YAML datetime)."""
    shown = display or str(path)
    doc = read_document(path, shown)
    if isinstance(doc.data, dict):
        doc.data = {**doc.data, "created_at": ts.stamp(doc.data.get("created_at"))}
    return validate_document(doc, Project, shown)


def load_runtime_result(path: Path, display: str | None = None) -> RuntimeResult:
    shown = display or str(path)
    doc = read_document(path, shown)
    if ts.is_ts_runtime_result(doc.data):
        doc.data = ts.runtime_result(doc.data)
    return validate_document(doc, RuntimeResult, shown)


# -- files only the TypeScript uh writes -----------------------------------------------------


@dataclass(frozen=True)
class TsRun:
    """One run of ``runs/index.json`` (the TypeScript ``mission run``), with its result."""

    run_id: str
    status: str
    started_at: str
    finished_at: str | None
    runtime: str | None
    result: RuntimeResult | None = None
    verdict: str | None = None  # the operator's verdict on it (mission verdict)
    events: Path | None = None  # runs/<run>/events.ndjson


@dataclass(frozen=True)
class TsRuns:
    latest: str | None = None  # latest.json's run id
    runs: tuple[TsRun, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)


def _json(path: Path) -> Any:
    from uh_core.yamllimits import read_json

    return read_json(path)


def read_ts_runs(layout: Layout, mission_id: str) -> TsRuns:
    """``latest.json``, ``runs/index.json`` and each run's ``runtime-result.yaml``; a file
    that does not read is a problem line, never an exception."""
    from uh_core.ids import is_slug

    mdir = layout.mission_dir(mission_id)
    problems: list[str] = []
    latest = None
    lpath = mdir / "latest.json"
    if lpath.is_file():
        try:
            data = _json(lpath)
            latest = str(data["run_id"]) if isinstance(data, dict) else None
        except Exception as exc:
            problems.append(f"{layout.rel(lpath)}: {exc}")
    runs: list[TsRun] = []
    ipath = mdir / "runs" / "index.json"
    rows: list[Any] = []
    if ipath.is_file():
        try:
            data = _json(ipath)
            rows = data.get("runs") or [] if isinstance(data, dict) else []
        except Exception as exc:
            problems.append(f"{layout.rel(ipath)}: {exc}")
    for row in rows:
        if not isinstance(row, dict) or not is_slug(str(row.get("run_id", ""))):
            continue
        run_id = str(row["run_id"])
        rdir = mdir / "runs" / run_id
        result = None
        verdict = None
        rpath = rdir / "runtime-result.yaml"
        if rpath.is_file():
            try:
                doc = read_document(rpath, layout.rel(rpath))
                raw = doc.data if isinstance(doc.data, dict) else {}
                if isinstance(raw.get("verdict"), dict):
                    verdict = str(raw["verdict"].get("value"))
                result = load_runtime_result(rpath, layout.rel(rpath))
            except UhError as exc:
                problems.append(exc.one_line())
        epath = rdir / "events.ndjson"
        runs.append(
            TsRun(
                run_id,
                str(row.get("status", "")),
                str(row.get("started_at", "")),
                row.get("finished_at"),
                row.get("runtime"),
                result=result,
                verdict=verdict,
                events=epath if epath.is_file() else None,
            )
        )
    # the mission-level runtime-result.yaml holds the latest run's verdict
    mpath = mdir / "runtime-result.yaml"
    if mpath.is_file() and runs:
        try:
            raw = read_document(mpath, layout.rel(mpath)).data
            value = raw.get("verdict", {}).get("value") if isinstance(raw, dict) else None
        except Exception:
            value = None
        if value:
            runs = [
                TsRun(
                    r.run_id,
                    r.status,
                    r.started_at,
                    r.finished_at,
                    r.runtime,
                    r.result,
                    str(value),
                    r.events,
                )
                if r.run_id == latest and r.verdict is None
                else r
                for r in runs
            ]
    return TsRuns(latest, tuple(runs), tuple(problems))


def run_event_logs(layout: Layout, mission_id: str) -> list[Path]:
    """Every ``runs/<run>/events.ndjson`` of a mission (the TypeScript tool logs a run there)."""
    runs = layout.mission_dir(mission_id) / "runs"
    if not runs.is_dir():
        return []
    return sorted(p for p in runs.glob("*/events.ndjson") if p.is_file())


def read_audit_log(path: Path) -> list[dict[str, Any]]:
    """The TypeScript ``.harness/audit.log``: its verdict lines as event documents."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [e for e in (ts.audit_line(line) for line in text.splitlines()) if e is not None]


_ROW = re.compile(r"^\|\s*`(?P<rt>[^`]+)`\s*\|(?P<rest>.*)\|\s*$")
_GROUP = re.compile(r"^- `(?P<hash>[0-9a-f]+)` — (?P<rts>.+)$")


def _cell(text: str) -> str:
    return text.strip().strip("`").strip()


def comparison_from_markdown(text: str, mission_id: str) -> dict[str, Any]:
    """A ``runtime-comparison.md`` (the only comparison the TypeScript tool writes) as a
    ``Comparison`` document: the per-runtime table, the groups and the agreement lines."""
    rows: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    divergent: list[str] = []
    agreement = False
    paths: dict[str, list[str]] = {}
    section = ""
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip().lower()
            continue
        if line.startswith("### "):
            current = line[4:].strip()
            continue
        if line.startswith("- Agreement:"):
            agreement = line.split(":", 1)[1].strip().lower() == "yes"
        elif line.startswith("- Divergent:"):
            divergent = [r.strip() for r in line.split(":", 1)[1].split(",") if r.strip()]
        elif section.startswith("per-runtime") and (found := _ROW.match(line)):
            cells = [_cell(c) for c in found["rest"].split("|")]
            cells += [""] * (6 - len(cells))
            status, exit_code, duration, diff_hash, _files, sandbox = cells[:6]
            ms = re.match(r"^(\d+)\s*ms$", duration)
            rows.append(
                {
                    "runtime": found["rt"],
                    "status": status
                    if status in ("succeeded", "no_change", "failed", "blocked", "error")
                    else "error",
                    "exit_code": int(exit_code) if exit_code.lstrip("-").isdigit() else None,
                    "duration_ms": int(ms[1]) if ms else 0,
                    "diff_hash": diff_hash if diff_hash not in ("", "-") else None,
                    "sandbox": sandbox if sandbox not in ("", "-") else None,
                }
            )
        elif section.startswith("diff equivalence") and (found := _GROUP.match(line)):
            groups.append(
                {
                    "diff_hash": found["hash"],
                    "runtimes": [r.strip() for r in found["rts"].split(",")],
                }
            )
        elif section.startswith("diff paths") and current and line.startswith("- "):
            paths.setdefault(current, []).append(line[2:].strip())
    for row in rows:
        row["touched_paths"] = paths.get(row["runtime"], [])
    ok = [r["runtime"] for r in rows if r["status"] == "succeeded"]
    failed = [r["runtime"] for r in rows if r["status"] != "succeeded"]
    agreeing = [r for r in ok if r not in divergent] if agreement else []
    status = "agreement" if agreement and not failed else "divergent" if divergent else "failed"
    return {
        "mission_id": mission_id,
        "status": status,
        "runtimes": rows,
        "groups": sorted(groups, key=lambda g: -len(g["runtimes"])),
        "agreement_runtimes": agreeing,
        "divergent_runtimes": divergent,
        "failed_runtimes": failed,
        "findings": ["read from runtime-comparison.md (written by the TypeScript uh)"],
    }


def read_markdown_comparison(path: Path, mission_id: str) -> Comparison:

    text = path.read_text(encoding="utf-8", errors="replace")
    return Comparison.model_validate(comparison_from_markdown(text, mission_id))
