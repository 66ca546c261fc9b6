"""Regenerate the dashboard screenshots from the demo: python screenshots/make_screenshots.py"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "uh-demo"
        subprocess.run([sys.executable, "-m", "uh_core", "demo", str(demo), "--json"],
                       check=True, capture_output=True)
        target = HERE / "dashboard.svg"
        subprocess.run([sys.executable, "-m", "uh_tui", "--once", "--svg", str(target),
                        "--root", str(demo)], check=True)
        # The temporary path is not part of what the picture should show.
        target.write_text(target.read_text().replace(str(demo), "~/uh-demo"))
        print(f"wrote {target.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
