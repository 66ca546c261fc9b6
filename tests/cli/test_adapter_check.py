"""``uh-core adapter check`` with no id: every manifest at once."""

from __future__ import annotations

import json

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest


def test_check_without_an_id_checks_every_manifest(repo: Repo) -> None:
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    add_manifest(repo, "fixer", "runtime_kind: script\nconfig:\n  script: 'true'\n")
    add_manifest(repo, "ghost", "runtime_kind: codex\nconfig:\n  cli_command: no-such-codex-here\n")
    repo.write(".harness/adapters/broken.yaml", "schema_version: uh.adapter.v0\nid: [\n")
    result = repo.uh("adapter", "check", "--json")
    assert result.code == 1, result
    data = json.loads(result.stdout)
    rows = {row["id"]: row for row in data["adapters"]}
    assert data["ok"] is False
    assert rows["fixer"]["ok"] is True
    assert rows["ghost"]["ok"] is False and "not found on PATH" in rows["ghost"]["reason"]
    assert rows["broken"]["ok"] is False and rows["broken"]["reason"]
    text = repo.uh("adapter", "check")
    assert text.code == 1
    assert "[OK] fixer: no binary needed" in text.stdout
    assert "[UNAVAILABLE] ghost:" in text.stdout and "[UNAVAILABLE] broken:" in text.stdout
    (repo.root / ".harness/adapters/ghost.yaml").unlink()
    (repo.root / ".harness/adapters/broken.yaml").unlink()
    assert repo.uh("adapter", "check").code == 0
