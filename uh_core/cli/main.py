"""Entry point of ``uh-core``. Imports stay lazy so ``--help`` and small commands start fast."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from uh_core import __version__
from uh_core.cli.common import interrupt_on_signals
from uh_core.proc.sigchld import reap_our_children

# Command groups, each a module in uh_core.cli with ``register(subparsers)``.
GROUPS = (
    "init",
    "mission",
    "verify",
    "diff",
    "adapter",
    "sandbox",
    "harness",
    "promote",
    "schema",
    "status",
    "tail",
    "demo",
    "mcp",
    "worker",
    "validate",
    "flaky",
)


class Parser(argparse.ArgumentParser):
    """``argparse`` with a suggestion for a mistyped choice (``uh-core verfy``: did you mean
    'verify'?), for every subcommand (``harness rnu``) and choice flag. Subparsers are made
    with their parent's class, so the whole tree has it."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and isinstance(value, str) and value not in choices:
            close = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
            if close:
                listed = ", ".join(repr(str(c)) for c in choices)
                raise argparse.ArgumentError(
                    action,
                    f"invalid choice: {value!r}; did you mean {close[0]!r}? (choose from {listed})",
                )
        super()._check_value(action, value)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="uh-core",
        description="Ultimate Harness engine: verify missions, gate diffs, run agents.",
    )
    parser.add_argument("--version", action="version", version=f"uh-core {__version__}")
    parser.add_argument(
        "--root",
        metavar="PATH",
        default=None,
        help="project root (default: nearest ancestor with .harness/, else the git top level)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in GROUPS:
        module = importlib.import_module(f"uh_core.cli.{name}_cmd")
        module.register(sub)
    _own_parser(parser)
    return parser


def _own_parser(parser: argparse.ArgumentParser) -> None:
    """Every (sub)command records its own parser, so an argument it does not know is
    reported with its usage (``uh-core harness run``), not the top level's: argparse hands
    unknown arguments up to the top parser, which would show ``COMMAND ...``."""
    parser.set_defaults(_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _own_parser(child)


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner: argparse.ArgumentParser = getattr(args, "_parser", parser)
        owner.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def _fail(message: str, code: int) -> int:
    with contextlib.suppress(OSError):  # after a SIGHUP the terminal may be gone (EIO)
        sys.stderr.write(f"uh-core: error: {message}\n")
    return code


def run(argv: Sequence[str] | None = None) -> int:
    from uh_core.errors import UhError, ValidationError

    parser = build_parser()
    args = _parse(parser, argv)
    gc.freeze()  # the imports' objects live as long as the command: the collector skips them
    try:
        code: int = args.handler(args)
        return code
    except ValidationError as exc:
        if getattr(args, "all_problems", False):
            for line in exc.problems:
                sys.stderr.write(f"uh-core: error: {' '.join(line.split())}\n")
            return exc.exit_code
        return _fail(exc.one_line(), exc.exit_code)
    except UhError as exc:
        return _fail(exc.one_line(), exc.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        # The reader went away (``| head``): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def main() -> None:
    interrupt_on_signals()  # SIGTERM and SIGHUP end a command as Ctrl-C does (exit 130)
    reap_our_children()
    sys.exit(run())
