"""Fail-to-pass: proof that the tests test the change.

A required test that already passes at the base commit proves nothing about the agent's
change. So, once the judged tree's tests pass, the tests stage runs the relevant tests once
more over **the base commit's source with the judged commit's test files**: a tree made of
the base's tree with every test file the patch touched (the mission's ``tdd.test_paths`` or
the default test globs) taken from the judged tree, in a pristine room confined like every
check (``baseline.base_results``: the same room, the same JUnit report, cached per tree and
command, so per base commit and test-file contents). Each relevant test that passes now is:

- ``fail_to_pass``: failed, errored, was skipped or was absent before — the evidence;
- ``pass_to_pass``: passed before too, a test of a touched test file that no ``tests:``
  selector names (kept green, not evidence of this change);
- ``vacuous``: a required test (``tests:``) that passed before: it blocks the green with the
  test named, unless the mission sets ``allow_passing_at_base`` (recorded).

Relevant tests: those the mission's ``tests:`` selectors select, and those of the test files
the agent added or changed. When no test file changed, the tree is the base commit itself
and the non-regression run's results are read again (the same cache entry). A plain pytest
command is given the relevant files, so a large suite is not run whole; any other command
runs as configured. What cannot be judged (no report at the base, a time-out) is said, never
counted as evidence.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uh_core.diff.classify import classify_paths
from uh_core.git import git
from uh_core.judge.baseline import BaseRun, base_results
from uh_core.judge.context import GateContext
from uh_core.judge.testreports import Report, ReportedCase, selects, with_junit_report
from uh_core.models.proof import FailToPass as FailToPassRecord
from uh_core.models.verification import Finding

CODE = "vacuous_test"
TEST_TIMEOUT_S = 1800.0  # as the tests stage's own run
_SHELL = re.compile(r"[;&|<>`$()\n]")
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")


@dataclass
class FailToPass:
    """The verdict on the relevant tests (dotted ids, sorted)."""

    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)


def test_paths(ctx: GateContext) -> list[str]:
    """Every touched path that is a test file (the mission's TDD globs, or the defaults)."""
    policy = ctx.mission.tdd
    globs = policy.test_paths if policy is not None and policy.test_paths else None
    return classify_paths(ctx.touched, test_globs=globs).tests


def judged_entries(ctx: GateContext, paths: list[str]) -> dict[str, str]:
    """``paths`` as the judged tree holds them: path → ``mode type blob`` (absent: left out)."""
    listed = git(
        ctx.layout.root, "ls-tree", "-r", "-z", ctx.tree, "--", *paths, git_dir=ctx.git_dir
    )
    present: dict[str, str] = {}
    for entry in listed.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            present[path] = meta
    return present


def overlay_id(base_commit: str, paths: list[str], present: dict[str, str]) -> str:
    """What a hybrid tree holds, named without making it: the base commit and each overlaid
    path's mode and blob (or its absence). The results cache's key (baseline.py)."""
    digest = hashlib.sha256(base_commit.encode())
    for path in sorted(paths):
        digest.update(f"\0{path}\0{present.get(path, '-')}".encode("utf-8", "surrogateescape"))
    return f"f2p-{digest.hexdigest()[:40]}"


def hybrid_tree(ctx: GateContext, paths: list[str], present: dict[str, str]) -> str:
    """The base commit's tree with ``paths`` as the judged tree has them (``present``; a path
    it does not hold is removed): objects only, through a temporary index."""
    root, store = ctx.layout.root, ctx.git_dir
    with tempfile.TemporaryDirectory(prefix="uh-f2p-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(root, "read-tree", ctx.base_commit, env=env, git_dir=store)
        lines = [f"{meta}\t{path}" for path, meta in present.items()]
        gone = [p for p in paths if p not in present]
        if lines:
            stdin = ("\0".join(lines) + "\0").encode("utf-8", "surrogateescape")
            git(root, "update-index", "-z", "--index-info", env=env, git_dir=store, stdin=stdin)
        if gone:
            git(root, "update-index", "--force-remove", "--", *gone, env=env, git_dir=store)
        return git(root, "write-tree", env=env, git_dir=store).strip()


def _file_of(selector: str) -> str | None:
    """The file a node-id selector names (``tests/test_x.py::test_y`` → ``tests/test_x.py``)."""
    path = selector.split("::", 1)[0]
    return path if path.endswith(".py") else None


def selected_command(command: str, selectors: list[str], changed: list[str]) -> str:
    """``command`` given the relevant test files, when it is one plain pytest call and every
    selector names its file; else ``command`` as it is (the whole suite runs)."""
    files = [_file_of(s) for s in selectors]
    if any(f is None for f in files) or _SHELL.search(command):
        return command
    if not with_junit_report(command, Path("x"))[1]:
        return command
    modules = [p for p in changed if _TEST_FILE.search(p)]
    wanted = dict.fromkeys([*(f for f in files if f), *modules])
    return " ".join([command, *map(shlex.quote, wanted)]) if wanted else command


def classify(
    now: list[ReportedCase], before: BaseRun, required: list[str], changed: list[str]
) -> FailToPass:
    """Each test passing now that a required selector or a changed test file selects."""
    found = FailToPass()
    for case in now:
        if case.status != "passed" or case.xfail:
            continue
        is_required = any(selects(s, case) for s in required)
        if not is_required and not any(selects(p, case) for p in changed):
            continue
        name = case.dotted or case.name
        was = before.cases.get(name)
        if was is None or was.status != "passed":
            found.fail_to_pass.append(name)
        elif is_required:
            found.vacuous.append(name)
        else:
            found.pass_to_pass.append(name)
    for names in (found.fail_to_pass, found.pass_to_pass, found.vacuous):
        names.sort()
    return found


def judge(
    ctx: GateContext,
    command: str,
    reports: list[Report],
    problems: list[str],
    notes: list[str],
    findings: list[Finding],
    evidence: dict[str, Any],
) -> None:
    """Run the relevant tests over the base's source with the judged tests, and record the
    verdict in ``evidence["fail_to_pass"]``; a vacuous required test is a problem."""
    record = _judged(ctx, command, reports, problems, notes)
    evidence["fail_to_pass"] = record.model_dump(mode="json")
    if not record.vacuous:
        return
    listed = ", ".join(record.vacuous[:5]) + (" …" if len(record.vacuous) > 5 else "")
    if record.allow_passing_at_base:
        notes.append(f"{CODE}: already passing at the base commit, allowed: {listed}")
        return
    message = (
        f"{len(record.vacuous)} required test(s) already pass at the base commit, so they prove "
        f"nothing about this change: {listed} (make them fail without the change, or set "
        "allow_passing_at_base: true in the mission)"
    )
    problems.append(f"{CODE}: {message}")
    findings.append(Finding(severity="error", code=CODE, message=message))


def _judged(
    ctx: GateContext, command: str, reports: list[Report], problems: list[str], notes: list[str]
) -> FailToPassRecord:
    required = list(ctx.mission.tests)
    overlaid = test_paths(ctx)  # data files beside the tests too: a new test may read them
    changed = [p for p in overlaid if p.endswith(".py")]
    record = FailToPassRecord(required=required, test_files=overlaid)
    if not required and not changed:
        record.problem = "no required tests (tests:) and no test file changed: no evidence"
        return record
    if problems:
        record.problem = "not judged: the tests do not pass"
        return record
    line, name, made = command, ctx.base_commit, None
    if overlaid:
        present = judged_entries(ctx, overlaid)
        line = selected_command(command, required, changed)
        name = overlay_id(ctx.base_commit, overlaid, present)
        made = lambda: hybrid_tree(ctx, overlaid, present)  # noqa: E731  (only on a miss)
    before = base_results(
        ctx.layout, name, line, {"MISSION_ID": ctx.mission.id, "UH_RUN_ID": ctx.run_id},
        TEST_TIMEOUT_S, isolation=ctx.isolation, check_env_names=ctx.settings.check_env,
        cached=ctx.settings.base_cache,
        what="the base commit with the judged tests" if overlaid else "the base commit",
        tree=made,
    )  # fmt: skip
    record.tree, record.command, record.cached = name, line, before.cached
    record.duration_ms = before.duration_ms
    if before.problem is not None:
        record.problem = f"not judged: {before.problem}"
        notes.append(f"fail-to-pass not judged: {before.problem}")
        return record
    now = [case for report in reports for case in report.cases]
    found = classify(now, before, required, changed)
    record.fail_to_pass, record.pass_to_pass = found.fail_to_pass, found.pass_to_pass
    record.vacuous = found.vacuous
    record.allow_passing_at_base = ctx.mission.allow_passing_at_base
    return record
