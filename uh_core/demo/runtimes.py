"""Four scripted runtimes for the demo's ``divide`` mission (no agent, no network).

``alpha`` and ``beta`` make the same correct fix (identical diffs: they agree), ``gamma``
a different correct fix, ``delta`` a source-only change that the TDD gate refuses.
"""

from __future__ import annotations

from typing import Any

DIVIDE = '''

def divide(a: float, b: float) -> float:
    """Return a / b; dividing by zero raises ZeroDivisionError."""
    if b == 0:
        raise ZeroDivisionError("cannot divide by zero")
    return a / b
'''

_DIVIDE_OTHER = '''

def divide(a: float, b: float) -> float:
    """Return a / b."""
    try:
        return a / b
    except ZeroDivisionError:
        raise ZeroDivisionError("cannot divide by zero") from None
'''

DIVIDE_TESTS = """import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from calc.core import divide  # noqa: E402


class DivideTest(unittest.TestCase):
    def test_divide(self) -> None:
        self.assertEqual(divide(6, 3), 2)

    def test_zero(self) -> None:
        with self.assertRaisesRegex(ZeroDivisionError, "cannot divide by zero"):
            divide(1, 0)
"""

_INIT = """from calc.core import add, divide, subtract

__all__ = ["add", "divide", "subtract"]
"""


def _script(divide: str, tests: bool, message: str) -> str:
    lines = [
        'echo "reading the mission from $UH_PROMPT_FILE"',
        f"cat >> src/calc/core.py <<'PYEOF'{divide}PYEOF",
        f"cat > src/calc/__init__.py <<'PYEOF'\n{_INIT}PYEOF",
    ]
    if tests:
        lines.append(f"cat > tests/test_divide.py <<'PYEOF'\n{DIVIDE_TESTS}PYEOF")
    lines.append(f"printf '```uh-runtime-final-message\\n{message}\\n```\\n'")
    return "\n".join(lines) + "\n"


def demo_runtimes() -> dict[str, dict[str, Any]]:
    scripts = {
        "alpha": _script(DIVIDE, True, "Added divide() with a zero check, and tests first."),
        "beta": _script(DIVIDE, True, "Added divide() guarded against zero, plus tests."),
        "gamma": _script(_DIVIDE_OTHER, True, "Added divide() via try/except, with tests."),
        "delta": _script(DIVIDE, False, "Added divide(). No tests: it is obviously right."),
    }
    return {
        runtime: {
            "schema_version": "uh.adapter.v0",
            "id": runtime,
            "name": f"demo script {runtime}",
            "runtime_kind": "script",
            "status": "active",
            "capabilities": ["cli-execution", "worktree-isolation"],
            "config": {"script": script},
        }
        for runtime, script in scripts.items()
    }
