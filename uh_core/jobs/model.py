"""The job and result models (``uh.job.v0``). Everything here crosses a process or machine
boundary: plain data (strings, numbers, bytes, dicts), no paths into the head's disk."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from uh_core.models.base import Plain

JOB_SCHEMA = "uh.job.v0"


class JobModel(Plain):
    model_config = ConfigDict(defer_build=True, ser_json_bytes="base64", val_json_bytes="base64")


class JobSource(JobModel):
    """The repository as of ``commit``: a git bundle holding it (``refs/heads/uh-job``)."""

    commit: str
    bundle: bytes
    identity: dict[str, str] = Field(default_factory=dict)  # user.name / user.email


class NodeInfo(JobModel):
    """Where a job ran: the Ray node id (short) and the machine, as shown in events."""

    node_id: str = "local"
    host: str = ""
    ip: str = ""
    pid: int | None = None  # the worker process that ran the job
    pool: str | None = None  # "service" / "run": a warm pool's worker; None: a task of its own

    def label(self) -> str:
        where = self.host or self.ip or "?"
        return where if self.node_id == "local" else f"{where} (node {self.node_id[:8]})"


class EvidenceFile(JobModel):
    path: str  # relative to the workspace's .harness/
    data: bytes
    cut: int = 0  # bytes left out of the middle (the evidence limit)


class RuntimeJob(JobModel):
    """One runtime of ``mission run-all``: the mission, the manifest, the run's options."""

    schema_: str = Field(JOB_SCHEMA, alias="schema")
    kind: Literal["runtime"] = "runtime"
    job_id: str
    mission_id: str
    mission_text: str  # the mission file as the head read it (the worker loads it the same way)
    manifest: dict[str, Any]
    sandbox_id: str  # the head's sandbox the result lands in (the worker uses the same id)
    timeout_s: float | None = None
    isolation: str | None = None
    force: bool = False


class HarnessJob(JobModel):
    """One mission of ``harness run``: the run's resolved settings and agent."""

    schema_: str = Field(JOB_SCHEMA, alias="schema")
    kind: Literal["harness"] = "harness"
    job_id: str
    mission_id: str
    run_id: str
    base_commit: str
    settings: dict[str, Any]  # uh_core.harness.config.Settings, as data; the worker derives
    # the agent and the profiles from them and its workspace, as ``prepare`` does on the head


class JobResult(JobModel):
    """What comes back: the outcome as data, the change, the evidence, where it ran."""

    job_id: str
    kind: Literal["runtime", "harness"]
    node: NodeInfo = Field(default_factory=NodeInfo)
    outcome: dict[str, Any] = Field(default_factory=dict)  # RunOutcome or RequirementRecord
    patch: bytes | None = None  # runtime: the diff against the base (git binary patch)
    bundle: bytes | None = None  # harness: the commit on harness/<id>, when it passed
    sandbox_id: str | None = None  # the worker's sandbox (its evidence paths use this id)
    evidence: list[EvidenceFile] = Field(default_factory=list)
    roots: dict[str, str] = Field(default_factory=dict)  # the worker's paths, to translate
    error: str | None = None  # the job could not run at all (the worker says why)
    timings: dict[str, float] = Field(default_factory=dict)  # seconds: materialise, run, pack


class StreamItem(JobModel):
    """One message from a running job: event lines, a progress line, or the result."""

    kind: Literal["node", "events", "progress", "result"]
    node: NodeInfo | None = None
    lines: list[bytes] = Field(default_factory=list)
    text: str = ""
    result: JobResult | None = None


def parse_job(text: str) -> RuntimeJob | HarnessJob:
    """A job from its JSON, by its ``kind``."""
    adapter: TypeAdapter[RuntimeJob | HarnessJob] = TypeAdapter(
        Annotated[RuntimeJob | HarnessJob, Field(discriminator="kind")]
    )
    return adapter.validate_json(text)
