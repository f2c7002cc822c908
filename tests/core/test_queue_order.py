"""Pods of equal priority leave activeQ in the order kube-scheduler's queue gives them: by queue
timestamp, ties in the order they were queued (a sequence number), never in heap order; for a
cluster file the queue timestamp is ``metadata.creationTimestamp``, then the file's order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import Status, hookimpl
from kubesched.api.manifests import Cluster
from kubesched.api.objects import Pod
from kubesched.framework.handle import Handle
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.service.simulate import VirtualClock, queue_order, simulate
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_config, make_scheduler

ONE_POD = "OnePodPerNode"


class OnePodPerNode:
    """Filter: a node holds one pod (two 1-CPU nodes, 1-CPU pods, without resource plugins)."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable("node(s) full", plugin=ONE_POD) if node_info.pods else None


PROFILE = {"plugins": {"filter": {"enabled": [{"name": ONE_POD}]}}}


def _seven() -> list[Pod]:
    return [make_pod(f"p{i}").obj() for i in range(7)]


def test_queue_pops_equal_pods_in_queued_order() -> None:
    """Twenty pods queued at the same instant come out 0, 1, 2, … (heap order was 0, 2, 6, …)."""
    scheduler, _ = make_scheduler(
        {ONE_POD: OnePodPerNode}, PROFILE, clock=VirtualClock(), start=False
    )
    for i in range(20):
        scheduler.queue.add(make_pod(f"p{i}").obj())
    popped = [scheduler.queue.pop(timeout=0) for _ in range(20)]
    assert [info.pod.name for info in popped if info] == [f"p{i}" for i in range(20)]


def test_an_update_keeps_the_pods_place_among_equals() -> None:
    scheduler, _ = make_scheduler(
        {ONE_POD: OnePodPerNode}, PROFILE, clock=VirtualClock(), start=False
    )
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    for pod in pods:
        scheduler.queue.add(pod)
    scheduler.queue.add(make_pod("p0").labels(changed="yes").obj())  # seen again: an update
    popped = [scheduler.queue.pop(timeout=0) for _ in range(4)]
    assert [info.pod.name for info in popped if info] == ["p0", "p1", "p2", "p3"]


def test_seven_pods_two_nodes_bind_the_first_two() -> None:
    """kube-scheduler binds p0 and p1; heap order bound p0 and p2."""
    config, registry = make_config({ONE_POD: OnePodPerNode}, PROFILE)
    cluster = Cluster(nodes=[make_node("n1").obj(), make_node("n2").obj()], pods=_seven())
    result = simulate(cluster, config, registry)
    assert sorted(p.name for p in result.pods if p.node) == ["p0", "p1"]


def test_harness_binds_the_first_two() -> None:
    harness = Harness(
        {ONE_POD: OnePodPerNode},
        PROFILE,
        nodes=[make_node("n1"), make_node("n2")],
        pods=[make_pod(f"p{i}") for i in range(7)],
    )
    reports = harness.run()
    assert sorted(r.pod for r in reports if r.node) == ["default/p0", "default/p1"]


def _created(name: str, stamp: str | None) -> Pod:
    pod = make_pod(name).manifest()
    if stamp is not None:
        pod["metadata"]["creationTimestamp"] = stamp
    return Pod(pod)


@pytest.mark.parametrize(
    ("pods", "order"),
    [
        pytest.param(
            [("a", "2025-01-01T00:00:02Z"), ("b", "2025-01-01T00:00:01Z")],
            ["b", "a"],
            id="by-creation",
        ),
        pytest.param(
            [("a", "2025-01-01T00:00:01Z"), ("b", "2025-01-01T00:00:01Z")],
            ["a", "b"],
            id="same-second-file-order",
        ),
        pytest.param(
            [("a", None), ("b", "2025-01-01T00:00:05Z"), ("c", None)],
            ["b", "a", "c"],
            id="without-timestamp-after",
        ),
        pytest.param(
            [("a", "2025-01-01T01:00:00+01:00"), ("b", "2025-01-01T00:30:00Z")],
            ["a", "b"],
            id="offsets",
        ),
    ],
)
def test_queue_order(pods: list[tuple[str, str | None]], order: list[str]) -> None:
    assert [p.name for p in queue_order(_created(n, s) for n, s in pods)] == order
