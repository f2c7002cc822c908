"""What a pod asks of a node (``PodRequests``) and what a node's pods add up to (``NodeInfo``).

Request cases follow ``k8s.io/component-helpers/resource/helpers_test.go``; aggregate cases follow
kube-scheduler's ``framework.NodeInfo`` (requested, non-zero requested, host ports, affinity).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import NodeInfo, Pod, pod_requests
from kubesched.api.objects import CPU, MEMORY
from kubesched.framework.nodeinfo import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from kubesched.testing.builders import make_node, make_pod

MI = 2**20
GI = 2**30


def container(name: str = "c", sidecar: bool = False, ports: tuple[Any, ...] = (), **requests: str):
    data: dict[str, Any] = {"name": name}
    if requests:
        data["resources"] = {"requests": {k.replace("_", "-"): v for k, v in requests.items()}}
    if sidecar:
        data["restartPolicy"] = "Always"
    if ports:
        data["ports"] = list(ports)
    return data


def pod(
    name: str = "p",
    containers: tuple[dict[str, Any], ...] = (),
    init: tuple[dict[str, Any], ...] = (),
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
) -> Pod:
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        spec["overhead"] = overhead
    if pod_level:
        spec["resources"] = {"requests": pod_level}
    if affinity is not None:
        spec["affinity"] = affinity
    return Pod({"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec})


REQUESTS = [
    ("no-containers", pod(), {}),
    ("one-container", pod(containers=(container(cpu="1", memory="1Gi"),)), {CPU: 1000, MEMORY: GI}),
    (
        "two-containers-sum",
        pod(containers=(container(cpu="1", memory="5"), container(cpu="4", memory="12"))),
        {CPU: 5000, MEMORY: 17},
    ),
    (
        "larger-init-container",
        pod(containers=(container(cpu="1"),), init=(container(cpu="4"),)),
        {CPU: 4000},
    ),
    (
        "larger-containers",
        pod(containers=(container(cpu="2"), container(cpu="3")), init=(container(cpu="2"),)),
        {CPU: 5000},
    ),
    (
        "init-max-per-resource",
        pod(
            containers=(container(cpu="1", memory="5"), container(cpu="4", memory="12")),
            init=(container(cpu="1", memory="5"), container(cpu="40", memory="120")),
        ),
        {CPU: 40000, MEMORY: 120},
    ),
    (
        "init-larger-in-one-resource-only",
        pod(
            containers=(container(cpu="3", memory="1Gi"),), init=(container(cpu="1", memory="2Gi"),)
        ),
        {CPU: 3000, MEMORY: 2 * GI},
    ),
    (
        "overhead-added",
        pod(
            containers=(container(cpu="2"), container(cpu="3")),
            init=(container(cpu="2"),),
            overhead={"cpu": "1", "memory": "1Gi"},
        ),
        {CPU: 6000, MEMORY: GI},
    ),
    (
        "overhead-only",
        pod(overhead={"cpu": "5", "memory": "5"}),
        {CPU: 5000, MEMORY: 5},
    ),
    (
        "overhead-after-init-max",
        pod(containers=(container(cpu="1"),), init=(container(cpu="4"),), overhead={"cpu": "500m"}),
        {CPU: 4500},
    ),
    (
        "restartable-init-container",
        pod(containers=(container(cpu="1"),), init=(container(sidecar=True, cpu="1"),)),
        {CPU: 2000},
    ),
    (
        "multiple-restartable-init-containers",
        # max(5, sidecars (1+2+3) + regular (1)) = 7
        pod(
            containers=(container(cpu="1"),),
            init=(
                container("init-1", cpu="5"),
                container("sidecar-1", sidecar=True, cpu="1"),
                container("sidecar-2", sidecar=True, cpu="2"),
                container("sidecar-3", sidecar=True, cpu="3"),
            ),
        ),
        {CPU: 7000},
    ),
    (
        "multiple-restartable-and-regular-init-containers",
        # init-2 needs 5 + the sidecars started before it (1+2) = 8; sidecar-3 starts after
        pod(
            containers=(container(cpu="1"),),
            init=(
                container("init-1", cpu="5"),
                container("sidecar-1", sidecar=True, cpu="1"),
                container("sidecar-2", sidecar=True, cpu="2"),
                container("init-2", cpu="5"),
                container("sidecar-3", sidecar=True, cpu="3"),
            ),
        ),
        {CPU: 8000},
    ),
    (
        "restartable-init-then-init-then-regular",
        # init-1 runs beside sidecar-1: 10 + 200 = 210 > 10 + 100
        pod(
            containers=(container(cpu="100"),),
            init=(container("sidecar-1", sidecar=True, cpu="10"), container("init-1", cpu="200")),
        ),
        {CPU: 210000},
    ),
    (
        "sidecar-resources-not-in-regular-containers",
        pod(
            containers=(container(cpu="1"),),
            init=(container(sidecar=True, memory="64Mi"),),
        ),
        {CPU: 1000, MEMORY: 64 * MI},
    ),
    (
        "extended-and-ephemeral-storage",
        pod(
            containers=(
                container(ephemeral_storage="1Gi", **{"example.com/gpu": "1"}),
                container(**{"example.com/gpu": "2"}),
            ),
        ),
        {"ephemeral-storage": GI, "example.com/gpu": 3},
    ),
    (
        "pod-level-memory",
        pod(pod_level={"memory": "2Mi"}),
        {MEMORY: 2 * MI},
    ),
    (
        "pod-level-memory-and-container-cpu",
        pod(containers=(container(cpu="2m"),), pod_level={"memory": "2Mi"}),
        {CPU: 2, MEMORY: 2 * MI},
    ),
    (
        "pod-level-replaces-containers",
        pod(containers=(container(cpu="1"), container(cpu="1")), pod_level={"cpu": "3"}),
        {CPU: 3000},
    ),
    (
        "pod-level-unsupported-resource-ignored",
        pod(
            containers=(container(ephemeral_storage="3Mi"),), pod_level={"ephemeral-storage": "2Mi"}
        ),
        {"ephemeral-storage": 3 * MI},
    ),
    (
        "pod-level-hugepages",
        pod(
            containers=(container(**{"hugepages-2Mi": "2Mi"}),), pod_level={"hugepages-2Mi": "4Mi"}
        ),
        {"hugepages-2Mi": 4 * MI},
    ),
    (
        "pod-level-plus-overhead",
        pod(pod_level={"cpu": "1"}, overhead={"cpu": "100m"}),
        {CPU: 1100},
    ),
]


@pytest.mark.parametrize(
    ("the_pod", "expected"), [c[1:] for c in REQUESTS], ids=[c[0] for c in REQUESTS]
)
def test_pod_requests(the_pod: Pod, expected: dict[str, int]) -> None:
    assert {k: v for k, v in pod_requests(the_pod).items() if v} == expected


NON_ZERO = [
    ("nothing-requested", pod(containers=(container(),)), 100, 200 * MI),
    ("two-empty-containers", pod(containers=(container(), container())), 200, 400 * MI),
    ("cpu-only", pod(containers=(container(cpu="250m"),)), 250, 200 * MI),
    ("memory-only", pod(containers=(container(memory="1Gi"),)), 100, GI),
    # an explicit zero is a request: kube's NonMissingContainerRequests only fills missing ones
    ("explicit-zero", pod(containers=(container(cpu="0", memory="0"),)), 0, 0),
    (
        "init-defaults-count-too",
        pod(containers=(container(cpu="50m", memory="10Mi"),), init=(container(),)),
        100,
        200 * MI,
    ),
    (
        "sidecar-defaults",
        pod(containers=(container(),), init=(container(sidecar=True),)),
        200,
        400 * MI,
    ),
    ("overhead-on-top", pod(containers=(container(),), overhead={"cpu": "1"}), 1100, 200 * MI),
    ("pod-level-wins", pod(containers=(container(),), pod_level={"cpu": "2"}), 2000, 200 * MI),
    ("no-containers", pod(), 0, 0),
]


@pytest.mark.parametrize(
    ("the_pod", "cpu", "memory"), [c[1:] for c in NON_ZERO], ids=[c[0] for c in NON_ZERO]
)
def test_non_zero_pod_requests(the_pod: Pod, cpu: int, memory: int) -> None:
    requests = pod_requests(the_pod, non_zero=True)
    assert (requests.get(CPU, 0), requests.get(MEMORY, 0)) == (cpu, memory)


def test_defaults_are_kube_schedulers() -> None:
    assert (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) == (100, 200 * MI)


# -- NodeInfo aggregates -------------------------------------------------------------------------


def test_requested_and_non_zero_requested() -> None:
    info = NodeInfo(
        make_node("n").obj(),
        [
            make_pod("a").req(cpu="500m", memory="1Gi").obj(),
            make_pod("b").obj(),  # requests nothing
            make_pod("c").req(cpu="1", example_com_gpu="1").obj(),
        ],
    )
    assert info.name == "n"
    assert info.allocatable == {CPU: 4000, MEMORY: 32 * GI, "pods": 110}
    assert {k: v for k, v in info.requested.items() if v} == {
        CPU: 1500,
        MEMORY: GI,
        "example-com-gpu": 1,
    }
    assert info.non_zero_requested == {CPU: 500 + 100 + 1000, MEMORY: GI + 200 * MI + 200 * MI}
    assert sorted(info.pods) == ["default-a-uid", "default-b-uid", "default-c-uid"]


def test_remove_pod_frees_what_it_held() -> None:
    a = make_pod("a").req(cpu="500m", memory="1Gi").host_port(8080).obj()
    b = make_pod("b").req(cpu="1").obj()
    info = NodeInfo(make_node("n").obj(), [a, b])
    assert info.remove_pod(a) is True
    assert info.requested[CPU] == 1000 and info.requested[MEMORY] == 0
    assert info.non_zero_requested == {CPU: 1000, MEMORY: 200 * MI}
    assert info.used_ports == {}
    assert list(info.pods) == [b.uid]
    assert info.remove_pod(a) is False  # already gone: nothing changes
    assert info.requested[CPU] == 1000


def test_remove_pod_uses_the_counted_version() -> None:
    counted = make_pod("a").req(cpu="1").obj()
    info = NodeInfo(make_node("n").obj(), [counted])
    # A later version of the same pod (same uid) asks for more: the counted amount is freed.
    info.remove_pod(make_pod("a").req(cpu="3").obj())
    assert info.requested[CPU] == 0


def test_generation_moves_on_every_change() -> None:
    info = NodeInfo(make_node("n").obj())
    seen = [info.generation]
    the_pod = make_pod("a").obj()
    info.add_pod(the_pod)
    seen.append(info.generation)
    info.remove_pod(the_pod)
    seen.append(info.generation)
    assert seen == sorted(set(seen))


def port(host_port: int, protocol: str | None = None, host_ip: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"containerPort": host_port, "hostPort": host_port}
    if protocol:
        entry["protocol"] = protocol
    if host_ip:
        entry["hostIP"] = host_ip
    return entry


PORTS = [
    ("no-host-ports", (pod(containers=(container(ports=({"containerPort": 80},)),)),), {}),
    (
        "defaults-tcp-all-addresses",
        (pod(containers=(container(ports=(port(8080),)),)),),
        {("0.0.0.0", "TCP", 8080): 1},
    ),
    (
        "protocol-and-address",
        (pod(containers=(container(ports=(port(53, "UDP", "10.0.0.1"), port(53, "TCP"))),)),),
        {("10.0.0.1", "UDP", 53): 1, ("0.0.0.0", "TCP", 53): 1},
    ),
    (
        "two-pods-same-port",
        (
            pod("a", containers=(container(ports=(port(80),)),)),
            pod("b", containers=(container(ports=(port(80),)),)),
        ),
        {("0.0.0.0", "TCP", 80): 2},
    ),
    (
        "sidecar-holds-its-port",
        (pod(init=(container(sidecar=True, ports=(port(9000),)),)),),
        {("0.0.0.0", "TCP", 9000): 1},
    ),
    (
        "regular-init-container-port-released",
        (pod(init=(container(ports=(port(9000),)),), containers=(container(),)),),
        {},
    ),
]


@pytest.mark.parametrize(("pods", "used"), [c[1:] for c in PORTS], ids=[c[0] for c in PORTS])
def test_used_ports(pods: tuple[Pod, ...], used: dict[tuple[str, str, int], int]) -> None:
    assert NodeInfo(make_node("n").obj(), pods).used_ports == used


def test_a_port_shared_by_two_pods_stays_used_until_both_leave() -> None:
    a = pod("a", containers=(container(ports=(port(80),)),))
    b = pod("b", containers=(container(ports=(port(80),)),))
    info = NodeInfo(make_node("n").obj(), [a, b])
    info.remove_pod(a)
    assert info.used_ports == {("0.0.0.0", "TCP", 80): 1}
    info.remove_pod(b)
    assert info.used_ports == {}


TERM = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
AFFINITY = [
    ("none", None, False, False),
    ("node-affinity-only", {"nodeAffinity": {"x": 1}}, False, False),
    (
        "pod-affinity",
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}},
        True,
        False,
    ),
    (
        "preferred-anti-affinity",
        {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [TERM]}},
        True,
        False,
    ),
    (
        "required-anti-affinity",
        {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]}},
        True,
        True,
    ),
]


@pytest.mark.parametrize(
    ("affinity", "with_affinity", "with_required_anti"),
    [c[1:] for c in AFFINITY],
    ids=[c[0] for c in AFFINITY],
)
def test_pods_with_affinity(
    affinity: dict[str, Any] | None, with_affinity: bool, with_required_anti: bool
) -> None:
    the_pod = pod(affinity=affinity)
    info = NodeInfo(make_node("n").obj(), [the_pod])
    assert (the_pod.uid in info.pods_with_affinity) is with_affinity
    assert (the_pod.uid in info.pods_with_required_anti_affinity) is with_required_anti
    info.remove_pod(the_pod)
    assert info.pods_with_affinity == {} and info.pods_with_required_anti_affinity == {}


def test_clone_is_independent() -> None:
    info = NodeInfo(make_node("n").obj(), [make_pod("a").req(cpu="1").host_port(80).obj()])
    copy = info.clone()
    copy.add_pod(make_pod("b").req(cpu="1").host_port(80).obj())
    assert (info.requested[CPU], len(info.pods), info.used_ports[("0.0.0.0", "TCP", 80)]) == (
        1000,
        1,
        1,
    )
    assert (copy.requested[CPU], len(copy.pods), copy.used_ports[("0.0.0.0", "TCP", 80)]) == (
        2000,
        2,
        2,
    )
    assert copy.generation > info.generation


def test_node_info_without_a_node() -> None:
    info = NodeInfo(None, [make_pod("a").req(cpu="1").obj()])
    assert (info.name, info.allocatable, info.requested[CPU]) == ("", {}, 1000)
    assert repr(info) == "NodeInfo(, pods=1)"
