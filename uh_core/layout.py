"""Where everything lives under a root (contract §2), and how the root is found."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from uh_core.ids import check_id, safe_filename

HARNESS_DIR = ".harness"
STATE_ENV = "UH_STATE_DIR"


def state_home() -> Path:
    """Where uh keeps per-repository state outside every work tree (sandboxes):
    ``$UH_STATE_DIR``, else ``$XDG_STATE_HOME/uh``, else ``~/.local/state/uh``."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(xdg) else Path.home() / ".local/state"
    return (base / "uh").resolve()


def hidden_from_confined(*, checks: bool) -> list[Path]:
    """What a confined agent (``checks``: the judge's checks) must not read: the operator's
    credentials (``isolation.bwrap.secret_paths``) and the Ray cluster's token (uh's own
    file under the state folder, or the one ``RAY_AUTH_TOKEN_PATH`` names)."""
    from uh_core.isolation.bwrap import secret_paths

    found = [*secret_paths(checks=checks), state_home() / "ray"]
    given = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if given:
        found.append(Path(given).expanduser())
    return [path for path in found if os.path.lexists(path)]


def find_root(start: Path | None = None) -> Path:
    """Nearest ancestor holding ``.harness/``, else the git top level, else ``start``."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / HARNESS_DIR).is_dir():
            return candidate
    from uh_core.errors import ProcError
    from uh_core.git import git_run  # the engine's git: no configuration from outside

    try:
        out = git_run(here, "rev-parse", "--show-toplevel", timeout=30)
    except ProcError:
        return here
    top = out.stdout.decode("utf-8", "surrogateescape").strip()
    if out.returncode == 0 and top:
        return Path(top).resolve()
    return here


@dataclass(frozen=True)
class Layout:
    """Paths of one root. Ids are checked here, before any path is built from them.

    ``records`` moves the ``.harness/`` folder elsewhere: a sandbox's layout has the sandbox
    as its root (commands run there) and its records in the operator's
    ``.harness/sandboxes/<id>/`` (``sandbox_records``), out of the agent's reach."""

    root: Path
    records: Path | None = None

    @cached_property
    def harness(self) -> Path:
        return self.records if self.records is not None else self.root / HARNESS_DIR

    @property
    def project_file(self) -> Path:
        return self.harness / "project.yaml"

    @property
    def adapters_dir(self) -> Path:
        return self.harness / "adapters"

    @cached_property
    def missions_dir(self) -> Path:  # asked for each of a thousand missions on every refresh
        return self.harness / "missions"

    @cached_property
    def missions_path(self) -> str:  # the same, as text: joined with a thousand ids per refresh
        return str(self.missions_dir)

    @property
    def sandboxes_dir(self) -> Path:
        return self.harness / "sandboxes"

    @property
    def state_dir(self) -> Path:
        """This repository's folder under ``state_home()``: its name plus a hash of its path."""
        real = os.path.realpath(self.root)
        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        name = safe_filename(os.path.basename(real) or "root", limit=40) or "root"
        return state_home() / "repos" / f"{name}-{digest}"

    @property
    def sandbox_trees(self) -> Path:
        """Where sandboxes' work trees live: outside the operator's work tree."""
        return self.state_dir / "sandboxes"

    def sandbox_evidence(self, sandbox_id: str) -> Path:
        """What uh records about one sandbox, in the operator's ``.harness/`` (the agent's
        output folder is ``agent/`` inside it; everything else only uh writes)."""
        return self.sandboxes_dir / check_id(sandbox_id, "sandbox")

    @property
    def sandbox_index(self) -> Path:
        return self.sandboxes_dir / "index.yaml"

    @property
    def audit_log(self) -> Path:
        return self.harness / "audit" / "events.ndjson"

    @property
    def ledgers_dir(self) -> Path:
        return self.harness / "runs"

    @property
    def prompts_dir(self) -> Path:
        return self.harness / "prompts"

    @property
    def gitignore(self) -> Path:
        return self.harness / ".gitignore"

    @property
    def harness_config(self) -> Path:
        return self.root / "harness.config.yaml"

    def mission_dir(self, mission_id: str) -> Path:
        return self.missions_dir / check_id(mission_id, "mission")

    def mission_file(self, mission_id: str) -> Path:
        return self.mission_dir(mission_id) / "mission.yaml"

    def mission_events(self, mission_id: str) -> Path:
        return self.mission_dir(mission_id) / "events.ndjson"

    def verification_file(self, mission_id: str) -> Path:
        return self.mission_dir(mission_id) / "verification.yaml"

    def diff_file(self, mission_id: str) -> Path:
        return self.mission_dir(mission_id) / "diff.patch"

    def promotion_file(self, mission_id: str) -> Path:
        return self.mission_dir(mission_id) / "promotion.yaml"

    def comparison_file(self, mission_id: str) -> Path:
        """run-all's comparison (JSON); ``runtime-comparison.md`` is its human report."""
        return self.mission_dir(mission_id) / "runtime-comparison.json"

    def session_file(self, mission_id: str) -> Path:
        """A runtime run's result, in its sandbox's ``.harness/`` (``RuntimeResult``)."""
        return self.mission_dir(mission_id) / "runtime-session.yaml"

    @property
    def promotion_lock(self) -> Path:
        return self.harness / "promotion.lock"

    def run_dir(self, mission_id: str, run_id: str) -> Path:
        return self.mission_dir(mission_id) / "runs" / check_id(run_id, "run")

    def mission_ids(self) -> list[str]:
        """Ids of mission directories holding a mission.yaml, sorted."""
        if not self.missions_dir.is_dir():
            return []
        return sorted(  # strings, not Paths: a thousand missions on every refresh
            entry.name
            for entry in os.scandir(self.missions_dir)
            if entry.is_dir() and os.path.isfile(os.path.join(entry.path, "mission.yaml"))
        )

    def rel(self, path: Path) -> str:
        """``path`` relative to the root when it is below it (for messages and artifacts).

        Paths built from this layout are compared as text first (no filesystem calls);
        only others are resolved.
        """
        text, root = str(path), str(self.root)
        if text.startswith(root + os.sep) and ".." not in path.parts:
            return text[len(root) + 1 :]
        try:
            return str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            return text
