"""DefaultPreemption asks the extenders with a preemptVerb (kube's ``callExtenders``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubesched_default_preemption import MESSAGE_PREFIX
from preemption_support import HIGH, ONE_POD, Env, epoch, node, pod

from kubesched import Code, PostFilterResult, Status
from kubesched.testing.extender_stub import StubExtender

UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)
STATUSES = {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE}


@pytest.fixture
def stub() -> Iterator[StubExtender]:
    with StubExtender() as extender:
        yield extender


def env(stub: StubExtender | None, **extender: object) -> Env:
    # Both nodes hold one low-priority pod; node1's started later, so kube prefers node1.
    extenders = [{"urlPrefix": stub.url, "preemptVerb": "preempt", **extender}] if stub else []
    return Env(
        [node("node1", **ONE_POD), node("node2", **ONE_POD)],
        [pod("p1", on="node1", start=epoch(20)), pod("p2", on="node2", start=epoch(10))],
        extenders=extenders,
    )


def preempt(e: Env):
    preemptor = pod("p", priority=HIGH)
    return e.plugin.run_post_filter(e.state(preemptor), preemptor, STATUSES)


@pytest.mark.parametrize("node_cache_capable", [False, True], ids=["victims", "meta-victims"])
def test_the_extender_narrows_the_candidates(stub: StubExtender, node_cache_capable: bool) -> None:
    baseline, _ = preempt(env(None))
    assert baseline == PostFilterResult("node1")  # without the extender
    stub.refuse_preemption = {"node1"}
    result, status = preempt(env(stub, nodeCacheCapable=node_cache_capable))
    assert result == PostFilterResult("node2")
    assert status.is_success()
    (body,) = stub.verbs("preempt")
    if node_cache_capable:
        assert body["NodeNameToVictims"] is None
        assert set(body["NodeNameToMetaVictims"]) == {"node1", "node2"}
    else:
        assert body["NodeNameToMetaVictims"] is None
        victims = body["NodeNameToVictims"]["node1"]
        assert [p["metadata"]["name"] for p in victims["Pods"]] == ["p1"]
        assert victims["NumPDBViolations"] == 0


def test_no_victims_from_a_non_ignorable_extender_is_an_error(stub: StubExtender) -> None:
    stub.no_victims = {"node1", "node2"}
    result, status = preempt(env(stub))
    assert result is None
    assert status.code is Code.ERROR
    assert status.message().startswith(MESSAGE_PREFIX + "expected at least one victim pod on node")


@pytest.mark.parametrize("ignorable", [False, True])
def test_a_failing_preempt_extender(stub: StubExtender, ignorable: bool) -> None:
    e = env(stub, ignorable=ignorable)
    preemptor = pod("p", priority=HIGH, labels={"extender.kubesched.io/fail": "status"})
    result, status = e.plugin.run_post_filter(e.state(preemptor), preemptor, STATUSES)
    if ignorable:
        assert status.is_success() and result is not None and result.nominated_node_name
    else:
        assert status == Status(
            Code.ERROR,
            f"{MESSAGE_PREFIX}failed preempt with extender at URL {stub.url}/preempt, code 500",
        )
