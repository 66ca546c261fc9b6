"""Settings of one harness run: ``harness.config.yaml`` (through the located-YAML loader),
then the command-line flags on top. Everything is checked before anything starts.

Here, below the judge, because the gate reads them (``test_cmd``, ``protected``,
``judge_allow``, ``non_regression``, …) for ``verify --sandbox`` as for the harness;
:mod:`uh_core.harness.config` re-exports them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.adapters.offline import substitute_prompt
from uh_core.errors import HarnessError, UsageError
from uh_core.layout import Layout
from uh_core.models.base import load_yaml_model
from uh_core.models.harness_config import HarnessConfig
from uh_core.models.ledger import RunSettings
from uh_core.models.usage import ModelPrice

CONFIG_NAME = "harness.config.yaml"
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Flags:
    """What the command line gave; None means "not given" (the config file decides)."""

    agent: str | None = None
    runtime: str | None = None
    test_cmd: str | None = None
    max_attempts: int | None = None
    timeout_s: float | None = None
    force: bool = False
    strict_tests: bool = False
    strict_artifacts: bool = False
    requested: tuple[str, ...] = ()
    skip_not_ready: bool = False
    budget_seconds: float | None = None
    max_requirements: int | None = None
    budget_usd: float | None = None
    resume: bool = False
    profile: str | None = None
    isolation: str | None = None  # auto | bwrap | none
    jobs: int | None = None  # missions at once (default 1)
    executor: str | None = None  # local | ray
    ray_address: str | None = None


@dataclass(frozen=True)
class Settings:
    agent: str | None
    runtime: str | None
    test_cmd: str | None
    max_attempts: int
    timeout_s: float | None
    force: bool
    strict_tests: bool
    strict_artifacts: bool
    requested: tuple[str, ...]
    prompt_prefix: str | None  # text: prompt_prefix_file's content wins over prompt_prefix
    rules_file: str | None
    rules_text: str | None
    message_report: str | None
    protected: tuple[str, ...]
    allow: tuple[str, ...] = field(default_factory=tuple)
    skip_not_ready: bool = False
    budget_seconds: float | None = None
    max_requirements: int | None = None
    budget_usd: float | None = None  # the run's money: no attempt starts that would pass it
    pricing: Mapping[str, ModelPrice] = field(default_factory=dict)  # per model, USD per 1M
    fallback_runtimes: tuple[str, ...] = ()  # who takes over a rate-limited mission
    resume: bool = False
    profile: str | None = None  # --profile: this profile for every mission
    isolation: str = "auto"  # what was asked; the ledger records what each attempt got
    isolation_writable: tuple[str, ...] = ()
    non_regression: bool = True
    judge_allow: tuple[str, ...] = ()
    check_env: tuple[str, ...] = ()  # operator variables the gate's checks also receive
    isolation_readable: tuple[str, ...] = ()
    jobs: int = 1  # missions at once (docs/harness.md "Missions in parallel")
    executor: str = "local"  # local | ray (ray: the distributed executor takes over)
    ray_address: str | None = None
    # Read the base commit's cached results (judge/baseline.py)? promote's re-judge does
    # not: an unconfined agent can write the state folder the cache lives in.
    base_cache: bool = True

    def record(self) -> RunSettings:
        return RunSettings(
            agent=self.agent,
            runtime=self.runtime,
            test_cmd=self.test_cmd,
            max_attempts=self.max_attempts,
            timeout_s=self.timeout_s,
            force=self.force,
            strict_tests=self.strict_tests,
            strict_artifacts=self.strict_artifacts,
            requested=list(self.requested),
            message_report=self.message_report,
            protected_paths=list(self.protected),
            allow_paths=list(self.allow),
            isolation=self.isolation,
            skip_not_ready=self.skip_not_ready,
            budget_seconds=self.budget_seconds,
            max_requirements=self.max_requirements,
            budget_usd=self.budget_usd,
            fallback_runtimes=list(self.fallback_runtimes),
            pricing={name: price.model_dump() for name, price in self.pricing.items()},
            resume=self.resume,
            profile=self.profile,
            jobs=self.jobs,
            executor=self.executor,
            ray_address=self.ray_address,
        )


def load_config(layout: Layout) -> HarnessConfig:
    """The root's harness.config.yaml, or the defaults when there is none."""
    path = layout.harness_config
    if not path.exists():
        return HarnessConfig()
    return load_yaml_model(path, HarnessConfig, layout.rel(path))


