"""Bounded reading: an alias bomb, deep nesting and a huge file are refused with one line
naming the cap and how to raise it — before any data is built, fast and in little memory —
by the one loader every reader uses (validate, list, status, the dashboard)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo
from uh_core.yamldoc import parse_yaml
from uh_core.yamllimits import YamlLimitError, check_graph


def bomb(levels: int = 10) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "id: bomb\ntitle: t\nextra:\n" + "\n".join(f"  {line}" for line in lines) + "\n"


DEEP = "id: deep\nextra: " + "[" * 1000 + "]" * 1000 + "\n"


def test_a_ten_level_alias_bomb_is_refused_in_a_child_under_a_second_and_100_mb() -> None:
    code = textwrap.dedent(
        f"""
        import json, sys, time
        from uh_core.yamldoc import parse_yaml
        from uh_core.yamllimits import YamlLimitError
        text = {bomb()!r}
        started = time.monotonic()
        try:
            parse_yaml(text)
            outcome = "parsed"
        except YamlLimitError as exc:
            outcome = str(exc)
        took = time.monotonic() - started
        # the peak of this process image (ru_maxrss would carry the parent's over exec)
        with open("/proc/self/status") as status:
            rss = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmHWM:"))
        print(json.dumps({{"outcome": outcome, "seconds": took, "rss": rss}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    result = json.loads(done.stdout)
    assert "expands to more than 200,000 nodes" in result["outcome"]
    assert "UH_YAML_MAX_NODES" in result["outcome"]
    assert result["seconds"] < 1.0 and result["rss"] < 100 * 1024 * 1024


def test_depth_1000_is_an_error_not_a_recursion_error() -> None:
    # libyaml's composer reaches the depth cap; the pure-Python one, where PyYAML has no
    # libyaml, may hit Python's recursion limit first: both are the same one error line
    with pytest.raises(YamlLimitError, match=r"nests (deeper than 64 levels|too deeply)"):
        parse_yaml(DEEP)


def test_the_caps_are_raised_by_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UH_YAML_MAX_NODES", "2000000")
    assert len(parse_yaml(bomb(4)).data["extra"]["a4"]) == 10  # 10^5 leaves: fine now
    monkeypatch.setenv("UH_YAML_MAX_BYTES", "100")
    with pytest.raises(YamlLimitError, match="UH_YAML_MAX_BYTES"):
        parse_yaml("id: x\n" + "# pad\n" * 50)


def _graph_refusal(text: str) -> str | None:
    """What ``check_graph`` says of a document's composed graph (the oracle)."""

    try:
        check_graph(yaml.compose(text, Loader=yaml.SafeLoader))
    except YamlLimitError as exc:
        return str(exc)
    return None


_LIST = "a: [" + ", ".join(["x"] * 97) + "]\n"  # the root, its key, the list, 97 items


@pytest.mark.parametrize(
    ("text", "nodes", "depth", "refused"),
    [
        (_LIST.replace("[", "[x, "), "100", "64", True),  # 101 nodes
        (_LIST, "100", "64", False),  # 100
        ("a: " + "[" * 10 + "]" * 10 + "\n", "1000", "10", True),  # 11 levels
        ("a: " + "[" * 9 + "]" * 9 + "\n", "1000", "10", False),  # 10
        ("a: " + "{k: " * 9 + "x" + "}" * 9 + "\n", "1000", "10", True),  # a scalar's level
        ("a: " + "{k: " * 8 + "x" + "}" * 8 + "\n", "1000", "10", False),
        ("".join(f"k{i}: v\n" for i in range(21)), "42", "64", True),  # keys count: 43
        ("".join(f"k{i}: v\n" for i in range(20)), "42", "64", False),  # 41
    ],
)
def test_a_tree_is_bounded_as_it_is_built_with_check_graphs_own_figures(
    text: str, nodes: str, depth: str, refused: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no alias: the caps are counted while the data is built (check_graph is not run), and
    # refuse exactly what check_graph would, with its line
    monkeypatch.setenv("UH_YAML_MAX_NODES", nodes)
    monkeypatch.setenv("UH_YAML_MAX_DEPTH", depth)
    expected = _graph_refusal(text)
    assert (expected is not None) == refused
    if expected is None:
        assert parse_yaml(text).data == yaml.safe_load(text)
    else:
        with pytest.raises(YamlLimitError) as raised:
            parse_yaml(text)
        assert str(raised.value) == expected


def test_an_alias_met_after_a_large_tree_is_still_bounded_before_it_expands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the bomb sits after ordinary keys: the builder meets its second alias, stops, and the
    # whole graph is bounded before anything more is built
    monkeypatch.setenv("UH_YAML_MAX_NODES", "5000")
    text = "".join(f"k{i}: v\n" for i in range(100)) + bomb(6).split("\n", 2)[2]
    with pytest.raises(YamlLimitError, match="expands to more than 5,000 nodes"):
        parse_yaml(text)
    assert _graph_refusal(text) is not None


def test_shared_aliases_within_the_caps_still_load() -> None:
    doc = parse_yaml("base: &b {a: 1}\none: *b\ntwo: *b\n")
    assert doc.data == {"base": {"a": 1}, "one": {"a": 1}, "two": {"a": 1}}


def test_every_reader_answers_with_one_bounded_line(repo: Repo) -> None:
    repo.mission("bomb", bomb())
    repo.mission("deep", DEEP)
    validated = repo.uh("mission", "validate", timeout=30)
    assert validated.code == 2 and "Traceback" not in validated.stderr
    assert all(len(line) < 400 for line in validated.stderr.splitlines())
    listed = repo.uh("mission", "list", "--json", timeout=30)
    assert listed.code == 0 and "Traceback" not in listed.stderr
    status = repo.uh("status", "--json", timeout=30)
    data = json.loads(status.stdout)
    assert {m["mission_id"]: m["status"] for m in data["missions"]} == {
        "bomb": "invalid",
        "deep": "invalid",
    }
    frame = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(repo.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert frame.returncode == 0 and "Traceback" not in frame.stderr
    assert "bomb" in frame.stdout and "deep" in frame.stdout


def test_a_json_ledger_nested_too_deep_or_too_big_is_an_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.errors import ValidationError
    from uh_core.harness.ledger import read_ledger

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValidationError, match="nests too deeply"):
        read_ledger(deep)
    monkeypatch.setenv("UH_YAML_MAX_BYTES", "10")
    big = tmp_path / "big.json"
    big.write_text('{"run_id": "harness-x"}')
    with pytest.raises(ValidationError, match="UH_YAML_MAX_BYTES"):
        read_ledger(big)
