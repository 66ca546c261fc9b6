"""Jobs as data: what a worker needs to run one runtime or one mission, and what it gives
back — both serialisable, so the local executor and a distributed one (Ray) run the same
description through the same code (``MissionRun``, ``run_requirement``).

- :mod:`uh_core.jobs.model` — the job and result models.
- :mod:`uh_core.jobs.source` — the repository at the base commit as a git bundle, and the
  private workspace a worker makes from it.
- :mod:`uh_core.jobs.evidence` — files carried back, bounded, and written where the head
  keeps them (never outside their folder).
- :mod:`uh_core.jobs.runtime_job` / :mod:`uh_core.jobs.harness_job` — one job of ``run-all``
  or of ``harness run``: run on a worker, landed on the head.
- :mod:`uh_core.jobs.stream` — a job run in a thread while its event lines stream out.
"""
