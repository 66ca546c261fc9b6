"""Fixtures for the real-CLI adapters: a real git worktree, and fake CLIs on PATH.

A fake CLI is a shell script named like the real one. It records its argv (NUL-separated),
stdin and working directory, writes side files where the real CLI would (the path after a
given flag), replays a recorded stdout/stderr fixture and exits with the recorded code. In
``hang`` mode it prints the first lines, then sleeps until signalled: SIGINT is the
default action, ignored, or answered by replaying the rest of a recorded transcript.
Only the model is fake: processes, worktrees, signals and files are real.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import git
from uh_core.adapters.base import Adapter, LaunchContext, LaunchPlan, ObserveEvent, Session
from uh_core.adapters.registry import builtin_manifests, make_adapter
from uh_core.models.adapter import AdapterManifest
from uh_core.models.mission import Mission
from uh_core.models.runtime import RuntimeResult
from uh_core.runtime.prompt import mission_prompt

FIXTURES = Path(__file__).parent / "fixtures"
FINAL = (
    'status: completed\nsummary: appended "hello from the agent" to a.txt\nfiles_changed: [a.txt]'
)


def fixture(cli: str, name: str) -> Path:
    path = FIXTURES / cli / name
    assert path.is_file(), path
    return path


def help_text(cli: str, *names: str) -> str:
    return "\n".join(fixture(cli, name).read_text(encoding="utf-8") for name in names)


def flags_of(argv: list[str]) -> list[str]:
    """Every option token of a command line (``--file=x`` → ``--file``; ``-`` is stdin)."""
    return [part.split("=", 1)[0] for part in argv[1:] if part.startswith("-") and part != "-"]


def assert_flags_in_help(argv: list[str], help_output: str) -> None:
    """Each option the adapter built is listed in the CLI's recorded ``--help``."""
    for flag in flags_of(argv):
        pattern = rf"(?<![\w-]){re.escape(flag)}(?![\w-])"
        assert re.search(pattern, help_output), f"{flag} is not in the recorded --help"


def live_group_members(pgid: int) -> list[int]:
    """Processes of the group that are not zombies (PID 1 here does not reap)."""
    alive: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            alive.append(int(entry.name))
    return alive


