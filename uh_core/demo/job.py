"""The demo's main job: verify every mission, run ``divide`` on four scripted runtimes,
compare their diffs, then verify each runtime's sandbox (the TDD gate included)."""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.adapters.manifests import load_manifest
from uh_core.demo.build import Demo
from uh_core.demo.runtimes import demo_runtimes
from uh_core.judge.in_sandbox import verify_in_sandbox
from uh_core.missions import load_mission
from uh_core.models.comparison import Comparison
from uh_core.models.verification import VerificationResult
from uh_core.runall.run_all import RunAllOptions, run_all
from uh_core.runtime.run import CancelToken
from uh_core.verify.runner import VerifyOptions, verify_mission
from uh_core.verify.synthetic import synthetic_criteria

QA_MISSION = "divide"


@dataclass
class DemoReport:
    verifications: list[VerificationResult] = field(default_factory=list)
    comparison: Comparison | None = None
    sandbox_verdicts: dict[str, str] = field(default_factory=dict)  # runtime -> status


def run_demo_job(demo: Demo, token: CancelToken | None = None) -> DemoReport:
    layout = demo.layout
    report = DemoReport()
    for mission_id in demo.missions:
        mission = load_mission(layout, mission_id).mission
        options = VerifyOptions(timeout_s=60)
        options.synthetic = synthetic_criteria(layout, mission)
        report.verifications.append(verify_mission(layout, mission, options))
    mission = load_mission(layout, QA_MISSION).mission
    manifests = [load_manifest(layout, runtime) for runtime in demo_runtimes()]
    comparison = run_all(
        layout, mission, manifests, RunAllOptions(timeout_s=60), token or CancelToken()
    )
    report.comparison = comparison
    for row in comparison.runtimes:
        if row.sandbox and row.status == "succeeded":
            result = verify_in_sandbox(layout, mission, row.sandbox, VerifyOptions(timeout_s=60))
            report.sandbox_verdicts[row.runtime] = result.status
    return report
