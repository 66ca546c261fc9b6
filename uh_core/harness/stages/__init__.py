"""The harness's own gate stage (``agent``); the judge's stages are in
:mod:`uh_core.judge.stages`. Their order lives in one place: :data:`uh_core.harness.gate.STAGES`.
"""
