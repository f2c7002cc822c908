"""NodeResourcesFit: kube-scheduler's fit_test.go, least_allocated_test.go,
most_allocated_test.go and requested_to_capacity_ratio_test.go tables, args, end to end."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from kubesched_node_resources_fit import (
    NAME,
    PRE_FILTER_STATE_KEY,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    InsufficientResource,
    NodeResourcesFit,
    fits_request,
    reason_insufficient,
)
from kubesched_node_resources_fit.scoring import broken_linear_function

from kubesched import (
    ActionType,
    Code,
    ConfigError,
    CycleState,
    EventResource,
    Handle,
    InMemoryBackend,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Snapshot,
    Status,
)
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

EXTENDED_A = "example.com/aaa"
EXTENDED_B = "example.com/bbb"
KUBERNETES_IO_A = "kubernetes.io/something"
KUBERNETES_IO_B = "subdomain.kubernetes.io/something"
HUGEPAGES_A = "hugepages-2Mi"
EXTENDED_RES = "abc.com/xyz"

_names = itertools.count()


def new_plugin(args: dict[str, Any] | None = None) -> NodeResourcesFit:
    return NodeResourcesFit(args or {}, Handle("test", InMemoryBackend(), Snapshot))


# --- building pods and nodes as kube's fit_test.go helpers do ------------------------------------


def res(
    cpu: int = 0, memory: int = 0, storage: int = 0, scalars: dict[str, int] | None = None
) -> dict[str, str]:
    """One container's requests, like kube's newResourcePod(framework.Resource{...})."""
    requests = {
        "cpu": f"{cpu}m",
        "memory": str(memory),
        "pods": "0",
        "ephemeral-storage": str(storage),
    }
    requests.update({name: str(value) for name, value in (scalars or {}).items()})
    return requests


def container(requests: dict[str, str] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": f"c{next(_names)}", "image": "pause"}
    if requests is not None:
        entry["resources"] = {"requests": requests}
    return entry


def manifest(
    *containers: dict[str, str] | None,
    init: tuple[dict[str, str], ...] = (),
    sidecars: tuple[dict[str, str] | None, ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    node_name: str = "",
    name: str = "",
    uid: str = "",
) -> dict[str, Any]:
    name = name or f"pod{next(_names)}"
    spec: dict[str, Any] = {"containers": [container(c) for c in containers]}
    init_containers = [container(c) for c in init]
    for sidecar in sidecars:
        init_containers.append({**container(sidecar), "restartPolicy": "Always"})
    if init_containers:
        spec["initContainers"] = init_containers
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "uid": uid or name}, "spec": spec}


def pod(*containers: dict[str, str] | None, **kwargs: Any) -> Pod:
    return Pod(manifest(*containers, **kwargs))


def allocatable(
    cpu: int, memory: int, pods: int, extended_a: int = 0, storage: int = 0, hugepages: int = 0
) -> dict[str, str]:
    """kube's makeAllocatableResources(milliCPU, memory, pods, extendedA, storage, hugePageA)."""
    return {
        "cpu": f"{cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        EXTENDED_A: str(extended_a),
        "ephemeral-storage": str(storage),
        HUGEPAGES_A: str(hugepages),
    }


def node(name: str = "node", resources: dict[str, str] | None = None) -> Node:
    status = {"capacity": resources or {}, "allocatable": resources or {}}
    return Node({"metadata": {"name": name}, "status": status})


def st_node(name: str, capacity: dict[str, str] | None = None) -> Node:
    """kube's st.MakeNode().Name(name).Capacity(...): capacity and allocatable, 32 pods."""
    resources = {"pods": "32", **(capacity or {})} if capacity is not None else {}
    return node(name, resources)


def run_filter(plugin: NodeResourcesFit, the_pod: Pod, node_info: NodeInfo) -> Status | None:
    state = CycleState()
    assert plugin.pre_filter(state, the_pod, [node_info]) is None
    return plugin.filter(state, the_pod, node_info)


def unschedulable(*reasons: str) -> Status:
    return Status.unschedulable(*reasons)


def unresolvable(*reasons: str) -> Status:
    return Status.unresolvable(*reasons)


def ins(
    name: str, requested: int, used: int, capacity: int, unresolvable: bool = False
) -> InsufficientResource:
    reason = {
        "cpu": REASON_INSUFFICIENT_CPU,
        "memory": REASON_INSUFFICIENT_MEMORY,
        "ephemeral-storage": REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    }.get(name, reason_insufficient(name))
    return InsufficientResource(name, reason, requested, used, capacity, unresolvable)


# --- TestEnoughRequests ---------------------------------------------------------------------------

