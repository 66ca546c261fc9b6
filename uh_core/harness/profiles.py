"""Profiles: which agent (and prompt prefix, and declared cost) a mission gets.

Declared under ``profiles:`` in ``harness.config.yaml`` and/or in ``.harness/profiles.yaml``
(``profiles:`` too; the config file's come first). Each has ``agent`` (or ``runtime``),
optional ``prompt_prefix`` and ``cost_per_run_hint``, and optional ``match:`` on the
mission's ``bounded_context``, ``requirement``, ``feature``, ``category`` — every key given
must match; ``*`` matches any value that is set; an unknown key matches nothing. The first
profile that matches wins; a profile without ``match:`` is chosen only by name
(``--profile``); no match → the run's own agent and prefix.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import Field

from uh_core.errors import UsageError
from uh_core.harness.config import CONFIG_NAME, Settings
from uh_core.layout import Layout
from uh_core.models.base import Strict, load_yaml_model
from uh_core.models.harness_config import HarnessConfig, Profile
from uh_core.models.mission import Mission

PROFILES_FILE = "profiles.yaml"
MATCH_KEYS = ("bounded_context", "requirement", "feature", "category")


class ProfilesFile(Strict):
    profiles: list[Profile] = Field(default_factory=list)


def load_profiles(layout: Layout, config: HarnessConfig) -> list[Profile]:
    """The config file's profiles, then ``.harness/profiles.yaml``'s; a name used twice is
    refused (exit 2)."""
    profiles = list(config.profiles)
    path = layout.harness / PROFILES_FILE
    if path.exists():
        profiles += load_yaml_model(path, ProfilesFile, layout.rel(path)).profiles
    seen: set[str] = set()
    for profile in profiles:
        if profile.name in seen:
            raise UsageError(
                f"profile {profile.name!r} is declared twice ({CONFIG_NAME}, "
                f".harness/{PROFILES_FILE})",
                fix="rename or remove one of them",
            )
        seen.add(profile.name)
    return profiles


def matches(profile: Profile, mission: Mission) -> bool:
    if profile.match is None:
        return False
    for key, wanted in profile.match.items():
        if key not in MATCH_KEYS:
            return False  # an unknown key matches nothing
        value = getattr(mission, key)
        if value is None or (wanted != "*" and str(value) != str(wanted)):
            return False
    return True


def choose(profiles: list[Profile], mission: Mission, named: str | None = None) -> Profile | None:
    """``--profile NAME`` when given; else the first profile whose ``match:`` fits."""
    if named is not None:
        return by_name(profiles, named)
    return next((p for p in profiles if matches(p, mission)), None)


def by_name(profiles: list[Profile], name: str) -> Profile:
    found = next((p for p in profiles if p.name == name), None)
    if found is None:
        known = ", ".join(p.name for p in profiles) or "none declared"
        raise UsageError(
            f"--profile {name}: no such profile (known: {known})",
            fix=f"declare it under profiles: in {CONFIG_NAME} or .harness/{PROFILES_FILE}",
        )
    return found


def apply(settings: Settings, profile: Profile | None) -> Settings:
    """The settings one mission runs with under ``profile``."""
    if profile is None:
        return settings
    changed = settings
    if profile.agent is not None or profile.runtime is not None:
        changed = replace(changed, agent=profile.agent, runtime=profile.runtime)
    if profile.prompt_prefix is not None and profile.prompt_prefix.strip():
        changed = replace(changed, prompt_prefix=profile.prompt_prefix)
    return changed
