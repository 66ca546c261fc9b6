"""The prompt an agent receives for a mission: sections built from the mission's facts.

The delivery loop builds its own prompt from the same sections (plus its preamble,
retry feedback and rules file); both end with the final-message instruction.
"""

from __future__ import annotations

from uh_core.adapters.sentinel import INSTRUCTION
from uh_core.models.mission import Mission


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items)


def _command(command: str) -> str:
    """How a check command reads in a bullet: inline when one line, else a fenced block."""
    command = command.strip()
    if "\n" not in command:
        return f"\n  - checked by: `{command}`"
    body = "\n".join(f"    {line}" for line in command.splitlines())
    return f"\n  - checked by:\n\n    ```sh\n{body}\n    ```"


def mission_sections(mission: Mission) -> list[str]:
    """Objective, constraints, criteria, expected outputs, read-first: what the agent needs."""
    sections: list[str] = []
    if mission.display_objective:
        sections.append(f"## Objective\n\n{mission.display_objective}")
    if mission.constraints:
        sections.append(f"## Constraints\n\n{_bullets(mission.constraints)}")
    criteria = mission.criteria()
    if criteria:
        lines = []
        for ac in criteria:
            text = f"**{ac.id}** ({ac.severity})"
            if ac.description:
                text += f": {' '.join(ac.description.split())}"
            if ac.check_command:
                text += _command(ac.check_command)
            lines.append(text)
        sections.append("## Acceptance criteria\n\n" + _bullets(lines))
    checks = [c for c in mission.verification.required_checks if c.command]
    if checks:
        sections.append(
            "## Required checks\n\n" + _bullets([f"{c.name}: `{c.command}`" for c in checks])
        )
    if mission.tdd is not None and mission.tdd.enforce_tests_first:
        from uh_core.diff.classify import DEFAULT_SOURCE_GLOBS, DEFAULT_TEST_GLOBS

        tests = mission.tdd.test_paths or list(DEFAULT_TEST_GLOBS)
        source = mission.tdd.source_paths or list(DEFAULT_SOURCE_GLOBS)
        sections.append(
            "## Tests first\n\nA change that touches source files must also add or change "
            "tests; a source-only change fails the gate.\n\n"
            f"- source files: {', '.join(f'`{g}`' for g in source)}\n"
            f"- test files: {', '.join(f'`{g}`' for g in tests)}"
        )
    expected = mission.expected_files()
    if expected:
        sections.append(f"## Expected outputs\n\n{_bullets(expected)}")
    read_first = [*mission.read_first, *mission.context.get("read_first", [])]
    if read_first:
        sections.append(f"## Read first\n\n{_bullets([str(p) for p in read_first])}")
    return sections


def mission_prompt(mission: Mission) -> str:
    head = f"# Mission {mission.id}: {mission.display_title}"
    body = "\n\n".join([head, *mission_sections(mission), INSTRUCTION.strip()])
    return body + "\n"
