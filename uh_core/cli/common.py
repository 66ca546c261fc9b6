"""What every command handler shares: the parsed root, output helpers, exit codes."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uh_core.errors import UsageError
from uh_core.layout import Layout, find_root
from uh_core.proc.interrupts import raise_interrupt

EXIT_OK = 0
EXIT_NOT_PASSED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Context:
    layout: Layout
    json: bool

    @property
    def root(self) -> Path:
        return self.layout.root


def context(args: argparse.Namespace) -> Context:
    root_arg = getattr(args, "root", None)
    if root_arg:
        root = Path(root_arg).expanduser()
        if not root.is_dir():
            raise UsageError(f"--root {root_arg}: no such directory")
        root = root.resolve()
    else:
        root = find_root()
    return Context(Layout(root), bool(getattr(args, "json", False)))


def require_harness(ctx: Context) -> None:
    """Refuse commands that read ``.harness/`` when the root has none."""
    from uh_core.errors import NotFoundError

    if not ctx.layout.harness.is_dir():
        raise NotFoundError(
            f"no .harness/ in {ctx.root}",
            fix="run `uh-core init` there, or pass --root PATH",
        )


def add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="PATH",
        default=argparse.SUPPRESS,  # the top-level --root stays in force unless given here
        help="project root (default: nearest ancestor with .harness/, else the git top level)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")


# What stops a command the way Ctrl-C does: a CI runner, ``timeout`` and systemd send SIGTERM,
# a closing terminal SIGHUP. ``mission cancel`` / ``harness cancel`` also send SIGTERM, with
# their reason left beside the run's registration: a SIGTERM without one is an interrupt.
INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def interrupt_reason(signum: int) -> str:
    """``interrupted``, naming the signal when it was not Ctrl-C."""
    if signum == signal.SIGINT:
        return "interrupted"
    return f"interrupted ({signal.Signals(signum).name})"


def is_interrupt(reason: str | None) -> bool:
    return reason is not None and reason.startswith("interrupted")


def interrupt_on_signals() -> None:
    """SIGTERM and SIGHUP raise ``KeyboardInterrupt`` as Ctrl-C does, so every command ends
    the way it ends on Ctrl-C: the running check's group stopped, the record written
    ``interrupted``, exit 130. Called once, first thing, by the entry point; a signal this
    process was started with ignored (``nohup``) stays ignored. All three go through
    ``raise_interrupt``, which holds the interrupt off while a command just started has no
    owner yet (``proc/interrupts.py``)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, raise_interrupt)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, raise_interrupt)


def catch_signals(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    """Install ``handler`` for Ctrl-C, SIGTERM and SIGHUP (not a SIGHUP ignored, as under
    ``nohup``); returns the previous handlers for ``restore_signals``."""
    return {
        sig: signal.signal(sig, handler)
        for sig in INTERRUPT_SIGNALS
        if sig != signal.SIGHUP or signal.getsignal(sig) != signal.SIG_IGN
    }


def restore_signals(previous: dict[int, Any]) -> None:
    for sig, old in previous.items():
        signal.signal(sig, old)


@contextmanager
def cancel_on_signals(
    token: Any, reason_for_term: Callable[[str], str] = lambda default: default
) -> Iterator[None]:
    """While the block runs, Ctrl-C, SIGTERM and SIGHUP cancel ``token`` as "interrupted"
    (naming the signal); a SIGTERM that ``mission cancel`` sent takes the reason it left,
    which ``reason_for_term(default)`` looks up. The previous handlers come back afterwards."""

    def handler(signum: int, _frame: object) -> None:
        default = interrupt_reason(signum)
        token.cancel(reason_for_term(default) if signum == signal.SIGTERM else default)

    previous = catch_signals(handler)
    try:
        yield
    finally:
        restore_signals(previous)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def warn(message: str) -> None:
    sys.stderr.write(f"uh-core: warning: {' '.join(message.split())}\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def add_isolation_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--isolation",
        choices=("auto", "bwrap", "none"),
        default=None,
        help="run agents under bubblewrap (bwrap), unconfined (none), or bwrap when it works "
        "here and otherwise unconfined, said in the result (auto, the default)",
    )


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default=None,
        help="where jobs run: this machine (local, the default) or a Ray cluster (ray: "
        "needs the ray extra and --ray-address or RAY_ADDRESS; docs/scale.md)",
    )
    parser.add_argument(
        "--ray-address",
        metavar="HOST:PORT",
        default=None,
        help="the Ray cluster's head (default: $RAY_ADDRESS)",
    )


def security_lines(isolation: str | None, note: str | None, tampered: list[str]) -> list[str]:
    """What a person must see first about a run: unconfined, and above all tampered."""
    lines = []
    if isolation == "none":
        lines.append(f"UNCONFINED: {note or 'the agent ran without isolation'}")
    if tampered:
        lines.append("TAMPERED: the agent changed the operator's repository (nothing repaired):")
        lines += [f"    {change}" for change in tampered[:50]]
    return lines


def read_text(text: str | None, file: str | None, example: str) -> str:
    """TEXT, or ``--file F`` (``-``: standard input): exactly one of them."""
    if (text is None) == (file is None):
        raise UsageError(
            "give the text as TEXT or with --file, not both" if text is not None
            else "no text given",
            fix=example,
        )  # fmt: skip
    if file is None:
        return str(text)
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--file {file}: {exc}", fix="name a readable UTF-8 file") from None


def add_message_args(parser: argparse.ArgumentParser, noun: str) -> None:
    """``ID [TEXT] [--file F] [--by NAME]``: a human's text for an agent (an answer, a
    steering message) about one mission, and who wrote it."""
    parser.add_argument("mission_id", metavar="ID")
    parser.add_argument("text", nargs="?", metavar="TEXT", help=f"the {noun} (or --file)")
    parser.add_argument("--file", metavar="F", help=f"read the {noun} from F (`-`: standard input)")
    parser.add_argument(
        "--by", metavar="NAME", help="who writes it (default: the repository's git user.name)"
    )
    add_json(parser)
    add_root(parser)


def message_of(args: argparse.Namespace, layout: Layout, example: str) -> tuple[str, str, str]:
    """``(mission id, text, author)`` from ``add_message_args``' arguments; ``example`` (with
    ``{id}``) is the fix a missing text is told."""
    from uh_core.git import identity_config
    from uh_core.ids import check_id

    mission_id = check_id(args.mission_id, "mission")
    text = read_text(args.text, args.file, example.format(id=mission_id))
    return mission_id, text, args.by or identity_config(layout.root)["user.name"]
