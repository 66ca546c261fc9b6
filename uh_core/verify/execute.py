"""Running one check command N times on the same revision and judging its verdicts."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from uh_core.proc import run_logged

RunVerdict = Literal["passed", "failed"]


@dataclass
class Evidence:
    status: Literal["passed", "failed", "unobserved"]
    exit_code: int | None
    duration_ms: int
    timed_out: bool
    stdout_snippet: str
    stderr_snippet: str
    stdout_log: str | None  # None: the stream printed nothing, so no log file was made
    stderr_log: str | None
    flaky: bool = False
    runs: list[RunVerdict] = field(default_factory=list)


def run_repeated(
    command: str,
    *,
    cwd: Path,
    log_dir: Path,
    stem: str,
    env: Mapping[str, str],
    repeat: int,
    timeout: float,
    grace: float,
    rel: Callable[[Path], str],
    on_start: Callable[[], object] | None = None,
) -> Evidence:
    """Run ``command`` ``repeat`` times; a verdict that changes makes it flaky (unobserved).

    ``env`` is the complete environment of the command (see ``proc.full_env``).

    A log file is made only for a stream that printed something (most checks print
    nothing, and creating the files cost more than the rest of the bookkeeping): the
    evidence's ``stdout_log``/``stderr_log`` is then None, never the path of a missing file.

    The evidence kept is the first failing run's when there is one (the most useful to
    read), else the last run's. ``on_start`` is called once the first run's command is
    running (what it does overlaps the command's own work).
    """
    chosen: Evidence | None = None
    runs: list[RunVerdict] = []
    for n in range(1, repeat + 1):
        suffix = f".{n}" if repeat > 1 else ""
        result = run_logged(
            command,
            cwd=cwd,
            stdout_log=log_dir / f"{stem}{suffix}.stdout.log",
            stderr_log=log_dir / f"{stem}{suffix}.stderr.log",
            env={**env, "UH_REPEAT_INDEX": str(n)},
            env_is_complete=True,
            timeout=timeout,
            grace=grace,
            lazy_logs=True,
            on_start=(lambda _pid: on_start()) if on_start is not None and n == 1 else None,
        )
        verdict: RunVerdict = (
            "passed" if result.exit_code == 0 and not result.timed_out else "failed"
        )
        runs.append(verdict)
        evidence = Evidence(
            status=verdict,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            timed_out=result.timed_out,
            stdout_snippet=result.stdout_snippet,
            stderr_snippet=result.stderr_snippet,
            stdout_log=_rel_or_none(result.stdout_file, rel),
            stderr_log=_rel_or_none(result.stderr_file, rel),
        )
        if (
            chosen is None
            or (verdict == "failed" and chosen.status == "passed")
            or (chosen.status == verdict and verdict == "passed")
        ):
            chosen = evidence
    assert chosen is not None
    chosen.runs = runs
    if len(set(runs)) > 1:
        chosen.flaky = True
        chosen.status = "unobserved"
    return chosen


def _rel_or_none(path: Path | None, rel: Callable[[Path], str]) -> str | None:
    return None if path is None else rel(path)
