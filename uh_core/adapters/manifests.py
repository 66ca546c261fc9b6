"""Loading ``uh.adapter.v0`` manifests from ``.harness/adapters/<id>.yaml``."""

from __future__ import annotations

from uh_core.errors import NotFoundError, UhError, ValidationError
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.models.base import load_yaml_model


def load_manifest(layout: Layout, adapter_id: str) -> AdapterManifest:
    check_id(adapter_id, "runtime")
    path = layout.adapters_dir / f"{adapter_id}.yaml"
    if not path.is_file():
        known = ", ".join(m for m in manifest_ids(layout)) or "none"
        raise NotFoundError(
            f"unknown runtime {adapter_id!r}: {layout.rel(path)} does not exist (known: {known})",
            fix="run `uh-core adapter list`",
        )
    manifest = load_yaml_model(path, AdapterManifest, layout.rel(path))
    if manifest.id != adapter_id:
        raise ValidationError(
            [
                f"{layout.rel(path)}: id: {manifest.id!r} does not match the file name "
                f"(fix: set id: {adapter_id} or rename the file)"
            ]
        )
    return manifest


def manifest_ids(layout: Layout) -> list[str]:
    if not layout.adapters_dir.is_dir():
        return []
    return sorted(p.stem for p in layout.adapters_dir.glob("*.yaml"))


def load_all_manifests(layout: Layout) -> tuple[list[AdapterManifest], dict[str, UhError]]:
    loaded: list[AdapterManifest] = []
    broken: dict[str, UhError] = {}
    for adapter_id in manifest_ids(layout):
        try:
            loaded.append(load_manifest(layout, adapter_id))
        except UhError as exc:
            broken[adapter_id] = exc
    return loaded, broken


def missing_capabilities(required: list[str], manifest: AdapterManifest) -> list[str]:
    have = set(manifest.capability_ids)
    return [cap for cap in required if cap not in have]
