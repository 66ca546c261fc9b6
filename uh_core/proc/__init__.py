"""The one subprocess helper: every command the engine runs goes through here.

Each command gets its own session (so its whole process group can be signalled), its
output goes straight to log files (memory stays flat whatever it prints; only bounded
head/tail snippets are read back), and a timeout signals the whole group with SIGTERM,
waits a grace period, then sends SIGKILL. When the command ends, anything it left
running in its group is stopped the same way: no orphan survives a run.

``run_logged(..., lazy_logs=True)`` (what verify uses) gives the command pipes instead of
files and moves what arrives into the log files, creating a file only when its stream
writes its first byte: most checks print nothing, and creating two empty files was the
largest cost of a short check after starting it. The data is spliced from pipe to file
(never held in memory), the snippets are read back from the file, and the pipes are
drained while a timeout's grace runs, so a command that prints as it dies is not blocked.
"""

from uh_core.proc.capture import run_capture
from uh_core.proc.group import DEFAULT_GRACE_S, stop_group
from uh_core.proc.logged import LoggedProcess
from uh_core.proc.result import SNIPPET_BYTES, Captured, ProcResult, snippet
from uh_core.proc.start import (
    Prepared,
    full_env,
    run_logged,
    run_prepared,
    start_logged,
)

__all__ = [
    "DEFAULT_GRACE_S",
    "SNIPPET_BYTES",
    "Captured",
    "LoggedProcess",
    "Prepared",
    "ProcResult",
    "full_env",
    "run_capture",
    "run_logged",
    "run_prepared",
    "snippet",
    "start_logged",
    "stop_group",
]
