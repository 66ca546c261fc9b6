"""The same-cause sweep of ``harness report``: when a mission goes from red to green, the
missions still red for the same cause (stage, finding codes and, at the tests stage, the
failing tests' modules) are listed as candidates a human may look at. Nothing is changed."""

from __future__ import annotations

from typing import Any

from uh_core.models.ledger import HarnessLedger, RequirementRecord


def _module(test: str) -> str:
    """A failing test's module: its dotted name without the test (and its class)."""
    parts = test.split("::")[0].removesuffix(".py").replace("/", ".").split(".")
    if "::" not in test:
        parts = parts[:-1]
        if parts and parts[-1][:1].isupper():
            parts = parts[:-1]
    return ".".join(parts)


def _cause(record: RequirementRecord) -> dict[str, Any] | None:
    """A red record's last failure: its stage, finding codes and, at tests, the modules of
    the failing tests. None when no round was judged red."""
    red = [a for a in record.attempts if a.outcome == "fail"]
    if not red or record.outcome == "pass":
        return None
    last = red[-1]
    failing = [s for s in last.stages if not s.passed]
    modules: set[str] = set()
    if last.stage == "tests":
        for stage in failing:
            modules.update(_module(t) for t in stage.evidence.get("failed_tests") or [])
    return {
        "stage": last.stage,
        "codes": sorted({f.code for s in failing for f in s.findings}),
        "modules": sorted(modules),
    }


def same_cause(ledgers: list[HarnessLedger]) -> list[dict[str, Any]]:
    """Each mission that went from red to green, with the missions whose newest run is red
    for the same cause (stage, finding codes, failing tests' modules): candidates a human may
    look at. Nothing is changed."""
    cause: dict[str, dict[str, Any]] = {}  # mission → the cause of its newest red
    red_now: dict[str, bool] = {}
    fixed: list[dict[str, Any]] = []
    for ledger in ledgers:
        for record in ledger.requirements:
            mission_id = record.mission_id
            if record.outcome == "pass":
                if red_now.get(mission_id) and mission_id in cause:
                    fixed.append(
                        {"mission_id": mission_id, "run_id": ledger.run_id,
                         "cause": cause[mission_id]}
                    )  # fmt: skip
                red_now[mission_id] = False
                continue
            found = _cause(record)
            if found is not None:
                cause[mission_id], red_now[mission_id] = found, True
    for item in fixed:
        item["candidates"] = sorted(
            m
            for m, red in red_now.items()
            if red and m != item["mission_id"] and cause.get(m) == item["cause"]
        )
    return fixed
