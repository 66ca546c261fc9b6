"""The layers of docs/architecture.md hold: the import-linter contracts in pyproject.toml
(``[tool.importlinter]``) are kept. A failure prints the import chain that breaks one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = "import sys; from importlinter.cli import lint_imports_command as c; sys.exit(c())"


def test_import_contracts_are_kept() -> None:
    # --no-cache: nothing written into the checkout; the graph is built fresh each time
    run = subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout, run.stdout
