"""``uh-core adapter list | check ID``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from uh_core.cli.common import (
    EXIT_NOT_PASSED,
    EXIT_OK,
    add_json,
    add_root,
    context,
    print_json,
    require_harness,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("adapter", help="runtime manifests and whether they can run here")
    group = parser.add_subparsers(dest="adapter_command", metavar="ACTION")
    group.required = True
    listing = group.add_parser("list", help="manifests with kind, status and capabilities")
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)
    check = group.add_parser(
        "check", help="can this runtime run here? (binary on PATH, its version, or why not)"
    )
    check.add_argument("adapter_id", metavar="ID")
    add_root(check)
    add_json(check)
    check.set_defaults(handler=handle_check)


def handle_list(args: argparse.Namespace) -> int:
    from uh_core.adapters.manifests import load_all_manifests
    from uh_core.adapters.registry import ALIASES, KINDS

    ctx = context(args)
    require_harness(ctx)
    manifests, broken = load_all_manifests(ctx.layout)
    rows: list[dict[str, Any]] = [
        {
            "id": m.id,
            "name": m.name,
            "runtime_kind": m.runtime_kind,
            "status": m.status,
            "supported": ALIASES.get(m.runtime_kind, m.runtime_kind) in KINDS,
            "capabilities": m.capability_ids,
            "error": None,
        }
        for m in manifests
    ]
    rows += [
        {
            "id": i,
            "name": None,
            "runtime_kind": None,
            "status": "invalid",
            "supported": False,
            "capabilities": [],
            "error": e.one_line(),
        }
        for i, e in broken.items()
    ]
    rows.sort(key=lambda r: r["id"])
    if ctx.json:
        print_json({"adapters": rows})
        return EXIT_OK
    if not rows:
        print("no adapters under .harness/adapters/ (run `uh-core init`)")
        return EXIT_OK
    width = max(len(r["id"]) for r in rows)
    print(f"{'ID':<{width}}  {'KIND':<12}  {'STATUS':<12}  CAPABILITIES")
    for r in rows:
        kind = r["runtime_kind"] or "-"
        if r["runtime_kind"] and not r["supported"]:
            kind += " (no adapter)"
        caps = ", ".join(r["capabilities"]) or "-"
        print(f"{r['id']:<{width}}  {kind:<12}  {r['status']:<12}  {caps}")
    for adapter_id, error in broken.items():
        sys.stderr.write(f"uh-core: warning: adapter {adapter_id}: {error.one_line()}\n")
    return EXIT_OK


def handle_check(args: argparse.Namespace) -> int:
    from uh_core.adapters.manifests import load_manifest
    from uh_core.adapters.registry import make_adapter
    from uh_core.errors import AdapterError

    ctx = context(args)
    require_harness(ctx)
    manifest = load_manifest(ctx.layout, args.adapter_id)
    try:
        availability = make_adapter(manifest).check()
    except AdapterError as exc:
        data = {
            "id": manifest.id,
            "ok": False,
            "binary": None,
            "path": None,
            "version": None,
            "reason": exc.one_line(),
        }
    else:
        data = {
            "id": manifest.id,
            "ok": availability.ok,
            "binary": availability.binary,
            "path": availability.path,
            "version": availability.version,
            "reason": availability.reason,
        }
    if ctx.json:
        print_json(data)
    elif data["ok"]:
        where = f"{data['path']} ({data['version']})" if data["path"] else "no binary needed"
        print(f"[OK] {manifest.id}: {where}")
    else:
        print(f"[UNAVAILABLE] {manifest.id}: {data['reason']}")
    return EXIT_OK if data["ok"] else EXIT_NOT_PASSED
