"""One error base with a subclass per area.

The CLI turns every ``UhError`` into one clear line on stderr and its ``exit_code``;
anything else escaping a command is a bug and is reported as such.
"""

from __future__ import annotations


class UhError(Exception):
    """Base of every error the engine reports to a user. Exit code 2 = bad usage or input."""

    exit_code = 2

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def one_line(self) -> str:
        text = self.message if not self.fix else f"{self.message} (fix: {self.fix})"
        text = " ".join(text.split())
        return text if len(text) <= 4000 else f"{text[:4000]}…[{len(text):,} characters]"


class UsageError(UhError):
    """Conflicting or impossible flags and arguments."""


class InvalidIdError(UhError):
    """An id that is not a slug (path tricks, placeholders, empty)."""


class NotFoundError(UhError):
    """An unknown mission, adapter, sandbox or file."""


class ValidationError(UhError):
    """A file that does not parse or does not match its schema.

    ``problems`` holds every problem found, each already formatted as one line
    (``file:line:col: field: what is wrong (fix: ...)``); ``message`` is the first.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0] if problems else "invalid file")
        self.problems = problems

    def one_line(self) -> str:
        extra = len(self.problems) - 1
        first = " ".join(self.problems[0].split()) if self.problems else self.message
        return first if extra <= 0 else f"{first} (and {extra} more problem(s))"


class EventLogError(UhError):
    """The event log cannot be written or read."""


class ProcError(UhError):
    """A command the engine runs could not be started."""


class GitError(UhError):
    """A git operation failed or the root is not a repository."""


class DiffError(UhError):
    """Input that is not a diff, or a diff that cannot be captured."""


class VerifyError(UhError):
    """Verification could not run at all (as opposed to a check failing)."""


class SandboxError(UhError):
    """A sandbox or its index could not be created, read or changed."""


class AdapterError(UhError):
    """An adapter manifest or runtime that cannot be used."""


class HarnessError(UhError):
    """The delivery loop refused to start or could not continue."""


class ExecutorError(UhError):
    """Where jobs run: a cluster that cannot be reached, a job that cannot be shipped or
    landed (``--executor ray``, ``uh_core.jobs``)."""


class IsolationError(UhError):
    """OS isolation that was asked for and cannot be given (bubblewrap missing or refused)."""


class PromotionError(UhError):
    """A promotion refused for the state of things (dirty tree, conflict, unverified work);
    nothing was changed. Exit 1: the thing checked did not allow it."""

    exit_code = 1


class Interrupted(UhError):
    """The user interrupted a run (Ctrl-C); exit 130 after writing what is known."""

    exit_code = 130


class NotRunningError(UhError):
    """A cancel found nothing running to stop. Exit 1: the thing checked is not there."""

    exit_code = 1
