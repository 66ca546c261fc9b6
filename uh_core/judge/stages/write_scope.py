"""``write-scope``: the agent may not modify or delete a protected file that the base commit
tracks (the mission, the spec, the features, the harness settings — the judge itself).
Creating a new file is allowed — except test infrastructure, which is part of the judge
too: a ``conftest.py`` anywhere, ``pytest.ini``, ``tox.ini``, the test-runner sections of
``setup.cfg``/``pyproject.toml``, ``sitecustomize``/``usercustomize`` and ``*.pth`` files may
not be created, changed or deleted unless ``judge_allow:`` (the mission's, or
``harness.config.yaml``'s) permits the path (``judgefiles.py``).

Both are judged in the object store, on exactly the tree that would be committed
(``uh_core.judge.protected``, ``judgefiles``), so the re-judge (``uh_core.judge.rejudge``:
promote, the Ray head) runs this stage on a commit (``committed``); the gate's (``check``) also
looks at the sandbox's own ``.harness/``, which the judged tree leaves out.
"""

from __future__ import annotations

from functools import partial

from uh_core.git import git_run
from uh_core.judge.commandfiles import files_of, judge_commands, not_the_work
from uh_core.judge.context import GateContext
from uh_core.judge.judgefiles import JUDGE_FILE_CODE, JudgeChange, judge_changes
from uh_core.judge.objects import unsound
from uh_core.judge.protected import changes, diff_text
from uh_core.judge.runnerfiles import through
from uh_core.judge.shadowing import import_roots
from uh_core.models.ledger import StageResult
from uh_core.models.verification import Finding

CODE = "agent_touched_protected_path"
STORE_CODE = "object_store_corrupted"


def _at_base(ctx: GateContext, path: str) -> str | None:
    """A file's text as the base commit has it (None: absent, or not text)."""
    done = git_run(ctx.layout.root, "cat-file", "blob", f"{ctx.base_commit}:{path}", timeout=60)
    if done.returncode != 0 or done.timed_out:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def judge_files(ctx: GateContext) -> list[JudgeChange]:
    """Judge files (``judgefiles``) that differ between the base commit and the judged tree,
    from the object store alone (no work tree read): the re-judge runs this too."""
    commands = judge_commands(ctx.mission, ctx.settings.test_cmd)
    named = not_the_work(ctx.mission, through(files_of(commands), partial(_at_base, ctx)))
    allow = (*ctx.settings.judge_allow, *ctx.mission.judge_allow)
    roots = import_roots(commands)
    return judge_changes(ctx.layout.root, ctx.base_commit, ctx.tree, allow, named, roots)


def check(ctx: GateContext) -> StageResult:
    """The gate's stage, over a sandbox's judged tree (its ``.harness/`` looked at too)."""
    return _stage(ctx, sandbox=True)


def committed(ctx: GateContext) -> StageResult:
    """The re-judge's stage, over a commit alone."""
    return _stage(ctx, sandbox=False)


def _stage(ctx: GateContext, sandbox: bool) -> StageResult:
    # an agent under bubblewrap cannot write the store; one unconfined could have, in this
    # run or an earlier one, so a re-judge (before anything lands) always reads it back
    unconfined = ctx.isolation.mode != "bwrap"
    bad = unsound(ctx.layout.root, [ctx.base_commit, ctx.tree]) if unconfined or not sandbox else []
    if bad:  # nothing read from this store can be trusted: no comparison is made
        named = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        return StageResult(
            stage="write-scope",
            passed=False,
            detail=f"{STORE_CODE}: {len(bad)} object(s) do not hash to their names: {named}",
            output="The repository's object store holds objects whose content is not what "
            "their names say (rewritten in place). Run `git fsck` in the operator's checkout "
            "and restore them from a clean clone before trusting any run.",
            findings=[
                Finding(severity="error", code=STORE_CODE, message=f"object {o}") for o in bad[:20]
            ],
        )
    problems: list[str] = []
    touched = changes(ctx, sandbox)
    findings = [
        Finding(severity="error", code=CODE, message=f"{how}: {item.path}")
        for item, how, _ in touched
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
        "touched": [{"path": item.path, "change": how} for item, how, _ in touched],
    }
    if not touched and not problems:
        return StageResult(
            stage="write-scope",
            passed=True,
            detail="no protected file modified or deleted",
            evidence=evidence,
        )
    if touched:
        names = ", ".join(item.path for item, _, _ in touched[:5])
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
            + "\n\n".join(diff_text(ctx, item, how, blob) for item, how, blob in touched)
        )
    return StageResult(
        stage="write-scope",
        passed=False,
        detail=problems[0],
        output=output,
        findings=findings,
        evidence=evidence,
    )
