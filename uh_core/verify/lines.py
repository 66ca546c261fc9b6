"""verify's per-step event lines, encoded without building a model.

``acceptance.started``, ``acceptance.checked`` and ``check.checked`` are written for every
criterion and check, between one command's end and the next one's start; building and
serialising a pydantic model for each was a quarter of verify's own cost per criterion.
The lines here are byte for byte what ``encode_event`` makes of the same model (the tests
hold them equal): the fields in the models' order, compact JSON, the timestamp format of
``uh_core.clock``. A string is written as it is only when JSON would write it so (printable
ASCII without a quote or backslash: ids, statuses, most check names); any other value goes
through the model, so nothing is ever escaped here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from uh_core.clock import timestamp
from uh_core.events.writer import encode_event
from uh_core.models.events import AcceptanceChecked, AcceptanceStarted, CheckChecked


def plain(text: str) -> bool:
    """Does JSON write ``text`` as it is (no escape, ASCII)?"""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _json_int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def _json_bool(value: bool) -> str:
    return "true" if value else "false"


class Stamp:
    """``clock.timestamp()`` for events written many times a second: the date and time of
    the current second are formatted once (``UH_FROZEN_TIME``, as set when the stamp is
    made, still wins)."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""
        # Read once: os.environ.get was half of this call's cost.
        self._frozen = bool(os.environ.get("UH_FROZEN_TIME"))

    def __call__(self) -> str:
        if self._frozen:
            return timestamp()
        whole, nanos = divmod(time.time_ns(), 1_000_000_000)
        if whole != self._second:
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
            self._second = whole
        return f"{self._prefix}.{nanos // 1_000_000:03d}Z"


class Lines:
    """The lines of one run (mission and run ids fixed)."""

    def __init__(
        self, mission_id: str, run_id: str, stamp: Callable[[], str] | None = None
    ) -> None:
        self.mission_id = mission_id
        self.run_id = run_id
        self.stamp: Callable[[], str] = stamp or Stamp()
        self._fast = plain(mission_id) and plain(run_id)
        self._ids = f'"mission_id":"{mission_id}","run_id":"{run_id}"'

    def _model(self, event: AcceptanceStarted | AcceptanceChecked | CheckChecked) -> bytes:
        event.mission_id = self.mission_id
        event.run_id = self.run_id
        return encode_event(event)

    def acceptance_started(self, ac_id: str, index: int, total: int) -> bytes:
        stamp = self.stamp()
        if not (self._fast and plain(ac_id)):
            return self._model(
                AcceptanceStarted(timestamp=stamp, ac_id=ac_id, index=index, total=total)
            )
        return (
            f'{{"event":"acceptance.started","timestamp":"{stamp}",{self._ids},'
            f'"ac_id":"{ac_id}","index":{int(index)},"total":{int(total)}}}\n'
        ).encode()

    def acceptance_checked(
        self,
        ac_id: str,
        status: str,
        severity: str,
        exit_code: int | None,
        duration_ms: int,
        timed_out: bool,
        synthetic: bool,
        flaky: bool,
    ) -> bytes:
        stamp = self.stamp()
        if not (self._fast and plain(ac_id) and plain(status) and plain(severity)):
            return self._model(
                AcceptanceChecked(
                    timestamp=stamp,
                    ac_id=ac_id,
                    status=status,
                    severity=severity,
                    exit_code=exit_code,
                    duration_ms=duration_ms,
                    timed_out=timed_out,
                    synthetic=synthetic,
                    flaky=flaky,
                )
            )
        return (
            f'{{"event":"acceptance.checked","timestamp":"{stamp}",{self._ids},'
            f'"ac_id":"{ac_id}","status":"{status}","severity":"{severity}",'
            f'"exit_code":{_json_int(exit_code)},"duration_ms":{int(duration_ms)},'
            f'"timed_out":{_json_bool(timed_out)},"synthetic":{_json_bool(synthetic)},'
            f'"flaky":{_json_bool(flaky)}}}\n'
        ).encode()

    def check_checked(
        self, name: str, status: str, exit_code: int | None, duration_ms: int, timed_out: bool
    ) -> bytes:
        stamp = self.stamp()
        if not (self._fast and plain(name) and plain(status)):
            return self._model(
                CheckChecked(
                    timestamp=stamp,
                    name=name,
                    status=status,
                    exit_code=exit_code,
                    duration_ms=duration_ms,
                    timed_out=timed_out,
                )
            )
        return (
            f'{{"event":"check.checked","timestamp":"{stamp}",{self._ids},'
            f'"name":"{name}","status":"{status}","exit_code":{_json_int(exit_code)},'
            f'"duration_ms":{int(duration_ms)},"timed_out":{_json_bool(timed_out)}}}\n'
        ).encode()
