#!/usr/bin/env python3
"""Does the dashboard's cost to render a mission depend on the size of its values?

    python benchmarks/huge_values.py [--reps 3] [--json]

Builds throw-away workspaces (a git repository with ``.harness/`` each, in a temporary
folder removed at the end) that differ only in one mission's first criterion description:

- ``normal``: 40 characters;
- ``1 MB``: 1,000,000 characters;
- ``under the cap``: as long as fits ``UH_YAML_MAX_BYTES`` (8 MiB by default) less 4 KiB;
- ``100 MB``: 100,000,000 characters — over the cap: ``mission.yaml`` is refused before it
  is read, and the mission is one ``invalid`` row naming the cap;

and a ``1 MB title`` workspace (the title, not the description, is 1 MB: the missions
table's flexible column). Then, interleaved ``--reps`` times (after one uncounted warm-up
round), runs ``uh --once`` (``python -m uh_tui --once --root DIR``) on each in a fresh
process and reports the best wall time, the ratio to ``normal`` measured in the same run,
the child's peak RSS (its VmHWM), the frame's size, and whether the frame shows the mission
(or, for ``100 MB``, its ``invalid`` row). Target: every ratio near 1 (the display clips
every value before Rich sees it, ``uh_core.shown``). This script only reports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from uh_core.yamllimits import max_bytes  # noqa: E402

WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit "


@dataclass
class Case:
    name: str
    description_chars: int = 40
    title_chars: int = 8
    root: Path = Path()
    file_bytes: int = 0
    times: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    frame_bytes: int = 0
    code: int = 0
    shows: str = ""


def _text(chars: int) -> str:
    return (WORDS * (chars // len(WORDS) + 1))[:chars]


def _mission_yaml(case: Case) -> str:
    return (
        "id: big\n"
        f"title: {_text(case.title_chars)}\n"
        "objective: render me\n"
        "acceptance_criteria:\n"
        "  - id: huge\n"
        f"    description: {_text(case.description_chars)}\n"
        '    check_command: "true"\n'
        "  - id: small\n"
        "    description: a normal criterion\n"
        '    check_command: "true"\n'
    )


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def build(case: Case, base: Path) -> None:
    from uh_core.init import init_project
    from uh_core.layout import Layout

    case.root = base / case.name.replace(" ", "-")
    case.root.mkdir()
    _git(case.root, "init", "-q", "-b", "main")
    (case.root / "README.md").write_text("# huge values\n", encoding="utf-8")
    init_project(Layout(case.root))
    _git(case.root, "add", "-A")
    _git(case.root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "init")
    mission = case.root / ".harness" / "missions" / "big" / "mission.yaml"
    mission.parent.mkdir(parents=True, exist_ok=True)
    mission.write_text(_mission_yaml(case), encoding="utf-8")
    case.file_bytes = mission.stat().st_size


# ``uh --once`` as ``python -m uh_tui`` runs it, then the process's own peak RSS (VmHWM; a
# child's ru_maxrss would carry this script's, which held the 100 MB text, over exec).
PROBE = """
import sys
from uh_tui.main import main
try:
    main(["--once", "--root", sys.argv[1]])
finally:
    with open("/proc/self/status") as status:
        hwm = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    with open(sys.argv[2], "w") as out:
        out.write(str(hwm))
"""


def once(case: Case, hwm: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(case.root), str(hwm)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    case.times.append(time.monotonic() - started)
    case.code = proc.returncode
    case.frame_bytes = len(proc.stdout.encode())
    case.rss_mb = max(case.rss_mb, int(hwm.read_text()) / 1024)
    out = proc.stdout
    if "Traceback" in proc.stderr:
        case.shows = "TRACEBACK"
    elif "big" in out and "invalid" in out:
        case.shows = "invalid row"
    elif "big" in out and "huge" in out:
        case.shows = "mission"
    else:
        case.shows = "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cap = max_bytes()
    cases = [
        Case("normal"),
        Case("1 MB", description_chars=1_000_000),
        Case("under the cap", description_chars=cap - 4096),
        Case("100 MB", description_chars=100_000_000),
        Case("1 MB title", title_chars=1_000_000),
    ]
    with tempfile.TemporaryDirectory(prefix="uh-huge-values-") as tmp:
        for case in cases:
            build(case, Path(tmp))
        hwm = Path(tmp) / "hwm"
        for case in cases:  # warm-up: imports and disk caches, not counted
            once(case, hwm)
            case.times.clear()
        for _ in range(args.reps):
            for case in cases:
                once(case, hwm)
    normal = min(cases[0].times)
    rows = [
        {
            "case": case.name,
            "mission_yaml_bytes": case.file_bytes,
            "best_s": round(min(case.times), 3),
            "ratio": round(min(case.times) / normal, 2),
            "peak_rss_mb": round(case.rss_mb, 1),
            "frame_bytes": case.frame_bytes,
            "exit": case.code,
            "shows": case.shows,
        }
        for case in cases
    ]
    if args.json:
        print(json.dumps({"cap_bytes": cap, "reps": args.reps, "rows": rows}, indent=2))
        return
    print(f"uh --once, best of {args.reps} (UH_YAML_MAX_BYTES = {cap:,})")
    print(f"{'case':<15}{'mission.yaml':>14}{'best s':>9}{'ratio':>8}{'RSS MB':>9}"
          f"{'frame B':>9}{'exit':>6}  shows")  # fmt: skip
    for row in rows:
        print(
            f"{row['case']:<15}{row['mission_yaml_bytes']:>14,}{row['best_s']:>9.3f}"
            f"{row['ratio']:>8.2f}{row['peak_rss_mb']:>9.1f}{row['frame_bytes']:>9,}"
            f"{row['exit']:>6}  {row['shows']}"
        )


if __name__ == "__main__":
    main()
