"""Project-wide values: the sandboxes in the index and the runtimes a mission can be run on."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

from uh_core.adapters.manifests import load_manifest, manifest_ids
from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.sandbox.index import read_index
from uh_core.workspace.files import Failed, FileCache
from uh_core.workspace.state import RuntimeOption, SandboxView


def sandboxes_in_use(layout: Layout, mission_id: str) -> frozenset[str]:
    """The sandboxes of ``mission_id`` a live ``mission run`` has registered."""
    from uh_core.runtime import active

    try:
        runs = active.active_runs(layout, mission_id)
    except (OSError, UhError):
        return frozenset()
    return frozenset(
        run.sandbox_id for _, run in runs if active.runner_alive(run.runner_pid, run.runner_start)
    )


def sandbox_views(
    layout: Layout, cache: FileCache, in_use: Iterable[str]
) -> tuple[tuple[SandboxView, ...], str | None]:
    """Every sandbox of the index (and whether a live run uses it), or the index's problem."""
    index = cache.load(
        layout.sandbox_index, lambda _: read_index(layout), layout.rel(layout.sandbox_index)
    )
    if index is None:
        return (), None
    if isinstance(index, Failed):
        return (), index.message
    busy = set(in_use)
    views = tuple(
        SandboxView(
            entry.id,
            entry.mission_id,
            runtime=entry.runtime,
            kind=entry.kind,
            branch=entry.branch,
            base_commit=entry.base_commit,
            created_at=entry.created_at,
            status=entry.status,
            worktree=entry.worktree,
            exists=(layout.root / entry.worktree).is_dir(),
            in_use=entry.id in busy,
            verify_status=entry.verify_status,
        )
        for entry in index.sandboxes
    )
    return views, None


def runtime_options(layout: Layout, cache: FileCache) -> tuple[RuntimeOption, ...]:
    """The adapters in ``.harness/adapters/``; one that does not load carries its reason."""
    options = []
    for adapter_id in manifest_ids(layout):
        path = layout.adapters_dir / f"{adapter_id}.yaml"
        manifest = cache.load(path, partial(_load, layout, adapter_id), layout.rel(path))
        if manifest is None:
            continue
        if isinstance(manifest, Failed):
            options.append(RuntimeOption(adapter_id, problem=manifest.message))
        else:
            options.append(
                RuntimeOption(
                    manifest.id,
                    kind=manifest.runtime_kind,
                    status=manifest.status,
                    name=manifest.name or "",
                )
            )
    return tuple(options)


def _load(layout: Layout, adapter_id: str, _: Path) -> AdapterManifest:
    return load_manifest(layout, adapter_id)
