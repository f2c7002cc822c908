"""Medium scale (100–500 nodes, where kube-scheduler samples nodes): each pod replayed on the state
kube-scheduler saw, and the whole file through both schedulers, compared on invariants.

``test_replay[medium-<seed>-<i>]`` creates the pods one at a time through the session's
kube-scheduler and decides each with kubesched over every node of the same state
(``replay.py``); ``test_whole_run[…]`` creates the same scenario's pods at once and checks both
placements (``whole_run.py``, ``invariants.py``). Sizes: ``KUBESCHED_PARITY_MEDIUM`` scenarios
(default 1) of ``KUBESCHED_PARITY_MEDIUM_NODES`` nodes (default 150) and
``KUBESCHED_PARITY_MEDIUM_PODS`` pods (default 120), from ``KUBESCHED_PARITY_SEED``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import yaml
from medium_scenarios import generate_medium
from parity_profile import PROFILE
from parity_reference import ReferenceRunner
from parity_scenarios import Scenario
from parity_shrink import pinned
from parity_stats import ParitySettings
from replay import MediumStats, deciding_with, full_evaluation_configs, replay_comparisons
from whole_run import run_whole


@dataclass(frozen=True)
class MediumSettings:
    scenarios: int
    nodes: int
    pods: int

    @classmethod
    def from_environment(cls) -> MediumSettings:
        values = {}
        for field, name, default in (
            ("scenarios", "KUBESCHED_PARITY_MEDIUM", 1),
            ("nodes", "KUBESCHED_PARITY_MEDIUM_NODES", 150),
            ("pods", "KUBESCHED_PARITY_MEDIUM_PODS", 120),
        ):
            text = os.environ.get(name) or str(default)
            if not text.isdigit():
                raise pytest.UsageError(f"{name}={text!r}: expected a whole number")
            values[field] = int(text)
        return cls(**values)


SETTINGS = MediumSettings.from_environment()
_INDEXES = range(SETTINGS.scenarios)


def _ids(seed_from_env: str = os.environ.get("KUBESCHED_PARITY_SEED") or "0") -> list[str]:
    return [f"medium-{seed_from_env}-{i}-{SETTINGS.nodes}n" for i in _INDEXES]


@pytest.fixture(params=_INDEXES, ids=_ids())
def medium_scenario(
    request: pytest.FixtureRequest, parity_settings: ParitySettings, medium_stats: MediumStats
) -> Iterator[Scenario]:
    began = time.monotonic()
    yield generate_medium(parity_settings.seed, request.param, SETTINGS.nodes, SETTINGS.pods)
    medium_stats.seconds += time.monotonic() - began


def test_replay(
    medium_scenario: Scenario,
    reference_runner: ReferenceRunner,
    parity_settings: ParitySettings,
    medium_stats: MediumStats,
) -> None:
    scenario = medium_scenario
    with deciding_with(reference_runner, full_evaluation_configs(reference_runner.registry)):
        run = reference_runner.run(scenario)
    if run.error:
        pytest.fail(f"scenario {scenario.name} could not run: {run.error}", pytrace=False)
    comparisons = replay_comparisons(run, len(scenario.nodes))
    medium_stats.add(scenario.name, comparisons)
    mismatches = [c for c in comparisons if not c.ok]
    if not mismatches:
        return
    report = "\n".join(c.describe() for c in mismatches)
    if parity_settings.report_dir is not None:
        for comparison in mismatches:
            directory = parity_settings.report_dir / f"{scenario.name}-{comparison.pod}"
            directory.mkdir(parents=True, exist_ok=True)
            state = pinned(run, comparison.pod)  # the cluster kube-scheduler saw, and the pod
            (directory / "scenario.yaml").write_text(state.to_yaml())
            (directory / "profile.yaml").write_text(yaml.safe_dump(PROFILE, sort_keys=False))
            (directory / "report.txt").write_text(comparison.describe() + "\n")
    pytest.fail(f"scenario {scenario.name}:\n{report}", pytrace=False)


def test_whole_run(
    medium_scenario: Scenario, reference_runner: ReferenceRunner, medium_stats: MediumStats
) -> None:
    run = run_whole(reference_runner, reference_runner.registry, medium_scenario)
    medium_stats.whole_runs.append(run.summary())
    problems = run.problems()
    assert not problems, f"scenario {medium_scenario.name}:\n" + "\n".join(problems)
