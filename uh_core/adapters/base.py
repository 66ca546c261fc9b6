"""The adapter lifecycle: prepare → launch → observe → (send) → collect → cancel → close.

One process-based implementation serves every built-in kind: an adapter says how to
build the command line (``build``) and how to read the agent's output (``OutputParser``);
launching in its own session, live observation by byte offset, cancellation of the
whole process group, final-message extraction and the runtime result are shared.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, Literal, overload

from pydantic import BaseModel, Field

from uh_core.adapters.agentenv import Rule, admitted, agent_environment, declared
from uh_core.adapters.ratelimit import detect
from uh_core.adapters.sentinel import extract_final_message
from uh_core.adapters.usage import Usage, UsageMeter, usage_line
from uh_core.clock import timestamp
from uh_core.errors import AdapterError
from uh_core.follow import LineFollower
from uh_core.models.adapter import AdapterManifest
from uh_core.models.mission import Mission
from uh_core.models.runtime import RuntimeResult
from uh_core.proc import LoggedProcess, ProcResult, run_capture, start_logged

ObserveKind = Literal["status", "log", "tool_call", "file_change", "question", "blocker"]


VERSION_TIMEOUT_S = 90.0  # `<cli> --version` in check()


@dataclass(frozen=True)
class ObserveEvent:
    kind: ObserveKind
    message: str


class OutputParser:
    """Reads one run's stdout line by line. The default treats it as plain text."""

    def __init__(self) -> None:
        self.text_parts: list[str] = []  # what the model said, for sentinel extraction
        self.native_final: str | None = None  # the CLI's own notion of its last message
        self.meter = UsageMeter()  # tokens per model, as the CLI reported them
        self.error: str | None = None  # the CLI reported a failure (even with exit 0)
        self.blockers: list[str] = []  # what stopped part of the work (a denied tool): kept
        self.session_id: str | None = None  # the CLI's own session, which a resume continues

    @property
    def usage(self) -> Usage | None:
        """Everything the CLI reported, summed over its models (None: it reported none)."""
        return self.meter.total()

    def feed(self, line: bytes) -> list[ObserveEvent]:
        text = line.decode("utf-8", "replace")
        usage = usage_line(text)
        if usage is not None:  # a plain agent reporting its tokens (docs/costs.md)
            self.meter.add(usage)
            return [ObserveEvent("status", f"usage reported: {text.strip()[:200]}")]
        self.text_parts.append(text)
        return [ObserveEvent("log", text[:500])]

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        """Read side files (last-message file, usage file) once the process has ended."""

    def transcript(self) -> str:
        return "\n".join(self.text_parts)


class LaunchPlan(BaseModel):
    """Everything needed to start one runtime; printed by ``mission dry-run``."""

    runtime: str
    runtime_kind: str
    mission_id: str
    argv: list[str]
    display: str  # the command as a shell line, for people
    cwd: str
    # What uh sets for this launch (MISSION_ID, UH_PROMPT_FILE, ...; the kind's own), and
    # every variable the agent receives → the rule that admitted it (uh, basic, manifest,
    # project): names only. The agent's environment is exactly these names, the values of
    # the operator's environment under ``env`` (adapters/agentenv.py); nothing else.
    env: dict[str, str] = Field(default_factory=dict)
    env_names: dict[str, str] = Field(default_factory=dict)
    stdin_file: str | None = None
    prompt_file: str
    artifacts_dir: str
    stdout_log: str
    stderr_log: str
    side_files: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = None
    # How it runs: "bwrap" (uh_core.isolation.wrap_argv with exactly these paths writable)
    # or "none" (unconfined); ``isolation_note`` says why a run is unconfined.
    isolation: str = "none"
    isolation_note: str | None = None
    writable: list[str] = Field(default_factory=list)
    readable: list[str] = Field(default_factory=list)

    def launch_argv(self) -> list[str]:
        """The command actually started: ``argv``, wrapped by bwrap under isolation."""
        if self.isolation != "bwrap":
            return list(self.argv)
        from uh_core.isolation import wrap_argv
        from uh_core.layout import hidden_from_confined

        return wrap_argv(
            self.argv,
            writable=[Path(p) for p in self.writable],
            readable=[Path(p) for p in self.readable],
            cwd=Path(self.cwd),
            hide=hidden_from_confined(checks=False),
        )