def _read_named(layout: Layout, key: str, value: str) -> str:
    path = Path(value)
    path = path if path.is_absolute() else layout.root / path
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError(
            f"{CONFIG_NAME}: {key}: {value} does not exist",
            fix=f"create it, or correct or remove '{key}'",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{CONFIG_NAME}: {key}: cannot read {value}: {exc}") from None


def resolve(layout: Layout, config: HarnessConfig, flags: Flags) -> Settings:
    """Flags over the config file. An agent without ``{prompt_file}`` is refused (exit 2)."""
    if flags.agent is not None and flags.runtime is not None:
        raise UsageError("--agent and --runtime both given", fix="choose one of them")
    if flags.max_attempts is not None and flags.max_attempts < 1:
        raise UsageError(f"--max-attempts {flags.max_attempts}: must be at least 1")
    if flags.timeout_s is not None and flags.timeout_s <= 0:
        raise UsageError(f"--timeout {flags.timeout_s:g}: must be more than 0 seconds")
    if flags.force and flags.resume:
        raise UsageError(
            "--force and --resume both given: --force deletes the branch --resume continues",
            fix="choose one of them",
        )
    if flags.budget_seconds is not None and flags.budget_seconds <= 0:
        raise UsageError(f"--budget-seconds {flags.budget_seconds:g}: must be more than 0")
    if flags.budget_usd is not None and not flags.budget_usd > 0:
        raise UsageError(f"--budget-usd {flags.budget_usd:g}: must be more than 0")
    if flags.max_requirements is not None and flags.max_requirements < 1:
        raise UsageError(f"--max-requirements {flags.max_requirements}: must be at least 1")
    if flags.jobs is not None and flags.jobs < 1:
        raise UsageError(f"--jobs {flags.jobs}: must be at least 1")
    if flags.executor is not None and flags.executor not in EXECUTORS:
        raise UsageError(f"--executor {flags.executor}: must be one of {', '.join(EXECUTORS)}")
    if flags.agent is not None or flags.runtime is not None:
        agent, runtime = flags.agent, flags.runtime
    else:
        agent, runtime = config.agent, config.runtime
    if agent is not None:
        substitute_prompt(agent, Path("prompt.md"))  # AdapterError (exit 2) without the placeholder
    prefix = config.prompt_prefix
    if config.prompt_prefix_file:
        prefix = _read_named(layout, "prompt_prefix_file", config.prompt_prefix_file)
    rules = _read_named(layout, "rules_file", config.rules_file) if config.rules_file else None
    test_cmd = flags.test_cmd if flags.test_cmd is not None else config.test_cmd
    return Settings(
        agent=agent,
        runtime=runtime,
        test_cmd=test_cmd if test_cmd and test_cmd.strip() else None,
        max_attempts=flags.max_attempts or config.max_attempts,
        timeout_s=flags.timeout_s if flags.timeout_s is not None else config.timeout_s,
        force=flags.force,
        strict_tests=flags.strict_tests or config.strict_tests,
        strict_artifacts=flags.strict_artifacts or config.strict_artifacts,
        requested=flags.requested,
        prompt_prefix=prefix if prefix and prefix.strip() else None,
        rules_file=config.rules_file,
        rules_text=rules,
        message_report=config.message_report,
        protected=config.protected,
        allow=tuple(config.allow_paths),
        isolation=flags.isolation or config.isolation,
        isolation_writable=tuple(config.isolation_writable),
        non_regression=config.non_regression,
        judge_allow=tuple(config.judge_allow),
        check_env=tuple(config.check_env),
        isolation_readable=tuple(config.isolation_readable),
        skip_not_ready=flags.skip_not_ready,
        resume=flags.resume,
        profile=flags.profile,
        budget_seconds=(
            flags.budget_seconds if flags.budget_seconds is not None else config.budget_seconds
        ),
        max_requirements=(
            flags.max_requirements
            if flags.max_requirements is not None
            else config.max_requirements
        ),
        budget_usd=flags.budget_usd if flags.budget_usd is not None else config.budget_usd,
        pricing=dict(config.pricing),
        fallback_runtimes=tuple(config.fallback_runtimes),
        jobs=flags.jobs if flags.jobs is not None else config.jobs,
        executor=flags.executor if flags.executor is not None else config.executor,
        ray_address=flags.ray_address if flags.ray_address is not None else config.ray_address,
    )
