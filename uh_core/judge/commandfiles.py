"""The files a judge command runs, and the modules it imports from the tree it judges.

A mission's check commands and the test command are the judge. So is every repository file
they run: an agent that writes ``exit 0`` into the ``checks/adds.sh`` a criterion runs, or
deselects the test it broke in the ``Makefile`` of ``make test``, has changed the judge
without touching one test or setting. ``command_files`` names those files, for any of:

- a program given as a path (``./scripts/test``, ``tools/check.py``), or a script handed
  to a shell or an interpreter (``sh checks/adds.sh``, ``python3 tools/check.py``,
  ``node run.js``), on its stdin (``sh < checks/adds.sh``), or sourced (``. ./env.sh``);
  any word ending in ``.sh`` or ``.env``;
- a module run with ``python -m``: its file at the repository root (``pytest.py`` there
  would be the pytest that runs);
- the file a task runner reads: ``make`` (``Makefile``, or ``-f FILE``), ``npm``/``yarn``/
  ``pnpm`` (``package.json``), ``nox``, ``just``, ``task``, ``rake``;

after any ``NAME=value`` assignments and wrappers (``env``, ``timeout 60``, ``nice``,
``uv run``…). Test files a command names as arguments are not among them: the agent writes
tests.

The modules a Python command imports from the tree first are ``shadowing.py``'s.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uh_core.models.mission import Mission

# Shells and interpreters: their first argument that is not an option is a script they run.
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "source", "."})
_INTERPRETER = re.compile(r"(?:python[0-9.]*|pypy[0-9.]*|node|ruby|perl|php|bun|deno|lua)\Z")
_PYTHON = re.compile(r"(?:python[0-9.]*|pypy[0-9.]*)\Z")
_PY_ARG_OPTIONS = frozenset({"-W", "-X", "-Q"})  # python options that take the next word
# Wrappers that run the rest of the words as a command: how many words of their own follow
# their options, and which of their options take a value.
_WRAPPERS = {"env": 0, "nice": 0, "time": 0, "command": 0, "exec": 0, "nohup": 0, "stdbuf": 0}
_WRAPPERS |= {"timeout": 1, "xvfb-run": 0, "ionice": 0, "chrt": 1, "taskset": 1}
_WRAPPER_VALUES = {
    "env": {"-u", "--unset", "-C", "--chdir"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p"},
    "time": {"-f", "-o"},
}
# shell options that take the next word (``bash -o pipefail script``)
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
# the checkout, as a check command may name it (uh sets UH_ROOT; the checks run at the root)
_ROOT_VARS = re.compile(r"\A(?:\$\{?(?:UH_ROOT|PWD)\}?|\$\(pwd\)|`pwd`)(?=/|\Z)")
_RUNS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye"})  # ``<tool> run CMD``
RUNNER_FILES = {
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "gmake": ("Makefile", "makefile", "GNUmakefile"),
    "npm": ("package.json",),
    "yarn": ("package.json",),
    "pnpm": ("package.json",),
    "nox": ("noxfile.py",),
    "just": ("justfile", "Justfile", ".justfile"),
    "task": ("Taskfile.yml", "Taskfile.yaml"),
    "rake": ("Rakefile",),
}
_SCRIPTED = frozenset({"awk", "gawk", "mawk", "sed"})  # ``-f FILE``: their program, a file
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "then", "do"})
_REDIRECT = re.compile(r"[0-9]*(?:>>?|<)&?\Z")
_STDIN = re.compile(r"0?<\Z")


def words_of(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: the command would not run; read it roughly
        return command.replace(";", " ; ").replace("&&", " && ").split()


def _segments(words: list[str]) -> list[tuple[list[str], bool]]:
    """Simple commands: the words between operators, redirections' targets left out; each
    with whether a pipe feeds it (``cat checks/x | sh``: its script is the other's file)."""
    out: list[tuple[list[str], bool]] = [([], False)]
    skip = False
    for word, after in zip(words, [*words[1:], ""], strict=True):
        if skip:
            skip = False
        elif word.isdigit() and _REDIRECT.match(after):
            continue  # the descriptor of ``2>&1``, ``0< file``: no argument
        elif _REDIRECT.match(word):
            skip = True
        elif word in _OPERATORS or set(word) <= set(";&|()"):
            out.append(([], word == "|"))
        else:
            out[-1][0].append(word)
    return [(segment, piped) for segment, piped in out if segment]


def relative(word: str) -> str | None:
    """A word as a repository path (``./x`` → ``x``, ``$UH_ROOT/x`` → ``x``); None for what
    cannot be one."""
    word = _ROOT_VARS.sub(".", word)
    if not word or word.startswith(("/", "-", "$", "~")) or "://" in word:
        return None
    path = posixpath.normpath(word)
    return None if path in (".", "..") or path.startswith("../") else path


def _program(segment: list[str]) -> tuple[str, list[str]] | None:
    """The program a simple command runs and its arguments, past assignments and wrappers."""
    rest = list(segment)
    while rest:
        word = rest[0]
        name = posixpath.basename(word)
        if _ASSIGNMENT.match(word):
            rest.pop(0)
        elif name in _WRAPPERS:
            rest.pop(0)
            takes = _WRAPPER_VALUES.get(name, set())
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
                option = rest.pop(0)
                if option == "-S" and name == "env" and rest:  # env -S 'cmd args': its words
                    rest[:1] = words_of(rest[0])
                elif option in takes and rest:
                    rest.pop(0)
            del rest[: _WRAPPERS[name]]
        elif name in _RUNS and len(rest) > 1 and rest[1] == "run":
            del rest[:2]
            while rest and rest[0].startswith("-"):
                rest.pop(0)
        else:
            return word, rest[1:]
    return None


def module_files(module: str) -> tuple[str, ...]:
    """Where ``python -m module`` would find it first: at the repository root."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return ()
    top, path = parts[0], "/".join(parts)
    return tuple(
        dict.fromkeys((f"{top}.py", f"{top}/__init__.py", f"{path}.py", f"{path}/__main__.py"))
    )


def _script(program: str, args: list[str]) -> list[str]:
    """What a shell or interpreter runs: its script, a module's files (``-m``), or what the
    command string of ``sh -c`` runs."""
    python = _PYTHON.match(program) is not None
    words = iter(args)
    for word in words:
        if word == "-m" and python:
            return list(module_files(next(words, "")))
        if program in _SHELLS and word.startswith("-") and "c" in word[1:] and word[1:2] != "-":
            return sorted(command_files(next(words, "")))
        if word == "--":  # the end of the options: the script is next
            following = next(words, "")
            return [following] if following else []
        if word in ("-c", "-"):  # code on the line, or the script on stdin
            return []
        if (python and word in _PY_ARG_OPTIONS) or (not python and word in _SHELL_VALUES):
            next(words, None)
        elif not word.startswith("-"):
            return [word]
    return []


def command_files(command: str | None) -> frozenset[str]:
    """Repository files ``command`` runs, sources or reads as its task list (see above)."""
    if not command:
        return frozenset()
    words = words_of(command)
    found: set[str] = {w for w in words if w.endswith((".sh", ".env")) and "=" not in w}
    # what a command reads on its stdin: a script for ``sh < checks/x``, a checker's input
    found.update(after for word, after in itertools.pairwise(words) if _STDIN.match(word))
    cwd = ""  # a ``cd sub &&`` before it: the paths after it are in ``sub``
    fed: list[str] = []  # the files the previous command printed, for a shell piped after it
    for segment, piped in _segments(words):
        runs = _program(segment)
        if runs is None:
            continue
        program, args = runs
        name = posixpath.basename(program)
        here: list[str] = []
        printed, fed = fed if piped else [], []
        if name in ("cat", "head", "tail", "tac"):
            fed = [a for a in args if not a.startswith("-")]
        if name in ("cd", "pushd"):
            into = relative(args[0]) if args and not args[0].startswith("-") else None
            cwd = "" if into in (None, ".") else posixpath.join(cwd, into)
            continue
        if "/" in program:
            here.append(program)
        if name in _SHELLS or _INTERPRETER.match(name):
            here += _script(name, args) or printed  # no script named: it reads the pipe
        elif name in RUNNER_FILES or name in _SCRIPTED:
            pairs = list(zip(args, [*args[1:], ""], strict=False))
            named = [after for flag, after in pairs if flag in ("-f", "--file")]
            named += [a.split("=", 1)[1] for a in args if a.startswith("--file=")]
            named += [a[2:] for a in args if a.startswith("-f") and len(a) > 2]  # make -fci.mk
            folder = next((after for flag, after in pairs if flag == "-C"), "")
            folder = folder or next((a[2:] for a in args if a.startswith("-C") and len(a) > 2), "")
            here += [posixpath.join(folder, f) for f in named or RUNNER_FILES.get(name, ())]
        found.update(posixpath.join(cwd, path) for path in here)
    return frozenset(p for p in map(relative, found) if p is not None)


def judge_commands(mission: Mission, test_cmd: str | None) -> list[str | None]:
    """The commands that judge a mission: the test command, each criterion's check, each
    required check."""
    return [
        test_cmd,
        *(criterion.check_command for criterion in mission.criteria()),
        *(check.command for check in mission.verification.required_checks),
    ]


def files_of(commands: list[str | None]) -> frozenset[str]:
    """Every file the commands run (``command_files`` of each)."""
    return frozenset().union(*(command_files(command) for command in commands))


def judge_named(mission: Mission, commands: list[str | None]) -> frozenset[str]:
    """The files the commands run that are the judge's (``not_the_work``)."""
    return not_the_work(mission, files_of(commands))


def not_the_work(mission: Mission, files: frozenset[str]) -> frozenset[str]:
    """``files`` but those the mission says are the agent's to write — an expected output,
    or under its ``tdd.source_paths`` (``node src/cli.js --help`` runs the product, not a
    checker)."""
    from uh_core.diff.globs import compile_globs

    work = set(mission.expected_files())
    sources = compile_globs(tuple(mission.tdd.source_paths if mission.tdd is not None else ()))
    return frozenset(p for p in files if p not in work and not sources.match(p))