@dataclass
class LaunchContext:
    mission: Mission
    manifest: AdapterManifest
    worktree: Path
    artifacts_dir: Path  # <worktree>/.harness/missions/<id>/
    prompt_file: Path
    sandbox_id: str | None = None
    timeout_s: float | None = None
    isolation: str = "none"  # "bwrap" | "none" (AgentGuard decides)
    isolation_note: str | None = None
    readable: list[Path] = field(default_factory=list)  # besides what bwrap shows anyway
    # where the files the mission names are looked up (the worktree; the operator's checkout
    # for a dry run, which creates no worktree)
    files_root: Path | None = None
    steering: str | None = None  # a continuation's messages (UH_STEERING; runtime/steering.py)
    resume_id: str | None = None  # a continuation: the CLI's session to resume (its own id)
    sessions: Path | None = None  # where a CLI keeps this round's session (its first folder)

    @property
    def session_dir(self) -> Path:
        """The folder a CLI that saves its session keeps it in, the same for every turn of
        a round (a continuation resumes it there)."""
        return self.sessions or self.artifacts_dir / "sessions"


@dataclass(frozen=True)
class Continuation:
    """What continuing an agent with the operator's steering says: the whole prompt it ran
    with, the steering section appended (``prompt``: an agent run again reads it); that
    section alone, closed by the final-message instruction (``message``: a CLI resuming its
    own session reads it); the messages' text (``steering``: ``UH_STEERING``); the previous
    turn's ``session_id`` (its CLI's); ``n``: the continuation's number in this round."""

    prompt: str
    message: str
    steering: str
    session_id: str | None
    n: int


@dataclass
class Session:
    plan: LaunchPlan
    process: LoggedProcess
    parser: OutputParser
    started_at: str
    follower: LineFollower
    cancelled: str | None = None
    steering: list[str] = field(default_factory=list)


@overload
def as_unconfined(plan: LaunchPlan, result: ProcResult) -> ProcResult: ...
@overload
def as_unconfined(plan: LaunchPlan, result: None) -> None: ...
def as_unconfined(plan: LaunchPlan, result: ProcResult | None) -> ProcResult | None:
    """How the agent ended, as the same run unconfined would say it: bubblewrap exits with
    128+N when signal N ended the command inside it (as a shell does), so under bwrap such
    a status is the signal (an agent that itself exits with 129..192 reads as one too)."""
    if result is None or plan.isolation != "bwrap" or result.exit_code is None:
        return result
    signum = result.exit_code - 128
    if not 0 < signum < signal.NSIG:
        return result
    return replace(result, exit_code=None, signal=signum)


@dataclass
class Availability:
    ok: bool
    binary: str | None
    path: str | None
    version: str | None
    reason: str | None = None


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def shell_line(argv: list[str], limit: int = 300) -> str:
    """The command as a shell line for people; an argument over ``limit`` characters (a
    prompt passed inline) is shortened with a note of its length."""

    def show(part: str) -> str:
        if len(part) <= limit:
            return shlex.quote(part)
        return shlex.quote(part[:limit]) + f"…[{len(part)} characters]"

    return " ".join(show(part) for part in argv)


