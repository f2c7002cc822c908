"""Generated scenarios, scheduled by the reference kube-scheduler and by kubesched, pod by pod.

One test per scenario (``seed<S>-<i>``). A scenario passes when every pod agrees: bound or not;
the same FailedScheduling message; the reference scheduler's node among kubesched's best. A
mismatch fails the test with a minimal scenario that still shows it, as YAML manifests with
both outcomes (see README.md).
"""

from __future__ import annotations

import pytest
import yaml
from parity_profile import PROFILE
from parity_reference import ReferenceRunner
from parity_scenarios import generate
from parity_shrink import mismatch_report, shrink
from parity_stats import ParitySettings, ParityStats


def test_scenario(
    scenario_index: int,
    reference_runner: ReferenceRunner,
    parity_stats: ParityStats,
    parity_settings: ParitySettings,
) -> None:
    scenario = generate(parity_settings.seed, scenario_index)
    run = reference_runner.run(scenario)
    parity_stats.add(run)
    if run.error:
        pytest.fail(
            f"scenario {scenario.name} could not run: {run.error}\n"
            f"--- # scenario.yaml\n{scenario.to_yaml()}",
            pytrace=False,
        )
    mismatches = run.mismatches()
    if not mismatches:
        return
    target = mismatches[0].pod
    smallest = run
    if parity_stats.shrunk < parity_settings.shrink_max:
        parity_stats.shrunk += 1
        smallest = shrink(reference_runner, run, target, parity_settings.shrink_seconds)
    report = mismatch_report(smallest, target, run)
    if len(mismatches) > 1:
        others = ", ".join(f"{c.pod} ({c.mismatch})" for c in mismatches[1:])
        report += f"\n# also differing in this scenario: {others}"
    if parity_settings.report_dir is not None:
        directory = parity_settings.report_dir / f"{scenario.name}-{target}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "scenario.yaml").write_text(smallest.scenario.to_yaml())
        (directory / "profile.yaml").write_text(yaml.safe_dump(PROFILE, sort_keys=False))
        (directory / "report.txt").write_text(report + "\n")
    pytest.fail(report, pytrace=False)
