"""The descriptor check the leak tests share (tests/fds.py) finds a real leak and names it,
and is not fooled by another thread's descriptor that closes a moment later."""

from __future__ import annotations

import os
import socket
import threading
import time

from tests import fds


def test_a_pipe_left_open_is_named() -> None:
    before = fds.snapshot()
    read_end, write_end = os.pipe()
    try:
        left = fds.left_open(before, settle_s=0.1)
        assert set(left) == {read_end, write_end}
        assert all(target.startswith("pipe:") for target in left.values())
    finally:
        os.close(read_end)
        os.close(write_end)
    assert fds.left_open(before, settle_s=0) == {}


def test_another_threads_brief_descriptor_and_other_kinds_are_not_leaks() -> None:
    before = fds.snapshot()
    other = socket.socket()  # not a kind the process helper makes
    closed = threading.Event()

    def brief() -> None:
        read_end, write_end = os.pipe()
        time.sleep(0.2)
        os.close(read_end)
        os.close(write_end)
        closed.set()

    thread = threading.Thread(target=brief)
    thread.start()
    try:
        time.sleep(0.05)
        assert fds.left_open(before) == {}
        assert closed.is_set()
    finally:
        thread.join()
        other.close()
