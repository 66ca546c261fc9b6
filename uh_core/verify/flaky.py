"""The flaky register, ``.harness/flaky.yaml`` (model ``uh_core.models.flaky``).

A criterion is registered when its verdict changes on the same tree: between the runs of
``verify --repeat``, or between a verify and the previous one of the same judged tree (a
re-verify; in the harness, two rounds whose tree is the same). While registered it is
``unobserved`` with ``flaky: true`` whatever a run says — blocked, never passed — until
``uh-core flaky clear ID``. Changed only under a lock; written whole.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from uh_core.clock import timestamp
from uh_core.errors import NotFoundError, ValidationError
from uh_core.fileio import dump_yaml, write_text_atomic
from uh_core.models.flaky import FlakyEntry, FlakyRegister
from uh_core.models.verification import ACResult, VerificationResult
from uh_core.yamldoc import parse_yaml  # libyaml, the graph bounded before it is built
from uh_core.yamllimits import YamlLimitError, check_size

FILE_NAME = "flaky.yaml"
VERDICTS = frozenset({"passed", "failed"})


def register_path(harness_dir: Path) -> Path:
    return harness_dir / FILE_NAME


def entry_id(mission_id: str, criterion: str) -> str:
    return f"{mission_id}/{criterion}"


def read_register(path: Path) -> FlakyRegister:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return FlakyRegister()
    except OSError as exc:
        raise ValidationError([f"{path}: unreadable: {exc}"]) from None
    try:
        data = parse_yaml(text).data or {}
        return FlakyRegister.model_validate(data)
    except (yaml.YAMLError, ValueError) as exc:
        raise ValidationError([f"{path}: not a flaky register: {exc}"]) from None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def update(path: Path, change: Callable[[FlakyRegister], bool]) -> FlakyRegister:
    """Read, change, and (when ``change`` says it changed something) write, under the lock."""
    with _locked(path):
        register = read_register(path)
        if change(register):
            write_text_atomic(path, dump_yaml(register.model_dump(mode="json", exclude_none=True)))
        return register


def add(path: Path, entries: list[FlakyEntry]) -> None:
    def change(register: FlakyRegister) -> bool:
        known = {e.id for e in register.entries}
        new = [e for e in entries if e.id not in known]
        register.entries += new
        return bool(new)

    if entries:
        update(path, change)


def clear(path: Path, wanted: str) -> FlakyEntry:
    """Remove one entry by id (``mission/criterion``); NotFoundError when it is not there."""
    removed: list[FlakyEntry] = []

    def change(register: FlakyRegister) -> bool:
        removed.extend(e for e in register.entries if e.id == wanted)
        register.entries = [e for e in register.entries if e.id != wanted]
        return bool(removed)

    update(path, change)
    if not removed:
        raise NotFoundError(
            f"flaky: {wanted} is not registered", fix="`uh-core flaky list` shows the ids"
        )
    return removed[0]


class Watch:
    """One verify's view of the register: which of its criteria are registered, and what
    this run adds (from ``--repeat`` runs, or a verdict that differs from the previous
    verify's of the same tree)."""

    def __init__(
        self,
        path: Path,
        mission_id: str,
        previous: VerificationResult | None,
        tree: str | None,
        evidence: str,
        also: Path | None = None,
    ) -> None:
        """``path`` is the register this run writes; ``also`` one more it honours (a
        sandbox's verify writes beside its records and honours the operator's)."""
        self.path, self.mission_id, self.tree, self.evidence = path, mission_id, tree, evidence
        registered: list[FlakyEntry] = []
        for where in (path, also):
            if where is None:
                continue
            # a broken register blocks nothing more; `flaky list` names it
            with contextlib.suppress(ValidationError):
                registered += read_register(where).entries
        self.registered = {e.criterion for e in registered if e.mission_id == mission_id}
        self.before: dict[str, str] = {}
        if previous is not None and tree is not None and previous.judged_tree == tree:
            self.before = {a.id: a.status for a in previous.acceptance_criteria}
        self.found: list[FlakyEntry] = []

    def judge(self, ac: ACResult) -> None:
        """Register ``ac`` when its verdict changed on the same tree; a registered one is
        ``unobserved`` and flaky, never passed."""
        if ac.synthetic:
            return
        source: str | None = None
        runs: list[str] | None = None
        if ac.flaky:
            source, runs = "repeat", [str(r) for r in ac.runs]
        elif ac.status in VERDICTS and self.before.get(ac.id) in VERDICTS - {ac.status}:
            source, runs = "re-verify", [self.before[ac.id], str(ac.status)]
        if source is not None and runs is not None:
            self.found.append(
                FlakyEntry(
                    id=entry_id(self.mission_id, ac.id),
                    mission_id=self.mission_id,
                    criterion=ac.id,
                    registered_at=timestamp(),
                    source=source,
                    runs=runs,
                    tree=self.tree,
                    evidence=[self.evidence],
                )
            )
            self.registered.add(ac.id)
        if ac.id in self.registered and ac.status in VERDICTS:
            ac.runs = ac.runs or ["passed" if ac.status == "passed" else "failed"]
            ac.status, ac.flaky = "unobserved", True
        elif ac.id in self.registered:
            ac.flaky = True

    def save(self) -> None:
        add(self.path, self.found)


def previous_result(path: Path) -> VerificationResult | None:
    """The verification.yaml a verify is about to replace, if it reads."""
    try:
        check_size(path.stat().st_size)
        return VerificationResult.model_validate(parse_yaml(path.read_text("utf-8")).data)
    except (OSError, yaml.YAMLError, ValueError, YamlLimitError):
        return None


def merge(source: Path, dest: Path) -> list[FlakyEntry]:
    """Add ``source``'s entries to ``dest`` (a sandbox's register into the operator's)."""
    try:
        entries = read_register(source).entries
    except ValidationError:
        return []
    added: list[FlakyEntry] = []

    def change(register: FlakyRegister) -> bool:
        known = {e.id for e in register.entries}
        added.extend(e for e in entries if e.id not in known)
        register.entries += added
        return bool(added)

    if entries:
        update(dest, change)
    return added
