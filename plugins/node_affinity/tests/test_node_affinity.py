"""NodeAffinity: kube-scheduler's node_affinity_test.go tables, args, and end-to-end runs."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_node_affinity import (
    ERR_REASON_CONFLICT,
    ERR_REASON_ENFORCED,
    ERR_REASON_POD,
    NAME,
    NodeAffinity,
)

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
    PreFilterResult,
    QueueingHint,
    Snapshot,
    Status,
)
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

NAME_PART_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def new_plugin(args: dict[str, Any] | None = None) -> NodeAffinity:
    return NodeAffinity(args or {}, Handle("test", InMemoryBackend(), Snapshot))


def pod(spec: dict[str, Any] | None = None, name: str = "p") -> Pod:
    return Pod({"metadata": {"name": name}, "spec": spec or {}})


def node(name: str = "test-node", labels: dict[str, str] | None = None) -> Node:
    return Node({"metadata": {"name": name, "labels": labels or {}}})


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def required_selector(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def with_required(*terms: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        **spec,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required_selector(*terms)
            }
        },
    }


def added_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": required_selector(*terms)
        }
    }


UNRESOLVABLE_POD = Status.unresolvable(ERR_REASON_POD)

# (name, pod spec, node labels, node name, want Filter, want PreFilter status,
#  want PreFilter node names, args, run PreFilter)
FILTER_CASES: list[tuple[Any, ...]] = [
    (
        "missing labels",
        {"nodeSelector": {"foo": "bar"}},
        {},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "same labels",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "node labels are superset",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "node labels are subset",
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        with_required({"matchExpressions": [expr("foo", "In", "bar", "value2")]}),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        with_required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]}),
        {"kernel-version": "0206"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        with_required({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}),
        {"mem-type": "DDR3"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        with_required({"matchExpressions": [expr("GPU", "Exists")]}),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        with_required({"matchExpressions": [expr("foo", "In", "value1", "value2")]}),
        {"foo": "bar"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't "
        "schedule onto the node",
        with_required({"matchExpressions": []}),
        {"foo": "bar"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with no Affinity will schedule onto a node",
        {},
        {"foo": "bar"},
        "",
        None,
        Status.skip(),
        None,
        {},
        True,
    ),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        {"foo": "bar"},
        "",
        None,
        Status.skip(),
        None,
        {},
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        with_required(
            {"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        with_required(
            {"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and "
        "will schedule onto the node",
        with_required(
            {"matchExpressions": [expr("foo", "In", "bar", "value2")]},
            {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]},
        ),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are "
        "deprecating) both are satisfied, will schedule onto the node",
        with_required({"matchExpressions": [expr("foo", "Exists")]}, nodeSelector={"foo": "bar"}),
        {"foo": "bar"},
        "",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing "
        "that we are deprecating) is not satisfied, won't schedule onto the node",
        with_required({"matchExpressions": [expr("foo", "Exists")]}, nodeSelector={"foo": "bar"}),
        {"foo": "barrrrrr"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        with_required({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]}),
        {"foo": "bar"},
        "",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        with_required({"matchFields": [name_in("node1")]}),
        {},
        "node1",
        None,
        None,
        {"node1"},
        {},
        True,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        with_required({"matchFields": [name_in("node1")]}),
        {},
        "node2",
        UNRESOLVABLE_POD,
        None,
        {"node1"},
        {},
        True,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        with_required(
            {"matchFields": [name_in("node1"), name_in("node2")]},
            {"matchExpressions": [expr("foo", "In", "bar")]},
        ),
        {"foo": "bar"},
        "node2",
        None,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        with_required(
            {"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}
        ),
        {"foo": "bar"},
        "node2",
        UNRESOLVABLE_POD,
        None,
        {"node1"},
        {},
        True,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        with_required(
            {"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}
        ),
        {"foo": "bar"},
        "node1",
        None,
        None,
        {"node1"},
        {},
        True,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        with_required(
            {"matchFields": [name_in("node1")]},
            {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]},
        ),
        {"foo": "bar"},
        "node2",
        UNRESOLVABLE_POD,
        None,
        None,
        {},
        True,
    ),
    (
        "Pod with two terms of node.Name affinity",
        with_required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]}),
        {},
        "node2",
        None,
        None,
        {"node1", "node2"},
        {},
        True,
    ),
    (
        "Pod with two conflicting mach field requirements",
        with_required({"matchFields": [name_in("node1"), name_in("node2")]}),
        {"foo": "bar"},
        "node2",
        UNRESOLVABLE_POD,
        Status.unresolvable(ERR_REASON_CONFLICT),
        None,
        {},
        True,
    ),
    (
        "Matches added affinity and Pod's node affinity",
        with_required({"matchExpressions": [expr("zone", "In", "foo")]}),
        {"zone": "foo"},
        "node2",
        None,
        None,
        None,
        added_required({"matchFields": [name_in("node2")]}),
        True,
    ),
    (
        "Matches added affinity but not Pod's node affinity",
        with_required({"matchExpressions": [expr("zone", "In", "bar")]}),
        {"zone": "foo"},
        "node2",
        UNRESOLVABLE_POD,
        None,
        None,
        added_required({"matchFields": [name_in("node2")]}),
        True,
    ),
    (
        "Doesn't match added affinity",
        {},
        {"zone": "foo"},
        "node2",
        Status.unresolvable(ERR_REASON_ENFORCED),
        None,
        None,
        added_required({"matchExpressions": [expr("zone", "In", "bar")]}),
        True,
    ),
    (
        "Matches node selector correctly even if PreFilter is not called",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        None,
        None,
        None,
        {},
        False,
    ),
    (
        "Matches node affinity correctly even if PreFilter is not called",
        with_required(
            {"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        None,
        None,
        None,
        {},
        False,
    ),
]


@pytest.mark.parametrize(
    (
        "spec",
        "labels",
        "node_name",
        "want_status",
        "want_pre_filter_status",
        "want_node_names",
        "args",
        "run_pre_filter",
    ),
    [case[1:] for case in FILTER_CASES],
    ids=[case[0] for case in FILTER_CASES],
)
def test_node_affinity(
    spec,
    labels,
    node_name,
    want_status,
    want_pre_filter_status,
    want_node_names,
    args,
    run_pre_filter,
):
    plugin = new_plugin(args)
    node_info = NodeInfo(node(node_name or "test-node", labels))
    the_pod = pod(spec)
    state = CycleState()
    if run_pre_filter:
        result = plugin.pre_filter(state, the_pod, [node_info])
        if isinstance(result, Status):
            assert result == want_pre_filter_status
        else:
            assert want_pre_filter_status is None
            if want_node_names is None:
                assert result is None
            else:
                assert result == PreFilterResult(want_node_names)
    assert plugin.filter(state, the_pod, node_info) == want_status


def test_filter_codes_are_unresolvable():
    status = new_plugin().filter(CycleState(), pod({"nodeSelector": {"a": "b"}}), NodeInfo(node()))
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == (ERR_REASON_POD,)


# --- TestNodeAffinityPriority ---------------------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}}
    ]
}
AFFINITY2 = {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [expr("foo", "In", "bar")]}},
        {"weight": 4, "preference": {"matchExpressions": [expr("key", "In", "value")]}},
        {
            "weight": 5,
            "preference": {
                "matchExpressions": [
                    expr("foo", "In", "bar"),
                    expr("key", "In", "value"),
                    expr("az", "In", "az1"),
                ]
            },
        },
    ]
}


def affinity_spec(node_affinity: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": node_affinity}}


PRIORITY_CASES: list[tuple[Any, ...]] = [
    (
        "all nodes are same priority as NodeAffinity is nil",
        {},
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        {"node1": 0, "node2": 0, "node3": 0},
        {},
        False,
        None,
    ),
    (
        "Skip is returned in PreScore when NodeAffinity is nil",
        {},
        [("node1", LABEL1)],
        None,
        {},
        True,
        Status.skip(),
    ),
    (
        "PreScore returns error when an incoming Pod has a broken affinity",
        affinity_spec(
            {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 2,
                        "preference": {"matchExpressions": [expr("invalid key", "In", "bar")]},
                    }
                ]
            }
        ),
        [("node1", LABEL1)],
        None,
        {},
        True,
        Status.error(
            f'[0].matchExpressions[0].key: Invalid value: "invalid key": {NAME_PART_REGEX}'
        ),
    ),
    (
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
        "priority is zero",
        affinity_spec(AFFINITY1),
        [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
        {"node1": 0, "node2": 0, "node3": 0},
        {},
        True,
        None,
    ),
    (
        "only node1 matches the preferred scheduling requirements of pod",
        affinity_spec(AFFINITY1),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
        {"node1": 100, "node2": 0, "node3": 0},
        {},
        True,
        None,
    ),
    (
        "all nodes matches the preferred scheduling requirements of pod but with different "
        "priorities ",
        affinity_spec(AFFINITY2),
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        {"node1": 18, "node5": 100, "node2": 36},
        {},
        True,
        None,
    ),
    (
        "added affinity",
        {},
        [("node1", LABEL1), ("node2", LABEL2)],
        {"node1": 100, "node2": 0},
        {"addedAffinity": AFFINITY1},
        True,
        None,
    ),
    (
        "added affinity and pod has default affinity",
        affinity_spec(AFFINITY1),
        [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
        {"node1": 40, "node2": 60, "node3": 100},
        {
            "addedAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": {"matchExpressions": [expr("key", "In", "value")]}}
                ]
            }
        },
        True,
        None,
    ),
    (
        "calculate the priorities correctly even if PreScore is not called",
        affinity_spec(AFFINITY2),
        [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
        {"node1": 18, "node5": 100, "node2": 36},
        {},
        False,
        None,
    ),
]


@pytest.mark.parametrize(
    ("spec", "nodes", "expected", "args", "run_pre_score", "want_pre_score_status"),
    [case[1:] for case in PRIORITY_CASES],
    ids=[case[0] for case in PRIORITY_CASES],
)
def test_node_affinity_priority(spec, nodes, expected, args, run_pre_score, want_pre_score_status):
    plugin = new_plugin(args)
    the_pod = pod(spec)
    infos = [NodeInfo(node(name, labels)) for name, labels in nodes]
    state = CycleState()
    if run_pre_score:
        status = plugin.pre_score(state, the_pod, infos)
        if want_pre_score_status is not None:
            assert status == want_pre_score_status
            return
        assert status is None
    scores = {info.name: plugin.score(state, the_pod, info) for info in infos}
    assert plugin.normalize_score(state, the_pod, scores) is None
    assert scores == expected


def test_normalize_keeps_all_zero_scores():
    scores = {"a": 0, "b": 0}
    new_plugin().normalize_score(CycleState(), pod(), scores)
    assert scores == {"a": 0, "b": 0}


# --- Test_isSchedulableAfterNodeChange ------------------------------------------------------------

POD_WITH_AFFINITY = with_required({"matchExpressions": [expr("foo", "In", "bar")]})
ADDED_FOO_BAR = added_required({"matchExpressions": [expr("foo", "In", "bar")]})


@pytest.mark.parametrize(
    ("args", "old", "new", "want"),
    [
        ({}, None, "not-a-node", QueueingHint.QUEUE),
        ({}, "not-a-node", node(), QueueingHint.QUEUE),
        ({}, None, node(), QueueingHint.SKIP),
        ({}, None, node(labels={"foo": "bar"}), QueueingHint.QUEUE),
        ({}, node(), node(labels={"x": "y"}), QueueingHint.SKIP),
        ({}, node(), node(labels={"k": "v"}), QueueingHint.SKIP),
        ({}, node(labels={"foo": "bar"}), node(labels={"k": "v"}), QueueingHint.SKIP),
        ({}, node(), node(labels={"foo": "bar"}), QueueingHint.QUEUE),
        (ADDED_FOO_BAR, None, node(), QueueingHint.SKIP),
        (ADDED_FOO_BAR, None, node(labels={"foo": "bar"}), QueueingHint.QUEUE),
    ],
    ids=[
        "backoff-wrong-new-object",
        "backoff-wrong-old-object",
        "skip-queue-on-add",
        "queue-on-add",
        "skip-unrelated-changes",
        "skip-unrelated-changes-on-labels",
        "skip-labels-changes-on-node-from-suitable-to-unsuitable",
        "queue-on-labels-change-makes-pod-schedulable",
        "skip-queue-on-add-scheduler-enforced-node-affinity",
        "queue-on-add-scheduler-enforced-node-affinity",
    ],
)
def test_is_schedulable_after_node_change(args, old, new, want):
    plugin = new_plugin(args)
    assert plugin.is_schedulable_after_node_change(pod(POD_WITH_AFFINITY), old, new) is want


def test_hint_queues_when_the_pods_terms_are_broken():
    broken = pod(with_required({"matchExpressions": [expr("bad key", "In", "x")]}))
    assert new_plugin().is_schedulable_after_node_change(broken, None, node()) is QueueingHint.QUEUE


def test_events_to_register():
    (registered,) = new_plugin().events_to_register()
    assert registered.event.resource is EventResource.NODE
    assert registered.event.action == ActionType.ADD | ActionType.UPDATE_NODE_LABEL
    assert registered.hint is not None


# --- args -----------------------------------------------------------------------------------------


def test_added_affinity_is_parsed():
    plugin = new_plugin(
        {
            "addedAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": required_selector(
                    {"matchExpressions": [expr("zone", "In", "a")]}
                ),
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 3, "preference": {"matchExpressions": [expr("gpu", "Exists")]}}
                ],
            }
        }
    )
    assert plugin.args.added_node_selector.matches(node(labels={"zone": "a"}))
    assert plugin.args.added_preferred_terms.score(node(labels={"gpu": ""})) == 3


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({"addedAffinity": "zone=a"}, ["args.addedAffinity: must be a NodeAffinity object"]),
        (
            {"extra": 1, "addedAffinity": {"requiredDuringSchedulingRequiredDuringExecution": {}}},
            [
                "args.extra: unknown field; allowed: addedAffinity",
                "args.addedAffinity.requiredDuringSchedulingRequiredDuringExecution: unknown "
                "field; allowed: requiredDuringSchedulingIgnoredDuringExecution, "
                "preferredDuringSchedulingIgnoredDuringExecution",
            ],
        ),
        (
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": required_selector(
                        {"matchFields": [name_in("a", "b")]},
                        {"matchExpressions": [expr("invalid key", "In", "v")]},
                    ),
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [expr("k", "Nope")]}}
                    ],
                }
            },
            [
                "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                '.nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"a", "b"}: '
                "must have one element",
                "args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                '.nodeSelectorTerms[1].matchExpressions[0].key: Invalid value: "invalid key": '
                + NAME_PART_REGEX,
                "args.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                '.matchExpressions[0].operator: Unsupported value: "Nope": supported values: '
                '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
            ],
        ),
    ],
    ids=["not-an-object", "unknown-fields", "every-selector-error-at-once"],
)
def test_bad_args_are_reported_with_their_paths_at_start_up(args, errors):
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": args}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeAffinity}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].{e}" for e in errors
    ]


# --- end to end -----------------------------------------------------------------------------------


def profile(**points: Any) -> dict[str, Any]:
    return {
        "plugins": {
            "multiPoint": {"enabled": [{"name": NAME}]},
            **points,
        }
    }


def test_pods_land_on_nodes_matching_selector_and_affinity():
    nodes = [
        make_node("a").labels(zone="a").obj(),
        make_node("b").labels(zone="b", disk="ssd").obj(),
        make_node("c").labels(zone="c").obj(),
    ]
    by_selector = make_pod("by-selector").node_selector(disk="ssd").manifest()
    by_affinity = make_pod("by-affinity").manifest()
    by_affinity["spec"].update(with_required({"matchExpressions": [expr("zone", "In", "c")]}))
    by_name = make_pod("by-name").manifest()
    by_name["spec"].update(with_required({"matchFields": [name_in("a")]}))
    scheduler, backend = make_scheduler(
        {NAME: NodeAffinity},
        profile(),
        nodes,
        [Pod(by_selector), Pod(by_affinity), Pod(by_name)],
    )
    run_until_idle(scheduler)
    assert backend.pod("default", "by-selector").node_name == "b"
    assert backend.pod("default", "by-affinity").node_name == "c"
    assert backend.pod("default", "by-name").node_name == "a"


def test_preferred_terms_pick_the_heaviest_match():
    nodes = [make_node(n).labels(tier=n).obj() for n in ("gold", "silver", "bronze")]
    manifest = make_pod("p").manifest()
    manifest["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [expr("tier", "In", "silver")]}},
                {"weight": 90, "preference": {"matchExpressions": [expr("tier", "In", "gold")]}},
            ]
        }
    }
    scheduler, backend = make_scheduler({NAME: NodeAffinity}, profile(), nodes, [Pod(manifest)])
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "gold"


def test_rejected_pod_moves_back_when_a_node_gets_the_label():
    clock = [0.0]
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    scheduler, backend = make_scheduler(
        {NAME: NodeAffinity},
        profile(),
        nodes,
        [make_pod("p").node_selector(disk="ssd").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert backend.conditions["default/p"][1] == (
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert scheduler.queue.pending()["unschedulable"] == 1
    backend.update_node(make_node("n1").label("team", "a").obj())
    assert scheduler.queue.pending()["unschedulable"] == 1  # the hint said Skip
    backend.update_node(make_node("n2").label("disk", "ssd").obj())
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n2"
