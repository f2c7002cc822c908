"""TaintToleration: kube-scheduler's table cases (taint_toleration_test.go, and
helper/normalize_score_test.go for the normalization), and the plugin in a running scheduler."""

from __future__ import annotations

import pytest
from kubesched_taint_toleration import (
    MAX_NODE_SCORE,
    NAME,
    PRE_SCORE_STATE_KEY,
    REASON_UNTOLERATED,
    TaintToleration,
    default_normalize_score,
)

from kubesched import (
    Code,
    ConfigError,
    CycleState,
    InMemoryBackend,
    NodeInfo,
    QueueingHint,
    Snapshot,
    Status,
)
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

PREFER = "PreferNoSchedule"


def new_plugin() -> TaintToleration:
    return TaintToleration({}, Handle("test", InMemoryBackend(), Snapshot))


def pod_with(*tolerations: dict):
    builder = make_pod("pod1")
    for toleration in tolerations:
        builder.toleration(**toleration)
    return builder.obj()


def node_with(name: str, *taints: tuple[str, str, str]):
    builder = make_node(name)
    for key, value, effect in taints:
        builder.taint(key, value, effect)
    return builder.obj()


# --- TestTaintTolerationScore -------------------------------------------------------------------


SCORE_CASES = [
    pytest.param(
        pod_with({"key": "foo", "value": "bar", "effect": PREFER}),
        [node_with("nodeA", ("foo", "bar", PREFER)), node_with("nodeB", ("foo", "blah", PREFER))],
        {"nodeA": MAX_NODE_SCORE, "nodeB": 0},
        id="node with taints tolerated by the pod, gets a higher score than those node with "
        "intolerable taints",
    ),
    pytest.param(
        pod_with(
            {"key": "cpu-type", "value": "arm64", "effect": PREFER},
            {"key": "disk-type", "value": "ssd", "effect": PREFER},
        ),
        [
            node_with("nodeA"),
            node_with("nodeB", ("cpu-type", "arm64", PREFER)),
            node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
        ],
        {"nodeA": MAX_NODE_SCORE, "nodeB": MAX_NODE_SCORE, "nodeC": MAX_NODE_SCORE},
        id="the nodes that all of their taints are tolerated by the pod, get the same score, "
        "no matter how many tolerable taints a node has",
    ),
    pytest.param(
        pod_with({"key": "foo", "value": "bar", "effect": PREFER}),
        [
            node_with("nodeA"),
            node_with("nodeB", ("cpu-type", "arm64", PREFER)),
            node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
        ],
        {"nodeA": MAX_NODE_SCORE, "nodeB": 50, "nodeC": 0},
        id="the more intolerable taints a node has, the lower score it gets.",
    ),
    pytest.param(
        pod_with(
            {"key": "cpu-type", "value": "arm64", "effect": "NoSchedule"},
            {"key": "disk-type", "value": "ssd", "effect": "NoSchedule"},
        ),
        [
            node_with("nodeA"),
            node_with("nodeB", ("cpu-type", "arm64", "NoSchedule")),
            node_with("nodeC", ("cpu-type", "arm64", PREFER), ("disk-type", "ssd", PREFER)),
        ],
        {"nodeA": MAX_NODE_SCORE, "nodeB": MAX_NODE_SCORE, "nodeC": 0},
        id="only taints and tolerations that have effect PreferNoSchedule are checked by "
        "taints-tolerations priority function",
    ),
    pytest.param(
        pod_with(),
        [node_with("nodeA"), node_with("nodeB", ("cpu-type", "arm64", PREFER))],
        {"nodeA": MAX_NODE_SCORE, "nodeB": 0},
        id="Default behaviour No taints and tolerations, lands on node with no taints",
    ),
    # kube's Gt/Lt cases need the alpha TaintTolerationComparisonOperators gate, off by default
    # in v1.37: without it a Gt/Lt toleration tolerates nothing, so every node scores alike.
    pytest.param(
        pod_with(
            {"key": "node.kubernetes.io/sla", "operator": "Gt", "value": "950", "effect": PREFER}
        ),
        [
            node_with("nodeA", ("node.kubernetes.io/sla", "800", PREFER)),
            node_with("nodeB", ("node.kubernetes.io/sla", "999", PREFER)),
        ],
        {"nodeA": 0, "nodeB": 0},
        id="Numeric Gt operator with the comparison gate off tolerates nothing",
    ),
    pytest.param(
        pod_with({"key": "foo", "operator": "Exists"}),
        [node_with("nodeA", ("foo", "x", PREFER)), node_with("nodeB", ("bar", "", PREFER))],
        {"nodeA": MAX_NODE_SCORE, "nodeB": 0},
        id="a toleration with no effect tolerates PreferNoSchedule",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "expected"), SCORE_CASES)