# (name, pod manifest, the node's existing pod manifest (or None), args, want status,
#  want insufficient resources)
ENOUGH_CASES: list[tuple[Any, ...]] = [
    ("no resources requested always fits", manifest(), manifest(res(10, 20)), {}, None, []),
    (
        "too many resources fails",
        manifest(res(1, 1)),
        manifest(res(10, 20)),
        {},
        unschedulable(REASON_INSUFFICIENT_CPU, REASON_INSUFFICIENT_MEMORY),
        [ins("cpu", 1, 10, 10), ins("memory", 1, 20, 20)],
    ),
    (
        "too many resources fails due to init container cpu",
        manifest(res(1, 1), init=(res(3, 1),)),
        manifest(res(8, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_CPU),
        [ins("cpu", 3, 8, 10)],
    ),
    (
        "too many resources fails due to highest init container cpu",
        manifest(res(1, 1), init=(res(3, 1), res(2, 1))),
        manifest(res(8, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_CPU),
        [ins("cpu", 3, 8, 10)],
    ),
    (
        "too many resources fails due to init container memory",
        manifest(res(1, 1), init=(res(1, 3),)),
        manifest(res(9, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 3, 19, 20)],
    ),
    (
        "too many resources fails due to highest init container memory",
        manifest(res(1, 1), init=(res(1, 3), res(1, 2))),
        manifest(res(9, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 3, 19, 20)],
    ),
    (
        "init container fits because it's the max, not sum, of containers and init containers",
        manifest(res(1, 1), init=(res(1, 1),)),
        manifest(res(9, 19)),
        {},
        None,
        [],
    ),
    (
        "multiple init containers fit because it's the max, not sum, of containers and init "
        "containers",
        manifest(res(1, 1), init=(res(1, 1), res(1, 1))),
        manifest(res(9, 19)),
        {},
        None,
        [],
    ),
    ("both resources fit", manifest(res(1, 1)), manifest(res(5, 5)), {}, None, []),
    (
        "one resource memory fits",
        manifest(res(2, 1)),
        manifest(res(9, 5)),
        {},
        unschedulable(REASON_INSUFFICIENT_CPU),
        [ins("cpu", 2, 9, 10)],
    ),
    (
        "one resource cpu fits",
        manifest(res(1, 2)),
        manifest(res(5, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 2, 19, 20)],
    ),
    ("equal edge case", manifest(res(5, 1)), manifest(res(5, 19)), {}, None, []),
    (
        "equal edge case for init container",
        manifest(res(4, 1), init=(res(5, 1),)),
        manifest(res(5, 19)),
        {},
        None,
        [],
    ),
    (
        "extended resource fits",
        manifest(res(scalars={EXTENDED_A: 1})),
        manifest(res()),
        {},
        None,
        [],
    ),
    (
        "extended resource fits for init container",
        manifest(res(), init=(res(scalars={EXTENDED_A: 1}),)),
        manifest(res()),
        {},
        None,
        [],
    ),
    (
        "extended resource capacity enforced",
        manifest(res(1, 1, scalars={EXTENDED_A: 10})),
        manifest(res(0, 0, scalars={EXTENDED_A: 0})),
        {},
        unresolvable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 10, 0, 5, True)],
    ),
    (
        "extended resource capacity enforced for init container",
        manifest(res(), init=(res(1, 1, scalars={EXTENDED_A: 10}),)),
        manifest(res(0, 0, scalars={EXTENDED_A: 0})),
        {},
        unresolvable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 10, 0, 5, True)],
    ),
    (
        "extended resource allocatable enforced",
        manifest(res(1, 1, scalars={EXTENDED_A: 1})),
        manifest(res(0, 0, scalars={EXTENDED_A: 5})),
        {},
        unschedulable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 1, 5, 5)],
    ),
    (
        "extended resource allocatable enforced for init container",
        manifest(res(), init=(res(1, 1, scalars={EXTENDED_A: 1}),)),
        manifest(res(0, 0, scalars={EXTENDED_A: 5})),
        {},
        unschedulable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 1, 5, 5)],
    ),
    (
        "extended resource allocatable enforced for multiple containers",
        manifest(res(1, 1, scalars={EXTENDED_A: 3}), res(1, 1, scalars={EXTENDED_A: 3})),
        manifest(res(0, 0, scalars={EXTENDED_A: 2})),
        {},
        unresolvable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 6, 2, 5, True)],
    ),
    (
        "extended resource allocatable admits multiple init containers",
        manifest(
            res(), init=(res(1, 1, scalars={EXTENDED_A: 3}), res(1, 1, scalars={EXTENDED_A: 3}))
        ),
        manifest(res(0, 0, scalars={EXTENDED_A: 2})),
        {},
        None,
        [],
    ),
    (
        "extended resource allocatable enforced for multiple init containers",
        manifest(
            res(), init=(res(1, 1, scalars={EXTENDED_A: 6}), res(1, 1, scalars={EXTENDED_A: 3}))
        ),
        manifest(res(0, 0, scalars={EXTENDED_A: 2})),
        {},
        unresolvable(reason_insufficient(EXTENDED_A)),
        [ins(EXTENDED_A, 6, 2, 5, True)],
    ),
    (
        "extended resource allocatable enforced for unknown resource",
        manifest(res(1, 1, scalars={EXTENDED_B: 1})),
        manifest(res()),
        {},
        unresolvable(reason_insufficient(EXTENDED_B)),
        [ins(EXTENDED_B, 1, 0, 0, True)],
    ),
    (
        "extended resource allocatable enforced for unknown resource for init container",
        manifest(res(), init=(res(1, 1, scalars={EXTENDED_B: 1}),)),
        manifest(res()),
        {},
        unresolvable(reason_insufficient(EXTENDED_B)),
        [ins(EXTENDED_B, 1, 0, 0, True)],
    ),
    (
        "kubernetes.io resource capacity enforced",
        manifest(res(1, 1, scalars={KUBERNETES_IO_A: 10})),
        manifest(res()),
        {},
        unresolvable(reason_insufficient(KUBERNETES_IO_A)),
        [ins(KUBERNETES_IO_A, 10, 0, 0, True)],
    ),
    (
        "kubernetes.io resource capacity enforced for init container",
        manifest(res(), init=(res(1, 1, scalars={KUBERNETES_IO_B: 10}),)),
        manifest(res()),
        {},
        unresolvable(reason_insufficient(KUBERNETES_IO_B)),
        [ins(KUBERNETES_IO_B, 10, 0, 0, True)],
    ),
    (
        "hugepages resource capacity enforced",
        manifest(res(1, 1, scalars={HUGEPAGES_A: 10})),
        manifest(res(0, 0, scalars={HUGEPAGES_A: 0})),
        {},
        unresolvable(reason_insufficient(HUGEPAGES_A)),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
    ),
    (
        "hugepages resource capacity enforced for init container",
        manifest(res(), init=(res(1, 1, scalars={HUGEPAGES_A: 10}),)),
        manifest(res(0, 0, scalars={HUGEPAGES_A: 0})),
        {},
        unresolvable(reason_insufficient(HUGEPAGES_A)),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
    ),
    (
        "hugepages resource allocatable enforced for multiple containers",
        manifest(res(1, 1, scalars={HUGEPAGES_A: 3}), res(1, 1, scalars={HUGEPAGES_A: 3})),
        manifest(res(0, 0, scalars={HUGEPAGES_A: 2})),
        {},
        unresolvable(reason_insufficient(HUGEPAGES_A)),
        [ins(HUGEPAGES_A, 6, 2, 5, True)],
    ),
    (
        "skip checking ignored extended resource",
        manifest(res(1, 1, scalars={EXTENDED_B: 1})),
        manifest(res()),
        {"ignoredResources": ["example.com/bbb"]},
        None,
        [],
    ),
    (
        "resources + pod overhead fits",
        manifest(res(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        manifest(res(5, 5)),
        {},
        None,
        [],
    ),
    (
        "requests + overhead does not fit for memory",
        manifest(res(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        manifest(res(5, 5)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 16, 5, 20)],
    ),
    (
        "skip checking ignored extended resource via resource groups",
        manifest(res(1, 1, scalars={EXTENDED_B: 1, KUBERNETES_IO_A: 1})),
        manifest(res()),
        {"ignoredResourceGroups": ["example.com"]},
        unresolvable(reason_insufficient(KUBERNETES_IO_A)),
        [ins(KUBERNETES_IO_A, 1, 0, 0, True)],
    ),
    (
        "skip checking extended resource request with quantity zero via resource groups",
        manifest(res(1, 1, scalars={EXTENDED_A: 0})),
        manifest(res(0, 0, scalars={EXTENDED_A: 6})),
        {},
        None,
        [],
    ),
    (
        "skip checking resource request with quantity zero",
        manifest(res(scalars={EXTENDED_A: 1})),
        manifest(res(20, 30, scalars={EXTENDED_A: 1})),
        {},
        None,
        [],
    ),
    (
        "both pod-level and container-level resources fit",
        manifest(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
        manifest(res(5, 5)),
        {},
        None,
        [],
    ),
    (
        "pod-level cpu resource not fit",
        manifest(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
        manifest(res(5, 5)),
        {},
        unschedulable(REASON_INSUFFICIENT_CPU),
        [ins("cpu", 7, 5, 10)],
    ),
    (
        "pod-level memory resource not fit",
        manifest(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
        manifest(res(5, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 2, 19, 20)],
    ),
    (
        "pod-level hugepages resource fit",
        manifest(pod_level={"cpu": "3m", "memory": "2", HUGEPAGES_A: "5"}),
        None,
        {},
        None,
        [],
    ),
    (
        "both pod-level and container-level hugepages resource fit",
        manifest(
            res(1, 1, scalars={HUGEPAGES_A: 3}),
            pod_level={"cpu": "3m", "memory": "2", HUGEPAGES_A: "5"},
        ),
        None,
        {},
        None,
        [],
    ),
    (
        "pod-level hugepages resource not fit",
        manifest(pod_level={"cpu": "3m", "memory": "2", HUGEPAGES_A: "10"}),
        None,
        {},
        unresolvable(reason_insufficient(HUGEPAGES_A)),
        [ins(HUGEPAGES_A, 10, 0, 5, True)],
    ),
    (
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        manifest(res(1, 1), init=(res(1, 1),), pod_level={"cpu": "3m", "memory": "2"}),
        manifest(res(5, 19)),
        {},
        unschedulable(REASON_INSUFFICIENT_MEMORY),
        [ins("memory", 2, 19, 20)],
    ),
    (
        "extended resource backed by DRA not enabled",
        manifest(res(1, 1, scalars={"extended.resource.dra.io/something": 1})),
        manifest(res()),
        {},
        unresolvable(reason_insufficient("extended.resource.dra.io/something")),
        [ins("extended.resource.dra.io/something", 1, 0, 0, True)],
    ),
]


@pytest.mark.parametrize(
    ("pod_manifest", "existing", "args", "want_status", "want_insufficient"),
    [case[1:] for case in ENOUGH_CASES],
    ids=[case[0] for case in ENOUGH_CASES],
)
def test_enough_requests(pod_manifest, existing, args, want_status, want_insufficient):
    plugin = new_plugin(args)
    the_node = node("node", allocatable(10, 20, 32, 5, 20, 5))
    node_info = NodeInfo(the_node, [Pod(existing)] if existing else [])
    the_pod = Pod(pod_manifest)
    assert run_filter(plugin, the_pod, node_info) == want_status
    state = CycleState()
    plugin.pre_filter(state, the_pod, [])
    got = fits_request(
        state.read(PRE_FILTER_STATE_KEY),
        node_info,
        set(args.get("ignoredResources", ())),
        set(args.get("ignoredResourceGroups", ())),
    )
    assert got == want_insufficient


def test_codes_unschedulable_vs_unresolvable():
    node_info = NodeInfo(node("node", allocatable(10, 20, 32, 5, 20, 5)), [pod(res(9, 0))])
    assert run_filter(new_plugin(), pod(res(2)), node_info).code is Code.UNSCHEDULABLE
    assert run_filter(new_plugin(), pod(res(11)), node_info).code is (
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    )


def test_pre_filter_disabled_is_an_error():
    status = new_plugin().filter(CycleState(), pod(), NodeInfo(node()))
    assert status.code is Code.ERROR


# --- TestNotEnoughRequests ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod_manifest", "existing"),
    [
        (manifest(), manifest(res(10, 20))),
        (manifest(res(1, 1)), manifest(res(5, 5))),
        (manifest(res(5, 1)), manifest(res(5, 19))),
        (manifest(res(5, 1), init=(res(5, 1),)), manifest(res(5, 19))),
    ],
    ids=[
        "even without specified resources, predicate fails when there's no space for "
        "additional pod",
        "even if both resources fit, predicate fails when there's no space for additional pod",
        "even for equal edge case, predicate fails when there's no space for additional pod",
        "even for equal edge case, predicate fails when there's no space for additional pod "
        "due to init container",
    ],
)
def test_not_enough_requests(pod_manifest, existing):
    node_info = NodeInfo(node("node", allocatable(10, 20, 1)), [Pod(existing)])
    assert run_filter(new_plugin(), Pod(pod_manifest), node_info) == unschedulable(
        REASON_TOO_MANY_PODS
    )


# --- TestStorageRequests --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod_manifest", "existing", "want"),
    [
        (manifest(res(1, 1)), manifest(res(2, 10)), None),
        (
            manifest(res(storage=25)),
            manifest(res(2, 2)),
            unresolvable(REASON_INSUFFICIENT_EPHEMERAL_STORAGE),
        ),
        (manifest(init=(res(storage=5),)), manifest(res(2, 2, storage=10)), None),
        (manifest(res(storage=10)), manifest(res(2, 2)), None),
    ],
    ids=[
        "empty storage requested, and pod fits",
        "storage ephemeral local storage request exceeds allocatable",
        "ephemeral local storage is sufficient",
        "pod fits",
    ],
)
def test_storage_requests(pod_manifest, existing, want):
    node_info = NodeInfo(node("node", allocatable(10, 20, 32, 5, 20, 5)), [Pod(existing)])
    assert run_filter(new_plugin(), Pod(pod_manifest), node_info) == want


# --- TestRestartableInitContainers (sidecar containers are always on here) ------------------------


@pytest.mark.parametrize(
    ("pod_manifest", "want"),
    [
        (manifest(None), None),
        (manifest(None, sidecars=(None,)), None),
        (manifest({"cpu": "1m"}, sidecars=({"cpu": "1m"},)), None),
        (
            manifest({"cpu": "1m"}, sidecars=({"cpu": "2m"},)),
            unresolvable(REASON_INSUFFICIENT_CPU),
        ),
    ],
    ids=[
        "allow pod without restartable init containers if sidecar containers is enabled",
        "allow pod with restartable init containers if sidecar containers is enabled",
        "allow pod if the total requested resources do not exceed the node's allocatable resources",
        "not allow pod if the total requested resources do exceed the node's allocatable resources",
    ],
)
def test_restartable_init_containers(pod_manifest, want):
    node_info = NodeInfo(node("node", {"cpu": "2m", "memory": "0", "pods": "1"}))
    assert run_filter(new_plugin(), Pod(pod_manifest), node_info) == want


# --- scoring helpers ------------------------------------------------------------------------------


def st_pod(*requests: dict[str, str], node_name: str = "", empty_containers: int = 0) -> Pod:
    """kube's st.MakePod(): no container unless Req() (one container each) or Container()."""
    return pod(*requests, *([None] * empty_containers), node_name=node_name)


def scores(
    args: dict[str, Any],
    requested_pod: Pod,
    nodes: list[Node],
    existing: list[Pod] = (),  # type: ignore[assignment]
    run_pre_score: bool = True,
) -> dict[str, int | Status]:
    plugin = new_plugin(args)
    infos = [NodeInfo(n, [p for p in existing if p.node_name == n.name]) for n in nodes]
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, requested_pod, infos) is None
    return {info.name: plugin.score(state, requested_pod, info) for info in infos}


def strategy(kind: str, resources: list[dict[str, Any]] | None = None, **extra: Any) -> dict:
    body: dict[str, Any] = {"type": kind, **extra}
    if resources is not None:
        body["resources"] = resources
    return {"scoringStrategy": body}


DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXTENDED_RES, "weight": 1}]


