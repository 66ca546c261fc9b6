"""``uh-core adapter list | check [ID…] | capabilities [ID]``."""

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
    listing = group.add_parser(
        "list", help="manifests with kind, status, whether each can run here, and capabilities"
    )
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)
    check = group.add_parser(
        "check", help="can this runtime run here? (binary on PATH, its version, or why not)"
    )
    check.add_argument(
        "adapter_ids", metavar="ID", nargs="*", help="manifests to check (default: every one)"
    )
    add_root(check)
    add_json(check)
    check.set_defaults(handler=handle_check)
    caps = group.add_parser(
        "capabilities",
        help="each manifest's capabilities, sandbox backends and formats",
    )
    caps.add_argument("adapter_id", metavar="ID", nargs="?", help="one manifest (default: all)")
    add_root(caps)
    add_json(caps)
    caps.set_defaults(handler=handle_capabilities)


def handle_list(args: argparse.Namespace) -> int:
    from uh_core.adapters.here import isolation_here, runnable_here
    from uh_core.adapters.manifests import load_all_manifests
    from uh_core.adapters.registry import ALIASES, KINDS

    ctx = context(args)
    require_harness(ctx)
    manifests, broken = load_all_manifests(ctx.layout)
    rows: list[dict[str, Any]] = []
    for m in manifests:
        here = runnable_here(m)
        rows.append(
            {
                "id": m.id,
                "name": m.name,
                "runtime_kind": m.runtime_kind,
                "status": m.status,
                "supported": ALIASES.get(m.runtime_kind, m.runtime_kind) in KINDS,
                "here": here.ok,
                "here_reason": here.reason,
                "capabilities": m.capability_ids,
                "error": None,
            }
        )
    rows += [
        {
            "id": i,
            "name": None,
            "runtime_kind": None,
            "status": "invalid",
            "supported": False,
            "here": False,
            "here_reason": e.one_line(),
            "capabilities": [],
            "error": e.one_line(),
        }
        for i, e in broken.items()
    ]
    rows.sort(key=lambda r: r["id"])
    confined, why = isolation_here()
    if ctx.json:
        print_json({"adapters": rows, "isolation": {"bwrap": confined, "reason": why}})
        return EXIT_OK
    if not rows:
        print("no adapters under .harness/adapters/ (run `uh-core init`)")
        return EXIT_OK
    width = max(len(r["id"]) for r in rows)
    print(f"{'ID':<{width}}  {'KIND':<12}  {'STATUS':<12}  {'HERE':<7}  CAPABILITIES")
    for r in rows:
        kind = r["runtime_kind"] or "-"
        if r["runtime_kind"] and not r["supported"]:
            kind += " (no adapter)"
        caps = ", ".join(r["capabilities"]) or "-"
        mark = "ready" if r["here"] else "missing"
        print(f"{r['id']:<{width}}  {kind:<12}  {r['status']:<12}  {mark:<7}  {caps}")
    for r in rows:
        if not r["here"] and r["error"] is None:
            print(f"  {r['id']}: {r['here_reason']}")
    print(f"isolation here: {'bubblewrap (' + why + ')' if confined else 'none — ' + why}")
    print("ready: found here (`uh-core adapter check ID…` runs its --version to be sure)")
    for adapter_id, error in broken.items():
        sys.stderr.write(f"uh-core: warning: adapter {adapter_id}: {error.one_line()}\n")
    return EXIT_OK


def handle_check(args: argparse.Namespace) -> int:
    from uh_core.adapters.manifests import load_all_manifests, load_manifest
    from uh_core.errors import UhError

    ctx = context(args)
    require_harness(ctx)
    ids: list[str] = list(dict.fromkeys(args.adapter_ids))
    if len(ids) == 1:  # one id: its row alone, as before
        data = _check_one(load_manifest(ctx.layout, ids[0]))
        if ctx.json:
            print_json(data)
        else:
            _print_check(data)
        return EXIT_OK if data["ok"] else EXIT_NOT_PASSED
    rows: list[dict[str, Any]] = []
    if ids:
        for adapter_id in ids:
            try:
                rows.append(_check_one(load_manifest(ctx.layout, adapter_id)))
            except UhError as exc:
                rows.append(_row(adapter_id, False, reason=exc.one_line()))
    else:
        manifests, broken = load_all_manifests(ctx.layout)
        rows = [_check_one(manifest) for manifest in manifests]
        rows += [
            _row(adapter_id, False, reason=error.one_line()) for adapter_id, error in broken.items()
        ]
        rows.sort(key=lambda row: row["id"])
    if ctx.json:
        print_json({"adapters": rows, "ok": all(row["ok"] for row in rows)})
    else:
        for row in rows:
            _print_check(row)
        if not rows:
            print("no adapter manifests in .harness/adapters/")
    return EXIT_OK if all(row["ok"] for row in rows) else EXIT_NOT_PASSED


def _row(adapter_id: str, ok: bool, **found: Any) -> dict[str, Any]:
    return {"id": adapter_id, "ok": ok, "binary": None, "path": None, "version": None} | {
        "reason": None,
        **found,
    }


def _check_one(manifest: Any) -> dict[str, Any]:
    from uh_core.adapters.registry import make_adapter
    from uh_core.errors import AdapterError

    try:
        availability = make_adapter(manifest).check()
    except AdapterError as exc:
        return _row(manifest.id, False, reason=exc.one_line())
    return _row(
        manifest.id,
        availability.ok,
        binary=availability.binary,
        path=availability.path,
        version=availability.version,
        reason=availability.reason,
    )


def _print_check(data: dict[str, Any]) -> None:
    if data["ok"]:
        where = f"{data['path']} ({data['version']})" if data["path"] else "no binary needed"
        print(f"[OK] {data['id']}: {where}")
    else:
        print(f"[UNAVAILABLE] {data['id']}: {data['reason']}")


def handle_capabilities(args: argparse.Namespace) -> int:
    """What each manifest declares (the TypeScript uh's ``adapter capabilities``, from the
    manifests here rather than a built-in table; no cost class: uh has no price tables)."""
    from uh_core.adapters.manifests import load_all_manifests, load_manifest
    from uh_core.errors import UhError

    ctx = context(args)
    require_harness(ctx)
    broken: dict[str, UhError] = {}
    if args.adapter_id:
        manifests = [load_manifest(ctx.layout, args.adapter_id)]
    else:
        manifests, broken = load_all_manifests(ctx.layout)
    rows: list[dict[str, Any]] = [
        {
            "id": m.id,
            "name": m.name,
            "runtime_kind": m.runtime_kind,
            "status": m.status,
            "capabilities": m.capability_ids,
            "sandbox_backends": list(m.supported_sandbox_backends),
            "input_formats": list(m.input_formats),
            "output_formats": list(m.output_formats),
        }
        for m in manifests
    ]
    if ctx.json:
        print_json({"adapters": rows, "errors": {i: e.one_line() for i, e in broken.items()}})
        return EXIT_OK
    for m in manifests:
        print(f"{m.id} — {m.name} ({m.runtime_kind}, {m.status})")
        print(f"  capabilities: {', '.join(m.capability_ids) or '-'}")
        print(f"  sandbox: {', '.join(m.supported_sandbox_backends) or '-'}")
    for adapter_id, error in broken.items():
        sys.stderr.write(f"uh-core: warning: adapter {adapter_id}: {error.one_line()}\n")
    return EXIT_OK
