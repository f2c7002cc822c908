"""Reusing Filter/Score results across like pods changes no decision of the default profile.

The same varied cluster is simulated with reuse on and off (every plugin called for every
node): every pod must end on the same node, or fail with the same message.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Pod
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
        lambda p: (  # reaches every node of its zone: the next pods are not signed
            p.req(cpu="200m")
            .label("app", "zonal")
            .pod_anti_affinity_in("app", "topology.kubernetes.io/zone", "web")
        ),
        lambda p: (
            p.req(cpu="200m")
            .label("app", "web")
            .pod_affinity_in("app", "kubernetes.io/hostname", "web", weight=10)
        ),
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


# -- InterPodAffinity signs a pod only while its answers are node-local ---------------------------

GREEN_AWAY = ("color", "kubernetes.io/hostname", "green")


def _green(name: str, priority: int) -> Pod:
    """A green pod that keeps other green pods off its host."""
    return (
        make_pod(name)
        .uid(f"uid-{name}")
        .priority(priority)
        .req(cpu="100m")
        .label("color", "green")
        .pod_anti_affinity_in(*GREEN_AWAY)
        .obj()
    )


def _both_ways(cluster: Callable[[], Cluster]) -> dict[str, tuple[str | None, str]]:
    """The outcomes with reuse on, checked equal to those with every plugin called."""
    outcomes = []
    for reuse in (True, False):
        registry = Registry.installed()

        def configure(scheduler: Scheduler, reuse: bool = reuse) -> None:
            for framework in scheduler.frameworks.values():
                framework.reuse_results = reuse

        result = simulate(cluster(), default_config(registry), registry, on_scheduler=configure)
        outcomes.append(_outcomes(result))
    assert outcomes[0] == outcomes[1]
    return outcomes[0]


def test_two_nodes_with_one_hostname_are_one_domain_for_anti_affinity() -> None:
    # Both nodes carry hostname "shared": once a green pod is on either, the other green pod
    # fits neither. A node's answer from the first pod's cycle must not be reused for it.
    def cluster() -> Cluster:
        nodes = [
            make_node(name).label("kubernetes.io/hostname", "shared").capacity(cpu="4").obj()
            for name in ("node-a", "node-b")
        ]
        return Cluster(nodes=nodes, pods=[_green("first", 2), _green("second", 1)])

    outcomes = _both_ways(cluster)
    assert outcomes["first"][0] in ("node-a", "node-b")
    assert outcomes["second"][0] is None
    assert "didn't match pod anti-affinity rules" in outcomes["second"][1]


def test_a_zone_keyed_pod_placed_between_two_like_pods_is_seen_by_the_second() -> None:
    # node-c is the roomiest, so the first green pod goes there (zone b); the zonal pod then
    # keeps green pods out of its own zone, a; the second green pod fits nowhere.
    def cluster() -> Cluster:
        nodes = [
            make_node("node-a1").zone("a").capacity(cpu="4", memory="8Gi").obj(),
            make_node("node-a2").zone("a").capacity(cpu="4", memory="8Gi").obj(),
            make_node("node-c").zone("b").capacity(cpu="64", memory="256Gi").obj(),
        ]
        zonal = (
            make_pod("zonal")
            .uid("uid-zonal")
            .priority(2)
            .req(cpu="100m")
            .pod_anti_affinity_in("color", "topology.kubernetes.io/zone", "green")
            .obj()
        )
        return Cluster(nodes=nodes, pods=[_green("first", 3), zonal, _green("second", 1)])

    outcomes = _both_ways(cluster)
    assert outcomes["first"][0] == "node-c"
    assert outcomes["zonal"][0] in ("node-a1", "node-a2")
    assert outcomes["second"][0] is None
