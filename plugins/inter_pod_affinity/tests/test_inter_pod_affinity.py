"""InterPodAffinity: kube-scheduler v1.37's filtering_test.go, scoring_test.go and plugin_test.go
tables (same case names), then args validation, events and end-to-end runs.

kube runs its filtering tables with the alpha gate InterPodAffinityHostnameFastPath on and off;
kubesched implements the gate-off path (the default), so each table runs once. kube's empty
namespace is ``default`` here, where kubesched reads a pod without namespace.
"""

# ruff: noqa: E501 - kube's case names are kept verbatim as ids, whatever their length.
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from kubesched_inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    MAX_NODE_SCORE,
    NAME,
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
    PreFilterState,
)

from kubesched import (
    ActionType,
    ArgsError,
    Code,
    CycleState,
    EventResource,
    Handle,
    InMemoryBackend,
    NodeInfo,
    Pod,
    QueueingHint,
    Snapshot,
    Status,
)
from kubesched.testing.harness import make_scheduler, run_until_idle
from kubesched.testing.st import (
    ANTI_REQUIRED,
    HOSTNAME,
    PREFERRED,
    REQUIRED,
    k8s_node,
    k8s_pod,
    make_label_selector,
    make_node,
    make_pod,
    new_snapshot,
)

QUEUE = QueueingHint.QUEUE
QUEUE_SKIP = QueueingHint.SKIP
#: kube's ``defaultNamespace`` in these tests is "", which kubesched reads as ``default``.
default_namespace = ""
V1_DefaultHardPodAffinitySymmetricWeight = 1  # v1.DefaultHardPodAffinitySymmetricWeight
FWK_MaxScore = MAX_NODE_SCORE  # fwk.MaxScore


def ns(name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Namespace",
        "metadata": {"name": name or "default", "labels": dict(labels or {})},
    }


def node_score(name: str, score: int) -> tuple[str, int]:
    return (name, score)


def create_pod_with_affinity_terms(
    namespace: str,
    node_name: str,
    labels: Mapping[str, str],
    affinity: list[dict[str, Any]] | None,
    anti_affinity: list[dict[str, Any]] | None,
) -> Pod:
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    spec: dict[str, Any] = {
        "nodeName": node_name,
        "affinity": {
            "podAffinity": {required: affinity} if affinity else {},
            "podAntiAffinity": {required: anti_affinity} if anti_affinity else {},
        },
    }
    return k8s_pod({"metadata": {"labels": dict(labels), "namespace": namespace}, "spec": spec})


def cases(table: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(tc, id=tc["name"]) for tc in table]


def new_plugin(
    args: Mapping[str, Any] | None = None,
    snapshot: Snapshot | None = None,
    namespaces: list[dict[str, Any]] | None = None,
) -> InterPodAffinity:
    """The plugin as kube's SetupPluginWithInformers builds it: a handle over ``snapshot`` whose
    Namespace lister holds the unlabelled default namespace and ``namespaces``."""
    snap = snapshot if snapshot is not None else Snapshot()
    objects = {"Namespace": [ns(""), *(namespaces or [])]}
    return InterPodAffinity(
        dict(args or {}), Handle("test", InMemoryBackend(objects=objects), lambda: snap)
    )


def pre_filter(plugin: InterPodAffinity, pod: Pod, snapshot: Snapshot) -> tuple[CycleState, Any]:
    state = CycleState()
    return state, plugin.pre_filter(state, pod, snapshot.node_infos)


# === filtering_test.go =========================================================================

pod_label = {"service": "securityscan"}
pod = make_pod().labels(pod_label).node("node1").obj()
labels1 = {"region": "r1", "zone": "z11"}
pod_label2 = {"security": "S1"}
node1 = k8s_node({"metadata": {"name": "node1", "labels": labels1}})

REQUIRED_AFFINITY_SINGLE_NODE_CASES = [
    dict(
        name="A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod=k8s_pod({}),
        node=node1,
        want_pre_filter_status=Status(Code.SKIP),
    ),
    dict(
        name="satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        pods=[pod],
        node=node1,
    ),
    dict(
        name="satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_affinity_not_in("service", "region", ["securityscan3", "value3"], REQUIRED)
        .obj(),
        pods=[pod],
        node=node1,
    ),
    dict(
        name="Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        pod=create_pod_with_affinity_terms(
            default_namespace,
            "",
            pod_label2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaces": ["DiffNameSpace"],
                }
            ],
            None,
        ),
        pods=[make_pod().namespace("ns").label("service", "securityscan").node("node1").obj()],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_affinity_in("service", "", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        pods=[pod],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
        pod=create_pod_with_affinity_terms(
            default_namespace,
            "",
            pod_label2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
            None,
        ),
        pods=[pod],
        node=node1,
    ),
    dict(
        name="The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
        pod=create_pod_with_affinity_terms(
            default_namespace,
            "",
            pod_label2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "service", "operator": "In", "values": ["securityscan2"]},
                            {"key": "service", "operator": "NotIn", "values": ["WrongValue"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            ],
            None,
        ),
        pods=[pod],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], ANTI_REQUIRED)
        .obj(),
        pods=[pod],
        node=node1,
    ),
    dict(
        name="satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label)
            .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
    ),
    dict(
        name="satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        pods=[pod],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .pod_anti_affinity_in("service", "node", ["antivirusscan", "value2"], ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .labels(pod_label)
            .node("node1")
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_affinity_not_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        pods=[make_pod().label("service", "securityscan").node("node2").obj()],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod=make_pod().labels(pod_label).obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label)
            .pod_anti_affinity_in("service", "zone", ["securityscan", "value2"], ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
        pod=make_pod().labels(pod_label).obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label)
            .pod_anti_affinity_not_in("service", "zone", ["securityscan", "value2"], ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_pre_filter_status=Status(Code.SKIP),
    ),
    dict(
        name="satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_anti_affinity_exists("service", "region", ANTI_REQUIRED)
        .pod_anti_affinity_exists("security", "region", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label2)
            .pod_anti_affinity_exists("security", "zone", ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_anti_affinity_exists("service", "zone", ANTI_REQUIRED)
        .pod_anti_affinity_exists("security", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label2)
            .pod_anti_affinity_exists("security", "zone", ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label2)
        .pod_anti_affinity_exists("security", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels(pod_label)
            .pod_anti_affinity_exists("service", "zone", ANTI_REQUIRED)
            .pod_anti_affinity_exists("security", "zone", ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=make_pod()
        .namespace(default_namespace)
        .labels({"abc": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", ANTI_REQUIRED)
        .pod_anti_affinity_exists("def", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels({"def": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", ANTI_REQUIRED)
            .pod_anti_affinity_exists("def", "zone", ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod=make_pod()
        .namespace(default_namespace)
        .labels({"def": "", "xyz": ""})
        .pod_anti_affinity_exists("abc", "zone", ANTI_REQUIRED)
        .pod_anti_affinity_exists("def", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("node1")
            .labels({"abc": "", "xyz": ""})
            .pod_anti_affinity_exists("abc", "zone", ANTI_REQUIRED)
            .pod_anti_affinity_exists("def", "zone", ANTI_REQUIRED)
            .obj()
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="PodAffinity fails PreFilter with an invalid affinity label syntax",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_affinity_in("service", "region", ["{{.bad-value.}}"], REQUIRED)
        .pod_affinity_in("service", "node", ["antivirusscan", "value2"], REQUIRED)
        .obj(),
        node=node1,
        want_pre_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ),
    dict(
        name="PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
        pod=make_pod()
        .namespace(default_namespace)
        .labels(pod_label)
        .pod_affinity_in("service", "region", ["foo"], REQUIRED)
        .pod_affinity_in("service", "node", ["{{.bad-value.}}"], REQUIRED)
        .obj(),
        node=node1,
        want_pre_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: \"{{.bad-value.}}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ),
    dict(
        name="affinity with NamespaceSelector",
        pod=create_pod_with_affinity_terms(
            default_namespace,
            "",
            pod_label2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                    "topologyKey": "region",
                }
            ],
            None,
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label},
                }
            )
        ],
        node=node1,
    ),
    dict(
        name="affinity with non-matching NamespaceSelector",
        pod=create_pod_with_affinity_terms(
            default_namespace,
            "",
            pod_label2,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                    "topologyKey": "region",
                }
            ],
            None,
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label},
                }
            )
        ],
        node=node1,
        want_filter_status=Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH
        ),
    ),
    dict(
        name="anti-affinity with matching NamespaceSelector",
        pod=create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            pod_label2,
            None,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                    "topologyKey": "zone",
                }
            ],
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label},
                }
            )
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="anti-affinity with matching all NamespaceSelector",
        pod=create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            pod_label2,
            None,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaceSelector": {},
                    "topologyKey": "zone",
                }
            ],
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label},
                }
            )
        ],
        node=node1,
        want_filter_status=Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
    ),
    dict(
        name="anti-affinity with non-matching NamespaceSelector",
        pod=create_pod_with_affinity_terms(
            "subteam1.team1",
            "",
            pod_label2,
            None,
            [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {
                                "key": "service",
                                "operator": "In",
                                "values": ["securityscan", "value2"],
                            }
                        ]
                    },
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                    "topologyKey": "zone",
                }
            ],
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label},
                }
            )
        ],
        node=node1,
    ),
]