def cap(cpu: str, memory: str, **scalars: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, **scalars}


CPU_MEM_1 = {"cpu": "1000", "memory": "2000"}
CPU_MEM_2 = {"cpu": "2000", "memory": "3000"}


# --- least_allocated_test.go ----------------------------------------------------------------------

LEAST_CASES: list[tuple[Any, ...]] = [
    (
        "nothing scheduled, nothing requested",
        st_pod(),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))],
        [],
        {"node1": 100, "node2": 100},
        DEFAULT_RESOURCES,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
        [],
        {"node1": 37, "node2": 50},
        DEFAULT_RESOURCES,
    ),
    (
        "no resources requested, pods scheduled",
        st_pod(),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))],
        [
            st_pod(node_name="node1"),
            st_pod(node_name="node1"),
            st_pod(node_name="node2"),
            st_pod(node_name="node2"),
        ],
        {"node1": 100, "node2": 100},
        DEFAULT_RESOURCES,
    ),
    (
        "no resources requested, pods scheduled with resources",
        st_pod(),
        [st_node("node1", cap("10000", "20000")), st_node("node2", cap("10000", "20000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node2"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 70, "node2": 57},
        DEFAULT_RESOURCES,
    ),
    (
        "resources requested, pods scheduled with resources",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("10000", "20000")), st_node("node2", cap("10000", "20000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 57, "node2": 45},
        DEFAULT_RESOURCES,
    ),
    (
        "resources requested, pods scheduled with resources, differently sized nodes",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("10000", "20000")), st_node("node2", cap("10000", "50000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 57, "node2": 60},
        DEFAULT_RESOURCES,
    ),
    (
        "requested resources exceed node capacity",
        st_pod({"cpu": "3000", "memory": "0"}),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 50, "node2": 25},
        DEFAULT_RESOURCES,
    ),
    (
        "zero node resources, pods scheduled with resources",
        st_pod(),
        [st_node("node1"), st_node("node2")],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 0, "node2": 0},
        DEFAULT_RESOURCES,
    ),
    (
        "nothing scheduled, resources requested with different weight on CPU and memory, "
        "differently sized nodes",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
        [],
        {"node1": 41, "node2": 50},
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
    ),
    (
        "bypass extended resource if the pod does not request",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [
            st_node("node1", cap("6000", "10000")),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        {"node1": 50, "node2": 50},
        EXTENDED_RESOURCE_SET,
    ),
    (
        "honor extended resource if the pod requests",
        st_pod({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
        [
            st_node("node1", cap("6000", "10000", **{EXTENDED_RES: "4"})),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "10"})),
        ],
        [],
        {"node1": 50, "node2": 60},
        EXTENDED_RESOURCE_SET,
    ),
    (
        "if the node doesn't have a resource",
        st_pod({"cpu": "3000", "memory": "4000"}),
        [
            st_node("node1", cap("6000", "10000")),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        {"node1": 55, "node2": 55},
        [
            {"name": EXTENDED_RES, "weight": 2},
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
        ],
    ),
]


@pytest.mark.parametrize(
    ("requested_pod", "nodes", "existing", "expected", "resources"),
    [case[1:] for case in LEAST_CASES],
    ids=[case[0] for case in LEAST_CASES],
)
def test_least_allocated_scoring_strategy(requested_pod, nodes, existing, expected, resources):
    args = strategy("LeastAllocated", resources)
    assert scores(args, requested_pod, nodes, existing) == expected


# --- most_allocated_test.go -----------------------------------------------------------------------

MOST_CASES: list[tuple[Any, ...]] = [
    (
        "nothing scheduled, nothing requested",
        st_pod(),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))],
        [],
        {"node1": 0, "node2": 0},
        DEFAULT_RESOURCES,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
        [],
        {"node1": 62, "node2": 50},
        DEFAULT_RESOURCES,
    ),
    (
        "no resources requested, pods scheduled with resources",
        st_pod(),
        [st_node("node1", cap("10000", "20000")), st_node("node2", cap("10000", "20000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node2"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 30, "node2": 42},
        DEFAULT_RESOURCES,
    ),
    (
        "resources requested, pods scheduled with resources",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("10000", "20000")), st_node("node2", cap("10000", "20000"))],
        [
            st_pod({"cpu": "3000", "memory": "0"}, node_name="node1"),
            st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
        ],
        {"node1": 42, "node2": 55},
        DEFAULT_RESOURCES,
    ),
    (
        "resources requested equal node capacity",
        st_pod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
        [st_node("node1", cap("5000", "10000")), st_node("node2", cap("10000", "9000"))],
        [],
        {"node1": 95, "node2": 75},
        DEFAULT_RESOURCES,
    ),
    (
        "nothing scheduled, resources requested, differently sized nodes, memory weight 2",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
        [],
        {"node1": 58, "node2": 50},
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
    ),
    (
        "no resources requested, pods scheduled, nonzero request for resource",
        st_pod(empty_containers=1),
        [st_node("node1", cap("250m", "1000Mi")), st_node("node2", cap("250m", "1000Mi"))],
        [
            st_pod(node_name="node1", empty_containers=1),
            st_pod(node_name="node1", empty_containers=1),
        ],
        {"node1": 80, "node2": 30},
        DEFAULT_RESOURCES,
    ),
    (
        "bypass extended resource if the pod does not request",
        st_pod(CPU_MEM_1, CPU_MEM_2),
        [
            st_node("node1", cap("6000", "10000")),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        {"node1": 50, "node2": 50},
        EXTENDED_RESOURCE_SET,
    ),
    (
        "honor extended resource if the pod request",
        st_pod({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
        [
            st_node("node1", cap("6000", "10000", **{EXTENDED_RES: "4"})),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "10"})),
        ],
        [],
        {"node1": 50, "node2": 40},
        EXTENDED_RESOURCE_SET,
    ),
    (
        "if the node doesn't have a resource",
        st_pod({"cpu": "3000", "memory": "4000"}),
        [
            st_node("node1", cap("6000", "10000")),
            st_node("node2", cap("6000", "10000", **{EXTENDED_RES: "4"})),
        ],
        [],
        {"node1": 45, "node2": 45},
        [
            {"name": EXTENDED_RES, "weight": 2},
            {"name": "cpu", "weight": 1},
            {"name": "memory", "weight": 1},
        ],
    ),
]


