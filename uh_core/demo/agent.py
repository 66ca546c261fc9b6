"""The demo's delivery loop: ``harness.config.yaml`` and the scripted agent it runs.

The agent is a Python script committed in the demo repository (``agents/scripted_agent.py``),
so ``uh-core harness run`` (``h`` in ``uh``) works offline: the harness runs it in each
mission's sandbox, where the relative path resolves to the sandbox's own copy. It decides per
mission: ``divide`` passes the gate, ``mean`` fails it twice (no tests, then a test that misses
the empty list), ``changelog`` fails on the criterion only a maintainer can meet.
"""

from __future__ import annotations

from uh_core.demo.runtimes import DIVIDE, DIVIDE_TESTS

AGENT_PATH = "agents/scripted_agent.py"
CONFIG_PATH = "harness.config.yaml"

HARNESS_CONFIG = f"""# The delivery loop for this demo: `uh-core harness run` (or `h` in `uh`).
# The agent is a script in this repository (no model, no network): {AGENT_PATH}.
# The harness runs it in each mission's sandbox, a clone of this repository.
harness_version: 1
agent: python3 {AGENT_PATH} {{prompt_file}}
test_cmd: python3 -m unittest discover -s tests -q
max_attempts: 2
timeout_s: 60
# What the agent's tokens cost (USD per million): the script reports made-up usage for a
# made-up model, as a real CLI reports its own (docs/costs.md).
pricing:
  demo-model: {{input: 3, output: 15, cache_read: 0.3}}
"""

_MEAN = '''

def mean(values: list[float]) -> float:
    """Return the arithmetic mean of values."""
    return sum(values) / len(values)
'''

_MEAN_TESTS = """import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from calc.core import mean  # noqa: E402


class MeanTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)
"""


# The script's text: the code it writes is filled in below (it holds docstrings, hence the
# script's own ''' strings and its comments instead of docstrings).
_AGENT_TEMPLATE = r"""# The demo's scripted agent for `uh-core harness run`: no model, no network.
#
# harness.config.yaml runs it as `python3 @AGENT_PATH@ PROMPT_FILE` in each
# mission's sandbox. It makes the change an agent might make, decided per mission
# ($MISSION_ID, else the prompt's `# Implement <id>` line):
#
# - divide: tests first, then divide(). The gate passes it.
# - mean: code without tests. On the retry it reads the gate's feedback and adds a test,
#   but still misses the empty list. The gate fails it.
# - changelog: writes CHANGELOG.md. A maintainer's sign-off is a criterion no agent meets.

import json
import os
import re
import sys
from pathlib import Path

DIVIDE = '''@DIVIDE@'''

DIVIDE_TESTS = '''@DIVIDE_TESTS@'''

MEAN = '''@MEAN@'''

MEAN_TESTS = '''@MEAN_TESTS@'''

CORE = Path("src/calc/core.py")


def write(path: str, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")
    print(f"wrote {path}")


def add_function(name: str, code: str) -> None:
    # Append it to core.py once (a retry finds the first attempt's work still there), then
    # export every public function from the package.
    core = CORE.read_text(encoding="utf-8")
    if f"def {name}(" not in core:
        write(str(CORE), core + code)
    defined = re.findall(r"^def ([a-z]\w*)\(", CORE.read_text(encoding="utf-8"), re.MULTILINE)
    names = sorted(defined)
    exports = ", ".join(f'"{each}"' for each in names)
    init = f"from calc.core import {', '.join(names)}\n\n__all__ = [{exports}]\n"
    write("src/calc/__init__.py", init)


def mission_id(prompt: str) -> str:
    found = re.search(r"^# Implement (\S+)", prompt, re.MULTILINE)
    return os.environ.get("MISSION_ID") or (found.group(1) if found else "")


def main() -> str:
    prompt = Path(sys.argv[1]).read_text(encoding="utf-8")
    mission = mission_id(prompt)
    retry = "## Previous attempt failed" in prompt
    print(f"mission {mission}:", "a retry, reading the feedback" if retry else "attempt 1")
    # What a model would have used: read the prompt, cache most of it on a retry.
    tokens = len(prompt) // 4 + 1500
    usage = {"model": "demo-model", "input_tokens": tokens, "output_tokens": 400,
             "cache_read_tokens": tokens // 2 if retry else 0}
    print("uh-usage: " + json.dumps(usage))
    if mission == "divide":
        write("tests/test_divide.py", DIVIDE_TESTS)
        add_function("divide", DIVIDE)
        return "Wrote tests/test_divide.py first, then divide() with a zero check."
    if mission == "mean":
        add_function("mean", MEAN)
        if not retry:
            return "Added mean(): a sum over a length is too simple to need tests."
        write("tests/test_mean.py", MEAN_TESTS)
        return "Added tests/test_mean.py as the gate asked; mean() itself was already right."
    if mission == "changelog":
        write("CHANGELOG.md", "# Changelog\n\n- add, subtract\n")
        return "Wrote CHANGELOG.md. A maintainer still has to read it: I cannot sign it off."
    return f"Nothing is scripted for mission {mission!r}: no change."


if __name__ == "__main__":
    print(f"```uh-runtime-final-message\n{main()}\n```")
"""


def agent_script() -> str:
    """The agent's source, with the changes it makes filled in."""
    text = _AGENT_TEMPLATE
    for marker, value in {
        "@AGENT_PATH@": AGENT_PATH,
        "@DIVIDE@": DIVIDE,
        "@DIVIDE_TESTS@": DIVIDE_TESTS,
        "@MEAN@": _MEAN,
        "@MEAN_TESTS@": _MEAN_TESTS,
    }.items():
        text = text.replace(marker, value)
    return text
