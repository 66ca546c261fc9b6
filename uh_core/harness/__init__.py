"""The delivery loop (contract §7): for each pending mission an isolated worktree on
``harness/<id>``, a prompt, any agent, a gate that cannot be fooled, retries with the
failure fed back, and a reviewable branch. The harness never merges.

- :mod:`uh_core.harness.config` — harness.config.yaml + flags → ``Settings``
  (:mod:`uh_core.judge.settings`, re-exported)
- :mod:`uh_core.harness.select` — pending missions in ``depends_on`` order
- :mod:`uh_core.harness.prompt` — the prompt, top to bottom, and its archive
- :mod:`uh_core.harness.agent` — one agent invocation through an adapter
- :mod:`uh_core.harness.gate` — ``STAGES``: the ``agent`` stage, then the judge's
  (:mod:`uh_core.judge`: context, stages, test evidence, baseline)
- :mod:`uh_core.harness.workspace` — clean tree, branches, worktrees, the green commit
- :mod:`uh_core.harness.deps` — ``Deps``: what every mission of one run shares
- :mod:`uh_core.harness.requirement` — one mission: ``begin``, attempts, feedback, commit
- :mod:`uh_core.harness.attempt` — one round: prompt, agent under the guard, gate
- :mod:`uh_core.harness.prepare` — ``prepare``: every check that can refuse the run
- :mod:`uh_core.harness.loop` — ``HarnessRun``: missions, ledger, events
- :mod:`uh_core.harness.ledger` — ``.harness/runs/<run-id>.json``
- :mod:`uh_core.harness.summary` — the end-of-run summary (text and JSON)
- :mod:`uh_core.harness.report` — ``harness report`` (with :mod:`~uh_core.harness.marks` and
  :mod:`~uh_core.harness.same_cause`)
"""
