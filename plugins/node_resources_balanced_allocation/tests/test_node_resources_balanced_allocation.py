"""NodeResourcesBalancedAllocation: kube-scheduler v1.37's balanced_allocation_test.go table, a
case the parity suite found, args, and an end-to-end run."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from kubesched_node_resources_balanced_allocation import (
    NAME,
    NodeResourcesBalancedAllocation,
    balanced_allocation_score,
    balanced_resource_score,
)

from kubesched import (
    Code,
    ConfigError,
    CycleState,
    Handle,
    InMemoryBackend,
    Node,
    NodeInfo,
    Pod,
    Snapshot,
)
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

_names = itertools.count()


def new_plugin(args: dict[str, Any] | None = None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args or {}, Handle("test", InMemoryBackend(), Snapshot))


def pod(*requests: dict[str, str], node_name: str = "") -> Pod:
    name = f"pod{next(_names)}"
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)
        ]
    }
    if node_name:
        spec["nodeName"] = node_name
    return Pod({"metadata": {"name": name}, "spec": spec})


def makenode(
    name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None
) -> Node:
    """kube's makeNode(name, milliCPU, memory, extendedResource)."""
    resources = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    resources.update({k: str(v) for k, v in (extended or {}).items()})
    return Node(
        {"metadata": {"name": name}, "status": {"capacity": resources, "allocatable": resources}}
    )


# The pod specs of the Go test (spec.nodeName decides where the existing pods run).
def cpu_only(node_name: str = "node1") -> Pod:
    return pod(
        {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}, node_name=node_name
    )


def cpu_and_memory(node_name: str = "node2") -> Pod:
    return pod(
        {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}, node_name=node_name
    )


