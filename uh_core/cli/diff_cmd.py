"""``uh-core diff capture ID [--base REV]`` and ``uh-core diff classify PATCH|- [...]``."""

from __future__ import annotations

import argparse

from uh_core.cli.common import EXIT_OK, add_json, add_root


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "diff",
        help="capture a mission's diff; classify the paths a patch touches",
        description="Capture the working tree as a mission's diff.patch, or bucket the "
        "paths a patch touches into tests / source / other.",
    )
    actions = parser.add_subparsers(dest="diff_command", metavar="ACTION")
    actions.required = True

    capture = actions.add_parser(
        "capture",
        help="write .harness/missions/ID/diff.patch",
        description="Write the mission's diff.patch: tracked changes and new untracked "
        "(not ignored) files against REV, binary files as git binary patches, never "
        ".harness/. The index is left as it was. Exit 0 written, 2 bad input.",
    )
    capture.add_argument("mission_id", metavar="ID")
    capture.add_argument(
        "--base", default="HEAD", metavar="REV", help="commit to diff against (default HEAD)"
    )
    add_root(capture)
    add_json(capture)
    capture.set_defaults(handler=handle_capture)

    classify = actions.add_parser(
        "classify",
        help="bucket the paths a patch touches into tests / source / other",
        description="Read a unified diff (git or plain diff -u) and list the paths it "
        "touches as tests, source and other. Test globs win over source globs; without "
        "--test-path/--source-path the defaults apply (see docs/diff.md). Exit 0 read, "
        "2 not a diff or unreadable.",
    )
    classify.add_argument("patch", metavar="PATCH", help="patch file, or - for stdin")
    classify.add_argument(
        "--test-path",
        action="append",
        default=[],
        metavar="GLOB",
        help="glob of test paths (repeatable; replaces the defaults)",
    )
    classify.add_argument(
        "--source-path",
        action="append",
        default=[],
        metavar="GLOB",
        help="glob of source paths (repeatable; replaces the default src/**)",
    )
    add_root(classify)  # accepted like everywhere; a relative PATCH is read from the cwd
    add_json(classify)
    classify.set_defaults(handler=handle_classify)


def handle_capture(args: argparse.Namespace) -> int:
    from uh_core.cli.common import context, print_json
    from uh_core.diff.capture import capture_mission_diff

    ctx = context(args)
    out, result = capture_mission_diff(ctx.layout, args.mission_id, args.base)
    path = ctx.layout.rel(out)
    if ctx.json:
        print_json(
            {
                "mission_id": args.mission_id,
                "path": path,
                "base": args.base,
                "base_commit": result.base_commit,
                "files": result.files,
                "bytes": result.bytes,
            }
        )
    else:
        print(
            f"wrote {path} ({result.files} file(s), {result.bytes} bytes) "
            f"against {args.base} {result.base_commit[:12]}"
        )
    return EXIT_OK


def handle_classify(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from uh_core.cli.common import print_json
    from uh_core.diff.classify import classify_patch_file, classify_patch_stream

    tests, source = args.test_path or None, args.source_path or None
    if args.patch == "-":
        result = classify_patch_stream(sys.stdin.buffer, tests, source)
    else:
        result = classify_patch_file(Path(args.patch), tests, source)
    if args.json:
        print_json(result.to_json())
        return EXIT_OK
    lines: list[str] = []
    for name, paths in (
        ("tests", result.tests),
        ("source", result.source),
        ("other", result.other),
    ):
        lines.append(f"{name} ({len(paths)}):")
        lines.extend(f"  {_printable(path)}" for path in paths)
    lines.append(f"{result.total} path(s) in {result.files} file section(s)")
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_OK


_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _printable(path: str) -> str:
    """A path on one line: quoted C-style when it holds control characters, quotes or ``\\``."""
    if path.isprintable() and '"' not in path and "\\" not in path:
        return path
    out = []
    for char in path:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif not char.isprintable() and char != " ":
            out.append(f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
