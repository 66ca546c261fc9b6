"""``agent``: the agent's own exit. A crash or a reported error is red before anything else
is judged: work from an agent that failed is not a candidate. An agent stopped at its
deadline (``--timeout``) with changes in the tree passes this stage: the tree as it stood is
judged by every other stage, and a green counts (recorded ``timed_out``); one that changed
nothing is red. An agent that ended well but changed nothing is ``no_change``: red too."""

from __future__ import annotations

from dataclasses import dataclass

from uh_core.harness.agent import AgentOutcome
from uh_core.judge.context import GateContext
from uh_core.models.ledger import StageResult
from uh_core.runtime.run import NO_CHANGE


@dataclass
class HarnessGateContext(GateContext):
    """The judge's context plus the agent's exit, which only this stage reads (the judge
    judges a tree, whoever made it)."""

    agent: AgentOutcome


def check(ctx: HarnessGateContext) -> StageResult:
    outcome = ctx.agent
    record = outcome.record
    evidence = {
        "command": record.command,
        "exit_code": record.exit_code,
        "timed_out": record.timed_out,
        "cancelled": record.cancelled,
        "stdout_log": record.stdout_log,
        "stderr_log": record.stderr_log,
    }
    if outcome.completed and not ctx.touched:
        # exit 0 with an empty diff: ``no_change``, whatever the final message claims
        detail = f"no_change: {NO_CHANGE}"
        return StageResult(
            stage="agent",
            passed=False,
            detail=detail,
            output=f"{detail}\n\nits final message:\n{outcome.final_message.strip() or '(none)'}",
            evidence=evidence,
        )
    if (record.timed_out or record.rate_limited) and ctx.touched and not record.cancelled:
        # stopped at its deadline or by its provider's limit with work in the tree: that work
        # is judged, as any round's
        seconds = record.duration_ms / 1000
        why = "timed_out" if record.timed_out else "rate_limited"
        return StageResult(
            stage="agent",
            passed=True,
            detail=f"{why} after {seconds:.1f} s: the tree as it stood is judged",
            output=outcome.final_message,
            evidence=evidence,
        )
    if outcome.completed:
        seconds = record.duration_ms / 1000
        return StageResult(
            stage="agent",
            passed=True,
            detail=f"exit 0 after {seconds:.1f} s",
            output=outcome.final_message,
            evidence=evidence,
        )
    detail = "; ".join(outcome.problems) or "the agent did not complete"
    parts = [detail]
    if outcome.stderr_tail.strip():
        parts.append(f"stderr:\n{outcome.stderr_tail.strip()}")
    if outcome.stdout_tail.strip():
        parts.append(f"stdout:\n{outcome.stdout_tail.strip()}")
    return StageResult(
        stage="agent", passed=False, detail=detail, output="\n\n".join(parts), evidence=evidence
    )
