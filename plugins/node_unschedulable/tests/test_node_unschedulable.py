"""NodeUnschedulable: kube-scheduler's table cases (node_unschedulable_test.go) and the requeue of
a rejected pod through the queue."""

from __future__ import annotations

import pytest
from kubesched_node_unschedulable import (
    NAME,
    REASON_UNSCHEDULABLE,
    TAINT_NODE_UNSCHEDULABLE,
    NodeUnschedulable,
)

from kubesched import (
    Code,
    ConfigError,
    CycleState,
    InMemoryBackend,
    NodeInfo,
    QueueingHint,
    Snapshot,
)
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def new_plugin() -> NodeUnschedulable:
    return NodeUnschedulable({}, Handle("test", InMemoryBackend(), Snapshot))


def exists(pod_builder, key: str):
    """kube's ``st.MakePod().Toleration(key)``: operator Exists, any effect."""
    return pod_builder.toleration(key=key, operator="Exists")


# --- TestNodeUnschedulable ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "node", "want_reason"),
    [
        pytest.param(
            make_pod("p").obj(),
            make_node("n").unschedulable().obj(),
            REASON_UNSCHEDULABLE,
            id="Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(
            make_pod("p").obj(),
            make_node("n").unschedulable(False).obj(),
            None,
            id="Schedule pod to normal node",
        ),
        pytest.param(
            make_pod("p").toleration(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule").obj(),
            make_node("n").unschedulable().obj(),
            None,
            id="Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists").obj(),
            make_node("n").unschedulable().obj(),
            None,
            id="a toleration of every taint tolerates unschedulable",
        ),
        pytest.param(
            make_pod("p").toleration(key=TAINT_NODE_UNSCHEDULABLE, effect="NoExecute").obj(),
            make_node("n").unschedulable().obj(),
            REASON_UNSCHEDULABLE,
            id="a toleration for another effect does not",
        ),
    ],
)
def test_filter(pod, node, want_reason):
    status = new_plugin().filter(CycleState(), pod, NodeInfo(node))
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want_reason,)


def test_missing_node_is_an_error():
    status = new_plugin().filter(CycleState(), make_pod("p").obj(), NodeInfo())
    assert status.code is Code.ERROR


# --- TestIsSchedulableAfterNodeChange -----------------------------------------------------------


NOT_READY = "node.kubernetes.io/not-ready"


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "not-a-node", QueueingHint.QUEUE, id="error-wrong-new-object"),
        pytest.param(
            "not-a-node",
            make_node("n").unschedulable().obj(),
            QueueingHint.QUEUE,
            id="error-wrong-old-object",
        ),
        pytest.param(
            None,
            make_node("n").unschedulable().obj(),
            QueueingHint.SKIP,
            id="skip-queue-on-unschedulable-node-added",
        ),
        pytest.param(
            None,
            make_node("n").unschedulable(False).obj(),
            QueueingHint.QUEUE,
            id="queue-on-schedulable-node-added",
        ),
        pytest.param(
            make_node("n").unschedulable().obj(),
            make_node("n").unschedulable().taint(NOT_READY, effect="NoExecute").obj(),
            QueueingHint.SKIP,
            id="skip-unrelated-change-unschedulable-true",
        ),
        pytest.param(
            make_node("n").unschedulable(False).obj(),
            make_node("n").unschedulable(False).taint(NOT_READY, effect="NoExecute").obj(),
            QueueingHint.SKIP,
            id="skip-unrelated-change-unschedulable-false",
        ),
        pytest.param(
            make_node("n").unschedulable().obj(),
            make_node("n").unschedulable(False).obj(),
            QueueingHint.QUEUE,
            id="queue-on-unschedulable-field-change",
        ),
    ],
)
def test_hint_node_change(old, new, want):
    node_event, _ = new_plugin().events_to_register()
    assert node_event.hint(make_pod("p").obj(), old, new) is want


# --- TestIsSchedulableAfterPodTolerationChange ---------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "not-a-pod", QueueingHint.QUEUE, id="error-wrong-new-object"),
        pytest.param(
            "not-a-pod", make_pod("p").obj(), QueueingHint.QUEUE, id="error-wrong-old-object"
        ),
        pytest.param(
            make_pod("p").uid("uid").obj(),
            exists(make_pod("p").uid("uid"), TAINT_NODE_UNSCHEDULABLE).obj(),
            QueueingHint.QUEUE,
            id="queue-when-the-unsched-pod-gets-toleration",
        ),
        pytest.param(
            make_pod("p").uid("uid").obj(),
            exists(make_pod("p").uid("uid"), "unrelated-key").obj(),
            QueueingHint.SKIP,
            id="skip-when-the-unsched-pod-gets-unrelated-toleration",
        ),
        pytest.param(
            make_pod("q").uid("other").obj(),
            exists(make_pod("q").uid("other"), TAINT_NODE_UNSCHEDULABLE).obj(),
            QueueingHint.SKIP,
            id="skip-when-another-pod-gets-toleration",
        ),
    ],
)
def test_hint_target_pod_toleration_change(old, new, want):
    _, pod_event = new_plugin().events_to_register()
    assert pod_event.hint(make_pod("p").uid("uid").obj(), old, new) is want


def test_args_are_refused():
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"strict": True}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeUnschedulable}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.strict: unknown field; {NAME} takes no args"
    ]


# --- Through the scheduler ----------------------------------------------------------------------


def profile() -> dict:
    return {"plugins": {"filter": {"enabled": [{"name": NAME}]}}}


def test_pods_avoid_cordoned_nodes_unless_tolerated():
    nodes = [make_node("cordoned").unschedulable().obj(), make_node("open").obj()]
    scheduler, backend = make_scheduler(
        {NAME: NodeUnschedulable}, profile(), nodes, [make_pod(f"p{i}").obj() for i in range(4)]
    )
    run_until_idle(scheduler)
    assert {backend.pod("default", f"p{i}").node_name for i in range(4)} == {"open"}


def test_a_tolerant_pod_may_use_a_cordoned_node():
    pods = [
        make_pod("plain").obj(),
        make_pod("tolerant").toleration(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule").obj(),
    ]
    scheduler, backend = make_scheduler(
        {NAME: NodeUnschedulable}, profile(), [make_node("cordoned").unschedulable().obj()], pods
    )
    run_until_idle(scheduler)
    assert backend.pod("default", "tolerant").node_name == "cordoned"
    assert backend.pod("default", "plain").node_name == ""


def test_rejected_pod_moves_back_when_the_node_is_uncordoned():
    clock = [0.0]
    scheduler, backend = make_scheduler(
        {NAME: NodeUnschedulable},
        profile(),
        [make_node("n1").unschedulable().obj()],
        [make_pod("p").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert backend.conditions["default/p"][1] == (
        "0/1 nodes are available: 1 node(s) were unschedulable."
    )
    assert scheduler.queue.pending()["unschedulable"] == 1

    # A new cordoned node does not help (the hint says Skip).
    backend.add_node(make_node("n2").unschedulable().obj())
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.update_node(make_node("n1").obj())
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"


def test_rejected_pod_moves_back_when_it_gains_the_toleration():
    clock = [0.0]
    scheduler, backend = make_scheduler(
        {NAME: NodeUnschedulable},
        profile(),
        [make_node("n1").unschedulable().obj()],
        [make_pod("p").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.add_pod(make_pod("p").toleration(key="unrelated", operator="Exists").obj())
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.add_pod(
        make_pod("p").toleration(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule").obj()
    )
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"
