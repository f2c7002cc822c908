"""Reusing Filter/Score results across like pods changes no decision of the default profile.

The same varied cluster is simulated with reuse on and off (every plugin called for every
node): every pod must end on the same node, or fail with the same message.
"""

from __future__ import annotations

import random

import pytest

from kubesched.api.manifests import Cluster
from kubesched.config import default_config
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.simulate import SimulationResult, simulate
from kubesched.testing.builders import make_node, make_pod

ZONES = ("a", "b", "c")


def _cluster(seed: int) -> Cluster:
    rng = random.Random(seed)
    nodes = []
    for i in range(150):
        node = (
            make_node(f"node-{i:03d}")
            .zone(ZONES[i % 3])
            .label("disk", rng.choice(("ssd", "hdd")))
            .capacity(cpu=rng.choice(("2", "4", "8")), memory="16Gi", pods="20")
        )
        if i % 7 == 0:
            node = node.taint("dedicated", "batch", "NoSchedule")
        if i % 5 == 0:
            node = node.taint("spot", "", "PreferNoSchedule")
        if i % 4 == 0:
            node = node.images("registry.example/app:v1", size=400 * 1024 * 1024)
        nodes.append(node.obj())
    kinds = [
        lambda p: p.req(cpu="250m", memory="256Mi"),
        lambda p: p.req(cpu="1", memory="1Gi").image("registry.example/app:v1"),
        lambda p: p.req(cpu="500m").node_selector(disk="ssd"),
        lambda p: p.req(cpu="500m").toleration("dedicated", "batch", "NoSchedule"),
        lambda p: p.req(cpu="100m").preferred_node_affinity(5, "disk", "In", "hdd"),
        lambda p: p.req(cpu="200m").host_port(8080),
        lambda p: (
            p.req(cpu="300m")
            .label("app", "web")
            .pod_anti_affinity_in("app", "kubernetes.io/hostname", "web")
        ),
        lambda p: (
            p.req(cpu="300m")
            .label("app", "spread")
            .spread_constraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", {"app": "spread"})
        ),
        lambda p: p.req(cpu="7"),  # fits only the 8-cpu nodes, few times
    ]
    pods = []
    for i in range(450):
        kind = rng.randrange(len(kinds))
        pods.append(kinds[kind](make_pod(f"pod-{i:03d}").uid(f"uid-{i:03d}")).obj())
    return Cluster(nodes=nodes, pods=pods)


def _simulate(seed: int, reuse: bool) -> tuple[SimulationResult, int]:
    registry = Registry.installed()
    tables = []

    def configure(scheduler: Scheduler) -> None:
        for framework in scheduler.frameworks.values():
            framework.reuse_results = reuse
            tables.append(framework.memo)

    result = simulate(
        _cluster(seed), default_config(registry), registry, seed=seed, on_scheduler=configure
    )
    return result, sum(len(memo) for memo in tables)


def _outcomes(result: SimulationResult) -> dict[str, tuple[str | None, str]]:
    return {p.name: (p.node, p.message) for p in result.pods}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reuse_changes_no_decision(seed: int) -> None:
    reused, tables = _simulate(seed, reuse=True)
    fresh, no_tables = _simulate(seed, reuse=False)
    assert tables > 0 and no_tables == 0  # reuse did happen in the first run only
    assert _outcomes(reused) == _outcomes(fresh)
    assert 0 < reused.scheduled < len(reused.pods)  # both outcomes are represented