def cpu_and_memory_and_gpu() -> Pod:
    return pod(
        {"cpu": "1000m", "memory": "2000"},
        {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
        node_name="node1",
    )


WITH_GPU = {
    "resources": [
        {"name": "cpu", "weight": 1},
        {"name": "memory", "weight": 1},
        {"name": "nvidia.com/gpu", "weight": 1},
    ]
}
GPU8 = {"nvidia.com/gpu": 8}

# kube-scheduler v1.37's table: a node scores 50 + (50 + balance with the pod - balance
# without it) / 2, each balance being (1 - std) * 100 of the used fractions.
CASES: list[tuple[Any, ...]] = [
    (
        # node1: cpu 0% -> 75%, memory 0% -> 50%: 100 -> 87; node2: 0% -> 50% both: 100 -> 100
        "nothing scheduled, resources requested, differently sized nodes",
        lambda: cpu_and_memory(""),
        lambda: [],
        [makenode("node1", 4000, 10000), makenode("node2", 6000, 10000)],
        {"node1": 68, "node2": 75},
        {},
        True,
    ),
    (
        # node1: cpu 30% -> 60%, memory 0% -> 25%: 85 -> 82; node2: 30/25% -> 60/50%: 97 -> 95
        "resources requested, pods scheduled with resources",
        lambda: cpu_and_memory(""),
        lambda: [cpu_only(), cpu_and_memory()],
        [makenode("node1", 10000, 20000), makenode("node2", 10000, 20000)],
        {"node1": 73, "node2": 74},
        {},
        True,
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        lambda: cpu_and_memory(""),
        lambda: [cpu_only(), cpu_and_memory()],
        [makenode("node1", 10000, 20000), makenode("node2", 10000, 50000)],
        {"node1": 73, "node2": 70},
        {},
        True,
    ),
    (
        # node1: cpu 100%, memory 0% -> 100%: 50 -> 100; node2: memory 0% -> 100%: 100 -> 50
        "resources requested, pods scheduled with resources, nodes to reach min/max score",
        lambda: pod({"memory": "2000"}, {"memory": "3000"}),
        lambda: [cpu_only()],
        [makenode("node1", 3000, 5000), makenode("node2", 3000, 5000)],
        {"node1": 100, "node2": 50},
        {},
        True,
    ),
    (
        "requested resources at node capacity",
        lambda: cpu_only(""),
        lambda: [cpu_only(), cpu_and_memory()],
        [makenode("node1", 6000, 10000), makenode("node2", 6000, 10000)],
        {"node1": 62, "node2": 62},
        {},
        True,
    ),
    (
        "scalar resource is included in the score computation if pod requests the scalar resource",
        lambda: pod({"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}),
        lambda: [cpu_and_memory(), cpu_and_memory_and_gpu()],
        [makenode("node1", 3500, 40000, GPU8), makenode("node2", 3500, 40000, GPU8)],
        {"node1": 75, "node2": 76},
        WITH_GPU,
        True,
    ),
    (
        "scalar resource is not included in the score computation if pod doesn't request the "
        "scalar resource",
        lambda: cpu_and_memory(""),
        lambda: [],
        [makenode("node1", 3500, 40000, GPU8), makenode("node2", 3500, 40000)],
        {"node1": 56, "node2": 56},
        WITH_GPU,
        True,
    ),
    (
        "resources requested, pods scheduled with resources if PreScore not called",
        lambda: cpu_and_memory(""),
        lambda: [cpu_only(), cpu_and_memory()],
        [makenode("node1", 10000, 20000), makenode("node2", 10000, 20000)],
        {"node1": 73, "node2": 74},
        {},
        False,
    ),
    (
        # Found by the parity suite: cpu 1.5 of 8 in use, the pod asks 1Gi of 16Gi memory.
        "a pod that only asks for memory, on a node whose cpu is in use",
        lambda: pod({"memory": "1Gi"}),
        lambda: [pod({"cpu": "1500m"}, node_name="node1")],
        [
            Node(
                {
                    "metadata": {"name": "node1"},
                    "status": {"allocatable": {"cpu": "8", "memory": "16Gi"}},
                }
            ),
            Node(
                {
                    "metadata": {"name": "node2"},
                    "status": {"allocatable": {"cpu": "1", "memory": "8Gi"}},
                }
            ),
        ],
        {"node1": 76, "node2": 71},
        {},
        True,
    ),
]


@pytest.mark.parametrize(
    ("make_pod_", "make_existing", "nodes", "expected", "args", "run_pre_score"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_node_resources_balanced_allocation(
    make_pod_, make_existing, nodes, expected, args, run_pre_score
):
    plugin = new_plugin(args)
    the_pod = make_pod_()
    existing = make_existing()
    infos = [NodeInfo(n, [p for p in existing if p.node_name == n.name]) for n in nodes]
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, the_pod, infos) is None
    assert {info.name: plugin.score(state, the_pod, info) for info in infos} == expected


def test_best_effort_pod_is_skipped_in_pre_score():
    plugin = new_plugin()
    infos = [NodeInfo(makenode("node1", 4000, 10000)), NodeInfo(makenode("node2", 4000, 10000))]
    status = plugin.pre_score(CycleState(), pod(), infos)
    assert status.code is Code.SKIP
    # Without PreScore, a best-effort pod scores 0 everywhere.
    assert plugin.score(CycleState(), pod(), infos[0]) == 0


@pytest.mark.parametrize(
    ("requested", "allocatable", "want"),
    [
        ([3000, 5000], [4000, 10000], 87),
        ([0, 0], [0, 0], 100),
        ([8000, 0], [4000, 10000], 50),
        ([3000, 5000, 4], [3500, 40000, 8], 70),
    ],
    ids=["two-resources", "no-resource-on-node", "fraction-capped-at-one", "three-resources"],
)
def test_balanced_resource_score(requested, allocatable, want):
    assert balanced_resource_score(requested, allocatable) == want


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "want"),
    [
        ([3000, 5000], [0, 0], [4000, 10000], 68),
        ([3000, 5000], [3000, 5000], [4000, 10000], 75),
        ([3000, 5000], [3000, 0], [3000, 5000], 100),
        ([0, 5000], [0, 0], [3000, 5000], 50),
        ([0, 0], [0, 0], [0, 0], 75),
    ],
    ids=["better-than-empty", "unchanged", "best-improvement", "worst-degradation", "no-resource"],
)
def test_balanced_allocation_score(requested, allocated, allocatable, want):
    assert balanced_allocation_score(requested, allocated, allocatable) == want


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (
            {"resources": [{"name": "cpu", "weight": 2}, {"name": "cpu"}]},
            [
                "resources[0].weight: Invalid value: 2: must be 1",
                'resources[1].name: Duplicate value: "cpu"',
            ],
        ),
        ({"resources": "cpu"}, ["resources: must be a list of {name, weight}"]),
        ({"extra": True}, ["extra: unknown field; allowed: resources"]),
    ],
    ids=["weight-and-duplicate", "not-a-list", "unknown-field"],
)
def test_bad_args_are_reported_with_their_paths_at_start_up(args, errors):
    profile = {
        "plugins": {"score": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": args}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeResourcesBalancedAllocation}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.{e}" for e in errors
    ]


def test_defaults_and_zero_weight():
    assert [(r.name, r.weight) for r in new_plugin().args.resources] == [("cpu", 1), ("memory", 1)]
    plugin = new_plugin({"resources": [{"name": "cpu", "weight": 0}, {"name": "nvidia.com/gpu"}]})
    assert [(r.name, r.weight) for r in plugin.args.resources] == [
        ("cpu", 1),
        ("nvidia.com/gpu", 1),
    ]


def test_pod_goes_where_use_stays_balanced():
    # cpu-heavy node "a" and memory-heavy node "b"; a memory-heavy pod balances "a".
    nodes = [
        make_node("a").capacity(cpu="4", memory="8Gi").obj(),
        make_node("b").capacity(cpu="4", memory="8Gi").obj(),
    ]
    pods = [
        make_pod("cpu-hog").req(cpu="3", memory="1Gi").node("a").obj(),
        make_pod("mem-hog").req(cpu="500m", memory="6Gi").node("b").obj(),
        make_pod("p").req(cpu="100m", memory="4Gi").obj(),
    ]
    profile = {"plugins": {"score": {"enabled": [{"name": NAME}]}}}
    scheduler, backend = make_scheduler(
        {NAME: NodeResourcesBalancedAllocation}, profile, nodes, pods
    )
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "a"
