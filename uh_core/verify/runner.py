"""``verify``: required checks first, then acceptance criteria in declared order.

Every step is written to the mission's event log as it happens; full output goes to
``runs/<run-id>/``; ``verification.yaml`` is written whole at the end (also when the run
is interrupted, with what is known, before exit 130).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from uh_core.clock import new_run_id, timestamp
from uh_core.errors import Interrupted
from uh_core.events.writer import EventLog
from uh_core.fileio import dump_yaml, write_text_atomic
from uh_core.ids import safe_filename
from uh_core.layout import Layout
from uh_core.models.events import Owner, VerificationFinished, VerificationStarted
from uh_core.models.mission import AcceptanceCriterion, Mission
from uh_core.models.verification import ACResult, CheckResult, Finding, VerificationResult
from uh_core.proc import full_env
from uh_core.proc.spawn import Launcher
from uh_core.verify import flaky, rules
from uh_core.verify.execute import CheckRunner, Evidence, Job
from uh_core.verify.lines import Lines
from uh_core.verify.synthetic import SyntheticCriterion

DEFAULT_TIMEOUT_S = 600.0


@dataclass
class VerifyOptions:
    repeat: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    grace_s: float = 2.0
    workdir: Path | None = None  # where checks run (a sandbox); default: the root
    synthetic: list[SyntheticCriterion] = field(default_factory=list)
    extra_findings: list[Finding] = field(default_factory=list)
    judged_tree: str | None = None  # the snapshot judged (a sandbox), recorded in the result
    # the flaky register this verify writes (default: the layout's .harness/flaky.yaml) and
    # one more it honours (a sandbox's verify: the operator's)
    flaky_register: Path | None = None
    flaky_also: Path | None = None
    judged_diff_hash: str | None = None
    sandbox_id: str | None = None
    # The judge's room (judge/room.py): how commands start, the environment they get (None:
    # this process's), and how a criterion that needs the network starts; the note recorded.
    launcher: Launcher | None = None
    base_env: Mapping[str, str] | None = None
    network_launcher: Callable[[], Launcher] | None = None
    isolation: str | None = None


@dataclass
class _Plan:
    checks: list[tuple[str, str | None, float | None]]  # name, command, timeout
    manual: list[str]
    criteria: list[AcceptanceCriterion]


def _plan(mission: Mission) -> _Plan:
    checks: list[tuple[str, str | None, float | None]] = [
        (c.name, c.command, c.timeout_s) for c in mission.verification.required_checks
    ]
    manual: list[str] = []
    for item in mission.verification.checks:
        if isinstance(item, str):
            manual.append(item)
        else:
            checks.append((item.name, item.command, item.timeout_s))
    return _Plan(checks, manual, mission.criteria())


def _apply(evidence: Evidence, target: CheckResult | ACResult) -> None:
    target.exit_code = evidence.exit_code
    target.duration_ms = evidence.duration_ms
    target.timed_out = evidence.timed_out
    target.stdout_snippet = evidence.stdout_snippet
    target.stderr_snippet = evidence.stderr_snippet
    target.stdout_log = evidence.stdout_log
    target.stderr_log = evidence.stderr_log
    target.flaky = evidence.flaky
    target.status = evidence.status


class Verifier:
    def __init__(self, layout: Layout, mission: Mission, options: VerifyOptions):
        self.layout = layout
        self.mission = mission
        self.options = options
        self.run_id = new_run_id("verify")
        self.run_dir = layout.run_dir(mission.id, self.run_id)
        self.workdir = options.workdir or layout.root
        self.log = EventLog(
            layout.mission_events(mission.id), mission_id=mission.id, run_id=self.run_id
        )
        self.lines = Lines(mission.id, self.run_id)  # the per-step events, without models
        ours = {
            "MISSION_ID": mission.id,
            "UH_ROOT": str(self.workdir),
            "UH_MISSION_DIR": str(layout.mission_dir(mission.id)),
            "UH_RUN_ID": self.run_id,
        }
        base = options.base_env
        self.env = full_env(ours) if base is None else {**base, **ours}
        self._after: dict[int, Job] = {}  # a job → the job run after it (prepared meanwhile)

    def _needs(self, ac: AcceptanceCriterion) -> tuple[Launcher | None, dict[str, str] | None]:
        """What a criterion declared it needs beyond the room: the network (a session with
        it) and variables of the operator's environment (only in a room: elsewhere every
        check has the whole environment)."""
        if ac.needs is None or self.options.base_env is None:
            return None, None
        launcher = None
        if ac.needs.network and self.options.network_launcher is not None:
            launcher = self.options.network_launcher()
        names = [name for name in ac.needs.env if name in os.environ]
        return launcher, {name: os.environ[name] for name in names} or None

    def _jobs(self, plan: _Plan, total: int) -> tuple[list[Job | None], list[Job | None]]:
        """The command of every check and criterion (None: nothing to run), in run order."""
        checks: list[Job | None] = [
            None
            if command is None
            else Job(
                command,
                f"check-{index + 1:02d}-{safe_filename(name)}",
                timeout or self.options.timeout_s,
            )
            for index, (name, command, timeout) in enumerate(plan.checks)
        ]
        criteria: list[Job | None] = []
        for index, ac in enumerate(plan.criteria):
            if ac.check_command is None:
                criteria.append(None)
                continue
            # Emitted once the command runs, so writing it overlaps the command.
            emit_started = partial(self._emit_started, ac.id, index, total)
            launcher, env = self._needs(ac)
            criteria.append(
                Job(
                    ac.check_command,
                    f"ac-{ac.id}",
                    ac.timeout_s or self.options.timeout_s,
                    on_start=emit_started,
                    launcher=launcher,
                    env=env,
                )
            )
        return checks, criteria

    def _emit_started(self, ac_id: str, index: int, total: int) -> None:
        self.log.append_line(self.lines.acceptance_started(ac_id, index, total))

    def run(self) -> VerificationResult:
        plan = _plan(self.mission)
        started_at = timestamp()
        checks = [
            CheckResult(name=n, type="command", status="unobserved", command=c)
            for n, c, _ in plan.checks
        ] + [CheckResult(name=text, type="manual", status="unobserved") for text in plan.manual]
        criteria = [
            ACResult(
                id=ac.id,
                description=ac.description,
                severity=ac.severity,
                check_command=ac.check_command,
                status="unobserved",
                degraded=ac.degraded,
                needs=_granted(ac) if self.options.base_env is not None else [],
            )
            for ac in plan.criteria
        ] + [
            ACResult(id=s.id, description=s.description, status="unobserved", synthetic=True)
            for s in self.options.synthetic
        ]
        findings: list[Finding] = list(self.options.extra_findings)
        self.log.emit(
            VerificationStarted(
                total_checks=len(plan.checks),
                total_acceptance=len(criteria),
                repeat=self.options.repeat,
                owner=Owner.here(),  # a reader sees a killed verify as interrupted
            )
        )
        interrupted = False
        self.flaky = flaky.Watch(
            self.options.flaky_register or flaky.register_path(self.layout.harness),
            self.mission.id,
            # a re-verify compares with the previous verdicts only on a known tree: the main
            # checkout's verify records none, and reads nothing more
            flaky.previous_result(self.layout.verification_file(self.mission.id))
            if self.options.judged_tree is not None
            else None,
            self.options.judged_tree,
            self.layout.rel(self.run_dir / "verification.yaml"),
            self.options.flaky_also,
        )
        check_jobs, criterion_jobs = self._jobs(plan, len(criteria))
        order = [job for job in check_jobs + criterion_jobs if job is not None]
        self._after = {id(job): following for job, following in itertools.pairwise(order)}
        try:
            with self._runner() as runner:
                self._run_checks(runner, plan, checks, check_jobs)
                self._run_criteria(runner, plan, criteria, criterion_jobs, findings)
        except KeyboardInterrupt:
            interrupted = True
            findings.append(
                Finding(
                    severity="error",
                    code="interrupted",
                    message="verification was interrupted; criteria not reached are unobserved",
                )
            )
        self.flaky.save()
        for check in checks:
            findings.extend(rules.check_findings(check))
        for ac in criteria:
            if not ac.synthetic:
                findings.extend(rules.criterion_findings(ac))
        status, extra = rules.decide(checks, criteria)
        if interrupted:
            status = "failed" if status == "failed" else "blocked"
        findings.extend(extra)
        result = VerificationResult(
            mission_id=self.mission.id,
            run_id=self.run_id,
            status=status,
            started_at=started_at,
            finished_at=timestamp(),
            root=str(self.workdir),
            repeat=self.options.repeat,
            checks=checks,
            findings=findings,
            acceptance_criteria=criteria,
            summary=rules.summarise(checks, criteria),
            sandbox_id=self.options.sandbox_id,
            judged_tree=self.options.judged_tree,
            judged_diff_hash=self.options.judged_diff_hash,
            isolation=self.options.isolation,
        )
        artifact = write_result(self.layout, result)
        self.log.emit(
            VerificationFinished(
                status=status,
                summary=result.summary.model_dump(mode="json"),
                artifact=self.layout.rel(artifact),
            )
        )
        if interrupted:
            raise Interrupted("verification interrupted; partial result written")
        return result

    def _runner(self) -> CheckRunner:
        return CheckRunner(
            launcher=self.options.launcher,
            cwd=self.workdir,
            log_dir=self.run_dir,
            env=self.env,
            repeat=self.options.repeat,
            grace=self.options.grace_s,
            rel=self.layout.rel,
        )

    def _run_job(self, runner: CheckRunner, job: Job) -> Evidence:
        return runner.run(job, then=self._after.get(id(job)))

    def _run_checks(
        self,
        runner: CheckRunner,
        plan: _Plan,
        checks: list[CheckResult],
        jobs: list[Job | None],
    ) -> None:
        for index, (name, _command, _timeout) in enumerate(plan.checks):
            check = checks[index]
            job = jobs[index]
            if job is None:
                check.status = "blocked"
            else:
                _apply(self._run_job(runner, job), check)
            self.log.append_line(
                self.lines.check_checked(
                    name, check.status, check.exit_code, check.duration_ms, check.timed_out
                )
            )

    def _run_criteria(
        self,
        runner: CheckRunner,
        plan: _Plan,
        criteria: list[ACResult],
        jobs: list[Job | None],
        findings: list[Finding],
    ) -> None:
        total = len(criteria)
        declared = len(plan.criteria)
        for index, ac in enumerate(criteria):
            job = jobs[index] if index < declared else None
            if index >= declared:
                self._emit_started(ac.id, index, total)
                synthetic = self.options.synthetic[index - declared]
                evaluated, more = synthetic.evaluate()
                criteria[index] = ac = evaluated
                findings.extend(more)
            elif job is None:
                self._emit_started(ac.id, index, total)
                ac.status = "blocked"
            else:
                evidence = self._run_job(runner, job)
                _apply(evidence, ac)
                ac.runs = evidence.runs
                self.flaky.judge(ac)  # registered: unobserved, never passed
            self.log.append_line(
                self.lines.acceptance_checked(
                    ac.id,
                    ac.status,
                    ac.severity,
                    ac.exit_code,
                    ac.duration_ms,
                    ac.timed_out,
                    ac.synthetic,
                    ac.flaky,
                )
            )


def write_result(layout: Layout, result: VerificationResult) -> Path:
    """``verification.yaml`` of ``result``'s run and the mission's latest; the latter's path."""
    artifact = layout.verification_file(result.mission_id)
    # No null values: the TypeScript uh rejects them, and uh reads an absent key as None.
    text = dump_yaml(result.model_dump(mode="json", exclude_none=True))
    write_text_atomic(layout.run_dir(result.mission_id, result.run_id) / "verification.yaml", text)
    write_text_atomic(artifact, text)
    return artifact


def _granted(ac: AcceptanceCriterion) -> list[str]:
    """What a criterion was granted beyond the room, as its record says it."""
    if ac.needs is None:
        return []
    return (["network"] if ac.needs.network else []) + [f"env {n}" for n in ac.needs.env]


def verify_mission(layout: Layout, mission: Mission, options: VerifyOptions) -> VerificationResult:
    verifier = Verifier(layout, mission, options)
    with verifier.log:  # one descriptor on the event log for the whole run
        return verifier.run()
