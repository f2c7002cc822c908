"""GangScheduling, with cases ported from kube-scheduler v1.37's gangscheduling_test.go (the
CompositePodGroup cases left out: that alpha gate is not carried over)."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_gang_scheduling import (
    NAME,
    PERMIT_TIMEOUT_SECONDS,
    REASON_WAITING_AT_PERMIT,
    REASON_WAITING_FOR_PODS,
    GangScheduling,
    reason_pod_group_missing,
)

from kubesched import Pod, QueueingHint, Status, hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FakeCluster, Harness, new_plugin

TIMEOUT_MESSAGE = f"rejected due to timeout after waiting 5m0s at plugin {NAME}"


def pod_group(name: str, min_count: int | None = None, namespace: str = "default") -> dict:
    policy: dict[str, Any] = (
        {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    )
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": policy},
    }


def member(name: str, group: str | None, namespace: str = "default", cpu: str = "1") -> Pod:
    builder = make_pod(name, namespace).req(cpu=cpu)
    if group is not None:
        builder.spec(schedulingGroup={"podGroupName": group})
    return builder.obj()


def plugin_over(groups: list[dict], pods: list[Pod] = ()) -> GangScheduling:
    cluster = FakeCluster([make_node("n1")], list(pods))
    plugin = new_plugin(GangScheduling, cluster=cluster)
    plugin._pod_groups = lambda: groups  # the fake cluster's handle lists no PodGroups
    return plugin


# -- Test_isSchedulableAfterPodAdded -------------------------------------------------------------
@pytest.mark.parametrize(
    ("added", "expected"),
    [
        pytest.param(member("p2", "pg1"), QueueingHint.QUEUE, id="matches the pod's group"),
        pytest.param(
            make_pod("p2").node("n1").spec(schedulingGroup={"podGroupName": "pg1"}).obj(),
            QueueingHint.QUEUE,
            id="with NodeName set, matches the pod's group",
        ),
        pytest.param(member("p2", "pg1", "other"), QueueingHint.SKIP, id="another namespace"),
        pytest.param(member("p2", "pg2"), QueueingHint.SKIP, id="another pod group name"),
        pytest.param(member("p2", None), QueueingHint.SKIP, id="a pod in no group"),
    ],
)
def test_is_schedulable_after_pod_added(added: Pod, expected: QueueingHint) -> None:
    plugin = plugin_over([pod_group("pg1", 2)])
    assert plugin._after_pod_added(member("p1", "pg1"), None, added) is expected


# -- TestGangSchedulingFlow (PreEnqueue and Permit) ----------------------------------------------
def test_a_pod_in_no_group_or_a_basic_group_goes_straight_through() -> None:
    plugin = plugin_over([pod_group("pg1")])
    for pod in (member("p1", None), member("p2", "pg1")):
        assert plugin.pre_enqueue(pod) is None
        assert plugin.permit(None, pod, "n1") is None


def test_pre_enqueue_waits_for_the_pod_group_to_be_created() -> None:
    status = plugin_over([]).pre_enqueue(member("p1", "pg1"))
    assert status.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"
    assert status.message() == reason_pod_group_missing("pg1")
    assert status.message() == 'waiting for pods\'s pod group "pg1" to appear in scheduling queue'


def test_pre_enqueue_waits_until_min_count_pods_exist() -> None:
    plugin = plugin_over([pod_group("pg1", 3)])
    assert plugin.pre_enqueue(member("p1", "pg1")).message() == REASON_WAITING_FOR_PODS
    assert plugin.pre_enqueue(member("p2", "pg1")).message() == REASON_WAITING_FOR_PODS
    assert plugin.pre_enqueue(member("p3", "pg1")) is None


def test_a_bound_member_counts_towards_the_quorum() -> None:
    bound = make_pod("p0").node("n1").spec(schedulingGroup={"podGroupName": "pg1"}).obj()
    plugin = plugin_over([pod_group("pg1", 2)], [bound])
    assert plugin.pre_enqueue(member("p1", "pg1")) is None


def test_permit_without_its_pod_group_is_an_error() -> None:
    status = plugin_over([]).permit(None, member("p1", "pg1"), "n1")
    assert status.code.name == "ERROR"
    assert status.message() == (
        'failed to get podGroup default/pg1: podgroup.scheduling.k8s.io "pg1" not found'
    )


# -- the plugin in the scheduler --------------------------------------------------------------
def harness(pods: list[Pod], groups: list[dict], cpu: str = "4") -> Harness:
    h = Harness.for_plugin(GangScheduling, nodes=[make_node("n1").capacity(cpu=cpu)])
    h.backend.objects["PodGroup"] = groups
    h.add_pod(*pods)
    return h


def test_members_wait_at_permit_until_min_count_are_reserved_then_bind_together() -> None:
    with harness([], [pod_group("pg1", 3)]) as h:
        h.add_pod(member("p1", "pg1"), member("p2", "pg1"))
        h.run()
        assert not h.waiting()  # gated: only two of three exist
        parked = {i.pod.name: i.gating_message for i in h.scheduler.queue.parked()}
        assert parked == {"p1": REASON_WAITING_FOR_PODS, "p2": REASON_WAITING_FOR_PODS}
        h.add_pod(member("p3", "pg1"))  # UnscheduledPod/Add lets the gated members in
        h.run()
        assert {h.node_of(n) for n in ("p1", "p2", "p3")} == {"n1"}
        permits = [r.points["Permit"][0].code for r in h.recorder.reports]
        assert permits.count("Wait") == 2 and permits.count("Success") == 1


class RefuseMarked:
    """Filter: refuses pods labelled ``refuse`` (a member that never fits)."""

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, state: Any, pod: Pod, node_info: Any) -> Status | None:
        return Status.unschedulable("refused") if "refuse" in pod.labels else None


def test_a_gang_that_never_completes_times_out_after_five_minutes() -> None:
    """Three members, one of which never fits: the other two wait at Permit, and both waits
    end after 5 minutes of virtual time with kube's message, nothing bound."""
    pods = [member("p1", "pg1"), member("p2", "pg1"), member("p3", "pg1")]
    pods[2].labels["refuse"] = "yes"
    profile = {
        "plugins": {
            "multiPoint": {"enabled": [{"name": NAME}]},
            "filter": {"enabled": [{"name": "RefuseMarked"}]},
        }
    }
    with Harness(
        {NAME: GangScheduling, "RefuseMarked": RefuseMarked}, profile, nodes=[make_node("n1")]
    ) as h:
        h.backend.objects["PodGroup"] = [pod_group("pg1", 3)]
        h.add_pod(*pods)
        h.advance(0)
        assert [w.pod.name for w in h.waiting()] == ["p1", "p2"]
        h.advance(PERMIT_TIMEOUT_SECONDS - 1)
        assert len(h.waiting()) == 2
        h.advance(1)
        assert not h.waiting()
        for name in ("p1", "p2"):
            assert h.backend.conditions[f"default/{name}"] == ("Unschedulable", TIMEOUT_MESSAGE)
        assert not any(p.node_name for p in h.backend.pods.values())


def test_a_gang_of_one_binds_at_once_and_a_waiting_member_says_why() -> None:
    with harness([member("p1", "pg1")], [pod_group("pg1", 1)]) as h:
        h.run()
        assert h.node_of("p1") == "n1"
    with harness([member("p1", "pg1"), member("p2", "pg1")], [pod_group("pg1", 2)]) as h:
        h.run()
        first = h.recorder.reports[0]
        assert first.points["Permit"][0].code == "Wait"
        assert REASON_WAITING_AT_PERMIT in first.points["Permit"][0].reasons
        assert first.result == "Scheduled"  # allowed by the second member
