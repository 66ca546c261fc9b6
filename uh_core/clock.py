"""Timestamps (RFC 3339 UTC, milliseconds, ``Z``) and run ids. One place to freeze in tests."""

from __future__ import annotations

import os
import secrets
import time
from datetime import UTC, datetime


def now() -> datetime:
    frozen = os.environ.get("UH_FROZEN_TIME")
    if frozen:
        return parse_timestamp(frozen)
    return datetime.now(UTC)


def timestamp(moment: datetime | None = None) -> str:
    if moment is None and not os.environ.get("UH_FROZEN_TIME"):
        # The common case, on every event: a third of the datetime path's cost.
        whole, nanos = divmod(time.time_ns(), 1_000_000_000)
        millis = nanos // 1_000_000
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"
    moment = (moment or now()).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_timestamp(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def new_run_id(prefix: str) -> str:
    """``<prefix>-YYYYMMDDTHHMMSSZ-<6 hex>``: sortable by time, unique across processes."""
    return f"{prefix}-{now().strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"
