"""Build the demo repository and run the main job on it."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from uh_core.adapters.registry import builtin_manifests
from uh_core.demo import project
from uh_core.demo.agent import AGENT_PATH, CONFIG_PATH, HARNESS_CONFIG, agent_script
from uh_core.demo.runtimes import demo_runtimes
from uh_core.errors import GitError, UsageError
from uh_core.fileio import write_text_atomic, write_yaml
from uh_core.git import git_argv, safe_env
from uh_core.init import init_project
from uh_core.layout import Layout
from uh_core.proc import run_capture

MARKER = ".uh-demo"
GIT_IDENTITY = ["-c", "user.name=uh demo", "-c", "user.email=demo@uh.invalid"]


@dataclass
class Demo:
    layout: Layout
    missions: list[str]
    rebuilt: bool = False  # an earlier demo was there, and is gone (branches, promotions)


def _git(root: Path, *args: str) -> None:
    argv = git_argv([*GIT_IDENTITY, *args])  # the engine's git: nothing from outside
    result = run_capture(argv, cwd=root, env=safe_env(), env_is_complete=True, timeout=60)
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)} failed in {root}: {message}")


def _prepare_dir(root: Path) -> bool:
    """Ready for a demo; True when an earlier demo there was removed to rebuild it."""
    rebuilt = False
    if root.exists():
        if not root.is_dir():
            raise UsageError(f"{root} exists and is not a directory", fix="choose another DIR")
        if any(root.iterdir()):
            if not (root / ".harness" / MARKER).exists():
                raise UsageError(
                    f"{root} is not empty and is not a uh demo",
                    fix="choose an empty or new directory",
                )
            shutil.rmtree(root)  # an earlier demo: rebuild it from scratch
            rebuilt = True
    root.mkdir(parents=True, exist_ok=True)
    return rebuilt


def build_demo(root: Path) -> Demo:
    root = root.resolve()
    rebuilt = _prepare_dir(root)
    files = {
        "README.md": project.README,
        "src/calc/__init__.py": project.INIT,
        "src/calc/core.py": project.CORE,
        "tests/test_core.py": project.TESTS,
        ".gitignore": "__pycache__/\n*.pyc\n",
        CONFIG_PATH: HARNESS_CONFIG,  # `h` in uh: the delivery loop with a scripted agent
        AGENT_PATH: agent_script(),
    }
    for rel, text in files.items():
        write_text_atomic(root / rel, text)
    layout = Layout(root)
    init_project(layout)
    (layout.harness / MARKER).write_text("built by uh-core demo\n", encoding="utf-8")
    for mission_id, text in project.MISSIONS.items():
        write_text_atomic(layout.mission_file(mission_id), text)
    for adapter_id in builtin_manifests():  # the demo runs offline: scripted runtimes only
        (layout.adapters_dir / f"{adapter_id}.yaml").unlink(missing_ok=True)
    for runtime, manifest in demo_runtimes().items():
        write_yaml(layout.adapters_dir / f"{runtime}.yaml", manifest)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "calc: add and subtract, with missions and a scripted agent")
    return Demo(layout, list(project.MISSIONS), rebuilt)
