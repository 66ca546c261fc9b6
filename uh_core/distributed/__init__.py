"""``--executor ray``: jobs (``uh_core.jobs``) on a Ray cluster. Nothing here is imported
unless a command asks for Ray, and nothing imports ray at module level.

- :mod:`uh_core.distributed.cluster` — connecting, the nodes, placement by capability.
- :mod:`uh_core.distributed.remote` — what runs on a worker: the job's stream, the cancel
  flags it reads.
- :mod:`uh_core.distributed.runner` — the head: submit, follow, cancel, map faults.
- :mod:`uh_core.distributed.runall` / :mod:`uh_core.distributed.harness` — ``run-all``'s
  runtimes and ``harness run``'s missions through it.
- :mod:`uh_core.distributed.worker` — ``uh-core worker``: a node advertising its runtimes.
"""
