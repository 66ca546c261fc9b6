"""Promotion: the operator's decision on what an agent produced (docs/promotion.md).

- :mod:`uh_core.promote.source` — what is promoted (a sandbox or ``harness/<id>``) and
  whether its verification passed
- :mod:`uh_core.promote.changes` — ``--change`` path filters
- :mod:`uh_core.promote.apply` — git: clean tree, the candidate tree, the three-way merge,
  the one commit (nothing changes when anything refuses)
- :mod:`uh_core.promote.record` — ``promotion.yaml`` (latest decision plus history) and the
  ``promotion.recorded`` event
- :mod:`uh_core.promote.decide` — ``promote(layout, PromotionRequest)``: the order of work
- :mod:`uh_core.promote.auto` — ``sandbox.promotion_policy: auto-on-verify``
"""