class Adapter:
    kind: ClassVar[str] = ""
    interactive: ClassVar[bool] = False
    # How a steering message reaches this kind's agent (uh-core mission steer); None: it
    # cannot be steered, and the command says so before anything is sent.
    steer_by: ClassVar[str | None] = None
    default_binary: ClassVar[str | None] = None
    version_args: ClassVar[tuple[str, ...]] = ("--version",)
    # claude and omp write partial state on SIGINT; aider and hermes need SIGTERM.
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM)
    grace_s: ClassVar[float] = 2.0

    def __init__(self, manifest: AdapterManifest, project_env: Sequence[str] = ()) -> None:
        self.manifest = manifest
        # harness.config.yaml's ``agent_env``: what the project lets every agent receive
        self.project_env = tuple(project_env)
        self.config = manifest.config
        self.runtime_config: dict[str, object] = dict(self.config.get("runtime_config") or {})

    # --- availability ---------------------------------------------------------------
    @property
    def binary(self) -> str | None:
        command = self.config.get("cli_command")
        return str(command) if command else self.default_binary

    def check(self) -> Availability:
        binary = self.binary
        if binary is None:
            return Availability(True, None, None, None)
        path = shutil.which(binary)
        if path is None:
            return Availability(False, binary, None, None, f"{binary!r} not found on PATH")
        # Generous: a CLI on a JavaScript runtime (bun, node) answering --version took over
        # 20 s on a machine running the whole suite beside it, and read as "not installed".
        result = run_capture([path, *self.version_args], cwd=Path.cwd(), timeout=VERSION_TIMEOUT_S)
        output = (result.stdout or result.stderr).decode("utf-8", "replace").strip()
        version = output.splitlines()[0] if output else None
        if result.returncode != 0:
            return Availability(False, binary, path, version, f"{binary} --version failed")
        return Availability(True, binary, path, version)

    # --- lifecycle ------------------------------------------------------------------
    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        """(argv, extra env, stdin file) for this kind. Every kind must implement it."""
        raise NotImplementedError

    def parser(self) -> OutputParser:
        return OutputParser()

    def prepare(self, ctx: LaunchContext) -> LaunchPlan:
        argv, env, stdin = self.build(ctx)
        base_env = {
            "MISSION_ID": ctx.mission.id,
            "UH_PROMPT_FILE": str(ctx.prompt_file),
            "UH_SANDBOX": str(ctx.worktree),
            "UH_RUNTIME": self.manifest.id,
        }
        if ctx.steering is not None:  # a continuation: the operator's message(s)
            base_env["UH_STEERING"] = ctx.steering
        set_by_uh = {**base_env, **env}
        return LaunchPlan(
            runtime=self.manifest.id,
            runtime_kind=self.kind,
            mission_id=ctx.mission.id,
            argv=argv,
            display=shell_line(argv) + (f" < {shell_line([str(stdin)])}" if stdin else ""),
            cwd=str(ctx.worktree),
            env=set_by_uh,
            env_names=self.env_names(set_by_uh),
            stdin_file=str(stdin) if stdin else None,
            prompt_file=str(ctx.prompt_file),
            artifacts_dir=str(ctx.artifacts_dir),
            stdout_log=str(ctx.artifacts_dir / "runtime.stdout.log"),
            stderr_log=str(ctx.artifacts_dir / "runtime.stderr.log"),
            side_files=self.side_files(ctx),
            timeout_s=ctx.timeout_s,
            isolation=ctx.isolation,
            isolation_note=ctx.isolation_note,
            writable=self.writable_paths(ctx),
            readable=[str(p) for p in dict.fromkeys([*ctx.readable, *self.readable_paths(argv)])],
        )

    def side_files(self, ctx: LaunchContext) -> dict[str, str]:
        return {}

    def env_names(self, set_by_uh: Mapping[str, str]) -> dict[str, Rule]:
        """Every variable the agent will receive → the rule that admitted it (names only):
        uh's, the basics, the manifest's ``env_pass`` (else the kind's defaults), the
        project's ``agent_env``. The rest of the operator's environment is dropped."""
        return admitted(
            os.environ,
            set_by_uh=set_by_uh,
            manifest=declared(self.kind, self.manifest.env_pass),
            project=self.project_env,
        )

    def home_paths(self) -> list[Path]:
        """Where this kind's CLI keeps state it must write (its config, sessions, caches);
        granted under isolation when they exist. The manifest's ``config.isolation_writable``
        adds more. Never the operator's repository."""
        return []

    def readable_paths(self, argv: list[str]) -> list[Path]:
        """Folders the agent must read that a private ``/tmp`` would hide: the folder of
        every absolute path its command line names (its own program, say), and the
        manifest's ``config.isolation_readable``. Read-only, always."""
        found: list[Path] = []
        for word in (w for part in argv for w in _words(part)):
            if word.startswith("/") and len(word) > 1:
                path = Path(word)
                if path.is_file():
                    found.append(path.parent)
                elif path.is_dir():
                    found.append(path)
        extra = self.config.get("isolation_readable") or []
        if isinstance(extra, list):
            found += [Path(str(p)).expanduser() for p in extra]
        return found

    def writable_paths(self, ctx: LaunchContext) -> list[str]:
        extra = self.config.get("isolation_writable") or []
        named = [Path(str(p)).expanduser() for p in extra] if isinstance(extra, list) else []
        homes = [p for p in (*self.home_paths(), *named) if p.exists()]
        # a continued turn's own folder is a new one: the round's session folder too
        sessions = (ctx.sessions,) if ctx.sessions is not None else ()
        return [str(p) for p in dict.fromkeys((ctx.worktree, ctx.artifacts_dir, *sessions, *homes))]

    def launch(self, plan: LaunchPlan) -> Session:
        process = start_logged(
            plan.launch_argv(),
            cwd=Path(plan.cwd),
            stdout_log=Path(plan.stdout_log),
            stderr_log=Path(plan.stderr_log),
            env=agent_environment(plan.env_names, plan.env),
            env_is_complete=True,  # never the whole inherited environment
            stdin_file=Path(plan.stdin_file) if plan.stdin_file else None,
            grace=self.grace_s,
        )
        follower = LineFollower(Path(plan.stdout_log))
        return Session(plan, process, self.parser(), timestamp(), follower)

    def observe(self, session: Session) -> list[ObserveEvent]:
        events: list[ObserveEvent] = []
        for line in session.follower.lines():
            events.extend(session.parser.feed(line))
        return events

    def continue_with(self, ctx: LaunchContext, turn: Continuation) -> LaunchContext | None:
        """The launch that continues this agent's work with the operator's steering, in its
        own folder under the run's (``steer-N``); None when this kind cannot be continued
        (``steer_by`` says how one is). This default runs the agent again, its prompt the
        one it had with the steering appended (a ``command`` or ``script`` agent)."""
        if self.steer_by is None:
            return None
        return self._continuation(ctx, turn, turn.prompt, None)

    def _continuation(
        self, ctx: LaunchContext, turn: Continuation, text: str, resume_id: str | None
    ) -> LaunchContext:
        folder = ctx.artifacts_dir / f"steer-{turn.n}"
        folder.mkdir(parents=True, exist_ok=True)
        ctx.session_dir.mkdir(parents=True, exist_ok=True)  # bound writable: it must exist
        prompt_file = folder / "prompt.md"
        prompt_file.write_text(text, encoding="utf-8")
        return replace(
            ctx, artifacts_dir=folder, prompt_file=prompt_file, steering=turn.steering,
            resume_id=resume_id, sessions=ctx.session_dir,
        )  # fmt: skip

    def send(self, session: Session, message: str) -> None:
        if not self.interactive:
            raise AdapterError(
                f"runtime {self.manifest.id!r} ({self.kind}) is one-shot: it cannot be steered "
                "while it runs",
                fix="cancel it and run again with a changed mission",
            )
        session.steering.append(message)

    def wait(self, session: Session, timeout: float | None) -> ProcResult | None:
        return as_unconfined(session.plan, session.process.wait(timeout))

    def cancel(self, session: Session, reason: str) -> ProcResult:
        session.cancelled = reason
        return as_unconfined(session.plan, session.process.stop(self.cancel_signals))

    def collect(self, session: Session) -> tuple[RuntimeResult, str]:
        """The runtime result and the final message, once the process has ended."""
        result = session.process.wait(0) or session.process.stop(timed_out=True)
        result = as_unconfined(session.plan, result)
        self.observe(session)  # whatever arrived after the last poll
        parser = session.parser
        parser.finish(session.plan, result)
        final = extract_final_message(parser.transcript()) or parser.native_final or ""
        blockers: list[str] = []
        if session.cancelled is not None:
            status: Literal["completed", "failed", "cancelled", "blocked", "rate_limited"]
            status = "cancelled"
            blockers.append(f"cancelled: {session.cancelled}")
        elif result.timed_out:
            status = "failed"
            blockers.append(f"timed out after {session.plan.timeout_s:g} s")
        elif result.exit_code != 0:
            status = "failed"
            how = (
                f"signal {result.signal}"
                if result.exit_code is None
                else f"exit {result.exit_code}"
            )
            blockers.append(f"{self.manifest.id} ended with {how}")
            if parser.error:
                blockers.append(f"{self.manifest.id} reported an error: {parser.error}")
        elif parser.error:
            status = "failed"
            blockers.append(f"{self.manifest.id} reported an error: {parser.error}")
        else:
            status = "completed"
        if parser.error and status != "failed":
            blockers.append(f"{self.manifest.id} reported an error: {parser.error}")
        blockers += [line for line in parser.blockers if line not in blockers]
        limited = None
        if status == "failed" and not result.timed_out:
            limited = detect(parser.error, result.stderr_snippet[-4000:])
        if limited is not None:
            status = "rate_limited"
            blockers.insert(0, f"rate limited: {limited.message}")
        runtime_result = RuntimeResult(
            retry_after_s=limited.retry_after_s if limited is not None else None,
            mission_id=session.plan.mission_id,
            runtime=self.manifest.id,
            status=status,
            summary=final_summary(final),
            exit_code=result.exit_code,
            started_at=session.started_at,
            finished_at=timestamp(),
            blockers=blockers,
            logs={
                "stdout": session.plan.stdout_log,
                "stderr": session.plan.stderr_log,
                "duration_ms": result.duration_ms,
                **session.plan.side_files,
            },
        )
        return runtime_result, final

    def close(self, session: Session) -> None:
        if session.process.running():
            session.process.stop((signal.SIGTERM,))


def final_summary(final: str) -> str:
    """The ``summary:`` line of a final message written as the prompt asks (``status:``,
    ``summary:``, ``files_changed:``), else its first line; at most 200 characters."""
    lines = final.strip().splitlines()
    for line in lines:
        if line.startswith("summary:"):
            value = line.removeprefix("summary:").strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            if value:
                return value[:200]
    return (lines or [""])[0][:200]
