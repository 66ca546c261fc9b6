"""The repository a job starts from, as data, and the workspace a worker makes of it.

The head bundles the base commit once per run (``git bundle`` of a private ref in a scratch
repository that borrows the operator's objects: the operator's refs are never touched); the
worker clones the bundle into a folder of its own and checks the base commit out. That
folder is the job's "operator repository": sandboxes, records and the guard's snapshots are
all in it, so a worker never needs the head's disk.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from uh_core.errors import ExecutorError
from uh_core.git import common_dir, git, identity_config
from uh_core.jobs.model import JobSource
from uh_core.layout import Layout, state_home

_REF = "refs/heads/uh-job"
BUNDLE_LIMIT = 2 << 30  # a repository above 2 GiB is refused (say so rather than ship it)


def make_source(layout: Layout, commit: str) -> JobSource:
    """``commit`` and everything it reaches, as a bundle, plus the operator's identity."""
    with tempfile.TemporaryDirectory(prefix="uh-bundle-") as scratch:
        repo = Path(scratch) / "repo"
        git(Path(scratch), "init", "-q", "--bare", "--template=", str(repo))
        alternates = repo / "objects" / "info" / "alternates"
        alternates.parent.mkdir(parents=True, exist_ok=True)
        alternates.write_text(f"{common_dir(layout.root) / 'objects'}\n", encoding="utf-8")
        git(repo, "update-ref", _REF, commit)
        out = Path(scratch) / "job.bundle"
        git(repo, "bundle", "create", "-q", str(out), _REF)
        size = out.stat().st_size
        if size > BUNDLE_LIMIT:
            raise ExecutorError(
                f"the repository at {commit[:12]} is {size >> 20} MiB as a bundle: too large "
                "to ship to workers",
                fix="run with --executor local, or shrink the history workers receive",
            )
        bundle = out.read_bytes()
    identity = identity_config(layout.root)
    return JobSource(commit=commit, bundle=bundle, identity=identity)


def worker_home() -> Path:
    """Where a worker keeps job workspaces: ``$UH_WORKER_DIR``, else the state home's."""
    import os

    explicit = os.environ.get("UH_WORKER_DIR")
    return Path(explicit).expanduser().resolve() if explicit else state_home() / "worker"


def materialise(source: JobSource, job_id: str) -> Layout:
    """A private clone of the source at its commit (detached), under the worker home."""
    folder = worker_home() / "jobs" / job_id
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    bundle = folder / "source.bundle"
    bundle.write_bytes(source.bundle)
    repo = folder / "repo"
    identity = [f"--config={key}={value}" for key, value in source.identity.items()]
    git(folder, "clone", "-q", "--no-checkout", *identity, str(bundle), str(repo))
    git(repo, "checkout", "-q", "--detach", source.commit)
    bundle.unlink()
    return Layout(repo)


def discard(layout: Layout) -> None:
    """The workspace and the sandboxes made under it (results have been packed)."""
    trees = layout.state_dir
    shutil.rmtree(layout.root.parent, ignore_errors=True)
    shutil.rmtree(trees, ignore_errors=True)


def bundle_branch(layout: Layout, branch: str, base: str) -> bytes:
    """``branch``'s commits since ``base`` as a bundle (the harness's one commit)."""
    with tempfile.TemporaryDirectory(prefix="uh-result-") as scratch:
        out = Path(scratch) / "result.bundle"
        git(layout.root, "bundle", "create", "-q", str(out), f"refs/heads/{branch}", f"^{base}")
        return out.read_bytes()