#: filtering_test.go's package-level namespaces for the single-node table.
SINGLE_NODE_NAMESPACES = [
    ns("subteam1.team1", {"team": "team1"}),
    ns("subteam2.team1", {"team": "team1"}),
    ns("subteam1.team2", {"team": "team2"}),
    ns("subteam2.team2", {"team": "team2"}),
]


@pytest.mark.parametrize("tc", cases(REQUIRED_AFFINITY_SINGLE_NODE_CASES))
def test_required_affinity_single_node(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(tc.get("pods"), [tc["node"]])
    plugin = new_plugin(snapshot=snapshot, namespaces=SINGLE_NODE_NAMESPACES)
    state, status = pre_filter(plugin, tc["pod"], snapshot)
    assert status == tc.get("want_pre_filter_status")
    if status is not None:
        return
    got = plugin.filter(state, tc["pod"], snapshot.get(tc["node"].name))
    assert got == tc.get("want_filter_status")


pod_label_a = {"foo": "bar"}
label_rg_china = {"region": "China"}
label_rg_china_az_az1 = {"region": "China", "az": "az1"}
label_rg_india = {"region": "India"}

REQUIRED_AFFINITY_MULTIPLE_NODES_CASES = [
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_affinity_in("foo", "region", ["bar"], REQUIRED)
        .obj(),
        pods=[make_pod().name("p1").node("node1").labels(pod_label_a).obj()],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china_az_az1}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_rg_india}}),
        ],
        want_filter_statuses=[
            None,
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
        ],
        name="A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        pods=[make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": {"zone": "az1", "hostname": "h1"}}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": {"zone": "az2", "hostname": "h2"}}}),
        ],
        want_filter_statuses=[None, None],
        name="The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection "
        + "should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .labels({"foo": "bar", "service": "securityscan"})
        .pod_affinity_in("foo", "zone", ["bar"], REQUIRED)
        .pod_affinity_in("service", "zone", ["securityscan"], REQUIRED)
        .obj(),
        pods=[make_pod().name("p1").node("nodeA").labels({"foo": "bar"}).obj()],
        nodes=[
            k8s_node(
                {"metadata": {"name": "nodeA", "labels": {"zoneLabel": "az1", "hostname": "h1"}}}
            ),
            k8s_node(
                {"metadata": {"name": "nodeB", "labels": {"zoneLabel": "az2", "hostname": "h2"}}}
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
        ],
        name="The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_in("foo", "region", ["abc"], ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        nodes=[
            k8s_node(
                {"metadata": {"name": "nodeA", "labels": {"region": "r1", "hostname": "nodeA"}}}
            ),
            k8s_node(
                {"metadata": {"name": "nodeB", "labels": {"region": "r1", "hostname": "nodeB"}}}
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_in("foo", "region", ["abc"], ANTI_REQUIRED)
        .pod_anti_affinity_in("service", "zone", ["securityscan"], ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_in("foo", "region", ["abc"], ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().node("nodeA").labels({"foo": "abc"}).obj()],
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": label_rg_china_az_az1}}),
            k8s_node({"metadata": {"name": "nodeC", "labels": label_rg_india}}),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
    ),
    dict(
        pod=make_pod()
        .namespace("NS1")
        .labels({"foo": "123"})
        .pod_anti_affinity_in("foo", "region", ["bar"], ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
            make_pod()
            .node("nodeC")
            .namespace("NS2")
            .pod_anti_affinity_in("foo", "region", ["123"], ANTI_REQUIRED)
            .obj(),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": label_rg_china_az_az1}}),
            k8s_node({"metadata": {"name": "nodeC", "labels": label_rg_india}}),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
    ),
    dict(
        pod=make_pod().label("foo", "").obj(),
        pods=[
            make_pod()
            .node("nodeA")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("foo", "invalid-node-label", ANTI_REQUIRED)
            .obj()
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_pre_filter_status=Status(Code.SKIP),
        want_filter_statuses=[None, None],
        name="Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
    ),
    dict(
        pod=make_pod()
        .node("nodeA")
        .namespace(default_namespace)
        .pod_anti_affinity_exists("foo", "invalid-node-label", ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().node("nodeA").labels({"foo": ""}).obj()],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[None, None],
        name="Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
    ),
    dict(
        pod=make_pod().label("foo", "").label("bar", "").obj(),
        pods=[
            make_pod()
            .node("nodeA")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("foo", "zone", ANTI_REQUIRED)
            .obj(),
            make_pod()
            .node("nodeA")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("bar", "region", ANTI_REQUIRED)
            .obj(),
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_exists("foo", "zone", ANTI_REQUIRED)
        .pod_anti_affinity_exists("bar", "region", ANTI_REQUIRED)
        .obj(),
        pods=[
            make_pod().node("nodeA").labels({"foo": ""}).obj(),
            make_pod().node("nodeB").labels({"bar": ""}).obj(),
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
    ),
    dict(
        pod=make_pod().label("foo", "").label("bar", "").obj(),
        pods=[
            make_pod()
            .node("nodeA")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("foo", "invalid-node-label", ANTI_REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", ANTI_REQUIRED)
            .obj()
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_exists("foo", "invalid-node-label", ANTI_REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().name("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
    ),
    dict(
        pod=make_pod().label("foo", "").label("bar", "").obj(),
        pods=[
            make_pod()
            .namespace(default_namespace)
            .node("nodeA")
            .pod_anti_affinity_exists("foo", "region", ANTI_REQUIRED)
            .pod_anti_affinity_exists("bar", "zone", ANTI_REQUIRED)
            .obj()
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_exists("foo", "region", ANTI_REQUIRED)
        .pod_anti_affinity_exists("bar", "zone", ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
    ),
    dict(
        pod=make_pod().label("foo", "").label("bar", "").obj(),
        pods=[
            make_pod()
            .node("nodeA")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("foo", "zone", ANTI_REQUIRED)
            .pod_anti_affinity_exists("labelA", "zone", ANTI_REQUIRED)
            .obj(),
            make_pod()
            .node("nodeB")
            .namespace(default_namespace)
            .pod_anti_affinity_exists("bar", "zone", ANTI_REQUIRED)
            .pod_anti_affinity_exists("labelB", "zone", ANTI_REQUIRED)
            .obj(),
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeC",
                        "labels": {"region": "r1", "zone": "z3", "hostname": "nodeC"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        pods=[make_pod().name("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[None, None],
        name="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_affinity_exists("foo", "region", REQUIRED)
        .pod_affinity_exists("bar", "zone", REQUIRED)
        .obj(),
        pods=[
            make_pod()
            .node("nodeA")
            .name("pod1")
            .namespace(default_namespace)
            .labels({"foo": ""})
            .obj(),
            make_pod()
            .node("nodeB")
            .name("pod2")
            .namespace(default_namespace)
            .labels({"bar": ""})
            .obj(),
        ],
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z1", "hostname": "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z2", "hostname": "nodeB"},
                    }
                }
            ),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_affinity_exists("foo", HOSTNAME, REQUIRED)
        .obj(),
        pods=[make_pod().name("pod1").labels({"foo": ""}).node("nodeA").obj()],
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": {HOSTNAME: "nodeA"}}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": {HOSTNAME: "nodeB"}}}),
        ],
        want_filter_statuses=[
            None,
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH),
        ],
        name="Test incoming pod's host-scoped affinity (fast path)",
    ),
    dict(
        pod=make_pod()
        .namespace(default_namespace)
        .pod_anti_affinity_exists("foo", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        pods=[make_pod().name("pod1").labels({"foo": ""}).node("nodeA").obj()],
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": {HOSTNAME: "nodeA"}}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": {HOSTNAME: "nodeB"}}}),
        ],
        want_filter_statuses=[
            Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
            None,
        ],
        name="Test incoming pod's host-scoped anti-affinity (fast path)",
    ),
]


@pytest.mark.parametrize("tc", cases(REQUIRED_AFFINITY_MULTIPLE_NODES_CASES))
def test_required_affinity_multiple_nodes(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(tc.get("pods"), tc["nodes"])
    plugin = new_plugin(snapshot=snapshot, namespaces=[ns("NS1")])
    state, status = pre_filter(plugin, tc["pod"], snapshot)
    assert status == tc.get("want_pre_filter_status")
    if status is not None and status.is_skip():
        return
    got = [plugin.filter(state, tc["pod"], snapshot.get(node.name)) for node in tc["nodes"]]
    assert got == tc["want_filter_statuses"]


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter's state is an Error."""
    status = new_plugin().filter(CycleState(), k8s_pod({}), NodeInfo(k8s_node({})))
    assert status == Status.error(
        f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
    )


label1 = {"region": "r1", "zone": "z11"}
label2 = {"region": "r1", "zone": "z12"}
label3 = {"region": "r2", "zone": "z21"}
selector1 = {"foo": "bar"}
anti_affinity_foo_bar = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {
            "labelSelector": {
                "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]
            },
            "topologyKey": "region",
        }
    ]
}
anti_affinity_complex = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {
            "labelSelector": {
                "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar", "buzz"]}]
            },
            "topologyKey": "region",
        },
        {
            "labelSelector": {
                "matchExpressions": [
                    {"key": "service", "operator": "NotIn", "values": ["bar", "security", "test"]}
                ]
            },
            "topologyKey": "zone",
        },
    ]
}
affinity_complex = {
    "requiredDuringSchedulingIgnoredDuringExecution": [
        {
            "labelSelector": {
                "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar", "buzz"]}]
            },
            "topologyKey": "region",
        },
        {
            "labelSelector": {
                "matchExpressions": [
                    {"key": "service", "operator": "NotIn", "values": ["bar", "security", "test"]}
                ]
            },
            "topologyKey": "zone",
        },
    ]
}

