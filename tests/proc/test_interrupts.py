"""``held``: an interrupt waits for the end of the stretch, and is never lost."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from uh_core.proc import interrupts
from uh_core.proc.interrupts import held, raise_interrupt


@pytest.fixture(autouse=True)
def sigusr1_interrupts():  # type: ignore[no-untyped-def]
    previous = signal.signal(signal.SIGUSR1, raise_interrupt)
    yield
    signal.signal(signal.SIGUSR1, previous)
    interrupts._pending = None


def test_outside_a_held_stretch_the_interrupt_is_raised_at_once() -> None:
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGUSR1)


def test_inside_it_waits_for_the_end_of_the_outermost_stretch() -> None:
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt), held():
        with held():
            os.kill(os.getpid(), signal.SIGUSR1)
            reached.append("inner")
        reached.append("outer")  # the inner end does not raise: the outer still holds
    assert reached == ["inner", "outer"]
    assert interrupts._depth == 0 and interrupts._pending is None


def test_it_replaces_an_error_of_the_stretch_and_is_not_raised_twice() -> None:
    with pytest.raises(KeyboardInterrupt) as caught, held():
        os.kill(os.getpid(), signal.SIGUSR1)
        raise ValueError("the spawn failed")
    assert isinstance(caught.value.__context__, ValueError)
    with held():
        pass  # nothing pending any more


def test_a_second_interrupt_while_held_is_raised_at_once() -> None:
    """The stretch may block (a judge session's starter that stopped answering): the
    operator's second Ctrl-C is never held."""
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt), held():
        os.kill(os.getpid(), signal.SIGUSR1)
        reached.append("held")
        os.kill(os.getpid(), signal.SIGUSR1)
        reached.append("never")
    assert reached == ["held"]
    assert interrupts._depth == 0 and interrupts._pending is None


def test_a_held_stretch_in_another_thread_holds_nothing() -> None:
    """Handlers run in the main thread only: another thread's stretch must not delay them."""
    inside, release = threading.Event(), threading.Event()

    def worker() -> None:
        with held():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    inside.wait(5)
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGUSR1)
    finally:
        release.set()
        thread.join()
