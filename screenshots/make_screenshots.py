"""Regenerate the dashboard screenshots from the demo: ``python screenshots/make_screenshots.py``

Builds the demo workspace (``uh-core demo``: run-all of four scripted runtimes on three
missions), runs the harness loop once on ``divide`` with the demo's scripted agent (so the
harness view has a ledger), then renders each main view with ``uh --once --svg``:
``missions.svg``, ``runtimes.svg``, ``harness.svg``, ``sandboxes.svg`` (``dashboard.svg`` is
the missions view, shown in the README). The temporary path is replaced by ``~/uh-demo``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from uh_tui.main import DEMO_MISSION, VIEWS, demo_agent  # noqa: E402


def run(*argv: str) -> None:
    subprocess.run([sys.executable, *argv], check=True, capture_output=True, cwd=ROOT)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "uh-demo"
        run("-m", "uh_core", "demo", str(demo), "--json")
        agent = demo_agent(demo, pace=False)
        if agent is None:
            raise SystemExit("the demo has no alpha sandbox: cannot script the harness agent")
        harness = ["harness", "run", "--req", DEMO_MISSION, "--agent", agent, "--root", str(demo)]
        subprocess.run([sys.executable, "-m", "uh_core", *harness], capture_output=True, cwd=ROOT)
        for view in VIEWS:
            target = HERE / f"{view}.svg"
            run("-m", "uh_tui", "--once", "--svg", str(target), "--root", str(demo),
                "--view", view, "--mission", DEMO_MISSION)  # fmt: skip
            target.write_text(target.read_text().replace(str(demo), "~/uh-demo"))
            print(f"wrote {target.relative_to(ROOT)}")
        shutil.copyfile(HERE / "missions.svg", HERE / "dashboard.svg")
        print("wrote screenshots/dashboard.svg (the missions view)")


if __name__ == "__main__":
    main()