@pytest.mark.parametrize(
    ("requested_pod", "nodes", "existing", "expected", "resources"),
    [case[1:] for case in MOST_CASES],
    ids=[case[0] for case in MOST_CASES],
)
def test_most_allocated_scoring_strategy(requested_pod, nodes, existing, expected, resources):
    args = strategy("MostAllocated", resources)
    assert scores(args, requested_pod, nodes, existing) == expected


# --- requested_to_capacity_ratio_test.go ----------------------------------------------------------

LEAST_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
MOST_SHAPE = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def rtcr(resources: list[dict[str, Any]], shape: list[dict[str, int]]) -> dict[str, Any]:
    return strategy(
        "RequestedToCapacityRatio", resources, requestedToCapacityRatio={"shape": shape}
    )


@pytest.mark.parametrize(
    ("requested_pod", "nodes", "existing", "expected"),
    [
        (
            st_pod(),
            [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))],
            [st_pod(node_name="node1"), st_pod(node_name="node1")],
            {"node1": 100, "node2": 100},
        ),
        (
            st_pod(CPU_MEM_1, CPU_MEM_2),
            [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
            [st_pod(node_name="node1"), st_pod(node_name="node1")],
            {"node1": 38, "node2": 50},
        ),
        (
            st_pod(),
            [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))],
            [
                st_pod({"cpu": "3000", "memory": "5000"}, node_name="node1"),
                st_pod({"cpu": "3000", "memory": "5000"}, node_name="node2"),
            ],
            {"node1": 38, "node2": 50},
        ),
    ],
    ids=[
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        "nothing scheduled, resources requested, differently sized nodes (default - least "
        "requested nodes have priority)",
        "no resources requested, pods scheduled with resources (default - least requested "
        "nodes have priority)",
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(requested_pod, nodes, existing, expected):
    assert scores(rtcr(DEFAULT_RESOURCES, LEAST_SHAPE), requested_pod, nodes, existing) == expected


@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        (
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
        ),
        (
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
        ),
        (
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
        ),
    ],
    ids=["case_0", "case_1", "case_2"],
)
def test_broken_linear_function(points, assertions):
    function = broken_linear_function(points)
    for p, expected in assertions:
        assert function(p) == expected, p


