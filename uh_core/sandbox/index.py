"""The sandbox index, read and changed only under an exclusive lock across processes.

``locked_index`` holds ``flock`` on ``index.yaml.lock`` for the whole read-modify-write,
so two runs starting at once both land in the index (the TypeScript uh leaves this
unlocked). The file itself is always replaced whole.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from uh_core.compat.readers import load_sandbox_index
from uh_core.errors import SandboxError
from uh_core.fileio import write_yaml
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxIndex


def _lock_path(layout: Layout) -> Path:
    return layout.sandboxes_dir / "index.yaml.lock"


def read_index(layout: Layout) -> SandboxIndex:
    path = layout.sandbox_index
    if not path.exists():
        return SandboxIndex()
    return load_sandbox_index(path, layout.rel(path))


@contextmanager
def locked_index(layout: Layout) -> Iterator[SandboxIndex]:
    """Yield the index under an exclusive lock; it is written back when the block ends."""
    try:
        layout.sandboxes_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(_lock_path(layout), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise SandboxError(
            f"cannot lock the sandbox index in {layout.rel(layout.sandboxes_dir)}: {exc.strerror}",
            fix="make .harness/sandboxes/ a writable directory",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        index = read_index(layout)
        yield index
        write_yaml(layout.sandbox_index, index.model_dump(mode="json", exclude_none=True))
    finally:
        os.close(fd)
