"""Can a runtime run on this machine? The quick answer ``adapter list`` and the dashboard's
runtime picker show: the adapter exists for its kind, its settings are there, its CLI is on
PATH (and the interpreter its script names, such as ``node`` for the npm CLIs). Nothing is
started: ``adapter check`` runs the CLI's ``--version`` for the slow, sure answer.
Bubblewrap is the machine's, not the runtime's: :func:`isolation_here` says whether runs
here are confined (a runtime runs either way; without bubblewrap it runs unconfined)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.errors import AdapterError
from uh_core.isolation.command import interpreter, programs
from uh_core.models.adapter import AdapterManifest

if TYPE_CHECKING:
    from uh_core.layout import Layout

# The settings the offline kinds cannot run without.
_NEEDS = {"script": "script", "command": "command"}


@dataclass(frozen=True)
class Here:
    ok: bool
    reason: str | None = None  # why it cannot run here
    path: str | None = None  # the CLI found on PATH
    short: str | None = None  # the reason in a few words, for a picker's row

    @property
    def mark(self) -> str:
        return "ready" if self.ok else "missing"


def runnable_here(manifest: AdapterManifest) -> Here:
    """Whether ``manifest``'s runtime can run here, without starting anything."""
    from uh_core.adapters.jsonl import CliAdapter
    from uh_core.adapters.registry import make_adapter

    try:
        adapter = make_adapter(manifest)
    except AdapterError as exc:
        return Here(False, exc.one_line(), short="no adapter for its kind")
    setting = _NEEDS.get(adapter.kind)
    if setting is not None:
        value = manifest.config.get(setting)
        if not isinstance(value, str) or not value.strip():
            why = f"runtime_kind {adapter.kind} needs config.{setting}"
            return Here(False, why, short=f"needs config.{setting}")
        if adapter.kind == "command":
            return _on_path(_first_word(value), None)
        return Here(True)
    binary = adapter.binary
    if binary is None:
        return Here(True)
    hint = adapter.install_hint if isinstance(adapter, CliAdapter) else None
    return _on_path(binary, hint)


def _first_word(command: str) -> str | None:
    """The program a command runtime's line starts (it runs as ``sh -c LINE``)."""
    found = programs(["sh", "-c", command])
    return found[1] if len(found) > 1 else None


def _on_path(binary: str | None, hint: str | None) -> Here:
    if binary is None:
        return Here(True)
    path = shutil.which(binary)
    if path is None:
        install = f" (install it: {hint})" if hint else ""
        return Here(False, f"{binary!r} not found on PATH{install}", short=f"no {binary} on PATH")
    needs = interpreter(Path(path))  # ``node`` for ``#!/usr/bin/env node``
    if needs and shutil.which(needs) is None:
        why = f"{binary} needs {needs!r}, which is not on PATH"
        return Here(False, why, path, short=f"no {Path(needs).name} on PATH")
    return Here(True, None, path)


def isolation_here() -> tuple[bool, str]:
    """(runs here are confined by bubblewrap, why not / what works); probed once."""
    from uh_core.isolation.bwrap import bwrap_available

    return bwrap_available()


def here_by_id(layout: Layout) -> dict[str, Here]:
    """Every manifest of ``layout`` that loads → whether it can run here (the dashboard's
    runtime picker reads this)."""
    from uh_core.adapters.manifests import load_all_manifests

    manifests, _ = load_all_manifests(layout)
    return {manifest.id: runnable_here(manifest) for manifest in manifests}
