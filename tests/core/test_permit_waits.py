"""Waits at Permit on a virtual clock, and what a Permit rejection gives back to the queue.

- ``simulate`` and the test harness run waits on their virtual clock: nothing blocks, a 30 s
  timeout passes in no wall time, and a test drives waiting pods (allow, reject, advance).
- A pod rejected after waiting (a gang timing out) is forgotten with an AssignedPod/Delete event
  that carries the pod as it was assumed, on its node (as kube-scheduler's does): a Filter whose
  hint queues only on the deletion of a pod that had a node retries the pods it refused for
  room, so two gangs that cannot both fit end with one of them bound.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.manifests import Cluster
from kubesched.framework.nodeinfo import pod_requests
from kubesched.service.simulate import simulate
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_config, make_scheduler

TIMEOUT_MESSAGE = "rejected due to timeout after waiting 30s at plugin Gang"
GANG = "example.com/gang"
GANG_MIN = "example.com/gang-min"


class Gang:
    """Permit: a pod labelled ``example.com/gang`` waits until ``example.com/gang-min`` pods of
    its gang are reserved, then all of them go; the gang's pods rejected on a timeout are
    activated again when one of them comes back."""

    name = "Gang"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.timeout = float(args.get("timeoutSeconds", 30))
        self.rejected: dict[str, dict[str, Pod]] = {}

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        gang = pod.labels.get(GANG)
        if gang is None:
            return None
        waiting = [w for w in self.handle.waiting_pods if w.pod.labels.get(GANG) == gang]
        # The pod being permitted is not in waiting_pods yet: count it apart.
        if len(waiting) + 1 < int(pod.labels.get(GANG_MIN, "1")):
            self.handle.activate(self.rejected.pop(gang, {}).values())
            return Status.wait(self.timeout)
        for other in waiting:
            other.allow(self.name)
        return None

    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None  # Unreserve runs for plugins enabled at reserve

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        gang = pod.labels.get(GANG)
        if gang is not None:
            self.rejected.setdefault(gang, {})[pod.uid] = pod


class CpuFit:
    """Filter on cpu requests, with NodeResourcesFit's hint for pod deletions: only a pod that
    had a node frees room."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        need = pod_requests(pod).get("cpu", 0)
        free = node_info.allocatable.get("cpu", 0) - node_info.requested.get("cpu", 0)
        return None if need <= free else Status.unschedulable("Insufficient cpu")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), self.freed_room
            )
        ]

    def freed_room(self, pod: Pod, old: Pod | None, new: Pod | None) -> QueueingHint:
        return QueueingHint.QUEUE if old is not None and old.node_name else QueueingHint.SKIP


PLUGINS = {"Gang": Gang, "CpuFit": CpuFit}


def _profile(timeout: float = 30) -> dict[str, Any]:
    return {
        "plugins": {
            "filter": {"enabled": [{"name": "CpuFit"}]},
            "permit": {"enabled": [{"name": "Gang"}]},
            "reserve": {"enabled": [{"name": "Gang"}]},
        },
        "pluginConfig": [{"name": "Gang", "args": {"timeoutSeconds": timeout}}],
    }


def _member(name: str, gang: str, size: int, cpu: str = "1") -> Pod:
    return make_pod(name).label(GANG, gang).label(GANG_MIN, str(size)).req(cpu=cpu).obj()


def test_a_wait_does_not_block_and_times_out_on_the_virtual_clock() -> None:
    began = time.monotonic()
    with Harness(PLUGINS, _profile(timeout=30), nodes=[make_node("n1")]) as h:
        report = h.schedule(_member("a1", "a", 2))
        assert report.result == ""  # held at Permit: its binding cycle has not finished
        assert [w.pod.name for w in h.waiting()] == ["a1"]
        assert h.waiting()[0].pending_plugins() == ["Gang"]
        h.advance(29)
        assert h.node_of("a1") is None and h.waiting()
        h.advance(1)
        assert not h.waiting()
        assert report.result == "Unschedulable"
        assert report.message == TIMEOUT_MESSAGE
        assert h.backend.conditions["default/a1"] == ("Unschedulable", TIMEOUT_MESSAGE)
        h.scheduler.cache.update_snapshot(h.scheduler.snapshot)
        assert h.scheduler.snapshot.get("n1").requested.get("cpu", 0) == 0
    assert time.monotonic() - began < 1.0