PRE_FILTER_STATE_ADD_REMOVE_POD_CASES = [
    dict(
        name="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        pending_pod=k8s_pod(
            {
                "metadata": {"name": "pending", "labels": selector1},
                "spec": {"affinity": {"podAntiAffinity": anti_affinity_foo_bar}},
            }
        ),
        existing_pods=[
            k8s_pod(
                {"metadata": {"name": "p1", "labels": selector1}, "spec": {"nodeName": "nodeA"}}
            ),
            k8s_pod(
                {
                    "metadata": {"name": "p2"},
                    "spec": {
                        "nodeName": "nodeC",
                        "affinity": {"podAntiAffinity": anti_affinity_foo_bar},
                    },
                }
            ),
        ],
        added_pod=k8s_pod(
            {
                "metadata": {"name": "addedPod", "labels": selector1},
                "spec": {
                    "nodeName": "nodeB",
                    "affinity": {"podAntiAffinity": anti_affinity_foo_bar},
                },
            }
        ),
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": label1}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": label2}}),
            k8s_node({"metadata": {"name": "nodeC", "labels": label3}}),
        ],
        expected_anti_affinity={("region", "r1"): 2},
        expected_affinity={},
    ),
    dict(
        name="preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
        pending_pod=k8s_pod(
            {
                "metadata": {"name": "pending", "labels": selector1},
                "spec": {"affinity": {"podAntiAffinity": anti_affinity_complex}},
            }
        ),
        existing_pods=[
            k8s_pod(
                {"metadata": {"name": "p1", "labels": selector1}, "spec": {"nodeName": "nodeA"}}
            ),
            k8s_pod(
                {
                    "metadata": {"name": "p2"},
                    "spec": {
                        "nodeName": "nodeC",
                        "affinity": {"podAntiAffinity": anti_affinity_foo_bar},
                    },
                }
            ),
        ],
        added_pod=k8s_pod(
            {
                "metadata": {"name": "addedPod", "labels": selector1},
                "spec": {
                    "nodeName": "nodeA",
                    "affinity": {"podAntiAffinity": anti_affinity_complex},
                },
            }
        ),
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": label1}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": label2}}),
            k8s_node({"metadata": {"name": "nodeC", "labels": label3}}),
        ],
        expected_anti_affinity={("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
        expected_affinity={},
    ),
    dict(
        name="preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
        pending_pod=k8s_pod(
            {
                "metadata": {"name": "pending", "labels": selector1},
                "spec": {"affinity": {"podAffinity": affinity_complex}},
            }
        ),
        existing_pods=[
            k8s_pod(
                {"metadata": {"name": "p1", "labels": selector1}, "spec": {"nodeName": "nodeA"}}
            ),
            k8s_pod(
                {
                    "metadata": {"name": "p2"},
                    "spec": {
                        "nodeName": "nodeC",
                        "affinity": {
                            "podAntiAffinity": anti_affinity_foo_bar,
                            "podAffinity": affinity_complex,
                        },
                    },
                }
            ),
        ],
        added_pod=k8s_pod(
            {
                "metadata": {"name": "addedPod", "labels": selector1},
                "spec": {
                    "nodeName": "nodeA",
                    "affinity": {"podAntiAffinity": anti_affinity_complex},
                },
            }
        ),
        nodes=[
            k8s_node({"metadata": {"name": "nodeA", "labels": label1}}),
            k8s_node({"metadata": {"name": "nodeB", "labels": label2}}),
            k8s_node({"metadata": {"name": "nodeC", "labels": label3}}),
        ],
        expected_anti_affinity={},
        expected_affinity={("region", "r1"): 2, ("zone", "z11"): 2},
    ),
    dict(
        name="preFilterState anti-affinity terms with both hostname and non-hostname are updated correctly after adding and removing a pod",
        pending_pod=k8s_pod(
            {
                "metadata": {"name": "pending", "labels": selector1},
                "spec": {"affinity": {"podAntiAffinity": anti_affinity_foo_bar}},
            }
        ),
        existing_pods=[
            k8s_pod(
                {"metadata": {"name": "p1", "labels": selector1}, "spec": {"nodeName": "nodeA"}}
            )
        ],
        added_pod=k8s_pod(
            {
                "metadata": {"name": "addedPod", "labels": selector1},
                "spec": {
                    "nodeName": "nodeA",
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {
                                        "matchExpressions": [
                                            {"key": "foo", "operator": "In", "values": ["bar"]}
                                        ]
                                    },
                                    "topologyKey": "region",
                                },
                                {
                                    "labelSelector": {
                                        "matchExpressions": [
                                            {"key": "foo", "operator": "In", "values": ["bar"]}
                                        ]
                                    },
                                    "topologyKey": HOSTNAME,
                                },
                            ]
                        }
                    },
                },
            }
        ),
        nodes=[
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeA",
                        "labels": {"region": "r1", "zone": "z11", HOSTNAME: "nodeA"},
                    }
                }
            ),
            k8s_node(
                {
                    "metadata": {
                        "name": "nodeB",
                        "labels": {"region": "r1", "zone": "z12", HOSTNAME: "nodeB"},
                    }
                }
            ),
        ],
        expected_anti_affinity={("region", "r1"): 2},
        expected_affinity={},
    ),
]


def _counts(state: PreFilterState) -> tuple[dict[Any, int], ...]:
    return (
        state.existing_anti_affinity_counts,
        state.affinity_counts,
        state.anti_affinity_counts,
    )


@pytest.mark.parametrize("tc", cases(PRE_FILTER_STATE_ADD_REMOVE_POD_CASES))
def test_pre_filter_state_add_remove_pod(tc: dict[str, Any]) -> None:
    def get_state(pods: list[Pod]) -> tuple[InterPodAffinity, CycleState, PreFilterState, Snapshot]:
        snapshot = new_snapshot(pods, tc["nodes"])
        plugin = new_plugin(snapshot=snapshot)
        state, status = pre_filter(plugin, tc["pending_pod"], snapshot)
        assert status is None
        return plugin, state, state.read(PRE_FILTER_STATE_KEY), snapshot

    added = tc["added_pod"]
    _, _, all_pods_state, _ = get_state([*tc["existing_pods"], added])
    plugin, cycle_state, state, snapshot = get_state(tc["existing_pods"])
    original = state.clone()
    node_info = snapshot.get(added.node_name)
    assert plugin.add_pod(cycle_state, tc["pending_pod"], added, node_info) is None
    assert state.anti_affinity_counts == tc["expected_anti_affinity"]
    assert state.affinity_counts == tc["expected_affinity"]
    assert _counts(state) == _counts(all_pods_state)
    assert plugin.remove_pod(cycle_state, tc["pending_pod"], added, node_info) is None
    assert _counts(state) == _counts(original)
    # A pure RemovePod from the state with every pod gives the state without the added one.
    plugin2, cycle_state2, state2, snapshot2 = get_state([*tc["existing_pods"], added])
    node_info2 = snapshot2.get(added.node_name)
    assert plugin2.remove_pod(cycle_state2, tc["pending_pod"], added, node_info2) is None
    assert _counts(state2) == _counts(original)


def test_pre_filter_state_clone() -> None:
    source = PreFilterState(make_pod().name("p").obj())
    source.existing_anti_affinity_counts = {("name", "node1"): 1, ("name", "node2"): 1}
    source.affinity_counts = {("name", "nodeA"): 1, ("name", "nodeC"): 2}
    source.anti_affinity_counts = {("name", "nodeN"): 3, ("name", "nodeM"): 1}
    clone = source.clone()
    assert clone is not source
    assert _counts(clone) == _counts(source)
    assert all(a is not b for a, b in zip(_counts(clone), _counts(source), strict=True))


