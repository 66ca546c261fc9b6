"""The quick tier is what measurement says: every test ``tests/slow.txt`` lists at
``SLOW_S`` or more is collected and carries the ``slow`` marker (tests/tiers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import COLLECTED
from tests.tiers import SLOW_FILE, SLOW_S, read_slow


def test_the_measured_list_reads_and_is_sorted_slowest_first() -> None:
    measured = read_slow()
    assert measured, f"{SLOW_FILE} lists no test: run python3 tests/measure_slow.py"
    seconds = [m.seconds for m in measured]
    assert seconds == sorted(seconds, reverse=True)
    assert min(seconds) >= SLOW_S
    assert len({m.nodeid for m in measured}) == len(measured)


def test_every_measured_slow_test_exists_and_is_marked() -> None:
    collected = COLLECTED  # before -m deselected anything (the root conftest)
    collected_files = {nodeid.split("::", 1)[0] for nodeid in collected}
    missing, unmarked = [], []
    for measured in read_slow():
        path = measured.nodeid.split("::", 1)[0]
        if not Path(path).is_file():
            missing.append(measured.nodeid)
        elif path in collected_files:  # a session of a few files checks those files
            if measured.nodeid not in collected:
                missing.append(measured.nodeid)
            elif not collected[measured.nodeid]:
                unmarked.append(measured.nodeid)
    assert not missing, f"listed in {SLOW_FILE.name} but not a test (measure again): {missing}"
    assert not unmarked, f"measured slow but not marked: {unmarked}"


def test_a_malformed_line_names_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "slow.txt"
    bad.write_text("# head\n1.5 tests/x.py::test_a\nslow tests/y.py::test_b\n")
    with pytest.raises(ValueError, match=r"slow.txt:3: not 'SECONDS tests/…::test'"):
        read_slow(bad)
