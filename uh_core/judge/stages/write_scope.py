"""``write-scope``: the agent may not modify or delete a protected file that the base commit
tracks (the mission, the spec, the features, the harness settings — the judge itself).
Creating a new file is allowed — except test infrastructure, which is part of the judge
too: a ``conftest.py`` anywhere, ``pytest.ini``, ``tox.ini``, the test-runner sections of
``setup.cfg``/``pyproject.toml``, ``sitecustomize``/``usercustomize`` and ``*.pth`` files may
not be created, changed or deleted unless ``judge_allow:`` (the mission's, or
``harness.config.yaml``'s) permits the path (``judgefiles.py``).

Judged by content against the base commit, never by timestamps: every protected file the
base tracks is hashed in the worktree as git would store it (filters applied) and compared
with the base blob, with its mode. So an edit the agent committed, staged or left in the
working tree counts the same, and a same-size edit with its mtime put back is still seen.
Git runs with the operator's git directory (the sandbox's own ``.git`` — its filters, its
replace refs — is the agent's and is never used).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from uh_core.diff.globs import compile_globs
from uh_core.git import git, git_run
from uh_core.judge.commandfiles import import_roots, judge_commands, judge_named
from uh_core.judge.context import GateContext
from uh_core.judge.judgefiles import JUDGE_FILE_CODE, JudgeChange, judge_changes
from uh_core.models.ledger import StageResult
from uh_core.models.verification import Finding

CODE = "agent_touched_protected_path"
_DIFF_LINES = 200  # per file, in the stage output


@dataclass(frozen=True)
class Tracked:
    mode: str
    blob: str
    path: str


def guarded(ctx: GateContext) -> list[Tracked]:
    """Files of the base commit under the protected globs and outside ``allow_paths``."""
    protected = compile_globs(tuple(ctx.settings.protected))
    allowed = compile_globs(tuple(ctx.settings.allow))
    listing = git(ctx.layout.root, "ls-tree", "-r", "-z", "--full-tree", ctx.base_commit)
    found: list[Tracked] = []
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and protected.match(path) and not allowed.match(path):
            found.append(Tracked(mode, blob, path))
    return found


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _raw_blob_id(path: Path) -> str:
    try:
        return _blob_id(path.read_bytes())
    except OSError:
        return "unreadable"


def _hash_files(ctx: GateContext, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    stdin = "".join(f"{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    done = git_run(
        ctx.worktree, "hash-object", "--stdin-paths",
        git_dir=ctx.git_dir, work_tree=ctx.worktree, stdin=stdin,
    )  # fmt: skip
    ids = done.stdout.decode().split()
    if done.returncode != 0 or len(ids) != len(paths):
        # One unreadable file: hash each raw (no filters); unreadable counts as modified.
        return {p: _raw_blob_id(ctx.worktree / p) for p in paths}
    return dict(zip(paths, ids, strict=True))


def changes(ctx: GateContext) -> list[tuple[Tracked, str]]:
    """(file, "deleted" | "modified" | "mode changed" | "replaced") for each touched one."""
    touched: list[tuple[Tracked, str]] = []
    regular: list[Tracked] = []
    for item in guarded(ctx):
        path = ctx.worktree / item.path
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            touched.append((item, "deleted"))
            continue
        if item.mode == "120000":
            same = (
                stat.S_ISLNK(info.st_mode) and _blob_id(os.fsencode(os.readlink(path))) == item.blob
            )
            if not same:
                touched.append((item, "modified"))
        elif not stat.S_ISREG(info.st_mode):
            touched.append((item, "replaced"))
        else:
            executable = bool(info.st_mode & stat.S_IXUSR)
            if executable != (item.mode == "100755"):
                touched.append((item, "mode changed"))
            else:
                regular.append(item)
    hashed = _hash_files(ctx, [item.path for item in regular])
    touched += [(item, "modified") for item in regular if hashed[item.path] != item.blob]
    return sorted(touched, key=lambda pair: pair[0].path)


def _diff(ctx: GateContext, item: Tracked, how: str) -> str:
    if how != "modified" or item.mode == "120000":
        return f"{how}: {item.path}"
    try:
        before = git(ctx.layout.root, "cat-file", "blob", item.blob).splitlines(keepends=True)
        after = (ctx.worktree / item.path).read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return f"modified (binary): {item.path}"
    lines = list(difflib.unified_diff(before, after, f"a/{item.path}", f"b/{item.path}", n=2))
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"… [{len(lines) - _DIFF_LINES} more diff lines]\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")


def judge_files(ctx: GateContext) -> list[JudgeChange]:
    """Judge files (``judgefiles``) that differ between the base commit and the judged tree,
    from the object store alone (no work tree read): the re-judge runs this too."""
    commands = judge_commands(ctx.mission, ctx.settings.test_cmd)
    named = judge_named(ctx.mission, commands)
    allow = (*ctx.settings.judge_allow, *ctx.mission.judge_allow)
    roots = import_roots(commands)
    return judge_changes(ctx.layout.root, ctx.base_commit, ctx.tree, allow, named, roots)


def judge_files_check(ctx: GateContext) -> StageResult:
    """``write-scope``'s judge-file half, for a re-judge that has the commit and no work tree
    (``uh_core.judge.rejudge``): a record that says green whose commit changed the judge."""
    judged = judge_files(ctx)
    evidence = {"judge_files": [{"path": c.path, "change": c.how} for c in judged]}
    if not judged:
        return StageResult(
            stage="write-scope", passed=True, detail="no judge file changed", evidence=evidence
        )
    names = ", ".join(f"{c.path} ({c.how})" for c in judged[:5])
    return StageResult(
        stage="write-scope",
        passed=False,
        detail=f"{JUDGE_FILE_CODE}: {names}",
        output="\n".join(f"- {c.message()}" for c in judged),
        findings=[
            Finding(severity="error", code=JUDGE_FILE_CODE, message=c.message()) for c in judged
        ],
        evidence=evidence,
    )


def check(ctx: GateContext) -> StageResult:
    problems: list[str] = []
    touched = changes(ctx)
    findings = [
        Finding(severity="error", code=CODE, message=f"{how}: {item.path}") for item, how in touched
    ]
    allow = (*ctx.settings.judge_allow, *ctx.mission.judge_allow)
    judged = judge_files(ctx)
    findings += [
        Finding(severity="error", code=JUDGE_FILE_CODE, message=change.message())
        for change in judged
    ]
    if judged:
        names = ", ".join(f"{c.path} ({c.how})" for c in judged[:5])
        more = f" and {len(judged) - 5} more" if len(judged) > 5 else ""
        problems.append(f"{JUDGE_FILE_CODE}: {names}{more}")
    evidence = {
        "judge_files": [{"path": c.path, "change": c.how} for c in judged],
        "judge_allow": list(allow),
        "protected": list(ctx.settings.protected),
        "allow": list(ctx.settings.allow),
        "touched": [{"path": item.path, "change": how} for item, how in touched],
    }
    if not touched and not problems:
        return StageResult(
            stage="write-scope",
            passed=True,
            detail="no protected file modified or deleted",
            evidence=evidence,
        )
    if touched:
        names = ", ".join(item.path for item, _ in touched[:5])
        more = f" and {len(touched) - 5} more" if len(touched) > 5 else ""
        problems.insert(0, f"{CODE}: {names}{more}")
    output = "\n".join(problems)
    if judged:
        output += (
            "\n\nTest infrastructure is part of the judge: leave conftest.py, pytest.ini, "
            "tox.ini, the [tool.pytest*] / [tool:pytest] sections, sitecustomize/usercustomize, "
            "*.pth, *.dist-info/*.egg-info and the files the checks and the test command run "
            "as the base commit has them, and give no new module the name of one the judge "
            "imports:\n" + "\n".join(f"- {c.message()}" for c in judged)
        )
    if touched:
        output += (
            "\n\nProtected files may not be modified or deleted (creating new files is fine). "
            "Restore them to the base commit's content:\n\n"
            + "\n\n".join(_diff(ctx, item, how) for item, how in touched)
        )
    return StageResult(
        stage="write-scope",
        passed=False,
        detail=problems[0],
        output=output,
        findings=findings,
        evidence=evidence,
    )