def _new_pod(*labels: str) -> Pod:
    builder = make_pod().name("normal").node("nodeA")
    for label in labels:
        builder = builder.label(label, "")
    return builder.obj()


normal_pod_a = _new_pod("aaa")
normal_pod_b = _new_pod("bbb")
normal_pod_ab = _new_pod("aaa", "bbb")
node_a = k8s_node({"metadata": {"name": "nodeA", "labels": {HOSTNAME: "nodeA"}}})


def make(kind: type) -> dict[Any, int]:
    return {}


topology_to_matched_term_count = dict

TP_MAP_MATCHING_INCOMING_CASES = [
    dict(
        name="nil test",
        nodes=[node_a],
        pod=make_pod().name("aaa-normal").obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map=make(topology_to_matched_term_count),
    ),
    dict(
        name="incoming pod without affinity/anti-affinity causes a no-op",
        existing_pods=[normal_pod_a],
        nodes=[node_a],
        pod=make_pod().name("aaa-normal").obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map=make(topology_to_matched_term_count),
    ),
    dict(
        name="no pod has label that violates incoming pod's affinity and anti-affinity",
        existing_pods=[normal_pod_b],
        nodes=[node_a],
        pod=make_pod()
        .name("aaa-anti")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map=make(topology_to_matched_term_count),
    ),
    dict(
        name="existing pod matches incoming pod's affinity and anti-affinity - single term case",
        existing_pods=[normal_pod_a],
        nodes=[node_a],
        pod=make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
        want_anti_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
    ),
    dict(
        name="existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
        existing_pods=[normal_pod_ab],
        nodes=[node_a],
        pod=make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_affinity_exists("bbb", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map={(HOSTNAME, "nodeA"): 2},
        want_anti_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
    ),
    dict(
        name="existing pod not match incoming pod's affinity but matches anti-affinity",
        existing_pods=[normal_pod_a],
        nodes=[node_a],
        pod=make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_affinity_exists("bbb", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .pod_anti_affinity_exists("bbb", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
    ),
    dict(
        name="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
        existing_pods=[normal_pod_ab],
        nodes=[node_a],
        pod=make_pod()
        .name("anaffi-antiaffiti")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_affinity_exists("ccc", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .pod_anti_affinity_exists("ccc", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
    ),
    dict(
        name="incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
        existing_pods=[normal_pod_b],
        nodes=[node_a],
        pod=make_pod()
        .name("affi-antiaffi")
        .pod_affinity_exists("aaa", HOSTNAME, REQUIRED)
        .pod_affinity_exists("bbb", HOSTNAME, REQUIRED)
        .pod_anti_affinity_exists("aaa", HOSTNAME, ANTI_REQUIRED)
        .pod_anti_affinity_exists("bbb", HOSTNAME, ANTI_REQUIRED)
        .obj(),
        want_affinity_pods_map=make(topology_to_matched_term_count),
        want_anti_affinity_pods_map={(HOSTNAME, "nodeA"): 1},
    ),
]


@pytest.mark.parametrize("tc", cases(TP_MAP_MATCHING_INCOMING_CASES))
def test_get_tp_map_matching_incoming_affinity_anti_affinity(tc: dict[str, Any]) -> None:
    """The pairs PreFilter counts for the incoming pod's own terms."""
    snapshot = new_snapshot(tc.get("existing_pods"), tc["nodes"])
    plugin = new_plugin(snapshot=snapshot)
    state, status = pre_filter(plugin, tc["pod"], snapshot)
    if status is not None:
        assert status.is_skip()
        assert tc["want_affinity_pods_map"] == tc["want_anti_affinity_pods_map"] == {}
        return
    got: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
    assert got.affinity_counts == tc["want_affinity_pods_map"]
    assert got.anti_affinity_counts == tc["want_anti_affinity_pods_map"]


def test_remove_pod_host_scoped_affinity_count() -> None:
    pending_pod = (
        make_pod()
        .name("pending")
        .labels({"foo": "bar"})
        .pod_affinity_in("foo", HOSTNAME, ["bar"], REQUIRED)
        .obj()
    )
    existing_pod = make_pod().name("existing").node("nodeA").labels({"foo": "bar"}).obj()
    nodes = [
        k8s_node({"metadata": {"name": "nodeA", "labels": {HOSTNAME: "nodeA"}}}),
        k8s_node({"metadata": {"name": "nodeB", "labels": {HOSTNAME: "nodeB"}}}),
    ]
    snapshot = new_snapshot([existing_pod], nodes)
    plugin = new_plugin(snapshot=snapshot)
    state, status = pre_filter(plugin, pending_pod, snapshot)
    assert status is None
    node_a_info, node_b_info = snapshot.get("nodeA"), snapshot.get("nodeB")
    assert plugin.filter(state, pending_pod, node_a_info) is None
    assert plugin.filter(state, pending_pod, node_b_info) is not None
    # Preemption removes the only matching pod: self-affinity now allows both nodes.
    assert plugin.remove_pod(state, pending_pod, existing_pod, node_a_info) is None
    assert plugin.filter(state, pending_pod, node_a_info) is None
    assert plugin.filter(state, pending_pod, node_b_info) is None


def test_multiple_affinity_terms_require_single_matching_pod() -> None:
    pod_with_two_affinity_terms = (
        make_pod()
        .name("pod-1")
        .namespace("default")
        .pod_affinity_in("foo", HOSTNAME, ["bar"], REQUIRED)
        .pod_affinity_in("baz", HOSTNAME, ["qux"], REQUIRED)
    )
    pod_a = make_pod().name("podA").namespace("default").label("foo", "bar").node("node-1").obj()
    pod_b = make_pod().name("podB").namespace("default").label("baz", "qux").node("node-1").obj()
    pod_c = (
        make_pod()
        .name("podC")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "qux")
        .node("node-3")
        .obj()
    )
    nodes = [make_node().name(n).label(HOSTNAME, n).obj() for n in ("node-1", "node-2", "node-3")]
    incoming = pod_with_two_affinity_terms.obj()
    snapshot = new_snapshot([pod_a, pod_b, pod_c], nodes)
    plugin = new_plugin(snapshot=snapshot)
    state, status = pre_filter(plugin, incoming, snapshot)
    assert status is None
    # A single pod has to match every term: podA and podB on node-1 each match one.
    assert plugin.filter(state, incoming, snapshot.get("node-1")) is not None
    assert plugin.filter(state, incoming, snapshot.get("node-3")) is None
    assert plugin.filter(state, incoming, snapshot.get("node-2")) is not None
    # Without podC, a pod matching its own terms passes (self-affinity).
    self_pod = pod_with_two_affinity_terms.label("foo", "bar").label("baz", "qux").obj()
    snapshot_self = new_snapshot([pod_a, pod_b], nodes)
    plugin_self = new_plugin(snapshot=snapshot_self)
    state_self, status = pre_filter(plugin_self, self_pod, snapshot_self)
    assert status is None
    assert plugin_self.filter(state_self, self_pod, snapshot_self.get("node-1")) is None


def test_fast_track_inter_pod_affinity() -> None:
    zone = "topology.kubernetes.io/zone"
    pod_with_zone_anti_affinity = (
        make_pod()
        .name("pod-1")
        .namespace("default")
        .label("app", "foo")
        .pod_anti_affinity_in("app", zone, ["foo"], ANTI_REQUIRED)
        .obj()
    )
    pod_with_host_anti_affinity = (
        make_pod()
        .name("pod-2")
        .namespace("default")
        .label("app", "bar")
        .pod_anti_affinity_in("app", HOSTNAME, ["bar"], ANTI_REQUIRED)
        .obj()
    )
    term = {
        "labelSelector": make_label_selector().in_("app", ["blocked"]).obj(),
        "topologyKey": zone,
        "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
    }
    pod_with_namespace_anti_affinity = k8s_pod(
        {
            "metadata": {"name": "pod-3", "namespace": "other", "labels": {"app": "baz"}},
            "spec": {
                "affinity": {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
                }
            },
        }
    )
    existing = [
        make_pod()
        .name("pod-no-rules-foo")
        .namespace("default")
        .label("app", "foo")
        .node("node-1")
        .obj(),
        make_pod()
        .name("pod-no-rules-bar")
        .namespace("default")
        .label("app", "bar")
        .node("node-2")
        .obj(),
        make_pod()
        .name("pod-in-ns-with-team-label")
        .namespace("blue-ns")
        .label("app", "blocked")
        .label("team", "blue")
        .node("node-1")
        .obj(),
    ]
    nodes = [
        make_node().name("node-1").label(HOSTNAME, "node-1").label(zone, "zone-a").obj(),
        make_node().name("node-2").label(HOSTNAME, "node-2").label(zone, "zone-b").obj(),
    ]
    namespaces = [ns("default"), ns("other"), ns("blue-ns", {"team": "blue"})]
    snapshot = new_snapshot(existing, nodes)
    plugin = new_plugin(snapshot=snapshot, namespaces=namespaces)
    node_1, node_2 = snapshot.get("node-1"), snapshot.get("node-2")

    state, status = pre_filter(plugin, pod_with_zone_anti_affinity, snapshot)
    assert status is None
    assert plugin.filter(state, pod_with_zone_anti_affinity, node_1) is not None
    assert plugin.filter(state, pod_with_zone_anti_affinity, node_2) is None

    state, status = pre_filter(plugin, pod_with_host_anti_affinity, snapshot)
    assert plugin.filter(state, pod_with_host_anti_affinity, node_1) is None
    assert plugin.filter(state, pod_with_host_anti_affinity, node_2) is not None

    # app=blocked lives in blue-ns, which has a team label: the namespace selector skips it.
    state, status = pre_filter(plugin, pod_with_namespace_anti_affinity, snapshot)
    assert status is None
    assert plugin.filter(state, pod_with_namespace_anti_affinity, node_1) is None


# === scoring_test.go ===========================================================================

#: scoring_test.go's package-level namespaces.
SCORING_NAMESPACES = [
    ns("subteam1.team1", {"team": "team1"}),
    ns("subteam2.team1", {"team": "team1"}),
    ns("subteam1.team2", {"team": "team2"}),
    ns("subteam2.team2", {"team": "team2"}),
]

label_rg_china = {"region": "China"}
label_rg_india = {"region": "India"}
label_az_az1 = {"az": "az1"}
label_az_az2 = {"az": "az2"}
label_rg_china_az_az1 = {"region": "China", "az": "az1"}
pod_label_security_s1 = {"security": "S1"}
pod_label_security_s2 = {"security": "S2"}
stay_with_s1_in_region = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                },
            }
        ]
    }
}
stay_with_s2_in_region = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 6,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S2"]}
                        ]
                    },
                    "topologyKey": "region",
                },
            }
        ]
    }
}
affinity3 = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 8,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "NotIn", "values": ["S1"]},
                            {"key": "security", "operator": "In", "values": ["S2"]},
                        ]
                    },
                    "topologyKey": "region",
                },
            },
            {
                "weight": 2,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "Exists"},
                            {"key": "wrongkey", "operator": "DoesNotExist"},
                        ]
                    },
                    "topologyKey": "region",
                },
            },
        ]
    }
}
hard_affinity = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "security", "operator": "In", "values": ["S1", "value2"]}
                    ]
                },
                "topologyKey": "region",
            },
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "security", "operator": "Exists"},
                        {"key": "wrongkey", "operator": "DoesNotExist"},
                    ]
                },
                "topologyKey": "region",
            },
        ]
    }
}
away_from_s1_in_az = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "az",
                },
            }
        ]
    }
}
away_from_s2_in_az = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S2"]}
                        ]
                    },
                    "topologyKey": "az",
                },
            }
        ]
    }
}
stay_with_s1_in_region_away_from_s2_in_az = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 8,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                },
            }
        ]
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S2"]}
                        ]
                    },
                    "topologyKey": "az",
                },
            }
        ]
    },
}
affinity_namespace_selector = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                    "namespaces": ["subteam2.team2"],
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                },
            }
        ]
    }
}
anti_affinity_namespace_selector = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                    "namespaces": ["subteam2.team2"],
                    "namespaceSelector": {
                        "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                    },
                },
            }
        ]
    }
}
affinity_negative_namespace_selector = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                    "namespaceSelector": {
                        "matchExpressions": [
                            {"key": "team", "operator": "NotIn", "values": ["team1"]}
                        ]
                    },
                },
            }
        ]
    }
}
anti_affinity_negative_namespace_selector = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["S1"]}
                        ]
                    },
                    "topologyKey": "region",
                    "namespaceSelector": {
                        "matchExpressions": [
                            {"key": "team", "operator": "NotIn", "values": ["team1"]}
                        ]
                    },
                },
            }
        ]
    }
}
invalid_affinity_labels = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 8,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["{{.bad-value.}}"]}
                        ]
                    },
                    "topologyKey": "region",
                },
            }
        ]
    }
}
invalid_anti_affinity_labels = {
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 5,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "security", "operator": "In", "values": ["{{.bad-value.}}"]}
                        ]
                    },
                    "topologyKey": "az",
                },
            }
        ]
    }
}

