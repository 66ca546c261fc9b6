"""Running check commands, each N times on the same revision, and judging their verdicts."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from uh_core.errors import ProcError
from uh_core.proc import Prepared, ProcResult, run_prepared
from uh_core.proc.spawn import Launcher, spawn

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


@dataclass(frozen=True)
class Job:
    """One check command to run (``repeat`` times) with its logs under ``stem``."""

    command: str
    stem: str
    timeout: float
    on_start: Callable[[], object] | None = None  # once the first run's command is running
    launcher: Launcher | None = None  # how it starts, when not as every other check
    env: Mapping[str, str] | None = None  # laid over the runner's environment


class CheckRunner:
    """Runs check commands one at a time, each ``repeat`` times on the same revision; a
    verdict that changes makes the check flaky (unobserved).

    ``env`` is the complete environment of the commands (see ``proc.full_env``). A log file
    is made only for a stream that printed something (most checks print nothing, and
    creating the files cost more than the rest of the bookkeeping): the evidence's
    ``stdout_log``/``stderr_log`` is then None, never the path of a missing file. The
    evidence kept is the first failing run's when there is one (the most useful to read),
    else the last run's.

    While one command runs, the next run (this job's next repeat, else ``then``) is
    prepared: its older logs removed, its pipes made (``proc.Prepared``). Nothing of it
    is visible before it starts, and commands never overlap; what is left between one
    command's end and the next one's start is the caller's bookkeeping and the spawn.
    ``close()`` discards a run prepared for a job that never came.
    """

    def __init__(
        self,
        *,
        launcher: Launcher | None = None,
        cwd: Path,
        log_dir: Path,
        env: Mapping[str, str],
        repeat: int,
        grace: float,
        rel: Callable[[Path], str],
    ) -> None:
        self.launcher = launcher or spawn
        self.cwd = cwd
        self.log_dir = log_dir
        self.env = env
        self.repeat = repeat
        self.grace = grace
        self.rel = rel
        self._ready: tuple[Job, int, Prepared] | None = None  # (job, run number, prepared)
        # A log folder that does not exist yet (a new run's) holds no older logs: a path
        # handed out for the first time needs no look for one (two unlinks per run saved).
        self._fresh_dir = not os.path.lexists(log_dir)
        self._handed: set[str] = set()

    def _prepare(self, job: Job, n: int) -> Prepared:
        name = f"{job.stem}.{n}" if self.repeat > 1 else job.stem
        fresh = self._fresh_dir and name not in self._handed
        self._handed.add(name)
        return Prepared(
            job.command,
            cwd=self.cwd,
            stdout_log=self.log_dir / f"{name}.stdout.log",
            stderr_log=self.log_dir / f"{name}.stderr.log",
            env={**self.env, **(job.env or {}), "UH_REPEAT_INDEX": str(n)},
            env_is_complete=True,
            launcher=job.launcher or self.launcher,
            grace=self.grace,
            lazy_logs=True,
            fresh=fresh,
        )

    def _take(self, job: Job, n: int) -> Prepared:
        ready, self._ready = self._ready, None
        if ready is not None:
            prepared_job, number, prepared = ready
            if prepared_job is job and number == n:  # that very job: never one alike
                return prepared
            prepared.discard()
        return self._prepare(job, n)

    def _prepare_next(self, job: Job, n: int, then: Job | None) -> None:
        upcoming = (job, n + 1) if n < self.repeat else (then, 1) if then is not None else None
        if upcoming is not None and upcoming[0] is not None:
            with contextlib.suppress(ProcError, OSError):  # fails again, and is raised, in _take
                self._ready = (upcoming[0], upcoming[1], self._prepare(*upcoming))

    def run(self, job: Job, then: Job | None = None) -> Evidence:
        """Run ``job``; ``then`` is the job the caller runs next, if it knows (prepared
        while this one runs)."""
        chosen: Evidence | None = None
        runs: list[RunVerdict] = []
        for n in range(1, self.repeat + 1):

            def started(_pid: int, n: int = n) -> None:
                if job.on_start is not None and n == 1:
                    job.on_start()
                self._prepare_next(job, n, then)

            try:
                prepared = self._take(job, n)
                result = run_prepared(prepared, timeout=job.timeout, on_start=started)
            except (ProcError, ValueError, OSError) as exc:  # it could not even start
                reason = exc.one_line() if isinstance(exc, ProcError) else str(exc)
                return Evidence(
                    "unobserved", None, 0, False, "", f"the command could not start: {reason}",
                    None, None,
                )  # fmt: skip
            verdict: RunVerdict = (
                "passed" if result.exit_code == 0 and not result.timed_out else "failed"
            )
            runs.append(verdict)
            if (
                chosen is None
                or (verdict == "failed" and chosen.status == "passed")
                or (chosen.status == verdict and verdict == "passed")
            ):
                chosen = self._evidence(verdict, result)
        assert chosen is not None
        chosen.runs = runs
        if len(set(runs)) > 1:
            chosen.flaky = True
            chosen.status = "unobserved"
        return chosen

    def _evidence(self, verdict: RunVerdict, result: ProcResult) -> Evidence:
        return Evidence(
            status=verdict,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            timed_out=result.timed_out,
            stdout_snippet=result.stdout_snippet,
            stderr_snippet=result.stderr_snippet,
            stdout_log=_rel_or_none(result.stdout_file, self.rel),
            stderr_log=_rel_or_none(result.stderr_file, self.rel),
        )

    def close(self) -> None:
        ready, self._ready = self._ready, None
        if ready is not None:
            ready[2].discard()

    def __enter__(self) -> CheckRunner:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _rel_or_none(path: Path | None, rel: Callable[[Path], str]) -> str | None:
    return None if path is None else rel(path)
