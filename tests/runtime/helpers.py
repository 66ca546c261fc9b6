"""Helpers for runtime tests: manifests written into the repo, processes looked up in /proc."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Repo


def add_manifest(repo: Repo, adapter_id: str, body: str) -> None:
    repo.write(
        f".harness/adapters/{adapter_id}.yaml",
        f"schema_version: uh.adapter.v0\nid: {adapter_id}\n{body}",
    )


def live_processes_with(marker: str) -> list[int]:
    """Pids (not zombies) whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
