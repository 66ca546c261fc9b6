"""The agreement rules of contract §6 as pure functions."""

from __future__ import annotations

from uh_core.models.comparison import RuntimeRow
from uh_core.runall.compare import EMPTY_DIFF_HASH, compare


def row(runtime: str, diff: str | None = "h1", status: str = "succeeded") -> RuntimeRow:
    return RuntimeRow(runtime=runtime, status=status, diff_hash=diff)


def test_agreement_of_two() -> None:
    c = compare("m", [row("a"), row("b")])
    assert c.status == "agreement"
    assert c.agreement_runtimes == ["a", "b"] and c.divergent_runtimes == []
    assert [g.runtimes for g in c.groups] == [["a", "b"]]


def test_divergent_three_with_one_odd() -> None:
    c = compare("m", [row("a"), row("b"), row("c", "h2")])
    assert c.status == "divergent"
    assert c.agreement_runtimes == ["a", "b"] and c.divergent_runtimes == ["c"]
    assert [g.runtimes for g in c.groups] == [["a", "b"], ["c"]]


def test_single_success_has_no_agreeing_group() -> None:
    c = compare("m", [row("a")])
    assert c.status == "divergent" and c.divergent_runtimes == ["a"]


def test_one_failed_runtime_spoils_agreement() -> None:
    c = compare("m", [row("a"), row("b"), row("c", None, "failed")])
    assert c.status == "failed"
    assert c.agreement_runtimes == ["a", "b"] and c.failed_runtimes == ["c"]


def test_all_failed() -> None:
    c = compare("m", [row("a", None, "failed"), row("b", None, "error"), row("c", None, "blocked")])
    assert c.status == "failed" and c.groups == [] and c.failed_runtimes == ["a", "b", "c"]


def test_tied_largest_groups_do_not_agree() -> None:
    c = compare("m", [row("a"), row("b"), row("c", "h2"), row("d", "h2")])
    assert c.status == "divergent" and c.agreement_runtimes == []
    assert c.divergent_runtimes == ["a", "b", "c", "d"]
    assert any("equally large" in f for f in c.findings)


def test_agreement_on_an_empty_diff_gets_a_finding() -> None:
    c = compare("m", [row("a", EMPTY_DIFF_HASH), row("b", EMPTY_DIFF_HASH)])
    assert c.status == "agreement"
    assert any("no runtime changed anything" in f for f in c.findings)


def test_failed_runtime_with_a_diff_is_not_grouped() -> None:
    c = compare("m", [row("a"), row("b", "h1", "failed")])
    assert [g.runtimes for g in c.groups] == [["a"]]
    assert c.status == "divergent"
