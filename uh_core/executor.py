"""Where jobs run. One small interface: the cross-runtime QA and the delivery loop dispatch
through it; today jobs run as local processes driven from a thread each, a distributed
engine can implement the same ``run_all``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Job(Generic[T]):
    name: str
    run: Callable[[], T]


class Executor(ABC):
    @abstractmethod
    def run_all(self, jobs: Sequence[Job[T]], *, parallel: bool = True) -> list[T]:
        """Run every job; results in the order of ``jobs``. A job's own errors are its
        result to report (jobs return outcomes, they do not raise)."""


class LocalExecutor(Executor):
    """Each job drives its own local process(es); parallel jobs run from threads."""

    def __init__(self, max_workers: int = 16) -> None:
        self.max_workers = max_workers

    def run_all(self, jobs: Sequence[Job[T]], *, parallel: bool = True) -> list[T]:
        if not parallel or len(jobs) <= 1:
            return [job.run() for job in jobs]
        with ThreadPoolExecutor(
            max_workers=min(self.max_workers, len(jobs)), thread_name_prefix="uh-job"
        ) as pool:
            futures = [pool.submit(job.run) for job in jobs]
            return [future.result() for future in futures]
