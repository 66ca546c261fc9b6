"""What the gate's checks see of the operator's environment: an allow-list, not all.

Everything the gate runs over an agent's work is the agent's code: a check command imports
its modules, the test command runs its tests. Handed the operator's shell, that code could
read ``OPENAI_API_KEY`` or ``AWS_SECRET_ACCESS_KEY`` and send them away. So a check receives:

- :data:`BASIC`: the path, locale and terminal (never a credential);
- its own ``HOME``, ``TMPDIR`` and XDG folders (private: in the judge's sandbox, or in the
  stage's scratch folder when unconfined), and no bytecode written
  (``PYTHONDONTWRITEBYTECODE``): the interpreter's own compiled standard library and
  packages are read where they were installed, and the checkout holds no ``__pycache__``
  (the room removes any the tree carries: ``judge/room.py``), so what runs is the source;
- the names the project lists under ``check_env:`` in ``harness.config.yaml``;
- what uh sets for the check (``MISSION_ID``, ``UH_ROOT``, ``UH_MISSION_DIR``, ``UH_RUN_ID``).

Everything else is dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from uh_core.adapters.agentenv import SESSION

BASIC: tuple[str, ...] = (*SESSION, "FORCE_COLOR", "VIRTUAL_ENV", "CI")


def admitted(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether the check may receive the operator's variable ``name``."""
    return any(fnmatchcase(name, pattern) for pattern in (*BASIC, *extra))


def check_env(
    home: str,
    tmp: str,
    *,
    extra: Iterable[str] = (),
    source: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of a check: the admitted variables of ``source`` (this
    process's by default), then the private folders on top."""
    allowed = tuple(extra)
    base = os.environ if source is None else source
    env = {key: value for key, value in base.items() if admitted(key, allowed)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        {
            "HOME": home,
            "TMPDIR": tmp,
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_STATE_HOME": f"{home}/.local/state",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    return env
