"""The prompt of one attempt, top to bottom (the order is part of the contract):

``prompt_prefix`` / ``prompt_prefix_file`` (the file wins), ``---``, ``# Implement <id>``,
the mission's facts, its sections (objective, constraints, acceptance criteria with their
commands, … read-first files — the same sections ``mission run`` uses), the project rules
file, the definition of done, on a retry ``## Previous attempt failed`` with the failing
stage and its output, after a hand-over ``## The operator's answer`` with every answer the
rounds took (``uh_core.harness.answer``), and last the final-message instruction.

The prompt depends only on the mission, the settings and the previous failure, so
``harness prompt ID`` prints exactly what attempt 1 of ``harness run`` sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from uh_core.adapters.sentinel import INSTRUCTION
from uh_core.clock import now
from uh_core.fileio import write_text_atomic
from uh_core.harness.config import Settings
from uh_core.judge.commandfiles import judge_commands, judge_named
from uh_core.layout import Layout
from uh_core.models.ledger import HandoverAnswer
from uh_core.models.mission import Mission
from uh_core.runtime.prompt import mission_sections
from uh_core.shown import fenced

PREVIOUS_HEADING = "## Previous attempt failed"
FEEDBACK_LIMIT = 8000  # characters of a stage's output carried into the next prompt


@dataclass(frozen=True)
class Feedback:
    """Why the previous attempt was red."""

    attempt: int
    stage: str
    detail: str
    output: str


def branch_name(mission_id: str) -> str:
    return f"harness/{mission_id}"


def bounded(text: str, limit: int = FEEDBACK_LIMIT) -> str:
    """``text`` cut to about ``limit`` characters: the head and the tail, which say the most."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n… [{omitted} characters omitted] …\n{text[-half:]}"


def _facts(mission: Mission) -> str:
    lines = [f"- id: {mission.id}", f"- title: {mission.display_title}"]
    for label, value in (
        ("category", mission.category),
        ("bounded context", mission.bounded_context),
        ("requirement", mission.requirement),
        ("feature", mission.feature),
    ):
        if value:
            lines.append(f"- {label}: {value}")
    if mission.depends_on:
        lines.append(f"- depends on: {', '.join(mission.depends_on)}")
    if mission.tests:
        lines.append(f"- required tests: {', '.join(mission.tests)}")
    lines.append(f"- branch: {branch_name(mission.id)} (in this worktree)")
    return "## Mission\n\n" + "\n".join(lines)


def _definition_of_done(mission: Mission, settings: Settings) -> str:
    protected = ", ".join(f"`{glob}`" for glob in settings.protected) or "none"
    allowed = ", ".join(f"`{glob}`" for glob in settings.allow)
    scope = f"do not modify or delete protected files ({protected}"
    scope += f"; except {allowed})" if allowed else ")"
    judge_allow = [*settings.judge_allow, *mission.judge_allow]
    named = judge_named(mission, judge_commands(mission, settings.test_cmd))
    ran = ", ".join(f"`{path}`" for path in sorted(named))
    scope += (
        "; test infrastructure is part of the judge: do not create, change or delete "
        "`conftest.py` (anywhere), `pytest.ini`, `tox.ini`, the `[tool.pytest.ini_options]` / "
        "`[tool:pytest]` sections, `sitecustomize.py`, `usercustomize.py`, `*.pth` files, "
        "`*.dist-info`/`*.egg-info` folders"
        + (f", or the files the checks and tests run ({ran})" if ran else "")
        + "; give no new module the name of one the tests' Python imports (the standard "
        "library's, pytest's)"
        + (f" (except {', '.join(f'`{g}`' for g in judge_allow)})" if judge_allow else "")
    )
    verify = "every acceptance criterion and required check above passes in this worktree"
    if mission.tdd is not None and mission.tdd.enforce_tests_first:
        verify += ", and a change to source also changes tests"
    if settings.test_cmd:
        tests = f"`{settings.test_cmd.replace('{mission}', mission.id)}` passes and runs tests"
        if mission.tests:
            tests += "; these must run and pass (skipped is not passed): " + ", ".join(
                f"`{selector}`" for selector in mission.tests
            )
            tests += "; do not rebind, skip, xfail or re-parametrize them"
        if settings.non_regression:
            tests += (
                "; every test that passed at the base commit must still be collected and pass "
                "(not deleted, skipped, xfailed or deselected)"
            )
            if mission.retire_tests:
                tests += ", except the retired " + ", ".join(f"`{t}`" for t in mission.retire_tests)
    else:
        tests = "no test command is configured"
    steps = [
        "agent: your command ends with exit code 0",
        f"write-scope: {scope}; creating new files is fine",
        f"verify: {verify}",
        f"tests: {tests}",
        "artifacts: every expected output listed above is created or changed",
    ]
    numbered = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))
    return (
        "## Definition of done\n\nThe harness judges your work in this worktree, in this "
        f"order:\n\n{numbered}\n\nLeave your changes in the working tree. Do not edit "
        "mission.yaml: when the gate passes, the harness marks the mission done and commits "
        f"your work on `{branch_name(mission.id)}` for review."
    )


def _feedback(feedback: Feedback) -> str:
    return (
        f"{PREVIOUS_HEADING}\n\nAttempt {feedback.attempt} failed at the "
        f"`{feedback.stage}` stage: {feedback.detail}\n\n{fenced(bounded(feedback.output))}"
        "\n\nYour earlier changes are still in this worktree. Fix the cause above, then "
        "finish the mission."
    )


def build_prompt(
    mission: Mission,
    settings: Settings,
    feedback: Feedback | None = None,
    answers: list[HandoverAnswer] | None = None,
) -> str:
    parts: list[str] = []
    if settings.prompt_prefix:
        parts += [settings.prompt_prefix.strip("\n"), "---"]
    parts += [f"# Implement {mission.id}", _facts(mission), *mission_sections(mission)]
    if settings.rules_text is not None and settings.rules_text.strip():
        parts.append(f"## Project rules ({settings.rules_file})\n\n{settings.rules_text.strip()}")
    parts.append(_definition_of_done(mission, settings))
    if settings.timeout_s is not None:
        parts.append(time_limit(settings.timeout_s))
    if feedback is not None:
        parts.append(_feedback(feedback))
    if answers:
        from uh_core.harness.answer import section

        parts.append(section(answers))
    parts.append(INSTRUCTION.strip())
    return "\n\n".join(parts) + "\n"


def time_limit(seconds: float) -> str:
    """The attempt's deadline, said to the agent: what it leaves then is what is judged."""
    shown = f"{seconds / 60:g} minute(s)" if seconds >= 120 else f"{seconds:g} seconds"
    return (
        f"## Time limit\n\nThis attempt is stopped after {shown}. The work tree as it stands "
        "then is judged like any other: keep it in a state that builds and passes what it "
        "can, and make the change in small complete steps rather than one big one at the end."
    )


def archive_prompt(layout: Layout, mission_id: str, attempt: int, text: str) -> Path:
    """``.harness/prompts/<id>-<ts>-attempt-<n>.md``, never overwriting an earlier one."""
    moment = now()
    stamp = moment.strftime("%Y%m%dT%H%M%S") + f"{moment.microsecond // 1000:03d}Z"
    stem = f"{mission_id}-{stamp}-attempt-{attempt}"
    path, n = layout.prompts_dir / f"{stem}.md", 1
    while path.exists():
        n += 1
        path = layout.prompts_dir / f"{stem}-{n}.md"
    write_text_atomic(path, text)
    return path
