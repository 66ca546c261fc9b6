"""Equivalence groups and the agreement rules of contract §6. Pure functions."""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from uh_core.models.comparison import Comparison, DiffGroup, RuntimeRow

EMPTY_DIFF_HASH = "e3b0c44298fc1c14"  # sha256 of nothing: no runtime changed anything


def group_rows(rows: list[RuntimeRow]) -> list[DiffGroup]:
    """Successful runtimes grouped by diff hash, largest group first (then by hash)."""
    buckets: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.status == "succeeded" and row.diff_hash:
            buckets[row.diff_hash].append(row.runtime)
    groups = [DiffGroup(diff_hash=h, runtimes=sorted(r)) for h, r in buckets.items()]
    return sorted(groups, key=lambda g: (-len(g.runtimes), g.diff_hash))


def compare(mission_id: str, rows: list[RuntimeRow]) -> Comparison:
    groups = group_rows(rows)
    succeeded = [r.runtime for r in rows if r.status == "succeeded"]
    failed = [r.runtime for r in rows if r.status != "succeeded"]
    largest = len(groups[0].runtimes) if groups else 0
    unique_largest = len(groups) == 1 or (len(groups) > 1 and len(groups[1].runtimes) < largest)
    agreeing: list[str] = groups[0].runtimes if largest >= 2 and unique_largest else []
    divergent = sorted(r for r in succeeded if r not in agreeing)
    status: Literal["agreement", "divergent", "failed"]
    if not failed and succeeded and set(agreeing) == set(succeeded):
        status = "agreement"
    elif divergent:
        status = "divergent"
    else:
        status = "failed"
    findings: list[str] = []
    agreed_hash = groups[0].diff_hash if agreeing else None
    if rows and all(row.status == "no_change" for row in rows):
        findings.append("no runtime changed anything")
    if agreed_hash == EMPTY_DIFF_HASH:
        findings.append("no runtime changed anything: the agreement is on an empty diff")
    if groups and not agreeing and len(groups[0].runtimes) >= 2:
        findings.append("two or more diff groups are equally large: no group agrees")
    return Comparison(
        mission_id=mission_id,
        status=status,
        runtimes=rows,
        groups=groups,
        agreement_runtimes=agreeing,
        divergent_runtimes=divergent,
        failed_runtimes=sorted(failed),
        rate_limited_runtimes=sorted(r.runtime for r in rows if r.status == "rate_limited"),
        findings=findings,
    )
