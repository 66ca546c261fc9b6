"""Best of N of one agent: ``mission run-all --repeat N`` or ``--runtimes codex*3``.

The same runtime runs N times, each in a sandbox of its own, each judged; the comparison
treats them as N runtimes. Each repeat is its manifest under a label of its own,
``<id>.<n>`` (``codex.1``, ``codex.2``, …: a slug, so it names the repeat's sandbox, its events
and its row); what runs is the manifest unchanged, and a Ray cluster places it as the runtime
it is (``placed_as``). A runtime asked once keeps its own id.
"""

from __future__ import annotations

import re

from uh_core.errors import UsageError
from uh_core.models.adapter import AdapterManifest

MAX_REPEAT = 20  # runs of one runtime in one run-all: each is an agent session and a sandbox
_ASKED = re.compile(r"\A(?P<name>[^*\s]+)(?:\*(?P<count>[^*\s]*))?\Z")


def parse_runtimes(text: str, repeat: int = 1) -> list[tuple[str, int]]:
    """``codex*3,claude`` → ``[("codex", 3), ("claude", repeat)]``; a clear error otherwise."""
    asked: list[tuple[str, int]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        match = _ASKED.match(part)
        if match is None:
            raise UsageError(
                f"--runtimes {text!r}: {part!r} is not NAME or NAME*N",
                fix="--runtimes codex*3,claude",
            )
        count = repeat if match["count"] is None else _count(match["count"], f"{part!r}")
        asked.append((match["name"], count))
    names = [name for name, _ in asked]
    if len(set(names)) != len(names):
        raise UsageError(
            f"--runtimes names a runtime twice: {text}", fix="say it once, with *N to repeat it"
        )
    return asked


def check_repeat(value: int) -> int:
    return _count(str(value), "--repeat")


def _count(text: str, where: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_REPEAT:
        raise UsageError(
            f"{where}: the number of runs must be a whole number from 1 to {MAX_REPEAT}, "
            f"not {text!r}",
            fix="--repeat 3, or --runtimes codex*3",
        )
    return int(text)


def repeated(asked: list[tuple[AdapterManifest, int]]) -> list[tuple[AdapterManifest, str]]:
    """Each manifest ``count`` times, labelled ``<id>.<n>`` when more than once: (the
    manifest to run, the runtime it is)."""
    runs: list[tuple[AdapterManifest, str]] = []
    for manifest, count in asked:
        if count == 1:
            runs.append((manifest, manifest.id))
            continue
        for n in range(1, count + 1):
            runs.append((manifest.model_copy(update={"id": f"{manifest.id}.{n}"}), manifest.id))
    labels = [m.id for m, _ in runs]
    clash = sorted({label for label in labels if labels.count(label) > 1})
    if clash:
        raise UsageError(
            f"a repeat's label is also a runtime asked for: {', '.join(clash)}",
            fix="run that runtime in a run-all of its own",
        )
    return runs
