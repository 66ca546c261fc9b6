"""Which runtimes can run on this machine, for the dashboard's runtime picker: the same
answer as ``uh-core adapter list``'s HERE column (:mod:`uh_core.adapters.here`). Asked when
the picker opens, not with every snapshot: it looks each CLI up on PATH."""

from __future__ import annotations

from pathlib import Path

from uh_core.adapters.here import Here, here_by_id
from uh_core.layout import Layout

__all__ = ["Here", "runtimes_here"]


def runtimes_here(root: Path) -> dict[str, Here]:
    """Each manifest under ``root``'s ``.harness/adapters/`` that loads → can it run here."""
    return here_by_id(Layout(root))
