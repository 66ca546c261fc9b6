"""``uh-core validate FILE…``: any file either tool writes, checked against its model.

The kind comes from ``schema_version`` (else the file's name: ``mission.yaml``,
``harness.config.yaml``); no ``.harness/`` is needed. A TypeScript-shaped file is read through
the same translation layer as everywhere else (uh_core.compat), so ``valid`` means "uh reads
it"; a mission also gets the TypeScript tool's rules as warnings (``--strict``: errors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uh_core.cli.common import EXIT_BAD_INPUT, EXIT_OK, add_json, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "validate",
        help="check any uh or TypeScript-uh file (by its schema_version); no .harness/ needed",
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument(
        "--strict", action="store_true", help="a mission the TypeScript uh rejects is an error"
    )
    add_json(parser)
    parser.set_defaults(handler=handle, all_problems=True)


def _loaders() -> dict[str, Callable[[Path, str], Any]]:
    from uh_core.compat import readers
    from uh_core.models.adapter import AdapterManifest
    from uh_core.models.base import load_yaml_model
    from uh_core.models.harness_config import HarnessConfig

    return {
        "uh.project.v0": readers.load_project,
        "uh.adapter.v0": lambda p, d: load_yaml_model(p, AdapterManifest, d),
        "uh.verification-result.v0": readers.load_verification,
        "uh.promotion.v0": readers.load_promotion,
        "uh.sandboxes-index.v0": readers.load_sandbox_index,
        "uh.runtime-result.v0": readers.load_runtime_result,
        "harness.config.yaml": lambda p, d: load_yaml_model(p, HarnessConfig, d),
    }


def _kind(path: Path) -> str:
    from uh_core.models.base import read_document

    data = read_document(path, str(path)).data
    version = data.get("schema_version") if isinstance(data, dict) else None
    if isinstance(version, str):
        return version
    if path.name in ("mission.yaml", "harness.config.yaml"):
        return "uh.mission.v0" if path.name == "mission.yaml" else path.name
    return ""


def check(path: Path, strict: bool) -> dict[str, Any]:
    from uh_core.errors import UhError, ValidationError
    from uh_core.missions import read_mission_file

    report: dict[str, Any] = {"file": str(path), "kind": None, "errors": [], "warnings": []}
    try:
        kind = _kind(path)
        report["kind"] = kind or None
        if kind == "uh.mission.v0":
            loaded = read_mission_file(path, str(path))
            report["warnings"] = loaded.warnings
            report["errors" if strict else "warnings"] += loaded.ts_warnings
        elif kind in _loaders():
            _loaders()[kind](path, str(path))
        else:
            report["errors"] = [
                f"{path}: schema_version: unknown kind {kind or '(none)'!r} "
                "(fix: set schema_version, e.g. uh.mission.v0)"
            ]
    except ValidationError as exc:
        report["errors"] = list(exc.problems)
    except UhError as exc:
        report["errors"] = [exc.one_line()]
    report["valid"] = not report["errors"]
    return report


def handle(args: argparse.Namespace) -> int:
    reports = [check(Path(f), args.strict) for f in args.files]
    ok = all(r["valid"] for r in reports)
    if args.json:
        print_json({"valid": ok, "files": reports})
        return EXIT_OK if ok else EXIT_BAD_INPUT
    for r in reports:
        for line in r["errors"]:
            sys.stderr.write(f"uh-core: error: {' '.join(line.split())}\n")
        for line in r["warnings"]:
            sys.stderr.write(f"uh-core: warning: {' '.join(line.split())}\n")
        if r["valid"]:
            print(f"ok {r['kind']} ({r['file']})")
    return EXIT_OK if ok else EXIT_BAD_INPUT
