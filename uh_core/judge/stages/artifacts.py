"""``artifacts``: the files a mission declares (``expected_outputs.files``,
``expected_artifacts[].path``) should be among what the diff touched. One that was not is a
``declared_artifact_untouched`` warning — or a failure with ``--strict-artifacts``: a mission
that promised a file and delivered none of it deserves a second look.

Only entries that name a file are checked: globs, directories and empty entries are not.
"""

from __future__ import annotations

from uh_core.judge.context import GateContext
from uh_core.models.ledger import StageResult
from uh_core.models.verification import Finding

CODE = "declared_artifact_untouched"
_GLOB_CHARS = frozenset("*?[{")


def named_files(ctx: GateContext) -> list[str]:
    files: list[str] = []
    for entry in ctx.mission.expected_files():
        path = entry.strip()
        while path.startswith("./"):
            path = path[2:]
        if not path or path.endswith("/") or _GLOB_CHARS & set(path):
            continue
        if (ctx.worktree / path).is_dir():
            continue
        if path not in files:
            files.append(path)
    return files


def check(ctx: GateContext) -> StageResult:
    declared = named_files(ctx)
    touched = set(ctx.touched)
    untouched = [path for path in declared if path not in touched]
    strict = ctx.settings.strict_artifacts
    findings = [
        Finding(
            severity="error" if strict else "warning",
            code=CODE,
            message=f"{path} is declared as an expected output but the change does not touch it",
        )
        for path in untouched
    ]
    evidence = {"declared": declared, "untouched": untouched, "strict": strict}
    if not declared:
        detail = "no declared file to check"
    elif not untouched:
        detail = f"all {len(declared)} declared file(s) touched"
    else:
        detail = f"{CODE}: {', '.join(untouched)}"
        if not strict:
            detail += " (warning)"
    return StageResult(
        stage="artifacts",
        passed=not (strict and untouched),
        detail=detail,
        output="\n".join(f.message for f in findings),
        findings=findings,
        evidence=evidence,
    )