def test_the_gang_binds_when_its_last_member_is_reserved() -> None:
    with Harness(PLUGINS, _profile(), nodes=[make_node("n1")]) as h:
        h.schedule(_member("a1", "a", 2))
        assert h.node_of("a1") is None
        report = h.schedule(_member("a2", "a", 2))
        assert report.result == "Scheduled"
        assert h.node_of("a1") == h.node_of("a2") == "n1"
        assert not h.waiting()


@pytest.mark.parametrize("how", ["allow", "reject"])
def test_a_test_allows_or_rejects_a_waiting_pod(how: str) -> None:
    with Harness(PLUGINS, _profile(), nodes=[make_node("n1")]) as h:
        report = h.schedule(_member("a1", "a", 3))
        if how == "allow":
            h.allow("a1")
            assert h.node_of("a1") == "n1"
            assert report.result == "Scheduled"
        else:
            h.reject("a1", "quota exhausted", plugin="Gang")
            assert h.node_of("a1") is None
            assert report.message == "quota exhausted"
        assert not h.waiting()
        with pytest.raises(LookupError, match="not waiting at Permit"):
            h.allow("a1")


def test_two_gangs_that_cannot_both_fit_end_with_one_bound() -> None:
    """4 cpu for two gangs of three 1-cpu pods, queued interleaved: both gangs hold two pods
    at Permit and the third of each is refused for cpu. When the waits time out, the freed
    room (events carrying each pod's node) retries the refused pods; a gang whose member comes
    back activates the rest, and one gang completes."""
    pods = [_member(f"{g}{i}", g, 3) for i in (1, 2, 3) for g in ("a", "b")]
    with Harness(PLUGINS, _profile(timeout=30), nodes=[make_node("n1")], pods=pods) as h:
        h.run()
        bound = {p.name[0] for p in h.backend.pods.values() if p.node_name}
        counts = {
            g: sum(1 for p in h.backend.pods.values() if p.node_name and p.name[0] == g)
            for g in "ab"
        }
        assert len(bound) == 1, counts
        assert counts[bound.pop()] == 3
        assert not h.waiting()


def test_simulate_with_30s_permit_timeouts_takes_no_wall_time() -> None:
    nodes = [make_node("n1").obj()]
    pods = [_member(f"a{i}", "a", 3) for i in (1, 2, 3)]
    pods.append(_member("lonely", "c", 2))  # its gang never completes
    config, registry = make_config(PLUGINS, _profile(timeout=30))
    began = time.monotonic()
    result = simulate(Cluster(nodes=nodes, pods=pods), config, registry)
    assert time.monotonic() - began < 1.0
    by_name = {p.name: p for p in result.pods}
    assert result.scheduled == 3
    assert by_name["lonely"].node is None
    assert by_name["lonely"].message == TIMEOUT_MESSAGE


def test_the_queue_pops_a_pod_groups_pods_one_after_another() -> None:
    """Pods naming a PodGroup (``spec.schedulingGroup``) queued interleaved come out group by
    group, in QueueSort order within and between groups; pods in no group keep their place."""

    def grouped(name: str, group: str | None) -> Pod:
        builder = make_pod(name)
        if group is not None:
            builder.spec(schedulingGroup={"podGroupName": group})
        return builder.obj()

    pods = [grouped("a1", "a"), grouped("b1", "b"), grouped("x", None), grouped("a2", "a")]
    pods += [grouped("b2", "b"), grouped("a3", "a")]
    ticks = itertools.count()
    scheduler, _ = make_scheduler({}, pods=pods, clock=lambda: float(next(ticks)))
    try:
        order = []
        while (info := scheduler.queue.pop(timeout=0)) is not None:
            order.append(info.pod.name)
            scheduler.queue.done(info.pod.uid)
        assert order == ["a1", "a2", "a3", "b1", "b2", "x"]
    finally:
        scheduler.stop()


def test_simulate_two_gangs_reports_every_pod_held_or_refused() -> None:
    """simulate ends with one gang bound; a pod of the other still held at Permit when the run
    stops says so, rather than "not attempted"."""
    nodes = [make_node("n1").obj()]
    pods = [_member(f"{g}{i}", g, 3) for i in (1, 2, 3) for g in ("a", "b")]
    config, registry = make_config(PLUGINS, _profile(timeout=30))
    result = simulate(Cluster(nodes=nodes, pods=pods), config, registry)
    bound = {p.name[0] for p in result.pods if p.node}
    assert len(bound) == 1 and result.scheduled == 3
    for outcome in result.pods:
        if outcome.node is None:
            assert outcome.message.startswith(
                ("0/1 nodes are available", "rejected due to timeout", "waiting at Permit for Gang")
            ), outcome
