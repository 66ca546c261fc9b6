"""``init``: lay out ``.harness/`` idempotently. Existing files are never overwritten."""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.clock import timestamp
from uh_core.events.writer import append_event
from uh_core.fileio import write_text_atomic, write_yaml
from uh_core.ids import safe_filename
from uh_core.layout import Layout
from uh_core.models.events import ProjectInitialized
from uh_core.models.project import Project

# Generated state never makes the main tree dirty; mission.yaml files and adapters stay tracked.
GITIGNORE_LINES = (
    "# written by uh-core init: generated state, never committed",
    "/audit/",
    "/runs/",
    "/prompts/",
    "/sandboxes/",
    "/false-failures.jsonl",
    "/flaky.yaml",
    "/reports/",
    "/missions/*/events.ndjson",
    "/missions/*/verification.yaml",
    "/missions/*/diff.patch",
    "/missions/*/runs/",
    "/missions/*/runtime-comparison.md",
    "/missions/*/runtime-comparison.json",
    "/missions/*/runtime-session.yaml",
    "/missions/*/runtime-final.txt",
    "/missions/*/promotion.yaml",
    "/missions/*/active/",
    "/promotion.journal.json",
    "*.lock",
    ".*.tmp",
)


@dataclass
class InitResult:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)


def _ensure_gitignore(layout: Layout, result: InitResult) -> None:
    path = layout.gitignore
    if not path.exists():
        write_text_atomic(path, "\n".join(GITIGNORE_LINES) + "\n")
        result.created.append(layout.rel(path))
        return
    text = path.read_text(encoding="utf-8")
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in GITIGNORE_LINES[1:] if line not in present]
    if missing:
        joined = text if text.endswith("\n") or not text else text + "\n"
        write_text_atomic(path, joined + "\n".join(missing) + "\n")
        result.updated.append(layout.rel(path))


def _write_builtin_adapters(layout: Layout, result: InitResult, force: bool = False) -> None:
    """The real agent CLIs' manifests, where no file of that id exists yet (overwritten only
    with ``force``)."""
    from uh_core.adapters.registry import builtin_manifests

    for adapter_id, manifest in builtin_manifests().items():
        path = layout.adapters_dir / f"{adapter_id}.yaml"
        existed = path.exists()
        if not existed or force:
            write_yaml(path, manifest)
            (result.updated if existed else result.created).append(layout.rel(path))


def init_project(layout: Layout, force: bool = False) -> InitResult:
    """``force`` (the TypeScript uh's ``init --force``) writes project.yaml and the built-in
    manifests again; missions, sandboxes, logs and other manifests are never touched."""
    result = InitResult()
    for directory in (
        layout.harness,
        layout.adapters_dir,
        layout.missions_dir,
        layout.sandboxes_dir,
    ):
        if not directory.is_dir():
            directory.mkdir(parents=True, exist_ok=True)
            result.created.append(layout.rel(directory) + "/")
    existed = layout.project_file.exists()
    if not existed or force:
        name = layout.root.name or "project"
        project = Project(id=safe_filename(name), name=name, created_at=timestamp())
        write_yaml(layout.project_file, project.model_dump(mode="json"))
        (result.updated if existed else result.created).append(layout.rel(layout.project_file))
    if not layout.sandbox_index.exists():
        write_yaml(
            layout.sandbox_index, {"schema_version": "uh.sandboxes-index.v0", "sandboxes": []}
        )
        result.created.append(layout.rel(layout.sandbox_index))
    _write_builtin_adapters(layout, result, force)
    _ensure_gitignore(layout, result)
    if result.changed:
        append_event(layout.audit_log, ProjectInitialized(created=result.created + result.updated))
    return result
