"""Gate stages, one module each; every module exposes ``check(ctx) -> StageResult``.

Their order lives in one place: :data:`uh_core.harness.gate.STAGES`.
"""