def test_broken_linear_function_truncates_toward_zero_like_go():
    # (0 - 100) * 1 / 3 is -33.3: Go truncates to -33 (Python's // would give -34).
    assert broken_linear_function([(0, 100), (3, 0)])(1) == 67


def makenode(name: str, milli_cpu: int, memory: int, extended: dict[str, int]) -> Node:
    """kube's makeNode(name, milliCPU, memory, extendedResource)."""
    resources = {"cpu": f"{milli_cpu}m", "memory": str(memory)}
    resources.update({k: str(v) for k, v in extended.items()})
    return node(name, resources)


MI = 1024 * 1024


@pytest.mark.parametrize(
    ("requested_pod", "existing", "expected"),
    [
        (st_pod(), [st_pod()], {"node1": 0, "node2": 0}),
        (st_pod({"intel.com/foo": "2"}), [st_pod()], {"node1": 2, "node2": 5}),
        (
            st_pod({"intel.com/foo": "2"}),
            [st_pod({"intel.com/foo": "2"}, node_name="node2")],
            {"node1": 2, "node2": 10},
        ),
        (st_pod({"intel.com/foo": "4"}), [st_pod()], {"node1": 5, "node2": 10}),
    ],
    ids=[
        "nothing scheduled, nothing requested",
        "resources requested, pods scheduled with less resources",
        "resources requested, pods scheduled with resources, on node with existing pod running",
        "resources requested, pods scheduled with more resources",
    ],
)
def test_resource_bin_packing_single_extended(requested_pod, existing, expected):
    nodes = [
        makenode("node1", 4000, 10000 * MI, {"intel.com/foo": 8}),
        makenode("node2", 4000, 10000 * MI, {"intel.com/foo": 4}),
    ]
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
    args = rtcr([{"name": "intel.com/foo", "weight": 1}], shape)
    assert scores(args, requested_pod, nodes, existing) == expected


