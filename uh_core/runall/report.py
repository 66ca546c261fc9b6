"""runtime-comparison.md and the console lines of ``mission run-all`` (contract §6)."""

from __future__ import annotations

from uh_core.models.comparison import Comparison

_BADGE = {"agreement": "AGREEMENT", "divergent": "DIVERGENT", "failed": "FAILED"}


def _cell(text: str | None) -> str:
    return (text or "-").replace("|", "\\|").replace("\n", " ")


def render_markdown(comparison: Comparison) -> str:
    c = comparison
    lines = [
        f"# Runtime comparison: {c.mission_id}",
        "",
        f"**Status: {_BADGE[c.status]}**"
        + (" (interrupted: partial results)" if c.interrupted else ""),
        "",
        f"- base commit: `{c.base_commit or '-'}`",
        f"- agreeing: {', '.join(c.agreement_runtimes) or 'none'}",
        f"- divergent: {', '.join(c.divergent_runtimes) or 'none'}",
        f"- failed: {', '.join(c.failed_runtimes) or 'none'}",
        *(
            [f"- rate limited (the provider refused; run again later): {', '.join(limited)}"]
            if (limited := c.rate_limited_runtimes)
            else []
        ),
    ]
    lines += [f"- finding: {text}" for text in c.findings]
    lines += [
        "",
        "## Runtimes",
        "",
        "| runtime | status | exit | duration | tokens in / out | diff hash | sandbox |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in c.runtimes:
        tokens = f"{row.input_tokens} / {row.output_tokens}" if row.usage else "-"
        lines.append(
            f"| {row.runtime} | {row.status} | {_cell(str(row.exit_code))} | "
            f"{row.duration_ms / 1000:.1f} s | {tokens} | `{_cell(row.diff_hash)}` | "
            f"{_cell(row.sandbox)} |"
        )
    lines += ["", "## Diff groups", ""]
    if not c.groups:
        lines.append("No runtime succeeded: nothing to group.")
    for group in c.groups:
        tag = " (agreeing)" if group.runtimes == c.agreement_runtimes else ""
        lines.append(f"- `{group.diff_hash}`{tag}: {', '.join(group.runtimes)}")
    lines += _consensus_section(c)
    lines += ["", "## Touched paths", ""]
    for row in c.runtimes:
        paths = ", ".join(f"`{p}`" for p in row.touched_paths) or "none"
        lines.append(f"- **{row.runtime}**: {paths}")
    lines += ["", "## Final messages", ""]
    for row in c.runtimes:
        lines += [f"### {row.runtime}", ""]
        if row.error:
            lines += [f"Error: {row.error}", ""]
        body = row.final_message.strip() or "(no final message)"
        lines += ["```text", body.replace("```", "``\u200b`"), "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def _consensus_section(c: Comparison) -> list[str]:
    found = c.consensus
    if found is None:
        return []
    lines = ["", "## Consensus", "", found.line()]
    if found.patch:
        lines.append(f"- patch: `{found.patch}` (built in {found.duration_ms} ms)")
    if found.sandbox:
        lines.append(f"- sandbox: {found.sandbox}, verification {found.verification or '-'}")
    for title, hunks in (("Agreed", found.hunks), ("Disputed", found.disputed)):
        if not hunks:
            continue
        lines += ["", f"{title}:", ""]
        lines += [
            f"- `{h.file}` at line {h.at}, {h.changed} line(s): {', '.join(h.runtimes)}"
            for h in hunks[:200]
        ]
        if len(hunks) > 200:
            lines.append(f"- … {len(hunks) - 200} more (runtime-comparison.json)")
    return lines


def console_lines(comparison: Comparison, report_path: str) -> list[str]:
    c = comparison
    succeeded = sum(row.status == "succeeded" for row in c.runtimes)
    lines = [
        f"[{_BADGE[c.status]}] {c.mission_id}",
        f"runtimes: {succeeded} succeeded, {len(c.runtimes) - succeeded} not",
        f"report: {report_path}",
    ]
    if c.divergent_runtimes:
        lines.append(f"divergent: {', '.join(c.divergent_runtimes)}")
    unconfined = sorted({row.isolation_note or "" for row in c.runtimes if row.isolation == "none"})
    lines += [f"UNCONFINED: {note or 'agents ran without isolation'}" for note in unconfined]
    for row in c.runtimes:
        if row.tampered:
            lines.append(f"TAMPERED by {row.runtime}: the operator's repository changed:")
            lines += [f"    {change}" for change in row.tampered[:50]]
    for row in c.runtimes:
        if row.status != "succeeded":
            lines.append(f"  {row.status:<9} {row.runtime}: {row.error or '-'}")
    lines += [f"  {text}" for text in c.findings]
    if c.consensus is not None and c.consensus.status != "not_built":
        lines.append(c.consensus.line())
    return lines
