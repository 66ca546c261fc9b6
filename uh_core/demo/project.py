"""Files of the demo repository: a tiny Python package, its tests, and its missions."""

from __future__ import annotations

CORE = '''"""A small calculator: the code the demo's agents work on."""


def add(a: float, b: float) -> float:
    """Return a + b."""
    return a + b


def subtract(a: float, b: float) -> float:
    """Return a - b."""
    return a - b
'''

INIT = """from calc.core import add, subtract

__all__ = ["add", "subtract"]
"""

TESTS = """import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from calc.core import add, subtract  # noqa: E402


class CoreTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)

    def test_subtract(self) -> None:
        self.assertEqual(subtract(5, 3), 2)


if __name__ == "__main__":
    unittest.main()
"""

README = """# calc (uh demo)

A tiny project for trying Ultimate Harness offline. Missions live in `.harness/missions/`;
`uh-core harness run` delivers the pending ones with the scripted agent in `agents/` (see
`harness.config.yaml`).
"""

MISSIONS: dict[str, str] = {
    "add-subtract": """schema_version: uh.mission.v0
id: add-subtract
workflow_profile: staged
title: Addition and subtraction work
objective: The calculator adds and subtracts, with tests.
status: done
acceptance_criteria:
  - id: unit-tests
    description: The unit tests pass.
    check_command: python3 -m unittest discover -s tests -q
  - id: importable
    description: The package imports.
    check_command: PYTHONPATH=src python3 -c 'import calc'
  - id: documented
    description: Every public function has a docstring.
    check_command: test "$(grep -c 'def ' src/calc/core.py)" -le "$(grep -c '\"\"\"' src/calc/core.py)"
    severity: warn
verification:
  required_checks:
    - name: compile
      command: python3 -m compileall -q src
""",
    "divide": """schema_version: uh.mission.v0
id: divide
workflow_profile: staged
title: Division with a clear error on zero
objective: >-
  Add calc.core.divide(a, b). Dividing by zero raises ZeroDivisionError with the message
  "cannot divide by zero". Add tests first.
constraints:
  - Keep the public API in src/calc/__init__.py in step.
expected_outputs:
  files:
    - src/calc/core.py
acceptance_criteria:
  - id: divide-works
    description: divide(6, 3) is 2.
    check_command: |
      python3 - <<'PY'
      import sys; sys.path.insert(0, "src")
      from calc.core import divide
      assert divide(6, 3) == 2, divide(6, 3)
      PY
  - id: zero-message
    description: Dividing by zero raises ZeroDivisionError("cannot divide by zero").
    check_command: |
      python3 - <<'PY'
      import sys; sys.path.insert(0, "src")
      from calc.core import divide
      try:
          divide(1, 0)
      except ZeroDivisionError as error:
          assert str(error) == "cannot divide by zero", str(error)
      else:
          raise SystemExit("divide(1, 0) did not raise")
      PY
  - id: unit-tests
    description: The unit tests pass.
    check_command: python3 -m unittest discover -s tests -q
tdd:
  enforce_tests_first: true
  test_paths: ["tests/**"]
  source_paths: ["src/**"]
""",
    "changelog": """schema_version: uh.mission.v0
id: changelog
workflow_profile: staged
title: A changelog a person signs off
objective: Keep a CHANGELOG.md that a maintainer reviews.
depends_on: [divide]
acceptance_criteria:
  - id: changelog-exists
    description: CHANGELOG.md exists.
    check_command: test -f CHANGELOG.md
    severity: warn
  - id: maintainer-review
    description: A maintainer has read the changelog.
completion_criteria:
  - The changelog names every public function.
""",
    "mean": """schema_version: uh.mission.v0
id: mean
workflow_profile: staged
title: The mean of a list, with a clear error when it is empty
objective: >-
  Add calc.core.mean(values), the arithmetic mean. The mean of an empty list raises
  ValueError with the message "mean of an empty list". Add tests first.
constraints:
  - Keep the public API in src/calc/__init__.py in step.
acceptance_criteria:
  - id: mean-works
    description: mean([1, 2, 3, 4]) is 2.5.
    check_command: |
      python3 - <<'PY'
      import sys; sys.path.insert(0, "src")
      from calc.core import mean
      assert mean([1, 2, 3, 4]) == 2.5, mean([1, 2, 3, 4])
      PY
  - id: empty-message
    description: The mean of an empty list raises ValueError("mean of an empty list").
    check_command: |
      python3 - <<'PY'
      import sys; sys.path.insert(0, "src")
      from calc.core import mean
      try:
          mean([])
      except ValueError as error:
          assert str(error) == "mean of an empty list", str(error)
      else:
          raise SystemExit("mean([]) did not raise ValueError")
      PY
  - id: unit-tests
    description: The unit tests pass.
    check_command: python3 -m unittest discover -s tests -q
tdd:
  enforce_tests_first: true
  test_paths: ["tests/**"]
  source_paths: ["src/**"]
""",
}