@pytest.mark.parametrize(
    ("requested_pod", "existing", "expected"),
    [
        (st_pod(), [st_pod()], {"node1": 0, "node2": 0}),
        (
            st_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [st_pod()],
            {"node1": 4, "node2": 3},
        ),
        (
            st_pod({"intel.com/foo": "2", "intel.com/bar": "2"}),
            [st_pod({"intel.com/foo": "4", "intel.com/bar": "2"}, node_name="node2")],
            {"node1": 4, "node2": 7},
        ),
        (
            st_pod({"intel.com/foo": "4", "intel.com/bar": "2"}),
            [st_pod()],
            {"node1": 5, "node2": 5},
        ),
    ],
    ids=[
        "nothing scheduled, nothing requested",
        "resources requested, pods scheduled with less resources",
        "resources requested, pods scheduled with resources, on node with existing pod running",
        "resources requested, pods scheduled with more resources",
    ],
)
def test_resource_bin_packing_multiple_extended(requested_pod, existing, expected):
    nodes = [
        makenode("node1", 4000, 10000 * MI, {"intel.com/foo": 8, "intel.com/bar": 4}),
        makenode("node2", 4000, 10000 * MI, {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
    args = rtcr(
        [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}], shape
    )
    assert scores(args, requested_pod, nodes, existing) == expected


# --- fit_test.go: TestFitScore --------------------------------------------------------------------

FIT_NODES = [st_node("node1", cap("4000", "10000")), st_node("node2", cap("6000", "10000"))]
FIT_EXISTING = [
    st_pod({"cpu": "2000", "memory": "4000"}, node_name="node1"),
    st_pod({"cpu": "1000", "memory": "2000"}, node_name="node2"),
]
SIDECAR_NODES = [st_node("node1", cap("4000", "10000")), st_node("node2", cap("4000", "10000"))]
SIDECAR_EXISTING = [
    pod(CPU_MEM_1, sidecars=({"cpu": "1000", "memory": "2000"},), node_name="node1"),
    st_pod({"cpu": "1000", "memory": "2000"}, node_name="node2"),
]


@pytest.mark.parametrize(
    ("requested", "nodes", "existing", "args", "expected", "run_pre_score"),
    [
        (
            {"cpu": "3000", "memory": "5000"},
            FIT_NODES,
            FIT_EXISTING,
            rtcr(DEFAULT_RESOURCES, LEAST_SHAPE),
            {"node1": 10, "node2": 32},
            True,
        ),
        (
            {"cpu": "3000", "memory": "5000"},
            FIT_NODES,
            FIT_EXISTING,
            rtcr(DEFAULT_RESOURCES, MOST_SHAPE),
            {"node1": 95, "node2": 68},
            True,
        ),
        (
            CPU_MEM_1,
            FIT_NODES,
            FIT_EXISTING,
            strategy("MostAllocated", DEFAULT_RESOURCES),
            {"node1": 67, "node2": 36},
            True,
        ),
        (
            CPU_MEM_1,
            FIT_NODES,
            FIT_EXISTING,
            strategy("LeastAllocated", DEFAULT_RESOURCES),
            {"node1": 32, "node2": 63},
            True,
        ),
        (
            {"cpu": "3000", "memory": "5000"},
            FIT_NODES,
            FIT_EXISTING,
            rtcr(DEFAULT_RESOURCES, LEAST_SHAPE),
            {"node1": 10, "node2": 32},
            False,
        ),
        (
            CPU_MEM_1,
            FIT_NODES,
            FIT_EXISTING,
            strategy("MostAllocated", DEFAULT_RESOURCES),
            {"node1": 67, "node2": 36},
            False,
        ),
        (
            CPU_MEM_1,
            FIT_NODES,
            FIT_EXISTING,
            strategy("LeastAllocated", DEFAULT_RESOURCES),
            {"node1": 32, "node2": 63},
            False,
        ),
        (
            CPU_MEM_1,
            SIDECAR_NODES,
            SIDECAR_EXISTING,
            strategy("MostAllocated", DEFAULT_RESOURCES),
            {"node1": 67, "node2": 45},
            True,
        ),
        (
            CPU_MEM_1,
            SIDECAR_NODES,
            SIDECAR_EXISTING,
            strategy("LeastAllocated", DEFAULT_RESOURCES),
            {"node1": 32, "node2": 55},
            True,
        ),
    ],
    ids=[
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        "test case for ScoringStrategy RequestedToCapacityRatio case2",
        "test case for ScoringStrategy MostAllocated",
        "test case for ScoringStrategy LeastAllocated",
        "test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
        "test case for ScoringStrategy MostAllocated if PreScore is not called",
        "test case for ScoringStrategy LeastAllocated if PreScore is not called",
        "test case for ScoringStrategy MostAllocated with sidecar container",
        "test case for ScoringStrategy LeastAllocated with sidecar container",
    ],
)
def test_fit_score(requested, nodes, existing, args, expected, run_pre_score):
    got = scores(args, st_pod(requested), nodes, existing, run_pre_score)
    assert got == expected


def test_pod_level_requests_of_the_scored_pod_are_left_out_as_kube_scheduler_does():
    # Found by the parity suite: kube-scheduler v1.37 scores the pod on its containers (one
    # without requests counts 100m cpu and 200Mi memory), not on its pod-level requests, while
    # Filter does use them.
    scored = pod(None, pod_level={"cpu": "4500m", "memory": "1Gi"})
    nodes = [
        st_node("node1", cap("8000m", str(4 * 1024**3))),
        st_node("node2", cap("8000m", str(16 * 1024**3))),
    ]
    assert scores(strategy("LeastAllocated", DEFAULT_RESOURCES), scored, nodes, []) == {
        "node1": 96,
        "node2": 98,
    }
    # Pods on the node count with their pod-level requests.
    existing = [pod(None, pod_level={"cpu": "4000m", "memory": "1Gi"}, node_name="node1")]
    got = scores(strategy("LeastAllocated", DEFAULT_RESOURCES), scored, nodes[:1], existing)
    assert got == {"node1": (48 + 70) // 2}


def test_default_strategy_is_least_allocated_over_cpu_and_memory():
    plugin = new_plugin()
    assert plugin.args.scoring_strategy.type == "LeastAllocated"
    assert [(r.name, r.weight) for r in plugin.args.scoring_strategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
    ]
    got = scores({}, st_pod(CPU_MEM_1), FIT_NODES, FIT_EXISTING)
    assert got == {"node1": 32, "node2": 63}


# --- args validation (validation_pluginargs.go, defaults.go) --------------------------------------

WEIGHT_RANGE = "not in valid range (0, 100]"


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        (
            strategy("LeastAllocated", [{"name": "memory", "weight": -1}, {"name": "cpu"}]),
            [
                "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of "
                f"memory {WEIGHT_RANGE}"
            ],
        ),
        (
            strategy(
                "MostAllocated", [{"name": "memory", "weight": 1}, {"name": "cpu", "weight": 101}]
            ),
            [
                "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu "
                f"{WEIGHT_RANGE}"
            ],
        ),
        (
            {"scoringStrategy": {}},
            [
                'scoringStrategy.type: Unsupported value: "": supported values: '
                '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
            ],
        ),
        (
            strategy("Binpack"),
            [
                'scoringStrategy.type: Unsupported value: "Binpack": supported values: '
                '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
            ],
        ),
        (
            strategy("RequestedToCapacityRatio"),
            [
                "scoringStrategy.requestedToCapacityRatio: Required value: must be specified "
                "when type is RequestedToCapacityRatio"
            ],
        ),
        (
            strategy("LeastAllocated", requestedToCapacityRatio={"shape": MOST_SHAPE}),
            [
                "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is "
                "not RequestedToCapacityRatio"
            ],
        ),
        (
            rtcr(DEFAULT_RESOURCES, []),
            [
                "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one "
                "point must be specified"
            ],
        ),
        (
            rtcr(
                DEFAULT_RESOURCES,
                [
                    {"utilization": 10, "score": 1},
                    {"utilization": 10, "score": 11},
                    {"utilization": 101, "score": -1},
                ],
            ),
            [
                "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: "
                "10: values must be sorted in increasing order",
                "scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: not "
                "in valid range [0, 10]",
                "scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: "
                "101: not in valid range [0, 100]",
                "scoringStrategy.requestedToCapacityRatio.shape[2].score: Invalid value: -1: not "
                "in valid range [0, 10]",
            ],
        ),
        (
            {"ignoredResources": ["foo/bar/baz"], "ignoredResourceGroups": ["example.com/foo"]},
            [
                'ignoredResources[0]: Invalid value: "foo/bar/baz": a valid label key must '
                "consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                'ignoredResourceGroups[0]: Invalid value: "example.com/foo": resource group name '
                "can't contain '/'",
            ],
        ),
        (
            {"unknown": 1, "scoringStrategy": {"type": "LeastAllocated", "extra": True}},
            [
                "unknown: unknown field; allowed: ignoredResources, ignoredResourceGroups, "
                "scoringStrategy",
                "scoringStrategy.extra: unknown field; allowed: type, resources, "
                "requestedToCapacityRatio",
            ],
        ),
    ],
    ids=[
        "resource with negative weight",
        "resource weight larger than MaxNodeScore",
        "strategy without a type",
        "unknown strategy",
        "RequestedToCapacityRatio without its parameters",
        "parameters for another strategy",
        "empty shape",
        "unsorted and out-of-range shape points",
        "ignored resources and groups",
        "unknown fields",
    ],
)
def test_bad_args_are_reported_with_their_paths_at_start_up(args, errors):
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": args}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeResourcesFit}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.{e}" for e in errors
    ]


