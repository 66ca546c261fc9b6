"""``uh-core schema NAME``: the JSON Schema of a file or of the event union."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from uh_core.cli.common import EXIT_OK, print_json

# name -> (module, attribute): models are imported only for the one asked for.
SCHEMAS = {
    "mission": ("uh_core.models.mission", "Mission"),
    "project": ("uh_core.models.project", "Project"),
    "verification-result": ("uh_core.models.verification", "VerificationResult"),
    "event": ("uh_core.models.events", "Event"),
    "adapter": ("uh_core.models.adapter", "AdapterManifest"),
    "runtime-result": ("uh_core.models.runtime", "RuntimeResult"),
    "harness-config": ("uh_core.models.harness_config", "HarnessConfig"),
    "harness-run": ("uh_core.models.ledger", "HarnessLedger"),
    "promotion": ("uh_core.models.promotion", "PromotionRecord"),
    "flaky": ("uh_core.models.flaky", "FlakyRegister"),
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("schema", help="print the JSON Schema of a file kind")
    parser.add_argument(
        "name", choices=sorted(SCHEMAS), metavar="NAME", help=", ".join(sorted(SCHEMAS))
    )
    parser.set_defaults(handler=handle)


def schema_of(name: str) -> dict[str, Any]:
    from pydantic import BaseModel, TypeAdapter

    module_name, attribute = SCHEMAS[name]
    target = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, type) and issubclass(target, BaseModel):
        schema: dict[str, Any] = target.model_json_schema()
    else:
        schema = TypeAdapter(target).json_schema()
    schema.setdefault("title", name)
    if name == "adapter":  # config's keys per runtime_kind
        from uh_core.models.adapter_config import describe_config

        schema = describe_config(schema)
    return schema


def handle(args: argparse.Namespace) -> int:
    print_json(schema_of(args.name))
    return EXIT_OK