PREFERRED_AFFINITY_CASES = [
    dict(
        name="all nodes are same priority as Affinity is nil",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s1}}),
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        want_status=Status(Code.SKIP),
    ),
    dict(
        name="Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        + "which doesn't match either pods in nodes or in topology key",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": stay_with_s1_in_region},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node3"}, "metadata": {"labels": pod_label_security_s1}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="All the nodes that have the same topology key & label value with one of them has an existing pod that match the affinity rules, have the same score",
        pod=k8s_pod({"spec": {"nodeName": "", "affinity": stay_with_s1_in_region}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}})
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china_az_az1}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more matches will get high score",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": stay_with_s2_in_region},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node3"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node4"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node5"}, "metadata": {"labels": pod_label_security_s2}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node4", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node5", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
            node_score(name="node3", score=MAX_NODE_SCORE),
            node_score(name="node4", score=MAX_NODE_SCORE),
            node_score(name="node5", score=0),
        ],
    ),
    dict(
        name="Affinity: different Label operators and values for pod affinity scheduling preference, including some match failures ",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": affinity3},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod({"spec": {"nodeName": "node3"}, "metadata": {"labels": pod_label_security_s1}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=20),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s2}}),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1", "affinity": stay_with_s1_in_region},
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": stay_with_s2_in_region},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="Affinity symmetry with namespace selector",
        pod=k8s_pod(
            {
                "spec": {"nodeName": ""},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1", "affinity": affinity_namespace_selector},
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": stay_with_s2_in_region},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="AntiAffinity symmetry with namespace selector",
        pod=k8s_pod(
            {
                "spec": {"nodeName": ""},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1", "affinity": anti_affinity_namespace_selector},
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": stay_with_s2_in_region},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s1}}),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1", "affinity": hard_affinity},
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": hard_affinity},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": away_from_s1_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_az_az1}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing to others ",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": away_from_s1_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s1}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_az_az1}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches will get high score",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": away_from_s1_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_az_az1}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s2}}),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1", "affinity": away_from_s2_in_az},
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": away_from_s1_in_az},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_az_az1}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_az_az2}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": stay_with_s1_in_region_away_from_s2_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s1}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_az_az1}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
        ],
    ),
    dict(
        name="Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods have the same labels",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": stay_with_s1_in_region_away_from_s2_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node3"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node3"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node4"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node5"}, "metadata": {"labels": pod_label_security_s1}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china_az_az1}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node4", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node5", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
            node_score(name="node3", score=MAX_NODE_SCORE),
            node_score(name="node4", score=MAX_NODE_SCORE),
            node_score(name="node5", score=0),
        ],
    ),
    dict(
        name="Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & symmetry",
        pod=k8s_pod(
            {
                "spec": {"nodeName": "", "affinity": stay_with_s1_in_region_away_from_s2_in_az},
                "metadata": {"labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod({"spec": {"nodeName": "node2"}, "metadata": {"labels": pod_label_security_s2}}),
            k8s_pod(
                {
                    "spec": {
                        "nodeName": "node3",
                        "affinity": stay_with_s1_in_region_away_from_s2_in_az,
                    }
                }
            ),
            k8s_pod({"spec": {"nodeName": "node4", "affinity": away_from_s1_in_az}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_az_az1}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node4", "labels": label_az_az2}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
            node_score(name="node3", score=MAX_NODE_SCORE),
            node_score(name="node4", score=0),
        ],
    ),
    dict(
        name="Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1"}, "metadata": {"labels": pod_label_security_s1}}),
            k8s_pod(
                {
                    "spec": {
                        "nodeName": "node2",
                        "affinity": stay_with_s1_in_region_away_from_s2_in_az,
                    }
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china}}),
        ],
        expected_list=[node_score(name="node1", score=0), node_score(name="node2", score=0)],
    ),
    dict(
        name="invalid Affinity fails PreScore",
        pod=k8s_pod({"spec": {"nodeName": "", "affinity": invalid_affinity_labels}}),
        want_status=Status(Code.ERROR, 'Invalid value: "{{.bad-value.}}"'),
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china}}),
        ],
    ),
    dict(
        name="invalid AntiAffinity fails PreScore",
        pod=k8s_pod({"spec": {"nodeName": "", "affinity": invalid_anti_affinity_labels}}),
        want_status=Status(Code.ERROR, 'Invalid value: "{{.bad-value.}}"'),
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_china}}),
        ],
    ),
    dict(
        name="Affinity with pods matching NamespaceSelector",
        pod=k8s_pod(
            {
                "spec": {"affinity": affinity_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
        ],
    ),
    dict(
        name="Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod=k8s_pod(
            {
                "spec": {"affinity": affinity_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam2.team2", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=0),
        ],
    ),
    dict(
        name="Affinity with pods matching NamespaceSelector",
        pod=k8s_pod(
            {
                "spec": {"affinity": anti_affinity_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod=k8s_pod(
            {
                "spec": {"affinity": anti_affinity_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam2.team2", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam2.team1", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
    ),
    dict(
        name="Affinity with pods correctly enforcing negative NamespaceSelector",
        pod=k8s_pod(
            {
                "spec": {"affinity": affinity_negative_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=FWK_MaxScore),
        ],
    ),
    dict(
        name="AntiAffinity with pods correctly enforcing negative NamespaceSelector",
        pod=k8s_pod(
            {
                "spec": {"affinity": anti_affinity_negative_namespace_selector},
                "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
            }
        ),
        pods=[
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node1"},
                    "metadata": {"namespace": "subteam1.team1", "labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2"},
                    "metadata": {"namespace": "subteam1.team2", "labels": pod_label_security_s1},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=FWK_MaxScore),
            node_score(name="node2", score=0),
        ],
    ),
    dict(
        name="Ignore preferred terms of existing pods",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s2}}),
        pods=[
            k8s_pod(
                {
                    "spec": {
                        "nodeName": "node1",
                        "affinity": stay_with_s1_in_region_away_from_s2_in_az,
                    },
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": stay_with_s2_in_region},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[node_score(name="node1", score=0), node_score(name="node2", score=0)],
        want_status=Status(Code.SKIP),
        ignore_preferred_terms_of_existing_pods=True,
    ),
    dict(
        name="Do not ignore preferred terms of existing pods",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s2}}),
        pods=[
            k8s_pod(
                {
                    "spec": {
                        "nodeName": "node1",
                        "affinity": stay_with_s1_in_region_away_from_s2_in_az,
                    },
                    "metadata": {"labels": pod_label_security_s1},
                }
            ),
            k8s_pod(
                {
                    "spec": {"nodeName": "node2", "affinity": stay_with_s2_in_region},
                    "metadata": {"labels": pod_label_security_s2},
                }
            ),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
        ],
        expected_list=[
            node_score(name="node1", score=0),
            node_score(name="node2", score=MAX_NODE_SCORE),
        ],
        ignore_preferred_terms_of_existing_pods=False,
    ),
    dict(
        name="No nodes to score",
        pod=k8s_pod({"spec": {"nodeName": ""}, "metadata": {"labels": pod_label_security_s2}}),
        pods=[],
        nodes=[],
        want_status=Status(Code.SKIP),
    ),
]


def _score_all(plugin: InterPodAffinity, pod: Pod, nodes: list[NodeInfo]) -> list[tuple[str, int]]:
    state = CycleState()
    status = plugin.pre_score(state, pod, nodes)
    assert status is None
    scores = {}
    for info in nodes:
        score = plugin.score(state, pod, info)
        assert isinstance(score, int)
        scores[info.name] = score
    assert plugin.normalize_score(state, pod, scores) is None
    return list(scores.items())


@pytest.mark.parametrize("tc", cases(PREFERRED_AFFINITY_CASES))
def test_preferred_affinity(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(tc.get("pods"), tc["nodes"])
    args = {
        "hardPodAffinityWeight": 1,
        "ignorePreferredTermsOfExistingPods": tc.get(
            "ignore_preferred_terms_of_existing_pods", False
        ),
    }
    plugin = new_plugin(args, snapshot, SCORING_NAMESPACES)
    nodes = [NodeInfo(node) for node in tc["nodes"]]
    want = tc.get("want_status")
    if want is not None:
        status = plugin.pre_score(CycleState(), tc["pod"], nodes)
        assert status is not None and status.code == want.code
        assert want.message() in status.message()
        return
    assert _score_all(plugin, tc["pod"], nodes) == tc["expected_list"]


pod_label_service_s1 = {"service": "S1"}
label_rg_china = {"region": "China"}
label_rg_india = {"region": "India"}
label_az_az1 = {"az": "az1"}
hard_pod_affinity = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {
                    "matchExpressions": [{"key": "service", "operator": "In", "values": ["S1"]}]
                },
                "namespaces": ["default", "subteam2.team2"],
                "namespaceSelector": {
                    "matchExpressions": [{"key": "team", "operator": "In", "values": ["team1"]}]
                },
                "topologyKey": "region",
            }
        ]
    }
}

HARD_POD_AFFINITY_SYMMETRIC_WEIGHT_CASES = [
    dict(
        name="with default weight",
        pod=k8s_pod({"metadata": {"labels": pod_label_service_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1", "affinity": hard_pod_affinity}}),
            k8s_pod({"spec": {"nodeName": "node2", "affinity": hard_pod_affinity}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        hard_pod_affinity_weight=V1_DefaultHardPodAffinitySymmetricWeight,
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="with zero weight",
        pod=k8s_pod({"metadata": {"labels": pod_label_service_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1", "affinity": hard_pod_affinity}}),
            k8s_pod({"spec": {"nodeName": "node2", "affinity": hard_pod_affinity}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        hard_pod_affinity_weight=0,
        want_status=Status(Code.SKIP),
    ),
    dict(
        name="with no matching namespace",
        pod=k8s_pod({"metadata": {"namespace": "subteam1.team2", "labels": pod_label_service_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1", "affinity": hard_pod_affinity}}),
            k8s_pod({"spec": {"nodeName": "node2", "affinity": hard_pod_affinity}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        hard_pod_affinity_weight=V1_DefaultHardPodAffinitySymmetricWeight,
        want_status=Status(Code.SKIP),
    ),
    dict(
        name="with matching NamespaceSelector",
        pod=k8s_pod({"metadata": {"namespace": "subteam1.team1", "labels": pod_label_service_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1", "affinity": hard_pod_affinity}}),
            k8s_pod({"spec": {"nodeName": "node2", "affinity": hard_pod_affinity}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        hard_pod_affinity_weight=V1_DefaultHardPodAffinitySymmetricWeight,
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
    dict(
        name="with matching Namespaces",
        pod=k8s_pod({"metadata": {"namespace": "subteam2.team2", "labels": pod_label_service_s1}}),
        pods=[
            k8s_pod({"spec": {"nodeName": "node1", "affinity": hard_pod_affinity}}),
            k8s_pod({"spec": {"nodeName": "node2", "affinity": hard_pod_affinity}}),
        ],
        nodes=[
            k8s_node({"metadata": {"name": "node1", "labels": label_rg_china}}),
            k8s_node({"metadata": {"name": "node2", "labels": label_rg_india}}),
            k8s_node({"metadata": {"name": "node3", "labels": label_az_az1}}),
        ],
        hard_pod_affinity_weight=V1_DefaultHardPodAffinitySymmetricWeight,
        expected_list=[
            node_score(name="node1", score=MAX_NODE_SCORE),
            node_score(name="node2", score=MAX_NODE_SCORE),
            node_score(name="node3", score=0),
        ],
    ),
]


@pytest.mark.parametrize("tc", cases(HARD_POD_AFFINITY_SYMMETRIC_WEIGHT_CASES))
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(tc.get("pods"), tc["nodes"])
    args = {"hardPodAffinityWeight": tc.get("hard_pod_affinity_weight", 0)}
    plugin = new_plugin(args, snapshot, SCORING_NAMESPACES)
    nodes = [NodeInfo(node) for node in tc["nodes"]]
    want = tc.get("want_status")
    if want is not None:
        assert plugin.pre_score(CycleState(), tc["pod"], nodes) == want
        return
    assert _score_all(plugin, tc["pod"], nodes) == tc["expected_list"]


# === plugin_test.go ============================================================================

ASSIGNED_POD_CHANGE_HINT_CASES = [
    dict(
        name="add a pod which matches the pod affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add an un-scheduled pod",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").label("service", "securityscan").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add a pod which doesn't match the pod affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update a pod from non-match to match pod affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="the updating pod matches target pod's affinity both before and after label changes",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "value2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update an un-scheduled pod",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").label("service", "securityscan").obj(),
        old_pod=make_pod().uid("other").label("aaa", "a").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update a pod from match to non-match the pod affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update a pod from match to non-match pod's affinity - multiple terms case",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update a pod from non-match to match pod's affinity - multiple terms case",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_exists("aaa", "hostname", REQUIRED)
        .pod_affinity_exists("bbb", "hostname", REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("aaa", "").label("bbb", "").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "aaaa").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        new_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "bbb").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a pod which doesn't match pod's anti-affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a pod which matches pod's anti-affinity",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete a pod with anti-affinity that matches pending pod",
        pod=make_pod().name("p").label("service", "securityscan").obj(),
        old_pod=make_pod()
        .node("fake-node")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete a pod with anti-affinity that doesn't match pending pod",
        pod=make_pod().name("p").label("service", "foo").obj(),
        old_pod=make_pod()
        .node("fake-node")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .label("service", "foo")
        .obj(),
        old_pod=make_pod()
        .node("fake-node")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .label("service", "foo")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a nominated pod which doesn't match pod's anti-affinity",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        old_pod=make_pod().nominated_node_name("fake-node").label("aaa", "a").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a nominated pod which matches pod's anti-affinity",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan", "value2"], ANTI_REQUIRED)
        .obj(),
        old_pod=make_pod().nominated_node_name("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="modify pod label to change it from matching only one of target pod's anti-affinity terms to matching none",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan"], ANTI_REQUIRED)
        .pod_anti_affinity_in("app", "region", ["web"], ANTI_REQUIRED)
        .obj(),
        new_pod=make_pod()
        .uid("other")
        .node("fake-node")
        .label("service", "foo")
        .label("app", "bar")
        .obj(),
        old_pod=make_pod()
        .uid("other")
        .node("fake-node")
        .label("service", "securityscan")
        .label("app", "bar")
        .obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="modify pod label but it still matches one of target pod's anti-affinity terms",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan"], ANTI_REQUIRED)
        .pod_anti_affinity_in("app", "region", ["web"], ANTI_REQUIRED)
        .obj(),
        new_pod=make_pod()
        .uid("other")
        .node("fake-node")
        .label("service", "foo")
        .label("app", "web")
        .obj(),
        old_pod=make_pod()
        .uid("other")
        .node("fake-node")
        .label("service", "securityscan")
        .label("app", "bar")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete a pod which matches only one of target pod's anti-affinity terms",
        pod=make_pod()
        .uid("p")
        .name("p")
        .pod_anti_affinity_in("service", "region", ["securityscan"], ANTI_REQUIRED)
        .pod_anti_affinity_in("app", "region", ["web"], ANTI_REQUIRED)
        .obj(),
        old_pod=make_pod().uid("other").node("fake-node").label("service", "securityscan").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete a pod with anti-affinity that matches pending pod on only one term",
        pod=make_pod().name("p").label("service", "securityscan").obj(),
        old_pod=make_pod()
        .node("fake-node")
        .uid("other")
        .pod_anti_affinity_in("service", "region", ["securityscan"], ANTI_REQUIRED)
        .pod_anti_affinity_in("app", "region", ["web"], ANTI_REQUIRED)
        .obj(),
        expected_hint=QUEUE,
    ),
]


@pytest.mark.parametrize("tc", cases(ASSIGNED_POD_CHANGE_HINT_CASES))
def test_is_schedulable_after_assigned_pod_change(tc: dict[str, Any]) -> None:
    plugin = new_plugin(namespaces=SCORING_NAMESPACES)
    hint = plugin.is_schedulable_after_assigned_pod_change(
        tc["pod"], tc.get("old_pod"), tc.get("new_pod")
    )
    assert hint == tc["expected_hint"]


def test_is_schedulable_after_target_pod_update_label() -> None:
    pod = make_pod().uid("p").name("p").label("foo", "baz").obj()
    new = make_pod().uid("p").name("p").label("foo", "bar").obj()
    assert new_plugin().is_schedulable_after_target_pod_update_label(pod, pod, new) == QUEUE


NODE_CHANGE_HINT_CASES = [
    dict(
        name="add a new node with matched pod affinity topologyKey",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add a new node without matched topologyKey",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "region", ["securityscan", "value2"], REQUIRED)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node label but not topologyKey",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("aaa", "a").obj(),
        new_node=make_node().name("node-a").label("aaa", "b").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node label that isn't related to the pod affinity",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node()
        .name("node-a")
        .label("zone", "zone1")
        .label("unrelated-label", "unrelated")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node with different affinity topologyKey value",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node().name("node-a").label("zone", "zone2").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node to have the affinity topology label",
        pod=make_pod()
        .name("p")
        .pod_affinity_in("service", "zone", ["securityscan", "value2"], REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("aaa", "a").obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add a new node with matched pod anti-affinity topologyKey",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add a new node without matched pod anti-affinity topologyKey",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        new_node=make_node().name("node-a").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node label that isn't related to the pod anti-affinity",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node()
        .name("node-a")
        .label("zone", "zone1")
        .label("unrelated-label", "unrelated")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node with different anti-affinity topologyKey value",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node().name("node-a").label("zone", "zone2").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node to have the anti-affinity topology label",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("aaa", "a").obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node label not to have anti-affinity topology label",
        pod=make_pod()
        .name("p")
        .pod_anti_affinity("zone", {"matchLabels": {"another": "label"}}, ANTI_REQUIRED)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node().name("node-a").label("aaa", "a").obj(),
        expected_hint=QUEUE,
    ),
]


@pytest.mark.parametrize("tc", cases(NODE_CHANGE_HINT_CASES))
def test_is_schedulable_after_node_change(tc: dict[str, Any]) -> None:
    plugin = new_plugin(namespaces=SCORING_NAMESPACES)
    hint = plugin.is_schedulable_after_node_change(
        tc["pod"], tc.get("old_node"), tc.get("new_node")
    )
    assert hint == tc["expected_hint"]


# === args (validation_pluginargs_test.go's TestValidateInterPodAffinityArgs) ===================


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param({"hardPodAffinityWeight": 10}, [], id="valid args"),
        pytest.param({}, [], id="defaults"),
        pytest.param({"hardPodAffinityWeight": 0}, [], id="zero turns the symmetric weight off"),
        pytest.param(
            {"hardPodAffinityWeight": -1},
            ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
            id="hardPodAffinityWeight less than min",
        ),
        pytest.param(
            {"hardPodAffinityWeight": 101},
            ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"],
            id="hardPodAffinityWeight more than max",
        ),
        pytest.param(
            {"hardPodAffinityWeight": "1", "ignorePreferredTermsOfExistingPods": "yes", "x": 1},
            [
                "x: unknown field; allowed: hardPodAffinityWeight, "
                "ignorePreferredTermsOfExistingPods",
                "hardPodAffinityWeight: Invalid value: '1': must be an int",
                "ignorePreferredTermsOfExistingPods: Invalid value: 'yes': must be a boolean",
            ],
            id="every error at once",
        ),
    ],
)
def test_args_validation(args: dict[str, Any], errors: list[str]) -> None:
    if not errors:
        plugin = new_plugin(args)
        assert plugin.args.hard_pod_affinity_weight == args.get("hardPodAffinityWeight", 1)
        return
    with pytest.raises(ArgsError) as caught:
        new_plugin(args)
    assert [str(e) for e in caught.value.errors] == errors


def _zone_nodes() -> list[Any]:
    return [make_node().name(f"n-{z}").label("zone", z).obj() for z in ("a", "b")]


@pytest.mark.parametrize(("weight", "want"), [(0, "n-b"), (1, "n-b"), (5, "n-a")])
def test_hard_pod_affinity_weight_scales_existing_required_terms(weight: int, want: str) -> None:
    """An existing pod's required term adds the weight to its domain; another's preferred term
    (weight 3) pulls elsewhere."""
    web = {"matchLabels": {"app": "web"}}
    required = make_pod().name("e1").node("n-a").pod_affinity("zone", web, REQUIRED).obj()
    preferred = make_pod().name("e2").node("n-b").pod_affinity("zone", web, PREFERRED).manifest()
    preferred["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][
        0
    ]["weight"] = 3
    snapshot = new_snapshot([required, Pod(preferred)], _zone_nodes())
    plugin = new_plugin({"hardPodAffinityWeight": weight}, snapshot)
    incoming = make_pod().name("web").label("app", "web").obj()
    scores = dict(_score_all(plugin, incoming, snapshot.node_infos))
    assert max(scores, key=lambda n: scores[n]) == want


def test_ignore_preferred_terms_of_existing_pods() -> None:
    existing = make_pod().name("e").node("n-a").pod_affinity_exists("app", "zone", PREFERRED).obj()
    snapshot = new_snapshot([existing], _zone_nodes())
    incoming = make_pod().name("web").label("app", "web").obj()
    plugin = new_plugin({"ignorePreferredTermsOfExistingPods": True}, snapshot)
    assert plugin.pre_score(CycleState(), incoming, snapshot.node_infos) == Status.skip()
    plugin = new_plugin({}, snapshot)
    assert _score_all(plugin, incoming, snapshot.node_infos) == [("n-a", 100), ("n-b", 0)]


# === namespaces ================================================================================


def _anti_by_namespace_selector(selector: dict[str, Any]) -> Pod:
    term = {
        "labelSelector": {"matchLabels": {"app": "db"}},
        "topologyKey": "zone",
        "namespaceSelector": selector,
    }
    return k8s_pod(
        {
            "metadata": {"name": "p", "namespace": "web"},
            "spec": {
                "affinity": {
                    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
                }
            },
        }
    )


@pytest.mark.parametrize(
    ("selector", "namespaces", "rejected"),
    [
        pytest.param(
            {"matchLabels": {"tier": "data"}},
            [ns("db", {"tier": "data"})],
            True,
            id="selector matches the other namespace",
        ),
        pytest.param(
            {"matchLabels": {"tier": "data"}},
            [ns("db", {"tier": "web"})],
            False,
            id="selector matches no namespace",
        ),
        pytest.param(
            {"matchLabels": {"tier": "data"}},
            [],
            False,
            id="no namespace objects: a non-empty selector selects none",
        ),
        pytest.param({}, [], True, id="empty selector: every namespace"),
    ],
)
def test_namespace_selector_reads_the_namespace_lister(
    selector: dict[str, Any], namespaces: list[dict[str, Any]], rejected: bool
) -> None:
    db = make_pod().name("db").namespace("db").label("app", "db").node("n-a").obj()
    snapshot = new_snapshot([db], _zone_nodes())
    plugin = new_plugin(snapshot=snapshot, namespaces=namespaces)
    pod = _anti_by_namespace_selector(selector)
    state, status = pre_filter(plugin, pod, snapshot)
    assert status is None
    want = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH) if rejected else None
    assert plugin.filter(state, pod, snapshot.get("n-a")) == want
    assert plugin.filter(state, pod, snapshot.get("n-b")) is None


def test_existing_pods_namespace_selector_sees_the_incoming_pods_namespace_labels() -> None:
    """An existing pod's anti-affinity selects namespaces by label: the incoming pod's own
    namespace labels decide, read from the lister (none known: no labels)."""
    guard = _anti_by_namespace_selector({"matchLabels": {"tier": "data"}}).raw
    guard = {**guard, "metadata": {"name": "guard", "namespace": "web"}}
    guard["spec"] = {**guard["spec"], "nodeName": "n-a"}
    incoming = make_pod().name("db").namespace("db").label("app", "db").obj()
    snapshot = new_snapshot([Pod(guard)], _zone_nodes())
    for namespaces, want in (
        (
            [ns("db", {"tier": "data"})],
            Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH),
        ),
        ([], None),
    ):
        plugin = new_plugin(snapshot=snapshot, namespaces=namespaces)
        state, status = pre_filter(plugin, incoming, snapshot)
        if want is None:
            assert status == Status.skip()
            continue
        assert plugin.filter(state, incoming, snapshot.get("n-a")) == want


# === events, extensions, memory ================================================================


def test_events_to_register() -> None:
    events = new_plugin().events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (
            EventResource.ASSIGNED_POD,
            ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
        ),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert all(e.hint is not None for e in events)


def test_pre_filter_extensions_are_hooks_and_clone_is_independent() -> None:
    nodes = _zone_nodes()
    snapshot = new_snapshot([], nodes)
    plugin = new_plugin(snapshot=snapshot)
    pod = (
        make_pod()
        .name("p")
        .label("app", "web")
        .pod_anti_affinity_exists("app", "zone", ANTI_REQUIRED)
        .obj()
    )
    state, status = pre_filter(plugin, pod, snapshot)
    assert status is None
    copy = state.clone()
    other = make_pod().name("o").label("app", "db").node("n-a").obj()
    assert plugin.pre_filter_add_pod(copy, pod, other, snapshot.get("n-a")) is None
    assert copy.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {("zone", "a"): 1}
    assert state.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {}
    assert plugin.filter(copy, pod, snapshot.get("n-a")) == Status.unschedulable(
        ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH
    )
    assert plugin.filter(state, pod, snapshot.get("n-a")) is None
    assert plugin.pre_filter_remove_pod(copy, pod, other, snapshot.get("n-a")) is None
    assert copy.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {}
    assert plugin.add_pod(CycleState(), pod, other, snapshot.get("n-a")) == Status.error(
        f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
    )


def test_counts_follow_the_pods_of_a_node() -> None:
    snapshot = new_snapshot([], _zone_nodes())
    plugin = new_plugin(snapshot=snapshot)
    pod = make_pod().name("p").pod_affinity_exists("app", "zone", REQUIRED).obj()
    state, _ = pre_filter(plugin, pod, snapshot)
    assert state.read(PRE_FILTER_STATE_KEY).affinity_counts == {}
    # The cache swaps a changed node's fresh copy in (a snapshot's NodeInfos never change in
    # place: the snapshot's journal lists the swapped positions).
    changed = snapshot.get("n-b").clone()
    changed.add_pod(make_pod().name("x").label("app", "y").node("n-b").obj())
    snapshot._replace(changed)
    state, _ = pre_filter(plugin, pod, snapshot)
    assert state.read(PRE_FILTER_STATE_KEY).affinity_counts == {("zone", "b"): 1}


def test_reason_strings() -> None:
    assert ERR_REASON_AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod affinity rules"
    assert (
        ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH == "node(s) didn't match pod anti-affinity rules"
    )
    assert ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH == (
        "node(s) didn't satisfy existing pods anti-affinity rules"
    )


def test_pre_score_error_on_a_bad_preferred_term() -> None:
    pod = make_pod().name("p").pod_affinity("zone", {"matchLabels": {"a": "b c"}}, PREFERRED).obj()
    status = new_plugin(snapshot=new_snapshot([], _zone_nodes())).pre_score(CycleState(), pod, [])
    assert status is not None and status.code is Code.ERROR
    assert status.message().startswith("failed to parse pod: preferredAffinityTerms: ")


# === end to end ================================================================================

#: The wrappers' pods name no scheduler, so they are the default scheduler's.
SCHEDULER = {"scheduler_name": "default-scheduler"}
PROFILE = {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}


def _replica(name: str) -> Pod:
    return (
        make_pod()
        .name(name)
        .label("app", "web")
        .pod_anti_affinity_in("app", HOSTNAME, ["web"], ANTI_REQUIRED)
        .obj()
    )


def test_anti_affinity_puts_replicas_on_distinct_hosts_and_explains_the_rest() -> None:
    clock = [0.0]
    nodes = [make_node().name(n).label(HOSTNAME, n).obj() for n in ("h1", "h2")]
    scheduler, backend = make_scheduler(
        {NAME: InterPodAffinity},
        PROFILE,
        nodes,
        [_replica(f"web-{i}") for i in range(3)],
        clock=lambda: clock[0],
        **SCHEDULER,
    )
    run_until_idle(scheduler)
    placed = sorted(backend.pod("default", f"web-{i}").node_name for i in range(3))
    assert placed == ["", "h1", "h2"]
    pending = next(
        f"default/web-{i}" for i in range(3) if not backend.pod("default", f"web-{i}").node_name
    )
    assert backend.conditions[pending][1] == (
        f"0/2 nodes are available: 2 {ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH}."
    )
    # A pod that does not match the anti-affinity goes: the hint for a deletion queues.
    victim = (
        backend.pod("default", "web-0")
        if backend.pod("default", "web-0").node_name
        else backend.pod("default", "web-1")
    )
    backend.delete_pod(victim)
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 10.0
    run_until_idle(scheduler)
    assert backend.pod(*pending.split("/")).node_name == victim.node_name


def test_affinity_follows_the_first_pod_of_a_group() -> None:
    nodes = [make_node().name(f"n-{z}").label("zone", z).obj() for z in ("a", "b", "c")]
    pods = [
        make_pod()
        .name(f"cache-{i}")
        .label("app", "cache")
        .pod_affinity_in("app", "zone", ["cache"], REQUIRED)
        .obj()
        for i in range(4)
    ]
    scheduler, backend = make_scheduler({NAME: InterPodAffinity}, PROFILE, nodes, pods, **SCHEDULER)
    run_until_idle(scheduler)
    zones = {backend.pod("default", f"cache-{i}").node_name for i in range(4)}
    assert len(zones) == 1 and "" not in zones


def test_affinity_without_any_match_is_unresolvable() -> None:
    nodes = [make_node().name("n").label("zone", "a").obj()]
    pod = make_pod().name("p").pod_affinity_in("app", "zone", ["db"], REQUIRED).obj()
    scheduler, backend = make_scheduler(
        {NAME: InterPodAffinity}, PROFILE, nodes, [pod], **SCHEDULER
    )
    run_until_idle(scheduler)
    assert backend.conditions["default/p"][1] == (
        f"0/1 nodes are available: 1 {ERR_REASON_AFFINITY_RULES_NOT_MATCH}."
    )
