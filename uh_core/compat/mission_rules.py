"""What the TypeScript uh says of a mission it rejects (its zod schema, ``src/schema/
mission.ts``; tests/fixtures/ts_uh/schemas/mission.schema.json), checked on the raw document.

uh accepts these missions (its own rules are in ``uh_core.models.mission``); ``mission
validate`` reports each rule broken here as a warning naming what the TypeScript tool would
say, and ``--strict`` makes them errors. Pure: data in, ``(loc, what, fix)`` out.
"""

from __future__ import annotations

import re
from typing import Any

from uh_core.yamldoc import Loc

PREFIX = "the TypeScript uh rejects this: "
TS_ADAPTERS = ("hermes", "codex", "oh-my-pi", "hermes-proxy", "openrouter", "anthropic", "pi")
_CAPABILITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
_REQUIREMENTS = {
    "needs_network": bool,
    "needs_shell": bool,
    "needs_fs_write": bool,
    "min_context_tokens": int,
    "max_cost_class": str,
}
_COST = ("free", "cheap", "standard", "premium")

Problem = tuple[Loc, str, str]


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _team(team: Any) -> list[Problem]:
    if not isinstance(team, dict):
        return [
            (
                ("team",),
                "team must be an object with workers and leader",
                "write team: {workers: [...], leader: {adapter: ...}}",
            )
        ]
    out: list[Problem] = []
    for key in sorted(set(team) - {"workers", "leader"}):
        out.append((("team", key), f"unrecognized key '{key}' in team", "remove it"))
    workers = team.get("workers")
    if not isinstance(workers, list) or not workers:
        out.append(
            (
                ("team", "workers"),
                "team.workers must be a non-empty list",
                "list at least one {adapter, role}",
            )
        )
    else:
        seen: set[str] = set()
        for i, worker in enumerate(workers):
            out += _member(worker, ("team", "workers", i), role_required=True)
            role = worker.get("role") if isinstance(worker, dict) else None
            if not isinstance(role, str) or not role:
                continue
            if role in seen:
                out.append(
                    (
                        ("team", "workers", i, "role"),
                        f"Duplicate team.workers[].role: {role}",
                        "give each worker a role of its own (or raise one worker's count)",
                    )
                )
            seen.add(role)
    if "leader" not in team:
        out.append((("team", "leader"), "team.leader is required", "add leader: {adapter: ...}"))
    else:
        out += _member(team["leader"], ("team", "leader"), role_required=False)
    return out


def _member(member: Any, loc: Loc, role_required: bool) -> list[Problem]:
    if not isinstance(member, dict):
        return [
            (loc, "must be an object with adapter and role", "write {adapter: hermes, role: ...}")
        ]
    out: list[Problem] = []
    allowed = {"adapter", "role", "count"} if role_required else {"adapter", "role"}
    for key in sorted(set(member) - allowed):
        out.append(((*loc, key), f"unrecognized key '{key}'", "remove it"))
    if member.get("adapter") not in TS_ADAPTERS:
        out.append(
            (
                (*loc, "adapter"),
                f"adapter must be one of {', '.join(TS_ADAPTERS)}",
                "name one of them",
            )
        )
    if role_required and not _nonempty_str(member.get("role")):
        out.append(((*loc, "role"), "role is required (a non-empty string)", "add role: ..."))
    count = member.get("count", 1)
    if role_required and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
        out.append(((*loc, "count"), "count must be a positive integer", "set count: 1 or more"))
    return out


def _shape(data: dict[str, Any]) -> list[Problem]:
    """``shape`` is single (the default) or team; a team mission needs its ``team`` block."""
    if "shape" not in data:
        return []
    shape = data["shape"]
    if shape not in ("single", "team"):
        return [(("shape",), f"shape must be single or team, not {shape!r}", "write shape: team")]
    if shape == "team" and "team" not in data:
        return [
            (
                ("shape",),
                "shape: team requires team.workers and team.leader",
                "add team: {workers: [{adapter: codex, role: ...}], leader: {adapter: hermes}}",
            )
        ]
    return []


def _strings_and_limits(data: dict[str, Any]) -> list[Problem]:
    out: list[Problem] = []
    for key in ("integration_report_path", "design_path"):
        if key in data and not _nonempty_str(data[key]):
            out.append(((key,), f"{key} must be a non-empty string", "name a file or remove it"))
    verification = data.get("verification")
    if isinstance(verification, dict) and "max_iterations" in verification:
        n = verification["max_iterations"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            out.append(
                (
                    ("verification", "max_iterations"),
                    "verification.max_iterations must be a positive integer",
                    "set it to 1 or more, or remove it",
                )
            )
    return out


def _requirements(value: Any) -> list[Problem]:
    loc: Loc = ("runtime_requirements",)
    if not isinstance(value, dict):
        return [(loc, "runtime_requirements must be an object", "write a mapping")]
    out: list[Problem] = []
    for key, item in value.items():
        kind = _REQUIREMENTS.get(str(key))
        if kind is None:
            out.append(
                (
                    (*loc, key),
                    f"unrecognized key '{key}' in runtime_requirements",
                    f"use one of {', '.join(_REQUIREMENTS)}",
                )
            )
        elif kind is int and (not isinstance(item, int) or isinstance(item, bool) or item <= 0):
            out.append(
                ((*loc, key), f"{key} must be a positive integer", "set it above 0 or remove it")
            )
        elif kind is bool and not isinstance(item, bool):
            out.append(((*loc, key), f"{key} must be true or false", "write true or false"))
        elif key == "max_cost_class" and item not in _COST:
            out.append(
                (
                    (*loc, key),
                    f"max_cost_class must be one of {', '.join(_COST)}",
                    "name one of them",
                )
            )
    return out


def ts_problems(data: Any) -> list[Problem]:
    """Every rule of the TypeScript tool's mission schema this document breaks."""
    if not isinstance(data, dict):
        return []
    out: list[Problem] = []
    if "schema_version" not in data:
        out.append(
            ((), "schema_version is required (uh.mission.v0)", "add schema_version: uh.mission.v0")
        )
    if not _nonempty_str(data.get("name")) and not _nonempty_str(data.get("title")):
        out.append(((), "a mission needs a name or a title", "add title: ..."))
    if not _nonempty_str(data.get("workflow_profile")):
        out.append(
            (
                ("workflow_profile",),
                "workflow_profile is required (a non-empty string)",
                "add workflow_profile: staged (or another workflow)",
            )
        )
    if "objective" in data and not isinstance(data["objective"], str):
        out.append(
            (("objective",), "objective must be a string", 'write objective: "..." or remove it')
        )
    caps = data.get("capabilities")
    if isinstance(caps, list):
        for i, cap in enumerate(caps):
            if not isinstance(cap, str) or not _CAPABILITY.match(cap):
                out.append(
                    (
                        ("capabilities", i),
                        f"capability {cap!r} must match {_CAPABILITY.pattern}",
                        "no spaces: use - or _",
                    )
                )
    out += _shape(data)
    if "team" in data:
        out += _team(data["team"])
    out += _strings_and_limits(data)
    if "runtime_requirements" in data:
        out += _requirements(data["runtime_requirements"])
    criteria = data.get("acceptance_criteria")
    if isinstance(criteria, list):
        for i, ac in enumerate(criteria):
            if isinstance(ac, dict) and not _nonempty_str(ac.get("description")):
                out.append(
                    (
                        ("acceptance_criteria", i, "description"),
                        "an acceptance criterion needs a description",
                        "add description: ...",
                    )
                )
    return out