def test_zero_weight_defaults_to_one():
    plugin = new_plugin(strategy("LeastAllocated", [{"name": "cpu", "weight": 0}]))
    assert plugin.args.scoring_strategy.resources[0].weight == 1


# --- events and hints -----------------------------------------------------------------------------


def test_events_to_register():
    pods, nodes = new_plugin().events_to_register()
    assert pods.event.resource is EventResource.POD
    assert pods.event.action == ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
    assert nodes.event.resource is EventResource.NODE
    assert nodes.event.action == ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE


def named(name: str, requests: dict[str, str] | None = None, node_name: str = "", **kw) -> Pod:
    containers = (requests,) if requests is not None else ()
    return pod(*containers, name=name, uid=name, node_name=node_name, **kw)


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (named("pod1"), "not-a-pod", None, QueueingHint.QUEUE),
        (named("pod1"), None, "not-a-pod", QueueingHint.QUEUE),
        (
            named("pod1", {"cpu": "1"}),
            named("pod2", {"cpu": "1"}, node_name="fake"),
            None,
            QueueingHint.QUEUE,
        ),
        (named("pod1"), named("pod2"), None, QueueingHint.SKIP),
        (
            named("pod1", {"cpu": "1"}),
            named("pod2", {"cpu": "2"}),
            named("pod2", {"cpu": "1"}),
            QueueingHint.SKIP,
        ),
        (
            named("pod1", {"cpu": "1"}),
            named("pod2", {"memory": "2"}, node_name="fake"),
            named("pod2", {"memory": "1"}, node_name="fake"),
            QueueingHint.SKIP,
        ),
        (
            named("pod1", pod_level={"cpu": "1"}),
            named("pod2", pod_level={"memory": "2"}, node_name="fake"),
            named("pod2", pod_level={"memory": "1"}, node_name="fake"),
            QueueingHint.SKIP,
        ),
        (
            named("pod1", {"cpu": "1"}),
            named("pod2", {"cpu": "2"}, node_name="fake"),
            named("pod2", {"cpu": "1"}, node_name="fake"),
            QueueingHint.QUEUE,
        ),
        (
            named("pod1", pod_level={"cpu": "1"}),
            named("pod2", pod_level={"cpu": "2"}, node_name="fake"),
            named("pod2", pod_level={"cpu": "1"}, node_name="fake"),
            QueueingHint.QUEUE,
        ),
        (
            named("pod1", {"cpu": "1"}),
            named("pod1", {"cpu": "2"}),
            named("pod1", {"cpu": "1"}),
            QueueingHint.QUEUE,
        ),
        (
            named("pod1", pod_level={"cpu": "1"}),
            named("pod1", pod_level={"cpu": "2"}),
            named("pod1", pod_level={"cpu": "1"}),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "backoff-wrong-old-object",
        "backoff-wrong-new-object",
        "queue-on-other-pod-deleted",
        "skip-queue-on-unscheduled-pod-deleted",
        "skip-queue-on-other-unscheduled-pod",
        "skip-queue-on-other-pod-unrelated-resource-scaled-down",
        "skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
        "queue-on-other-pod-some-resource-scale-down",
        "queue-on-other-pod-some-pod-level-resource-scale-down",
        "queue-on-target-pod-some-resource-scale-down",
        "queue-on-target-pod-some-pod-level-resource-scale-down",
    ],
)
def test_is_schedulable_after_pod_change(target, old, new, want):
    assert new_plugin().is_schedulable_after_pod_event(target, old, new) is want


