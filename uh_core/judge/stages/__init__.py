"""The judge's gate stages, one module each; every module exposes ``check(ctx) -> StageResult``.

Their order lives in one place: :data:`uh_core.judge.gate.JUDGE_STAGES` (the harness adds
its ``agent`` stage in front: :data:`uh_core.harness.gate.STAGES`).
"""
