"""``uh --version`` prints the version, like ``uh-core --version``."""

from __future__ import annotations

import subprocess
import sys

from uh_core import __version__


def test_uh_version_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from uh_tui.main import main; main()", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"uh {__version__}"