def test_score(pod, nodes, expected):
    plugin = new_plugin()
    state = CycleState()
    infos = [NodeInfo(node) for node in nodes]
    assert plugin.pre_score(state, pod, infos) is None
    scores = {info.name: plugin.score(state, pod, info) for info in infos}
    assert plugin.normalize_score(state, pod, scores) is None
    assert scores == expected


def test_score_without_pre_score_is_an_error():
    status = new_plugin().score(CycleState(), pod_with(), NodeInfo(node_with("nodeA")))
    assert isinstance(status, Status)
    assert status.code is Code.ERROR
    assert PRE_SCORE_STATE_KEY in status.message()


# --- TestTaintTolerationFilter and TestTaintTolerationFilterWithFeatureGate (gate off) ---------


FILTER_CASES = [
    pytest.param(
        pod_with(),
        node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
        REASON_UNTOLERATED,
        id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
    ),
    pytest.param(
        pod_with({"key": "dedicated", "value": "user1", "effect": "NoSchedule"}),
        node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
        None,
        id="A pod which can be scheduled on a dedicated node assigned to user1 with effect "
        "NoSchedule",
    ),
    pytest.param(
        pod_with(
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}
        ),
        node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
        REASON_UNTOLERATED,
        id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
        "NoSchedule",
    ),
    pytest.param(
        pod_with({"key": "foo", "operator": "Exists", "effect": "NoSchedule"}),
        node_with("nodeA", ("foo", "bar", "NoSchedule")),
        None,
        id="A pod can be scheduled onto the node, with a toleration uses operator Exists that "
        "tolerates the taints on the node",
    ),
    pytest.param(
        pod_with(
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
            {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        ),
        node_with("nodeA", ("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")),
        None,
        id="A pod has multiple tolerations, node has multiple taints, all the taints are "
        "tolerated, pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with({"key": "foo", "operator": "Equal", "value": "bar", "effect": PREFER}),
        node_with("nodeA", ("foo", "bar", "NoSchedule")),
        REASON_UNTOLERATED,
        id="A pod has a toleration that keys and values match the taint on the node, but "
        "(non-empty) effect doesn't match, can't be scheduled onto the node",
    ),
    pytest.param(
        pod_with({"key": "foo", "operator": "Equal", "value": "bar"}),
        node_with("nodeA", ("foo", "bar", "NoSchedule")),
        None,
        id="The pod has a toleration that keys and values match the taint on the node, the "
        "effect of toleration is empty, and the effect of taint is NoSchedule. Pod can be "
        "scheduled onto the node",
    ),
    pytest.param(
        pod_with(
            {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}
        ),
        node_with("nodeA", ("dedicated", "user1", PREFER)),
        None,
        id="The pod has a toleration that key and value don't match the taint on the node, but "
        "the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the node",
    ),
    pytest.param(
        pod_with(),
        node_with("nodeA", ("dedicated", "user1", PREFER)),
        None,
        id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod "
        "can be scheduled onto the node",
    ),
    pytest.param(
        pod_with(),
        node_with("nodeA", ("node.kubernetes.io/not-ready", "", "NoExecute")),
        REASON_UNTOLERATED,
        id="a NoExecute taint is checked like NoSchedule",
    ),
    pytest.param(
        pod_with(
            {
                "key": "node.kubernetes.io/sla",
                "operator": "Gt",
                "value": "750",
                "effect": "NoSchedule",
            }
        ),
        node_with("nodeA", ("node.kubernetes.io/sla", "950", "NoSchedule")),
        REASON_UNTOLERATED,
        id="Pod with Gt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        pod_with(
            {
                "key": "node.kubernetes.io/sla",
                "operator": "Lt",
                "value": "950",
                "effect": "NoSchedule",
            }
        ),
        node_with("nodeA", ("node.kubernetes.io/sla", "800", "NoSchedule")),
        REASON_UNTOLERATED,
        id="Pod with Lt toleration cannot be scheduled when feature gate is disabled",
    ),
    pytest.param(
        pod_with(
            {"key": "dedicated", "operator": "Equal", "value": "user1", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/sla",
                "operator": "Gt",
                "value": "750",
                "effect": "NoSchedule",
            },
        ),
        node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
        None,
        id="Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal "
        "is honored",
    ),
    pytest.param(
        pod_with(
            {"key": "dedicated", "operator": "Equal", "value": "user1", "effect": "NoSchedule"},
            {
                "key": "node.kubernetes.io/sla",
                "operator": "Gt",
                "value": "750",
                "effect": "NoSchedule",
            },
        ),
        node_with(
            "nodeA",
            ("dedicated", "user1", "NoSchedule"),
            ("node.kubernetes.io/sla", "950", "NoSchedule"),
        ),
        REASON_UNTOLERATED,
        id="Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate "
        "is disabled",
    ),
]


