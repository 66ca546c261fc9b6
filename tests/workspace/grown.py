"""A demo workspace grown to a team's size: a thousand missions and two thousand harness runs.

``grow(root, missions=1000, runs=2000)`` takes a demo workspace after one harness run
(``uh-core demo DIR`` then ``uh-core harness run`` there) and adds, beside its own files:

- ``missions`` missions ``<demo mission>-NNNN``, each a copy of one of the demo's missions
  (in turn) with its id rewritten: its ``mission.yaml``, ``verification.yaml`` and event log
  (as the demo's verify wrote them);
- ``runs`` harness ledgers, each a copy of the demo's ledger with a run id and times of its
  own (older than the real one, a minute apart) and its missions renamed onto grown copies
  of the same missions, so the harness view has a row for many of them.

Files are written as text substitutions of the demo's own, so every record is one uh wrote
(the same shape, the same size: ~43 KB a ledger). Used by ``tests/workspace/test_scale.py``
(once per session) and ``benchmarks/scale_open.py``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

_STAMP = "%Y%m%dT%H%M%SZ"


def _copy_mission(src: Path, dest: Path, old: str, new: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("mission.yaml", "verification.yaml", "events.ndjson"):
        path = src / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        if name == "mission.yaml":
            text = re.sub(rf"(?m)^id: {re.escape(old)}\s*$", f"id: {new}", text)
        elif name == "verification.yaml":
            text = text.replace(f"mission_id: {old}\n", f"mission_id: {new}\n")
            text = text.replace(f".harness/missions/{old}/", f".harness/missions/{new}/")
        else:
            text = text.replace(f'"mission_id":"{old}"', f'"mission_id":"{new}"')
        (dest / name).write_text(text, encoding="utf-8")


def _iso(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def grow(root: Path, missions: int = 1000, runs: int = 2000) -> dict[str, int]:
    """Add ``missions`` missions and ``runs`` ledgers to the demo workspace at ``root``;
    returns what is there in all."""
    harness = root / ".harness"
    demo = sorted(p.name for p in (harness / "missions").iterdir() if p.is_dir())
    for n in range(missions):
        old = demo[n % len(demo)]
        new = f"{old}-{n:04d}"
        _copy_mission(harness / "missions" / old, harness / "missions" / new, old, new)
    ledgers = sorted((harness / "runs").glob("harness-*.json"))
    real = ledgers[-1]
    text = real.read_text(encoding="utf-8")
    data = json.loads(text)
    run_id = data["run_id"]
    started = dt.datetime.strptime(run_id.split("-")[1], _STAMP).replace(tzinfo=dt.UTC)
    started_at, finished_at = data["started_at"], data["finished_at"]
    names = sorted({r["mission_id"] for r in data["requirements"]})
    for n in range(runs):
        when = started - dt.timedelta(minutes=n + 1)
        new_id = f"harness-{when.strftime(_STAMP)}-{n:06x}"
        out = text.replace(run_id, new_id)
        out = out.replace(started_at, _iso(when))
        out = out.replace(finished_at, _iso(when + dt.timedelta(seconds=3)))
        for name in names:  # onto a grown copy of the same demo mission
            if name not in demo or missions < len(demo):
                continue
            slot = demo.index(name)
            grown = f"{name}-{(n % (missions // len(demo))) * len(demo) + slot:04d}"
            out = out.replace(f'"mission_id": "{name}"', f'"mission_id": "{grown}"')
        (harness / "runs" / f"{new_id}.json").write_text(out, encoding="utf-8")
    return {
        "missions": sum(1 for p in (harness / "missions").iterdir() if p.is_dir()),
        "runs": len(list((harness / "runs").glob("harness-*.json"))),
    }
