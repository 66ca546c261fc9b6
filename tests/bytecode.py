"""The suite's bytecode, written once per session by the controller (docs/testing.md).

CI machines set ``PYTHONDONTWRITEBYTECODE``, so nothing caches bytecode on its own: every
``uh-core`` a test starts compiled some 200 modules again, and every xdist worker parsed,
rewrote (pytest's assertion rewriting) and compiled every test module again while it
collected — 9.6 s of a worker's 10 s collection against 5.0 s from cached bytecode, four
workers on two cores. ``compile_suite`` writes all of it once, before any worker starts:

- ``uh_core`` and ``uh_tui``, and the suite's helper modules, as checked-hash ``.pyc`` files
  (a source edited since is seen at once: its hash differs);
- each test module and conftest as pytest itself caches a rewritten one (its own ``.pyc``
  name and checks: source size and mtime), through pytest's rewriting functions. Those are
  pytest's internals: if they are not there, or anything fails, the workers rewrite the
  modules themselves as before — slower, never different.

The workers only read these files (``sys.dont_write_bytecode`` stays as the machine set it).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_REWRITTEN = re.compile(r"(?:^|/)(?:test_[^/]*|conftest)\.py\Z")  # what pytest rewrites here
_FIXTURES = "/tests/fixtures/"  # projects the tests copy and run: never compiled here
# not compiled as helpers: pytest's own (above), and the fixture projects
_NOT_HELPERS = re.compile(rf"{_FIXTURES}|{_REWRITTEN.pattern}")


def compile_suite(config: pytest.Config) -> None:
    import compileall
    import py_compile

    for package in ("uh_core", "uh_tui", "tests"):
        compileall.compile_dir(
            ROOT / package,
            quiet=2,
            rx=_NOT_HELPERS if package == "tests" else None,  # pytest's own, below
            invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
        )
    with contextlib.suppress(Exception):  # pytest's internals moved: the workers do it
        _rewrite_tests(config)


def _rewrite_tests(config: pytest.Config) -> None:
    """Each test module and conftest whose rewritten ``.pyc`` is missing or stale, written;
    on a fresh clone (all of them) the work is shared by two forked processes."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from _pytest.assertion import rewrite

    stale = []
    for source in (ROOT / "tests").rglob("*.py"):
        name = source.as_posix()
        if not _REWRITTEN.search(name) or _FIXTURES in name:
            continue
        if rewrite._read_pyc(source, _pyc(source)) is None:
            stale.append(source)  # not written by an earlier session, or not for this source
    if not stale:
        return
    _CONFIG[:] = [config]
    halves = [stale[0::2], stale[1::2]]
    if len(stale) < 8:
        _rewrite(halves[0] + halves[1])
        return
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        list(pool.map(_rewrite, halves))


_CONFIG: list[pytest.Config] = []  # the session's, for the forked processes


def _pyc(source: Path) -> Path:
    from _pytest.assertion import rewrite

    return rewrite.get_cache_dir(source) / (source.name[:-3] + rewrite.PYC_TAIL)


def _rewrite(sources: list[Path]) -> None:
    from _pytest.assertion import rewrite

    config = _CONFIG[0]
    state = config.stash[rewrite.assertstate_key]
    for source in sources:  # as pytest's own import does it (AssertionRewritingHook)
        pyc = _pyc(source)
        if not rewrite.try_makedirs(pyc.parent):
            continue  # a read-only folder: its worker rewrites it
        stat, code = rewrite._rewrite_test(source, config)
        rewrite._write_pyc(state, code, stat, pyc)
