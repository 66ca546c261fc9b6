"""The head's re-judge of a worker's green (``_head_rejudge`` → ``uh_core.judge.rejudge``),
without a cluster: a worker that says green over a commit whose checks fail, or that changed
the judge's files, is refused with what the head found; an honest commit passes."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from typing import Any

from tests.conftest import git
from tests.harness.conftest import BAD, GOOD, Project


def _commit_with(
    project: Project, base: str, calc: str, name: str, planted: dict[str, str] | None = None
) -> str:
    git(project.root, "checkout", "-q", "-b", name, base)
    (project.root / "src/calc.py").write_text(calc)
    for rel, text in (planted or {}).items():
        (project.root / rel).write_text(text)
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", name)
    commit = git(project.root, "rev-parse", "HEAD").strip()
    git(project.root, "checkout", "-q", "main")
    return commit


def _in_a_child(work: Callable[[], Any]) -> Any:
    """``work()`` in a forked child, its JSON result back: an unconfined judge that runs alone
    makes its process a subreaper, which must never be pytest's own process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 1
        try:
            os.write(write, json.dumps(work()).encode())
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as reader:
        data = reader.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child failed (its traceback: stderr)"
    return json.loads(data)


def test_the_heads_rejudge_refuses_a_red_green(project: Project) -> None:
    from uh_core.distributed.harness import _head_rejudge
    from uh_core.harness.config import Flags
    from uh_core.harness.deps import Deps
    from uh_core.harness.prepare import prepare
    from uh_core.layout import Layout
    from uh_core.missions import load_mission
    from uh_core.runtime.run import CancelToken
    from uh_core.security import guard

    layout = Layout(project.root)
    base = git(project.root, "rev-parse", "HEAD").strip()
    red = _commit_with(project, base, BAD, "red")
    green = _commit_with(project, base, GOOD, "green")
    # green by every check and test, with a conftest.py beside the work: a record saying a
    # gate passed it is one the gate's write-scope never wrote
    forged = _commit_with(project, base, GOOD, "forged", {"conftest.py": "X = 1\n"})
    prepared = prepare(layout, Flags(agent=project.agent("none", ""), isolation="none"))
    said: list[str] = []
    deps = Deps(
        layout, prepared.settings, prepared.spec, base, "harness-test", CancelToken(),
        said.append, isolation=guard.resolve("none"),
    )  # fmt: skip
    judge = _head_rejudge(deps, load_mission(layout, "calc").mission)
    found, passed, refused, said = _in_a_child(
        lambda: [judge(red), judge(green), judge(forged), said]
    )
    assert found is not None and found.strip(), found
    assert passed is None, said
    assert refused is not None and refused.startswith("write-scope: agent_changed_the_judge")
    assert "conftest.py (created)" in refused, refused