@pytest.mark.parametrize(("pod", "node", "want_reason"), FILTER_CASES)
def test_filter(pod, node, want_reason):
    status = new_plugin().filter(CycleState(), pod, NodeInfo(node))
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want_reason,)


# --- TestIsSchedulableAfterNodeChange -----------------------------------------------------------


USER2 = {"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"),
    [
        pytest.param(
            pod_with(), None, "not-a-node", QueueingHint.QUEUE, id="backoff-wrong-new-object"
        ),
        pytest.param(
            pod_with(),
            "not-a-node",
            node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
            QueueingHint.QUEUE,
            id="backoff-wrong-old-object",
        ),
        pytest.param(
            pod_with(USER2),
            None,
            node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
            QueueingHint.SKIP,
            id="skip-queue-on-untoleratedtaint-node-added",
        ),
        pytest.param(
            pod_with(USER2),
            None,
            node_with("nodeA", ("dedicated", "user2", "NoSchedule")),
            QueueingHint.QUEUE,
            id="queue-on-toleratedtaint-node-added",
        ),
        pytest.param(
            pod_with(USER2),
            node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
            node_with(
                "nodeA", ("dedicated", "user1", "NoSchedule"), ("dedicated", "user3", "NoSchedule")
            ),
            QueueingHint.SKIP,
            id="skip-unrelated-change",
        ),
        pytest.param(
            pod_with(USER2),
            node_with("nodeA", ("dedicated", "user1", "NoSchedule")),
            node_with("nodeA", ("dedicated", "user2", "NoSchedule")),
            QueueingHint.QUEUE,
            id="queue-on-taint-change",
        ),
    ],
)
def test_hint_node_change(pod, old, new, want):
    node_event, _ = new_plugin().events_to_register()
    assert node_event.hint(pod, old, new) is want


# --- Test_isSchedulableAfterTargetPodTolerationChange, and the uid guard -------------------------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            make_pod("pod-1", "ns-1").obj(),
            make_pod("pod-1", "ns-1").toleration(key="foo", effect="NoSchedule").obj(),
            QueueingHint.QUEUE,
            id="queue-on-toleration-added",
        ),
        pytest.param(
            make_pod("pod-2", "ns-1").obj(),
            make_pod("pod-2", "ns-1").toleration(key="foo", effect="NoSchedule").obj(),
            QueueingHint.SKIP,
            id="skip-another-pod's-toleration",
        ),
    ],
)
def test_hint_target_pod_toleration_change(old, new, want):
    _, pod_event = new_plugin().events_to_register()
    assert pod_event.hint(make_pod("pod-1", "ns-1").obj(), old, new) is want


# --- helper.TestDefaultNormalizeScore -----------------------------------------------------------


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (True, [0, 1, 1, 1], [100, 0, 0, 0]),
        (False, [0, 0, 0, 0], [0, 0, 0, 0]),
        (True, [0, 0, 0, 0], [100, 100, 100, 100]),
    ],
    ids=[f"case_{i}" for i in range(9)],
)
def test_default_normalize_score(reverse, scores, expected):
    by_node = {f"n{i}": score for i, score in enumerate(scores)}
    default_normalize_score(MAX_NODE_SCORE, reverse, by_node)
    assert list(by_node.values()) == expected


def test_args_are_refused():
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"ignore": ["x"]}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: TaintToleration}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.ignore: unknown field; {NAME} takes no args"
    ]


# --- Through the scheduler ----------------------------------------------------------------------


def profile() -> dict:
    return {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}


def test_pods_prefer_nodes_without_untolerated_soft_taints():
    nodes = [node_with("soft", ("spot", "true", PREFER)), node_with("clean")]
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    scheduler, backend = make_scheduler({NAME: TaintToleration}, profile(), nodes, pods, seed=3)
    run_until_idle(scheduler)
    assert {backend.pod("default", f"p{i}").node_name for i in range(4)} == {"clean"}


def test_rejected_pod_moves_back_when_the_taint_goes():
    clock = [0.0]
    scheduler, backend = make_scheduler(
        {NAME: TaintToleration},
        profile(),
        [node_with("n1", ("dedicated", "db", "NoSchedule"))],
        [make_pod("p").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert backend.conditions["default/p"][1] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
    )
    assert scheduler.queue.pending()["unschedulable"] == 1

    # Another hard taint on a new node does not help.
    backend.add_node(node_with("n2", ("gpu", "", "NoExecute")))
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.update_node(node_with("n1"))
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"


def test_rejected_pod_moves_back_when_it_gains_a_toleration():
    clock = [0.0]
    scheduler, backend = make_scheduler(
        {NAME: TaintToleration},
        profile(),
        [node_with("n1", ("dedicated", "db", "NoSchedule"))],
        [make_pod("p").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.add_pod(
        make_pod("p").toleration(key="dedicated", value="db", effect="NoSchedule").obj()
    )
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"