def test_deleting_a_nominated_pod_queues():
    nominated = Pod(
        {
            "metadata": {"name": "victim-preemptor"},
            "spec": {"containers": []},
            "status": {"nominatedNodeName": "n1"},
        }
    )
    assert new_plugin().is_schedulable_after_pod_event(named("p"), nominated, None) is (
        QueueingHint.QUEUE
    )


def resource_pod(memory: int = 0, scalars: dict[str, int] | None = None) -> Pod:
    return pod(res(memory=memory, scalars=scalars))


@pytest.mark.parametrize(
    ("target", "old", "new", "want"),
    [
        (pod(), None, "not-a-node", QueueingHint.QUEUE),
        (pod(), "not-a-node", node(), QueueingHint.QUEUE),
        (resource_pod(2), None, st_node("n", {"memory": "1"}), QueueingHint.SKIP),
        (
            resource_pod(scalars={EXTENDED_A: 1}),
            None,
            st_node("n", {EXTENDED_B: "1"}),
            QueueingHint.SKIP,
        ),
        (
            resource_pod(2, {EXTENDED_A: 1}),
            None,
            st_node("n", {"memory": "4", EXTENDED_A: "2"}),
            QueueingHint.QUEUE,
        ),
        (
            resource_pod(2, {EXTENDED_A: 1}),
            st_node("n", {"memory": "2", EXTENDED_A: "2"}),
            st_node("n", {"memory": "2", EXTENDED_A: "1", EXTENDED_B: "2"}),
            QueueingHint.SKIP,
        ),
        (
            resource_pod(2, {EXTENDED_A: 1}),
            st_node("n", {"memory": "2", EXTENDED_A: "1"}),
            st_node("n", {"memory": "2", EXTENDED_A: "2"}),
            QueueingHint.QUEUE,
        ),
        (
            resource_pod(2, {EXTENDED_A: 1}),
            st_node("n", {"memory": "4", EXTENDED_A: "2"}),
            st_node("n", {"memory": "1", EXTENDED_A: "2"}),
            QueueingHint.SKIP,
        ),
        (
            resource_pod(2, {EXTENDED_A: 1}),
            st_node("n", {"memory": "1", EXTENDED_A: "2"}),
            st_node("n", {"memory": "4", EXTENDED_A: "2"}),
            QueueingHint.QUEUE,
        ),
    ],
    ids=[
        "backoff-wrong-new-object",
        "backoff-wrong-old-object",
        "skip-queue-on-node-add-without-sufficient-resources",
        "skip-queue-on-node-add-without-required-resource-type",
        "queue-on-node-add-with-sufficient-resources",
        "skip-queue-on-node-unrelated-changes",
        "queue-on-pod-requested-resources-increase",
        "skip-queue-on-node-changes-from-suitable-to-unsuitable",
        "queue-on-node-changes-from-unsuitable-to-suitable",
    ],
)
def test_is_schedulable_after_node_change(target, old, new, want):
    assert new_plugin().is_schedulable_after_node_change(target, old, new) is want


# --- end to end -----------------------------------------------------------------------------------


def profile(args: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}
    if args is not None:
        body["pluginConfig"] = [{"name": NAME, "args": args}]
    return body


def test_least_allocated_spreads_and_most_allocated_packs():
    def run(args: dict[str, Any] | None) -> set[str]:
        nodes = [make_node(n).capacity(cpu="4", memory="8Gi").obj() for n in ("a", "b")]
        pods = [make_pod(f"p{i}").req(cpu="1", memory="1Gi").obj() for i in range(2)]
        scheduler, backend = make_scheduler({NAME: NodeResourcesFit}, profile(args), nodes, pods)
        run_until_idle(scheduler)
        return {backend.pod("default", f"p{i}").node_name for i in range(2)}

    assert run(None) == {"a", "b"}
    assert len(run(strategy("MostAllocated"))) == 1


def test_insufficient_message_and_retry_after_a_pod_is_deleted():
    clock = [0.0]
    nodes = [make_node("n1").capacity(cpu="2", memory="4Gi").obj()]
    big = make_pod("big").req(cpu="1500m").node("n1").obj()
    waiting = make_pod("waiting").req(cpu="1").obj()
    too_big = make_pod("too-big").req(cpu="3").obj()
    scheduler, backend = make_scheduler(
        {NAME: NodeResourcesFit}, profile(), nodes, [big, waiting, too_big], clock=lambda: clock[0]
    )
    run_until_idle(scheduler)
    assert (
        backend.conditions["default/waiting"][1] == "0/1 nodes are available: 1 Insufficient cpu."
    )
    assert (
        backend.conditions["default/too-big"][1] == "0/1 nodes are available: 1 Insufficient cpu."
    )
    backend.delete_pod(big)
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "waiting").node_name == "n1"
    assert not backend.pod("default", "too-big").node_name