# --- the worktree ----------------------------------------------------------------------
@dataclass
class Sandbox:
    repo: Path
    worktree: Path
    artifacts: Path
    prompt_file: Path
    mission: Mission

    def context(self, manifest: AdapterManifest, timeout_s: float | None = 20) -> LaunchContext:
        return LaunchContext(
            mission=self.mission,
            manifest=manifest,
            worktree=self.worktree,
            artifacts_dir=self.artifacts,
            prompt_file=self.prompt_file,
            sandbox_id="sbx-m1-test",
            timeout_s=timeout_s,
        )


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """A repository with ``a.txt`` and a linked worktree of it, like ``mission run`` makes."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("hi\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    worktree = tmp_path / "sandboxes" / "sbx-m1-test" / "worktree"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    mission = Mission(
        id="m1",
        title="Append a line",
        objective='Append the line "hello from the agent" to a.txt.',
        expected_outputs={"files": ["a.txt", "new.txt"]},
    )
    artifacts = worktree / ".harness" / "missions" / mission.id
    artifacts.mkdir(parents=True)
    prompt_file = artifacts / "prompt.md"
    prompt_file.write_text(mission_prompt(mission), encoding="utf-8")
    return Sandbox(repo, worktree, artifacts, prompt_file, mission)


def adapter_for(kind: str, **config: object) -> Adapter:
    """The built-in manifest ``uh-core init`` writes for ``kind``, ``config`` laid over it."""
    data = builtin_manifests()[kind]
    data["config"] = {**data["config"], **config}
    return make_adapter(AdapterManifest.model_validate(data))


# --- fake CLIs -------------------------------------------------------------------------
@dataclass
class FakeCli:
    name: str
    path: Path
    records: Path

    def argv(self) -> list[str]:
        data = (self.records / "argv").read_bytes()
        return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0")[:-1]]

    def stdin(self) -> str:
        return (self.records / "stdin").read_text(encoding="utf-8")

    def cwd(self) -> Path:
        return Path((self.records / "cwd").read_text(encoding="utf-8").strip())

    def ran(self) -> bool:
        return (self.records / "argv").exists()


@dataclass
class FakeFactory:
    bin_dir: Path
    root: Path
    made: list[FakeCli] = field(default_factory=list)

    def __call__(
        self,
        name: str,
        *,
        stdout: Path | None = None,
        stderr: Path | None = None,
        exit_code: int = 0,
        side_files: dict[str, Path] | None = None,
        version: str = "0.0.0",
        hang_after: int | None = None,
        on_sigint: str | Path = "default",
        sigint_exit: int = 0,
        recorded_cwd: str | None = None,
    ) -> FakeCli:
        """Write ``bin/<name>``. ``hang_after=N``: print N lines of ``stdout``, then sleep;
        ``on_sigint``: "default", "ignore", or a file replayed before exiting ``sigint_exit``;
        ``recorded_cwd``: the capture's worktree path, replaced by the real cwd on replay.
        """
        records = self.root / f"records-{name}-{len(self.made)}"
        records.mkdir(parents=True)
        q = shlex.quote

        def replay(command: str) -> str:
            if recorded_cwd is None:
                return command
            return f'{command} | sed -e "s|{recorded_cwd}|$(pwd)|g"'

        lines = [
            "#!/bin/sh",
            f'if [ "$1" = "--version" ]; then printf "%s\\n" {q(version)}; exit 0; fi',
            f"rec={q(str(records))}",
            'for a in "$@"; do printf "%s\\0" "$a"; done > "$rec/argv"',
            'pwd > "$rec/cwd"',
            'cat > "$rec/stdin"',
        ]
        if side_files:
            lines += ["prev=", 'for a in "$@"; do', '  case "$prev" in']
            lines += [
                f'    {q(flag)}) cp {q(str(src))} "$a" ;;' for flag, src in side_files.items()
            ]
            lines += ["  esac", '  prev="$a"', "done"]
        if stderr is not None:
            lines.append(f"cat {q(str(stderr))} >&2")
        if hang_after is None:
            if stdout is not None:
                lines.append(replay(f"cat {q(str(stdout))}"))
            lines.append(f"exit {exit_code}")
        else:
            hang = ["sleep 30"]
            if on_sigint == "ignore":
                lines.append("trap '' INT")
            elif isinstance(on_sigint, Path):
                # The sleep runs in the background and the shell waits for it: a trapped
                # SIGINT interrupts `wait` at once. A foreground sleep delays the trap until
                # it ends, and a SIGINT landing as the shell forks it (a loaded machine)
                # never reaches it: the run then waited out the whole grace.
                lines.append("sleep 30 & hang=$!")
                handler = replay(f"kill $hang; cat {q(str(on_sigint))}") + f"; exit {sigint_exit}"
                lines.append(f"trap {q(handler)} INT")
                hang = ['wait "$hang"']
            if stdout is not None:
                lines.append(replay(f"head -n {hang_after} {q(str(stdout))}"))
            lines += [*hang, f"exit {exit_code}"]
        path = self.bin_dir / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        path.chmod(0o755)
        fake = FakeCli(name, path, records)
        self.made.append(fake)
        return fake


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeFactory:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return FakeFactory(bin_dir, tmp_path / "fake")


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """PATH with nothing but an empty folder: no agent CLI can be found."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    yield


# --- driving the lifecycle -------------------------------------------------------------
@dataclass
class Run:
    plan: LaunchPlan
    session: Session
    events: list[ObserveEvent]
    result: RuntimeResult
    final: str

    @property
    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def messages(self, kind: str) -> list[str]:
        return [event.message for event in self.events if event.kind == kind]


def drive(
    adapter: Adapter,
    ctx: LaunchContext,
    *,
    cancel_when: Callable[[list[ObserveEvent]], bool] | None = None,
    deadline_s: float = 15,
    grace_s: float | None = None,
) -> Run:
    """prepare → launch → observe/wait loop (→ cancel) → collect → close.

    ``grace_s`` replaces the adapter's grace between cancel signals: a test of what a CLI does
    on its first signal gives it long enough on a loaded machine (the suite starts six real
    CLIs at once) that the next signal never cuts its handler short."""
    if grace_s is not None:
        adapter.grace_s = grace_s  # type: ignore[misc]
    plan = adapter.prepare(ctx)
    session = adapter.launch(plan)
    events: list[ObserveEvent] = []
    deadline = time.monotonic() + deadline_s
    try:
        while True:
            events.extend(adapter.observe(session))
            if cancel_when is not None and cancel_when(events):
                adapter.cancel(session, "stopped by the test")
                break
            if adapter.wait(session, 0.05) is not None:
                break
            assert time.monotonic() < deadline, "the fake CLI did not end"
        # collect() drains the output too, but keeps nothing of what it reads for the
        # caller: read the tail here first, as a live observer would.
        events.extend(adapter.observe(session))
        result, final = adapter.collect(session)
    finally:
        adapter.close(session)
    return Run(plan, session, events, result, final)


def saw(kind: str, count: int = 1) -> Callable[[list[ObserveEvent]], bool]:
    return lambda events: sum(1 for e in events if e.kind == kind) >= count
