"""Files a job carries back, bounded, and written on the head only where they belong.

A worker packs what its run wrote under its ``.harness/`` (the sandbox's records, the
prompts sent). Each file keeps its head and tail when the total would pass the limit
(logs; the middle is cut and the cut is said in the file), except the files a decision
reads (``WHOLE``), which travel whole or the job fails saying so. On the head every path
is checked before anything is written: relative, inside one of the allowed folders, no
``..``, no symlink on the way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from uh_core.errors import ExecutorError
from uh_core.fileio import write_bytes_atomic
from uh_core.jobs.model import EvidenceFile

EVIDENCE_LIMIT = 64 << 20  # per job, after cutting logs
FILE_KEEP = 1 << 20  # what a cut file keeps (half head, half tail)
WHOLE = (".patch", ".yaml", ".json", ".xml", ".md", ".txt")  # read by decisions: never cut


def _cut(data: bytes) -> tuple[bytes, int]:
    half = FILE_KEEP // 2
    cut = len(data) - 2 * half
    marker = f"\n… {cut} bytes cut by the worker (evidence limit) …\n".encode()
    return data[:half] + marker + data[-half:], cut


def pack(root: Path, names: Iterable[str]) -> list[EvidenceFile]:
    """``names`` (relative to ``root``), each read once; logs cut when the total is large."""
    files: list[EvidenceFile] = []
    total = 0
    for name in sorted(set(names)):
        path = root / name
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        cut = 0
        if len(data) > FILE_KEEP and not name.endswith(WHOLE):
            data, cut = _cut(data)
        total += len(data)
        if total > EVIDENCE_LIMIT:
            raise ExecutorError(
                f"the job's evidence passed {EVIDENCE_LIMIT >> 20} MiB at {name}",
                fix="look at the worker's files, or run this mission with --executor local",
            )
        files.append(EvidenceFile(path=name, data=data, cut=cut))
    return files


def written_since(root: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    """Files under ``root`` created or changed since ``before`` (``listing``)."""
    now = listing(root)
    return [name for name, stamp in now.items() if before.get(name) != stamp]


def listing(root: Path) -> dict[str, tuple[int, int]]:
    found: dict[str, tuple[int, int]] = {}
    if not root.is_dir():
        return found
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            found[os.path.relpath(path, root)] = (info.st_size, info.st_mtime_ns)
    return found


def _allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    parts = name.split("/")
    if name.startswith("/") or not name or any(p in ("", ".", "..") for p in parts):
        return False
    return any(name == p or name.startswith(p.rstrip("/") + "/") for p in prefixes)


def check(files: list[EvidenceFile], prefixes: tuple[str, ...]) -> None:
    """Every path relative and inside ``prefixes``, or the whole set is refused."""
    bad = [f.path for f in files if not _allowed(f.path, prefixes)]
    if bad:
        raise ExecutorError(
            f"a job's result names a file outside its folders: {bad[0]}",
            fix="the worker runs another uh version, or the result was tampered with",
        )


def unpack(root: Path, files: list[EvidenceFile], prefixes: tuple[str, ...]) -> list[str]:
    """Write ``files`` under ``root``; a path outside ``prefixes`` refuses the whole set
    before anything is written. The names written."""
    check(files, prefixes)
    for item in files:
        target = root / item.path
        for parent in [*reversed(target.relative_to(root).parents)][1:]:
            if (root / parent).is_symlink():
                raise ExecutorError(f"{root / parent} is a symlink: evidence not written")
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(target, item.data)
    return [f.path for f in files]
