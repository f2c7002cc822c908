"""PodTopologySpread: kube-scheduler v1.37's filtering_test.go, scoring_test.go and
plugin_test.go tables (same case names), then args validation, events and end-to-end runs.

kube's tests build the plugin with every feature gate off and turn some on per case
(``enableNodeInclusionPolicy``, ``enableMatchLabelKeys``); the plugin's matching attributes
are set the same way here.
"""

# ruff: noqa: E501 - kube's case names are kept verbatim as ids, whatever their length.
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from kubesched_pod_topology_spread import (
    DO_NOT_SCHEDULE,
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    HONOR,
    IGNORE,
    LIST_DEFAULTING,
    NAME,
    PRE_FILTER_STATE_KEY,
    PRE_SCORE_STATE_KEY,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpread,
    PreFilterState,
    PreScoreState,
    SpreadConstraint,
    topology_normalizing_weight,
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
from kubesched.api.selectors import NOTHING, LabelSelector
from kubesched.testing.harness import make_scheduler, run_until_idle
from kubesched.testing.st import (
    HOSTNAME,
    MATCH_EXPRESSIONS,
    ZONE,
    gvk,
    k8s_node,
    k8s_pod,
    make_label_selector,
    make_node,
    make_pod,
    new_snapshot,
)

QUEUE = QueueingHint.QUEUE
QUEUE_SKIP = QueueingHint.SKIP
MAX_INT32 = 2**31 - 1

# kube's test-file variables.
foo_selector = make_label_selector().exists("foo").obj()
bar_selector = make_label_selector().exists("bar").obj()
honor_policy = HONOR
ignore_policy = IGNORE
taints = [{"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}]


def NOTHING_FN() -> LabelSelector:  # labels.Nothing()
    return NOTHING


def must_convert_label_selector_as_selector(selector: Mapping[str, Any] | None) -> LabelSelector:
    return LabelSelector.parse(selector)


def topology_spread_constraint(
    max_skew: int,
    topology_key: str,
    selector: LabelSelector,
    min_domains: int = 0,
    node_affinity_policy: str = "",
    node_taints_policy: str = "",
) -> SpreadConstraint:
    return SpreadConstraint(
        max_skew, topology_key, selector, min_domains, node_affinity_policy, node_taints_policy
    )


def critical_paths(*paths: tuple[str, int] | dict[str, Any]) -> list[list[Any]]:
    """``{{"zone1", 0}, {MatchNum: math.MaxInt32}}``: pairs, or a dict for a keyed one."""
    return [
        [p.get("topology_value", ""), p.get("match_num", 0)] if isinstance(p, dict) else list(p)
        for p in paths
    ]


def new_critical_paths() -> list[list[Any]]:
    return [["", MAX_INT32], ["", MAX_INT32]]


def pre_filter_state(
    constraints: list[SpreadConstraint] | None = None,
    critical_paths: list[list[list[Any]]] | None = None,
    tp_value_to_match_num: list[dict[str, int]] | None = None,
) -> dict[str, Any]:
    return {
        "constraints": constraints or [],
        "critical_paths": critical_paths or [],
        "tp_value_to_match_num": tp_value_to_match_num or [],
    }


def pre_score_state(
    constraints: list[SpreadConstraint] | None = None,
    ignored_nodes: set[str] | None = None,
    topology_value_to_pod_counts: list[dict[str, int]] | None = None,
    topology_normalizing_weight: list[float] | None = None,
) -> dict[str, Any]:
    return {
        "constraints": constraints or [],
        "ignored_nodes": ignored_nodes or set(),
        "topology_value_to_pod_counts": topology_value_to_pod_counts or [],
        "topology_normalizing_weight": topology_normalizing_weight or [],
    }


def node_score(name: str, score: int) -> tuple[str, int]:
    return (name, score)


def pod_topology_spread_args(
    default_constraints: list[dict[str, Any]] | None = None, defaulting_type: str = ""
) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if default_constraints is not None:
        args["defaultConstraints"] = default_constraints
    if defaulting_type:
        args["defaultingType"] = defaulting_type
    return args


def cases(table: list[dict[str, Any]]) -> list[Any]:
    return [pytest.param(tc, id=tc["name"]) for tc in table]


def new_plugin(
    args: Mapping[str, Any] | None = None,
    snapshot: Snapshot | None = None,
    objs: list[dict[str, Any]] | None = None,
    *,
    node_inclusion_policy: bool = False,
    match_label_keys: bool = False,
) -> PodTopologySpread:
    """The plugin as kube's tests set it up: gates off unless a case turns them on; ``objs``
    are what its Service/controller listers find."""
    snap = snapshot if snapshot is not None else Snapshot()
    objects: dict[str, list[dict[str, Any]]] = {}
    for obj in objs or ():
        objects.setdefault(obj["kind"], []).append(obj)
    plugin = PodTopologySpread(
        dict(args if args is not None else {"defaultingType": LIST_DEFAULTING}),
        Handle("test", InMemoryBackend(objects=objects), lambda: snap),
    )
    plugin.enable_node_inclusion_policy = node_inclusion_policy
    plugin.enable_match_label_keys = match_label_keys
    return plugin


def _sorted_paths(paths: list[list[Any]]) -> list[list[Any]]:
    """kube's criticalPaths comparer: equal counts compare with their values sorted."""
    (v0, n0), (v1, n1) = paths
    if n0 == n1 and v0 > v1:
        v0, v1 = v1, v0
    return [[v0, n0], [v1, n1]]


def assert_pre_filter_state(got: PreFilterState, want: dict[str, Any]) -> None:
    assert got.constraints == want["constraints"]
    assert [_sorted_paths(p.paths) for p in got.critical_paths] == [
        _sorted_paths(p) for p in want["critical_paths"]
    ]
    assert got.tp_value_to_match_num == want["tp_value_to_match_num"]


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def run_pre_filter(plugin: PodTopologySpread, pod: Pod, snapshot: Snapshot) -> CycleState:
    state = CycleState()
    status = plugin.pre_filter(state, pod, snapshot.node_infos)
    assert status is None, status
    return state


# === filtering_test.go =========================================================================

PRE_FILTER_STATE_CASES = [
    dict(
        name="clean cluster with one spreadConstraint",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(
            5,
            "zone",
            DO_NOT_SCHEDULE,
            make_label_selector().label("foo", "bar").obj(),
            None,
            None,
            None,
            None,
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=5,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("foo", "bar").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone1", 0), ("zone2", 0))],
            tp_value_to_match_num=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    dict(
        name="normal case with one spreadConstraint",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 2), ("zone1", 3))],
            tp_value_to_match_num=[{"zone1": 3, "zone2": 2}],
        ),
    ),
    dict(
        name="normal case with null label selector",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, None, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=NOTHING_FN(),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 0), ("zone1", 0))],
            tp_value_to_match_num=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    dict(
        name="normal case with one spreadConstraint, on a 3-zone cluster",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
            make_node().name("node-o").label("zone", "zone3").label("node", "node-o").obj(),
            make_node().name("node-p").label("zone", "zone3").label("node", "node-p").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone3", 0), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 3, "zone2": 2, "zone3": 0}],
        ),
    ),
    dict(
        name="namespace mismatch doesn't count",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").namespace("ns1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").namespace("ns2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 1), ("zone1", 2))],
            tp_value_to_match_num=[{"zone1": 2, "zone2": 1}],
        ),
    ),
    dict(
        name="normal case with two spreadConstraints",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 3), ("zone2", 4)),
                critical_paths(("node-x", 0), ("node-b", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
            ],
        ),
    ),
    dict(
        name="soft spreadConstraints should be bypassed",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 3), ("zone2", 4)),
                critical_paths(("node-b", 1), ("node-a", 2)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-y": 4},
            ],
        ),
    ),
    dict(
        name="different labelSelectors - simple version",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone2", 0), ("zone1", 1)),
                critical_paths(("node-a", 0), ("node-y", 0)),
            ],
            tp_value_to_match_num=[
                {"zone1": 1, "zone2": 0},
                {"node-a": 0, "node-b": 1, "node-y": 0},
            ],
        ),
    ),
    dict(
        name="different labelSelectors - complex pods",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 3), ("zone2", 4)),
                critical_paths(("node-b", 0), ("node-a", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 4},
                {"node-a": 1, "node-b": 0, "node-y": 2},
            ],
        ),
    ),
    dict(
        name="two spreadConstraints, and with podAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-x"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 3), ("zone2", 4)),
                critical_paths(("node-b", 1), ("node-a", 2)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-y": 4},
            ],
        ),
    ),
    dict(
        name="default constraints and a service",
        pod=make_pod().name("p").label("foo", "bar").label("baz", "kar").obj(),
        default_constraints=[
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SCHEDULE_ANYWAY},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DO_NOT_SCHEDULE},
        ],
        objs=[{"kind": "Service", "spec": {"selector": {"foo": "bar"}}}],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=3,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("foo", "bar").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=5,
                    topology_key="rack",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("foo", "bar").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[new_critical_paths(), new_critical_paths()],
            tp_value_to_match_num=[{}, {}],
        ),
    ),
    dict(
        name="default constraints and a service that doesn't match",
        pod=make_pod().name("p").label("foo", "bar").obj(),
        default_constraints=[
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE}
        ],
        objs=[{"kind": "Service", "spec": {"selector": {"baz": "kep"}}}],
        want_prefilter_status=Status(Code.SKIP),
    ),
    dict(
        name="default constraints and a service, but pod has constraints",
        pod=make_pod()
        .name("p")
        .label("foo", "bar")
        .label("baz", "tar")
        .spread_constraint(
            1,
            "zone",
            DO_NOT_SCHEDULE,
            make_label_selector().label("baz", "tar").obj(),
            None,
            None,
            None,
            None,
        )
        .spread_constraint(
            2,
            "planet",
            SCHEDULE_ANYWAY,
            make_label_selector().label("fot", "rok").obj(),
            None,
            None,
            None,
            None,
        )
        .obj(),
        default_constraints=[
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE}
        ],
        objs=[{"kind": "Service", "spec": {"selector": {"foo": "bar"}}}],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("baz", "tar").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[new_critical_paths()],
            tp_value_to_match_num=[{}],
        ),
    ),
    dict(
        name="default soft constraints and a service",
        pod=make_pod().name("p").label("foo", "bar").obj(),
        default_constraints=[
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SCHEDULE_ANYWAY}
        ],
        objs=[{"kind": "Service", "spec": {"selector": {"foo": "bar"}}}],
        want_prefilter_status=Status(Code.SKIP),
    ),
    dict(
        name="TpKeyToDomainsNum is calculated when MinDomains is enabled",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 3), ("zone2", 4)),
                critical_paths(("node-x", 0), ("node-b", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 4},
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
            ],
        ),
    ),
    dict(
        name="feature gate disabled with NodeAffinityPolicy",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-a", 1), ("node-b", 2))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-a", 1), ("node-b", 2))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, bar_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-c", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-b").label("bar", "").obj(),
            make_pod().name("p-e").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-a", 1), ("node-b", 2))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, bar_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").label("bar", "").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-c", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="feature gate disabled with NodeTaintsPolicy",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node()
            .name("node-c")
            .label("node", "node-c")
            .taints(taints)
            .label("bar", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-c", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="NodeTaintsPolicy ignored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node()
            .name("node-c")
            .label("node", "node-c")
            .taints(taints)
            .label("bar", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("node-c", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy honored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node()
            .name("node-c")
            .label("node", "node-c")
            .taints(taints)
            .label("bar", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=HONOR,
                )
            ],
            critical_paths=[critical_paths(("node-a", 1), ("node-b", 2))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy honored with tolerated taints",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node()
            .name("node-c")
            .label("node", "node-c")
            .taints(taints)
            .label("bar", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("bar", "").obj(),
            make_pod().name("p-b").node("node-b").label("bar", "").obj(),
            make_pod().name("p-c").node("node-b").label("bar", "").obj(),
            make_pod().name("p-d").node("node-c").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=HONOR,
                )
            ],
            critical_paths=[critical_paths(("node-c", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 2, "node-c": 0}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 0), ("zone2", 1)),
                critical_paths(("node-a", 0), ("node-x", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 0, "zone2": 1},
                {"node-a": 0, "node-b": 2, "node-x": 1},
            ],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, honor_policy, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .taints(taints)
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=HONOR,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 0), ("zone2", 1)),
                critical_paths(("node-a", 0), ("node-x", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 0, "zone2": 1},
                {"node-a": 0, "node-b": 2, "node-x": 1},
            ],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(taints)
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 0), ("zone2", 1)),
                critical_paths(("node-b", 0), ("node-x", 1)),
            ],
            tp_value_to_match_num=[{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(
            1, "zone", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .taints(taints)
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .label("foo", "")
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-x2").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=HONOR,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 2), ("zone2", 3)),
                critical_paths(("node-y", 1), ("node-x", 2)),
            ],
            tp_value_to_match_num=[{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="matchLabelKeys ignored when feature gate disabled",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, ["bar"])
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 2), ("zone1", 3))],
            tp_value_to_match_num=[{"zone1": 3, "zone2": 2}],
        ),
        enable_match_label_keys=False,
    ),
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "a")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, ["bar"])
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").label("bar", "a").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").label("bar", "a").obj(),
            make_pod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().exists("foo").label("bar", "a").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 1), ("zone1", 1))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 1}],
        ),
        enable_match_label_keys=True,
    ),
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod=make_pod()
        .name("p")
        .label("foo", "a")
        .spread_constraint(
            1, "zone", DO_NOT_SCHEDULE, make_label_selector().obj(), None, None, None, ["foo"]
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "a").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "a").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("foo", "a").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 2), ("zone1", 3))],
            tp_value_to_match_num=[{"zone1": 3, "zone2": 2}],
        ),
        enable_match_label_keys=True,
    ),
    dict(
        name="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, None, None, None, None, ["bar"])
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "a").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "a").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(None),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 0), ("zone1", 0))],
            tp_value_to_match_num=[{"zone1": 0, "zone2": 0}],
        ),
        enable_match_label_keys=True,
    ),
    dict(
        name="no pod is matched when LabelSelector is nil when feature gate disabled",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, None, None, None, None, ["bar"])
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "a").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "a").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(None),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 0), ("zone1", 0))],
            tp_value_to_match_num=[{"zone1": 0, "zone2": 0}],
        ),
    ),
    dict(
        name="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, ["bar"])
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "a").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "a").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "a").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "a").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            critical_paths=[critical_paths(("zone2", 2), ("zone1", 3))],
            tp_value_to_match_num=[{"zone1": 3, "zone2": 2}],
        ),
        enable_match_label_keys=True,
    ),
    dict(
        name="two spreadConstraints with the same topologyKey",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone2", 1), ("zone1", 2)),
                critical_paths(("zone1", 1), ("zone2", 3)),
            ],
            tp_value_to_match_num=[{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
        ),
    ),
    dict(
        name="skip if not specified",
        pod=make_pod().name("p").label("foo", "").obj(),
        nodes=[make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj()],
        want_prefilter_status=Status(Code.SKIP),
    ),
]


@pytest.mark.parametrize("tc", cases(PRE_FILTER_STATE_CASES))
def test_pre_filter_state(tc: dict[str, Any]) -> None:
    args = pod_topology_spread_args(
        default_constraints=tc.get("default_constraints"), defaulting_type=LIST_DEFAULTING
    )
    snapshot = new_snapshot(tc.get("existing_pods"), tc.get("nodes"))
    plugin = new_plugin(
        args,
        snapshot,
        tc.get("objs"),
        node_inclusion_policy=tc.get("enable_node_inclusion_policy", False),
        match_label_keys=tc.get("enable_match_label_keys", False),
    )
    state = CycleState()
    status = plugin.pre_filter(state, tc["pod"], snapshot.node_infos)
    assert status == tc.get("want_prefilter_status")
    if status is not None:
        return
    assert_pre_filter_state(state.read(PRE_FILTER_STATE_KEY), tc["want"])


node_constraint = topology_spread_constraint(
    max_skew=1,
    topology_key="node",
    selector=must_convert_label_selector_as_selector(foo_selector),
    min_domains=1,
    node_affinity_policy=HONOR,
    node_taints_policy=IGNORE,
)
zone_constraint = topology_spread_constraint(
    max_skew=1,
    topology_key="zone",
    selector=must_convert_label_selector_as_selector(foo_selector),
    min_domains=1,
    node_affinity_policy=HONOR,
    node_taints_policy=IGNORE,
)

PRE_FILTER_STATE_ADD_POD_CASES = [
    dict(
        name="node a and b both impact current min match",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=None,
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[node_constraint],
            critical_paths=[critical_paths(("node-b", 0), ("node-a", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 0}],
        ),
    ),
    dict(
        name="only node a impacts current min match",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=[make_pod().name("p-b1").node("node-b").label("foo", "").obj()],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[node_constraint],
            critical_paths=[critical_paths(("node-a", 1), ("node-b", 1))],
            tp_value_to_match_num=[{"node-a": 1, "node-b": 1}],
        ),
    ),
    dict(
        name="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
        existing_pods=[make_pod().name("p-b1").node("node-b").label("foo", "").obj()],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[node_constraint],
            critical_paths=[critical_paths(("node-a", 0), ("node-b", 1))],
            tp_value_to_match_num=[{"node-a": 0, "node-b": 1}],
        ),
    ),
    dict(
        name="add pod on non-critical node won't trigger re-calculation",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
        existing_pods=[make_pod().name("p-b1").node("node-b").label("foo", "").obj()],
        node_idx=1,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[node_constraint],
            critical_paths=[critical_paths(("node-a", 0), ("node-b", 2))],
            tp_value_to_match_num=[{"node-a": 0, "node-b": 2}],
        ),
    ),
    dict(
        name="node a and x both impact topologyKeyToMinPodsMap on zone and node",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=None,
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint, node_constraint],
            critical_paths=[
                critical_paths(("zone2", 0), ("zone1", 1)),
                critical_paths(("node-x", 0), ("node-a", 1)),
            ],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        ),
    ),
    dict(
        name="only node a impacts topologyKeyToMinPodsMap on zone and node",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=[make_pod().name("p-x1").node("node-x").label("foo", "").obj()],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint, node_constraint],
            critical_paths=[
                critical_paths(("zone1", 1), ("zone2", 1)),
                critical_paths(("node-a", 1), ("node-x", 1)),
            ],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        ),
    ),
    dict(
        name="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint, node_constraint],
            critical_paths=[
                critical_paths(("zone2", 1), ("zone1", 3)),
                critical_paths(("node-a", 1), ("node-x", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 1},
                {"node-a": 1, "node-b": 2, "node-x": 1},
            ],
        ),
    ),
    dict(
        name="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-x2").node("node-x").label("bar", "").obj(),
        ],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                zone_constraint,
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone2", 1), ("zone1", 2)),
                critical_paths(("node-a", 0), ("node-b", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 2, "zone2": 1},
                {"node-a": 0, "node-b": 1, "node-x": 2},
            ],
        ),
    ),
    dict(
        name="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        added_pod=make_pod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("bar", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-x2").node("node-x").label("bar", "").obj(),
        ],
        node_idx=0,
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want=pre_filter_state(
            constraints=[
                zone_constraint,
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="node",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            critical_paths=[
                critical_paths(("zone1", 1), ("zone2", 1)),
                critical_paths(("node-a", 1), ("node-b", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 1, "zone2": 1},
                {"node-a": 1, "node-b": 1, "node-x": 2},
            ],
        ),
    ),
    dict(
        name="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=0,
        added_pod=make_pod()
        .name("p-a1")
        .node("node-a")
        .label("foo", "")
        .label("zone", "zone1")
        .obj(),
        existing_pods=[
            make_pod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 1), dict(match_num=MAX_INT32))],
            tp_value_to_match_num=[{"zone2": 1}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=0,
        added_pod=make_pod()
        .name("p-a1")
        .node("node-a")
        .label("foo", "")
        .label("zone", "zone1")
        .obj(),
        existing_pods=[
            make_pod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 1), dict(match_num=MAX_INT32))],
            tp_value_to_match_num=[{"zone2": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        added_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 2}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="add a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        added_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 2}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="add a label selector not matched pod when with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        added_pod=make_pod().name("p-b1").node("node-b").label("zone", "zone2").obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 1))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        added_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .taints(taints)
            .obj(),
            make_node().name("node-b").label("zone", "zone2").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 2))],
            tp_value_to_match_num=[{"zone2": 2, "zone1": 1}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        added_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .taints(taints)
            .obj(),
            make_node().name("node-b").label("zone", "zone2").label("node", "node-b").obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 2))],
            tp_value_to_match_num=[{"zone2": 2, "zone1": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
]


@pytest.mark.parametrize("tc", cases(PRE_FILTER_STATE_ADD_POD_CASES))
def test_pre_filter_state_add_pod(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(tc.get("existing_pods"), tc["nodes"])
    plugin = new_plugin(
        snapshot=snapshot, node_inclusion_policy=tc.get("enable_node_inclusion_policy", False)
    )
    state = run_pre_filter(plugin, tc["preemptor"], snapshot)
    node_info = snapshot.get(tc["nodes"][tc.get("node_idx", 0)].name)
    assert plugin.add_pod(state, tc["preemptor"], tc["added_pod"], node_info) is None
    assert_pre_filter_state(state.read(PRE_FILTER_STATE_KEY), tc["want"])


PRE_FILTER_STATE_REMOVE_POD_CASES = [
    dict(
        name="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
        ],
        deleted_pod_idx=0,
        node_idx=0,
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 1))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 1}],
        ),
    ),
    dict(
        name="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        deleted_pod_idx=0,
        node_idx=0,
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 1), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 1, "zone2": 2}],
        ),
    ),
    dict(
        name="delete an irrelevant pod won't help",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a0").node("node-a").label("bar", "").obj(),
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        deleted_pod_idx=0,
        node_idx=0,
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 2), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 2, "zone2": 2}],
        ),
    ),
    dict(
        name="delete a non-existing pod won't help",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        deleted_pod_idx=-1,
        deleted_pod=make_pod().name("p-a0").node("node-a").label("bar", "").obj(),
        node_idx=0,
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone1", 2), ("zone2", 2))],
            tp_value_to_match_num=[{"zone1": 2, "zone2": 2}],
        ),
    ),
    dict(
        name="two spreadConstraints",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-x2").node("node-x").label("foo", "").obj(),
        ],
        deleted_pod_idx=3,
        node_idx=2,
        want=pre_filter_state(
            constraints=[zone_constraint, node_constraint],
            critical_paths=[
                critical_paths(("zone2", 1), ("zone1", 3)),
                critical_paths(("node-b", 1), ("node-x", 1)),
            ],
            tp_value_to_match_num=[
                {"zone1": 3, "zone2": 1},
                {"node-a": 2, "node-b": 1, "node-x": 1},
            ],
        ),
    ),
    dict(
        name="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy disabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=0,
        deleted_pod=make_pod()
        .name("p-a1")
        .node("node-a")
        .label("foo", "")
        .label("zone", "zone1")
        .obj(),
        existing_pods=[
            make_pod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 1), dict(match_num=MAX_INT32))],
            tp_value_to_match_num=[{"zone2": 1}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("foo", ["bar"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=0,
        deleted_pod=make_pod()
        .name("p-a1")
        .node("node-a")
        .label("foo", "")
        .label("zone", "zone1")
        .obj(),
        existing_pods=[
            make_pod().name("p-a2").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 1), dict(match_num=MAX_INT32))],
            tp_value_to_match_num=[{"zone2": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy disabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        deleted_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 0), ("zone1", 1))],
            tp_value_to_match_num=[{"zone2": 0, "zone1": 1}],
        ),
        enable_node_inclusion_policy=False,
    ),
    dict(
        name="remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        preemptor=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        node_idx=1,
        deleted_pod=make_pod()
        .name("p-b1")
        .node("node-b")
        .label("foo", "")
        .label("zone", "zone2")
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("zone", "zone1").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").label("zone", "zone2").obj(),
        ],
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "bar")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone2")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
        ],
        want=pre_filter_state(
            constraints=[zone_constraint],
            critical_paths=[critical_paths(("zone2", 0), ("zone1", 1))],
            tp_value_to_match_num=[{"zone2": 0, "zone1": 1}],
        ),
        enable_node_inclusion_policy=True,
    ),
]


@pytest.mark.parametrize("tc", cases(PRE_FILTER_STATE_REMOVE_POD_CASES))
def test_pre_filter_state_remove_pod(tc: dict[str, Any]) -> None:
    existing = tc.get("existing_pods") or []
    snapshot = new_snapshot(existing, tc["nodes"])
    plugin = new_plugin(
        snapshot=snapshot, node_inclusion_policy=tc.get("enable_node_inclusion_policy", False)
    )
    state = run_pre_filter(plugin, tc["preemptor"], snapshot)
    deleted = tc.get("deleted_pod")
    index = tc.get("deleted_pod_idx", 0)
    if 0 <= index < len(existing):
        deleted = existing[index]
    node_info = snapshot.get(tc["nodes"][tc.get("node_idx", 0)].name)
    assert plugin.remove_pod(state, tc["preemptor"], deleted, node_info) is None
    assert_pre_filter_state(state.read(PRE_FILTER_STATE_KEY), tc["want"])


SINGLE_CONSTRAINT_CASES = [
    dict(
        name="no existing pods",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="no existing pods, incoming pod doesn't match itself",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="existing pods in a different namespace do not count",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").namespace("ns2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="existing pods do not match null selector",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, None, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="pods spread across zones as 3/3, all nodes fit",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="pod cannot be scheduled as all nodes don't have label 'rack'",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "rack", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-x": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        },
    ),
    dict(
        name="pods spread across nodes as 2/1/0/3, only node-x fits",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod=make_pod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("node", ["node-a", "node-y"], MATCH_EXPRESSIONS)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="terminating Pods should be excluded",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            make_pod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        want_status_code={"node-a": Code.SUCCESS, "node-b": Code.UNSCHEDULABLE},
    ),
    dict(
        name="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_not_in("node", ["node-b"])
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third node fits",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", DO_NOT_SCHEDULE, foo_selector, 4, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-c": Code.SUCCESS,
        },
    ),
    dict(
        name="pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all nodes fit",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", DO_NOT_SCHEDULE, foo_selector, 2, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want_status_code={"node-a": Code.SUCCESS, "node-b": Code.SUCCESS, "node-c": Code.SUCCESS},
    ),
    dict(
        name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and fourth nodes fit",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "zone", DO_NOT_SCHEDULE, foo_selector, 3, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "zone", DO_NOT_SCHEDULE, foo_selector, 1, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy honored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").taints(taints).obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy ignored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").label("foo", "").obj(),
            make_node().name("node-y").label("node", "node-y").taints(taints).obj(),
        ],
        existing_pods=[
            make_pod().name("p-b1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
]

MULTIPLE_CONSTRAINTS_CASES = [
    dict(
        name="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        pod=make_pod()
        .name("p")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("bar", "").obj(),
        ],
        want_status_code={
            "node-a": Code.SUCCESS,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, honor_policy, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("node", "node-b")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .taints(taints)
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .label("foo", "")
            .taints(taints)
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.SUCCESS,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, honor_policy, None)
        .spread_constraint(
            1, "node", DO_NOT_SCHEDULE, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("node", "node-a")
            .label("foo", "")
            .obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label("node", "node-x")
            .label("foo", "")
            .obj(),
            make_node()
            .name("node-y")
            .label("zone", "zone2")
            .label("node", "node-y")
            .label("foo", "")
            .taints(taints)
            .obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.UNSCHEDULABLE,
        },
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="two Constraints on zone, spreads = [3/3, 2/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.SUCCESS,
            "node-y": Code.SUCCESS,
        },
    ),
    dict(
        name="two Constraints on zone, spreads = [3/4, 2/1]",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label("node", "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label("node", "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label("node", "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label("node", "node-y").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        want_status_code={
            "node-a": Code.UNSCHEDULABLE,
            "node-b": Code.UNSCHEDULABLE,
            "node-x": Code.UNSCHEDULABLE,
            "node-y": Code.UNSCHEDULABLE,
        },
    ),
]


@pytest.mark.parametrize(
    "tc", [*cases(SINGLE_CONSTRAINT_CASES), *cases(MULTIPLE_CONSTRAINTS_CASES)]
)
def test_filter_constraints(tc: dict[str, Any]) -> None:
    """TestSingleConstraint and TestMultipleConstraints: the code Filter returns per node."""
    snapshot = new_snapshot(tc.get("existing_pods"), tc["nodes"])
    plugin = new_plugin(
        snapshot=snapshot, node_inclusion_policy=tc.get("enable_node_inclusion_policy", False)
    )
    state = run_pre_filter(plugin, tc["pod"], snapshot)
    got = {
        node.name: code_of(plugin.filter(state, tc["pod"], snapshot.get(node.name)))
        for node in tc["nodes"]
    }
    assert got == tc["want_status_code"]


def test_pre_filter_disabled() -> None:
    """Filter without PreFilter's state is an Error."""
    plugin = new_plugin()
    status = plugin.filter(CycleState(), k8s_pod({}), NodeInfo(k8s_node({})))
    assert status == Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')


# === scoring_test.go ===========================================================================

PRE_SCORE_SKIP_CASES = [
    dict(
        name="the pod doesn't have soft topology spread Constraints",
        pod=make_pod().name("p").namespace("default").obj(),
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
    ),
    dict(
        name="default constraints and a replicaset that doesn't match",
        pod=make_pod()
        .name("p")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "sup")
        .owner_reference("rs2", gvk("apps/v1", "ReplicaSet"))
        .obj(),
        config=pod_topology_spread_args(
            default_constraints=[
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SCHEDULE_ANYWAY}
            ],
            defaulting_type=LIST_DEFAULTING,
        ),
        nodes=[make_node().name("node-a").label("planet", "mars").obj()],
        objs=[
            {
                "kind": "ReplicaSet",
                "metadata": {"namespace": "default", "name": "rs1"},
                "spec": {"selector": make_label_selector().exists("tar").obj()},
            }
        ],
    ),
]


@pytest.mark.parametrize("tc", cases(PRE_SCORE_SKIP_CASES))
def test_pre_score_skip(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(None, tc["nodes"])
    plugin = new_plugin(tc["config"], snapshot, tc.get("objs"))
    nodes = [NodeInfo(node) for node in tc["nodes"]]
    assert plugin.pre_score(CycleState(), tc["pod"], nodes) == Status.skip()


PRE_SCORE_STATE_EMPTY_NODES_CASES = [
    dict(
        name="normal case",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key=HOSTNAME,
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}, {}],
            topology_normalizing_weight=[
                topology_normalizing_weight(2),
                topology_normalizing_weight(3),
            ],
        ),
    ),
    dict(
        name="null selector",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, None, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=NOTHING_FN(),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
    ),
    dict(
        name="node-x doesn't have label zone",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=1,
                    topology_key=HOSTNAME,
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            ignored_nodes={"node-x"},
            topology_value_to_pod_counts=[{"zone1": 0}, {}],
            topology_normalizing_weight=[
                topology_normalizing_weight(1),
                topology_normalizing_weight(2),
            ],
        ),
    ),
    dict(
        name="system default constraints and a replicaset",
        pod=make_pod()
        .name("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", gvk("apps/v1", "ReplicaSet"))
        .obj(),
        config=pod_topology_spread_args(defaulting_type=SYSTEM_DEFAULTING),
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").label(ZONE, "mars").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").label(ZONE, "mars").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        objs=[
            {
                "kind": "ReplicaSet",
                "metadata": {"namespace": "default", "name": "rs1"},
                "spec": {"selector": foo_selector},
            }
        ],
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=3,
                    topology_key=HOSTNAME,
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=5,
                    topology_key=ZONE,
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{}, {"mars": 0, "": 0}],
            topology_normalizing_weight=[
                topology_normalizing_weight(4),
                topology_normalizing_weight(2),
            ],
        ),
    ),
    dict(
        name="default constraints and a replicaset",
        pod=make_pod()
        .name("p")
        .namespace("default")
        .label("foo", "tar")
        .label("baz", "sup")
        .owner_reference("rs1", gvk("apps/v1", "ReplicaSet"))
        .obj(),
        config=pod_topology_spread_args(
            default_constraints=[
                {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY},
                {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": DO_NOT_SCHEDULE},
                {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": SCHEDULE_ANYWAY},
            ],
            defaulting_type=LIST_DEFAULTING,
        ),
        nodes=[
            make_node()
            .name("node-a")
            .label("rack", "rack1")
            .label(HOSTNAME, "node-a")
            .label("planet", "mars")
            .obj()
        ],
        objs=[
            {
                "kind": "ReplicaSet",
                "metadata": {"namespace": "default", "name": "rs1"},
                "spec": {"selector": foo_selector},
            }
        ],
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key=HOSTNAME,
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
                topology_spread_constraint(
                    max_skew=2,
                    topology_key="planet",
                    selector=must_convert_label_selector_as_selector(foo_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                ),
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{}, {"mars": 0}],
            topology_normalizing_weight=[
                topology_normalizing_weight(1),
                topology_normalizing_weight(1),
            ],
        ),
    ),
    dict(
        name="default constraints and a replicaset, but pod has constraints",
        pod=make_pod()
        .name("p")
        .namespace("default")
        .label("foo", "bar")
        .label("baz", "sup")
        .owner_reference("rs1", gvk("apps/v1", "ReplicaSet"))
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .spread_constraint(
            2,
            "planet",
            SCHEDULE_ANYWAY,
            make_label_selector().label("baz", "sup").obj(),
            None,
            None,
            None,
            None,
        )
        .obj(),
        config=pod_topology_spread_args(
            default_constraints=[
                {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": SCHEDULE_ANYWAY}
            ],
            defaulting_type=LIST_DEFAULTING,
        ),
        nodes=[
            make_node().name("node-a").label("planet", "mars").label("galaxy", "andromeda").obj()
        ],
        objs=[
            {
                "kind": "ReplicaSet",
                "metadata": {"namespace": "default", "name": "rs1"},
                "spec": {"selector": foo_selector},
            }
        ],
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=2,
                    topology_key="planet",
                    selector=must_convert_label_selector_as_selector(
                        make_label_selector().label("baz", "sup").obj()
                    ),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"mars": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(1)],
        ),
    ),
    dict(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(
            1, "zone", SCHEDULE_ANYWAY, bar_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(
            1, "zone", SCHEDULE_ANYWAY, bar_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=IGNORE,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy honored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, bar_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label(HOSTNAME, "node-x")
            .taints(taints)
            .obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=HONOR,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy ignored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node()
            .name("node-a")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-a")
            .obj(),
            make_node()
            .name("node-b")
            .label("zone", "zone1")
            .label("foo", "")
            .label(HOSTNAME, "node-b")
            .obj(),
            make_node()
            .name("node-x")
            .label("zone", "zone2")
            .label(HOSTNAME, "node-x")
            .taints(taints)
            .obj(),
        ],
        config=pod_topology_spread_args(defaulting_type=LIST_DEFAULTING),
        want=pre_score_state(
            constraints=[
                topology_spread_constraint(
                    max_skew=1,
                    topology_key="zone",
                    selector=must_convert_label_selector_as_selector(bar_selector),
                    min_domains=1,
                    node_affinity_policy=HONOR,
                    node_taints_policy=IGNORE,
                )
            ],
            ignored_nodes=set(),
            topology_value_to_pod_counts=[{"zone1": 0, "zone2": 0}],
            topology_normalizing_weight=[topology_normalizing_weight(2)],
        ),
        enable_node_inclusion_policy=True,
    ),
]


@pytest.mark.parametrize("tc", cases(PRE_SCORE_STATE_EMPTY_NODES_CASES))
def test_pre_score_state_empty_nodes(tc: dict[str, Any]) -> None:
    snapshot = new_snapshot(None, tc["nodes"])
    plugin = new_plugin(
        tc["config"],
        snapshot,
        tc.get("objs"),
        node_inclusion_policy=tc.get("enable_node_inclusion_policy", False),
    )
    state = CycleState()
    nodes = [NodeInfo(node) for node in tc["nodes"]]
    assert plugin.pre_score(state, tc["pod"], nodes) is None
    got: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
    want = tc["want"]
    assert got.constraints == want["constraints"]
    assert got.ignored_nodes == want["ignored_nodes"]
    assert got.topology_value_to_pod_counts == want["topology_value_to_pod_counts"]
    assert got.topology_normalizing_weight == want["topology_normalizing_weight"]


POD_TOPOLOGY_SPREAD_SCORE_CASES = [
    dict(
        name="one constraint on node, no existing pods",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        want=[node_score(name="node-a", score=100), node_score(name="node-b", score=100)],
    ),
    dict(
        name="one constraint on node, only one node is candidate",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        nodes=[make_node().name("node-a").label(HOSTNAME, "node-a").obj()],
        failed_nodes=[make_node().name("node-b").label(HOSTNAME, "node-b").obj()],
        want=[node_score(name="node-a", score=100)],
    ),
    dict(
        name="one constraint on node, all nodes have the same number of matching pods",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        want=[node_score(name="node-a", score=100), node_score(name="node-b", score=100)],
    ),
    dict(
        name="one constraint on node, all 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-d1").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d2").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        failed_nodes=[],
        want=[
            node_score(name="node-a", score=20),
            node_score(name="node-b", score=60),
            node_score(name="node-c", score=100),
            node_score(name="node-d", score=0),
        ],
    ),
    dict(
        name="one constraint on node, null selector",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, None, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-d1").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d2").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        want=[
            node_score(name="node-a", score=100),
            node_score(name="node-b", score=100),
            node_score(name="node-c", score=100),
            node_score(name="node-d", score=100),
        ],
    ),
    dict(
        name="one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-d1").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d2").node("node-d").label("foo", "").obj(),
            make_pod().name("p-d3").node("node-d").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        failed_nodes=[],
        want=[
            node_score(name="node-a", score=33),
            node_score(name="node-b", score=66),
            node_score(name="node-c", score=100),
            node_score(name="node-d", score=16),
        ],
    ),
    dict(
        name="one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(3, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a3").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a4").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b3").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
            make_pod().name("p-c2").node("node-c").label("foo", "").obj(),
            make_pod().name("p-d1").node("node-d").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        failed_nodes=[],
        want=[
            node_score(name="node-a", score=44),
            node_score(name="node-b", score=66),
            node_score(name="node-c", score=77),
            node_score(name="node-d", score=100),
        ],
    ),
    dict(
        name="system defaulting, nodes don't have zone, pods match service",
        pod=make_pod().name("p").label("foo", "").obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a3").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a4").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b3").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
            make_pod().name("p-c2").node("node-c").label("foo", "").obj(),
            make_pod().name("p-d1").node("node-d").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label(HOSTNAME, "node-d").obj(),
        ],
        failed_nodes=[],
        objs=[{"kind": "Service", "spec": {"selector": {"foo": ""}}}],
        want=[
            node_score(name="node-a", score=44),
            node_score(name="node-b", score=66),
            node_score(name="node-c", score=77),
            node_score(name="node-d", score=100),
        ],
    ),
    dict(
        name="one constraint on node, 3 out of 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a3").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a4").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        failed_nodes=[make_node().name("node-y").label(HOSTNAME, "node-y").obj()],
        want=[
            node_score(name="node-a", score=33),
            node_score(name="node-b", score=83),
            node_score(name="node-x", score=100),
        ],
    ),
    dict(
        name="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a3").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a4").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("n", "node-b").obj(),
            make_node().name("node-x").label(HOSTNAME, "node-x").obj(),
        ],
        failed_nodes=[make_node().name("node-y").label(HOSTNAME, "node-y").obj()],
        want=[
            node_score(name="node-a", score=16),
            node_score(name="node-b", score=0),
            node_score(name="node-x", score=100),
        ],
    ),
    dict(
        name="one constraint on zone, 3 out of 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a3").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a4").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        failed_nodes=[
            make_node().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj()
        ],
        want=[
            node_score(name="node-a", score=75),
            node_score(name="node-b", score=75),
            node_score(name="node-x", score=100),
        ],
    ),
    dict(
        name="two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-x2").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y4").node("node-y").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        failed_nodes=[
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        want=[node_score(name="node-a", score=100), node_score(name="node-x", score=63)],
    ),
    dict(
        name="two Constraints on zone, 2 out of 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y3").node("node-y").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").obj(),
            make_node().name("node-x").label("zone", "zone2").obj(),
        ],
        failed_nodes=[
            make_node().name("node-b").label("zone", "zone1").obj(),
            make_node().name("node-y").label("zone", "zone2").obj(),
        ],
        want=[node_score(name="node-a", score=85), node_score(name="node-x", score=100)],
    ),
    dict(
        name="two Constraints on zone and node, with different labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        failed_nodes=[],
        want=[
            node_score(name="node-a", score=60),
            node_score(name="node-b", score=20),
            node_score(name="node-x", score=100),
            node_score(name="node-y", score=60),
        ],
    ),
    dict(
        name="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-b1").node("node-b").label("bar", "").obj(),
            make_pod().name("p-x1").node("node-x").label("foo", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").label("bar", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
            make_node().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj(),
        ],
        failed_nodes=[],
        want=[
            node_score(name="node-a", score=100),
            node_score(name="node-b", score=60),
            node_score(name="node-x", score=40),
            node_score(name="node-y", score=0),
        ],
    ),
    dict(
        name="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-y").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-y").label("bar", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-x").label("zone", "zone2").label(HOSTNAME, "node-x").obj(),
        ],
        failed_nodes=[
            make_node().name("node-y").label("zone", "zone2").label(HOSTNAME, "node-y").obj()
        ],
        want=[
            node_score(name="node-a", score=50),
            node_score(name="node-b", score=25),
            node_score(name="node-x", score=100),
        ],
    ),
    dict(
        name="existing pods in a different namespace do not count",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").namespace("ns1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        want=[node_score(name="node-a", score=100), node_score(name="node-b", score=33)],
    ),
    dict(
        name="terminating Pods should be excluded",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label(HOSTNAME, "node-b").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a").node("node-a").label("foo", "").terminating().obj(),
            make_pod().name("p-b").node("node-b").label("foo", "").obj(),
        ],
        want=[node_score(name="node-a", score=100), node_score(name="node-b", score=0)],
    ),
    dict(
        name="minDomains has no effect when ScheduleAnyway",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(2, "node", SCHEDULE_ANYWAY, foo_selector, 10, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-b2").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=75),
            node_score(name="node-b", score=75),
            node_score(name="node-c", score=100),
        ],
    ),
    dict(
        name="NodeAffinityPolicy honoed with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(1, "node", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=0),
            node_score(name="node-b", score=33),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_selector({"foo": ""})
        .spread_constraint(
            1, "node", SCHEDULE_ANYWAY, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=66),
            node_score(name="node-b", score=100),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy honoed with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(1, "node", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=0),
            node_score(name="node-b", score=33),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .node_affinity_in("foo", [""], MATCH_EXPRESSIONS)
        .spread_constraint(
            1, "node", SCHEDULE_ANYWAY, foo_selector, None, ignore_policy, None, None
        )
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-c").label("node", "node-c").obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=66),
            node_score(name="node-b", score=100),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy honored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", SCHEDULE_ANYWAY, foo_selector, None, None, honor_policy, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node().name("node-c").label("node", "node-c").taints(taints).obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=0),
            node_score(name="node-b", score=33),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="NodeTaintsPolicy ignored",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "node", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .obj(),
        nodes=[
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").obj(),
            make_node().name("node-c").label("node", "node-c").taints(taints).obj(),
        ],
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-a2").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
        ],
        want=[
            node_score(name="node-a", score=66),
            node_score(name="node-b", score=100),
            node_score(name="node-c", score=100),
        ],
        enable_node_inclusion_policy=True,
    ),
    dict(
        name="matchLabelKeys ignored when feature gate disabled",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, ["baz"])
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, ["baz"])
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-c").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-c").label("bar", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label("zone", "zone2").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label("zone", "zone2").label(HOSTNAME, "node-d").obj(),
        ],
        want=[
            node_score(name="node-a", score=60),
            node_score(name="node-b", score=20),
            node_score(name="node-c", score=60),
            node_score(name="node-d", score=100),
        ],
        enable_match_label_keys=False,
    ),
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .spread_constraint(
            1, "zone", SCHEDULE_ANYWAY, make_label_selector().obj(), None, None, None, ["foo"]
        )
        .spread_constraint(
            1, HOSTNAME, SCHEDULE_ANYWAY, make_label_selector().obj(), None, None, None, ["bar"]
        )
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod().name("p-b1").node("node-b").label("foo", "").label("bar", "").obj(),
            make_pod().name("p-y1").node("node-c").label("foo", "").obj(),
            make_pod().name("p-y2").node("node-c").label("bar", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label("zone", "zone2").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label("zone", "zone2").label(HOSTNAME, "node-d").obj(),
        ],
        want=[
            node_score(name="node-a", score=60),
            node_score(name="node-b", score=20),
            node_score(name="node-c", score=60),
            node_score(name="node-d", score=100),
        ],
        enable_match_label_keys=True,
    ),
    dict(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "")
        .label("baz", "")
        .spread_constraint(1, "zone", SCHEDULE_ANYWAY, foo_selector, None, None, None, None)
        .spread_constraint(1, HOSTNAME, SCHEDULE_ANYWAY, bar_selector, None, None, None, ["baz"])
        .obj(),
        existing_pods=[
            make_pod().name("p-a1").node("node-a").label("foo", "").obj(),
            make_pod()
            .name("p-b1")
            .node("node-b")
            .label("foo", "")
            .label("bar", "")
            .label("baz", "")
            .obj(),
            make_pod().name("p-c1").node("node-c").label("foo", "").obj(),
            make_pod().name("p-c2").node("node-c").label("bar", "").obj(),
            make_pod().name("p-d3").node("node-c").label("bar", "").label("baz", "").obj(),
        ],
        nodes=[
            make_node().name("node-a").label("zone", "zone1").label(HOSTNAME, "node-a").obj(),
            make_node().name("node-b").label("zone", "zone1").label(HOSTNAME, "node-b").obj(),
            make_node().name("node-c").label("zone", "zone2").label(HOSTNAME, "node-c").obj(),
            make_node().name("node-d").label("zone", "zone2").label(HOSTNAME, "node-d").obj(),
        ],
        want=[
            node_score(name="node-a", score=60),
            node_score(name="node-b", score=20),
            node_score(name="node-c", score=60),
            node_score(name="node-d", score=100),
        ],
        enable_match_label_keys=True,
    ),
]


@pytest.mark.parametrize("tc", cases(POD_TOPOLOGY_SPREAD_SCORE_CASES))
def test_pod_topology_spread_score(tc: dict[str, Any]) -> None:
    all_nodes = [*tc["nodes"], *(tc.get("failed_nodes") or [])]
    snapshot = new_snapshot(tc.get("existing_pods"), all_nodes)
    plugin = new_plugin(
        {"defaultingType": SYSTEM_DEFAULTING},
        snapshot,
        tc.get("objs"),
        node_inclusion_policy=tc.get("enable_node_inclusion_policy", False),
        match_label_keys=tc.get("enable_match_label_keys", False),
    )
    state = CycleState()
    nodes = [NodeInfo(node) for node in tc["nodes"]]
    assert plugin.pre_score(state, tc["pod"], nodes) is None
    scores = {}
    for node in tc["nodes"]:
        score = plugin.score(state, tc["pod"], snapshot.get(node.name))
        assert isinstance(score, int)
        scores[node.name] = score
    # The whole-column form, in a cycle of its own: the same raw score for every node.
    column_state = CycleState()
    assert plugin.pre_score(column_state, tc["pod"], nodes) is None
    column = plugin.score_nodes(column_state, tc["pod"], [snapshot.get(n.name) for n in nodes])
    assert column == list(scores.values())
    assert plugin.normalize_score(state, tc["pod"], scores) is None
    assert list(scores.items()) == tc["want"]


# === plugin_test.go ============================================================================

NODE_CHANGE_HINT_CASES = [
    dict(
        name="node updates label which matches topologyKey",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node().name("node-a").label("zone", "zone2").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="node that doesn't match topologySpreadConstraints updates non-related label",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("foo", "bar1").obj(),
        new_node=make_node().name("node-a").label("foo", "bar2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="node that match topologySpreadConstraints adds non-related label",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node()
        .name("node-a")
        .label("zone", "zone1")
        .label("node", "node1")
        .label("foo", "bar")
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").label("node", "node1").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="create node with non-related labels",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_node=make_node().name("node-a").label("foo", "bar").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="create node with related labels",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete node with non-related labels",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("foo", "bar").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete node with related labels",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add node with related labels that only match one of topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add node with related labels that match all topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").label("node", "node1").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node with related labels that only match one of topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update node with related labels that match all topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node().name("node-a").label("zone", "zone1").label("node", "node1").obj(),
        new_node=make_node().name("node-a").label("zone", "zone1").label("node", "node2").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node with different taints that match all topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node()
        .name("node-a")
        .label("zone", "zone1")
        .label("node", "node1")
        .taints([{"key": "aaa", "value": "bbb", "effect": "NoSchedule"}])
        .obj(),
        new_node=make_node()
        .name("node-a")
        .label("zone", "zone1")
        .label("node", "node1")
        .taints([{"key": "ccc", "value": "bbb", "effect": "NoSchedule"}])
        .obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="update node with different taints that only match one of topologySpreadConstraints",
        pod=make_pod()
        .name("p")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_node=make_node()
        .name("node-a")
        .label("node", "node1")
        .taints([{"key": "aaa", "value": "bbb", "effect": "NoSchedule"}])
        .obj(),
        new_node=make_node()
        .name("node-a")
        .label("node", "node1")
        .taints([{"key": "ccc", "value": "bbb", "effect": "NoSchedule"}])
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
]


@pytest.mark.parametrize("tc", cases(NODE_CHANGE_HINT_CASES))
def test_is_schedulable_after_node_change(tc: dict[str, Any]) -> None:
    plugin = new_plugin()
    hint = plugin.is_schedulable_after_node_change(
        tc["pod"], tc.get("old_node"), tc.get("new_node")
    )
    assert hint == tc["expected_hint"]


ASSIGNED_POD_CHANGE_HINT_CASES = [
    dict(
        name="add pod with labels match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="add un-scheduled pod",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_pod=make_pod().uid("p2").label("foo", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update un-scheduled pod",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_pod=make_pod().uid("p2").label("foo", "").obj(),
        old_pod=make_pod().uid("p2").label("bar", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete un-scheduled pod",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").label("foo", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add pod with different namespace",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_pod=make_pod()
        .uid("p2")
        .node("fake-node")
        .namespace("fake-namespace")
        .label("foo", "")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add pod with labels don't match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("bar", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete pod with labels that match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete nominated pod with labels that don't match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").nominated_node_name("fake-node").label("bar", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="delete nominated pod with labels that match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").nominated_node_name("fake-node").label("foo", "").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete pod with labels that don't match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("bar", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="update pod's non-related label",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar1").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add pod's label that matches topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="delete pod label that matches topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="change pod's label that matches topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "foo1").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "foo2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="change pod's label that doesn't match topologySpreadConstraints selector",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar1").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="add pod's label that matches topologySpreadConstraints selector with multi topologySpreadConstraints",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="change pod's label that doesn't match topologySpreadConstraints selector with multi topologySpreadConstraints",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("baz", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="change pod's label that match topologySpreadConstraints selector with multi topologySpreadConstraints",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "").obj(),
        new_pod=make_pod().uid("p2").node("fake-node").label("foo", "").label("bar", "bar2").obj(),
        expected_hint=QUEUE_SKIP,
    ),
]


@pytest.mark.parametrize("tc", cases(ASSIGNED_POD_CHANGE_HINT_CASES))
def test_is_schedulable_after_assigned_pod_change(tc: dict[str, Any]) -> None:
    plugin = new_plugin()
    hint = plugin.is_schedulable_after_assigned_pod_change(
        tc["pod"], tc.get("old_pod"), tc.get("new_pod")
    )
    assert hint == tc["expected_hint"]


TARGET_POD_CHANGE_HINT_CASES = [
    dict(
        name="the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has got a new toleration",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, HONOR, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p").name("p").label("foo", "").obj(),
        new_pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .obj(),
        expected_hint=QUEUE,
        enable_node_inclusion_policy_in_pod_topology_spread=True,
    ),
    dict(
        name="the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and has got a new toleration",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, IGNORE, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p").name("p").label("foo", "").obj(),
        new_pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .toleration("node.kubernetes.io/unschedulable")
        .obj(),
        expected_hint=QUEUE_SKIP,
    ),
    dict(
        name="the unschedulable Pod has topologySpreadConstraint and has got a new label matching the selector of the constraint",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, IGNORE, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p").name("p").obj(),
        new_pod=make_pod().uid("p").name("p").label("foo", "").obj(),
        expected_hint=QUEUE,
    ),
    dict(
        name="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
        pod=make_pod()
        .uid("p")
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, IGNORE, None)
        .spread_constraint(1, "node", DO_NOT_SCHEDULE, bar_selector, None, None, None, None)
        .obj(),
        old_pod=make_pod().uid("p").name("p").obj(),
        new_pod=make_pod().uid("p").name("p").label("unrelated", "").obj(),
        expected_hint=QUEUE_SKIP,
    ),
]


@pytest.mark.parametrize("tc", cases(TARGET_POD_CHANGE_HINT_CASES))
def test_is_schedulable_after_target_pod_change(tc: dict[str, Any]) -> None:
    plugin = new_plugin(
        node_inclusion_policy=tc.get("enable_node_inclusion_policy_in_pod_topology_spread", False)
    )
    hint = plugin.is_schedulable_after_target_pod_change(
        tc["pod"], tc.get("old_pod"), tc.get("new_pod")
    )
    assert hint == tc["expected_hint"]


# === args (validation_pluginargs_test.go's TestValidatePodTopologySpreadArgs) ==================

NODE_DNS = {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": DO_NOT_SCHEDULE}


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param(
            {
                "defaultConstraints": [
                    NODE_DNS,
                    {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": SCHEDULE_ANYWAY},
                ],
                "defaultingType": LIST_DEFAULTING,
            },
            [],
            id="valid config",
        ),
        pytest.param(
            {
                "defaultConstraints": [{**NODE_DNS, "maxSkew": -1}],
                "defaultingType": LIST_DEFAULTING,
            },
            ["defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"],
            id="maxSkew less than zero",
        ),
        pytest.param(
            {
                "defaultConstraints": [{**NODE_DNS, "topologyKey": ""}],
                "defaultingType": LIST_DEFAULTING,
            },
            ["defaultConstraints[0].topologyKey: Required value: can not be empty"],
            id="empty topology key",
        ),
        pytest.param(
            {
                "defaultConstraints": [{**NODE_DNS, "whenUnsatisfiable": ""}],
                "defaultingType": LIST_DEFAULTING,
            },
            ["defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
            id="whenUnsatisfiable is empty",
        ),
        pytest.param(
            {
                "defaultConstraints": [{**NODE_DNS, "whenUnsatisfiable": "unknown action"}],
                "defaultingType": LIST_DEFAULTING,
            },
            [
                'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": '
                'supported values: "DoNotSchedule", "ScheduleAnyway"'
            ],
            id="whenUnsatisfiable contains unsupported action",
        ),
        pytest.param(
            {
                "defaultConstraints": [NODE_DNS, {**NODE_DNS, "maxSkew": 2}],
                "defaultingType": LIST_DEFAULTING,
            },
            ['defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"'],
            id="duplicated constraints",
        ),
        pytest.param(
            {
                "defaultConstraints": [
                    {**NODE_DNS, "topologyKey": "key", "labelSelector": {"matchLabels": {"a": "b"}}}
                ],
                "defaultingType": LIST_DEFAULTING,
            },
            [
                "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a "
                "selector, as they deduced for each pod"
            ],
            id="label selector present",
        ),
        pytest.param(
            {"defaultingType": LIST_DEFAULTING}, [], id="list default constraints, no constraints"
        ),
        pytest.param({"defaultingType": SYSTEM_DEFAULTING}, [], id="system default constraints"),
        pytest.param(
            {"defaultingType": "unknown"},
            ['defaultingType: Unsupported value: "unknown": supported values: "System", "List"'],
            id="wrong constraints",
        ),
        pytest.param(
            {
                "defaultConstraints": [{**NODE_DNS, "topologyKey": "key"}],
                "defaultingType": SYSTEM_DEFAULTING,
            },
            ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
            id="system default constraints, but has constraints",
        ),
        pytest.param(
            {"defaultConstraints": [{**NODE_DNS, "topologyKey": "key"}]},
            ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty'],
            id="defaultingType defaults to System",
        ),
        pytest.param(
            {
                "defaultConstraints": [
                    {"maxSkew": 0, "topologyKey": "a b", "whenUnsatisfiable": "x", "zone": 1}
                ],
                "defaultingType": LIST_DEFAULTING,
                "hardPodAffinityWeight": 1,
            },
            [
                "hardPodAffinityWeight: unknown field; allowed: defaultConstraints, defaultingType",
                "defaultConstraints[0].zone: unknown field; allowed: maxSkew, topologyKey, "
                "whenUnsatisfiable, labelSelector, minDomains, nodeAffinityPolicy, "
                "nodeTaintsPolicy, matchLabelKeys",
                "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)",
                'defaultConstraints[0].topologyKey: Invalid value: "a b": name part must consist '
                "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "x": supported '
                'values: "DoNotSchedule", "ScheduleAnyway"',
            ],
            id="every error at once",
        ),
    ],
)
def test_args_validation(args: dict[str, Any], errors: list[str]) -> None:
    if not errors:
        PodTopologySpread(args, Handle("test", InMemoryBackend(), Snapshot))
        return
    with pytest.raises(ArgsError) as caught:
        PodTopologySpread(args, Handle("test", InMemoryBackend(), Snapshot))
    assert [str(e) for e in caught.value.errors] == errors


def test_system_defaulting_uses_kube_scheduler_defaults() -> None:
    plugin = new_plugin({})
    assert plugin.system_defaulted
    assert [dict(c) for c in plugin.default_constraints] == [
        {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
        {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
    ]


# === default constraints: the selector of the pod's Services and controller ====================

WEB = make_pod().name("web-1").label("app", "web").label("tier", "front")


@pytest.mark.parametrize(
    ("pod", "objs", "want"),
    [
        pytest.param(WEB.obj(), [], None, id="no service, no owner: no default constraint"),
        pytest.param(
            WEB.obj(),
            [{"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"app": "web"}}}],
            {"matchLabels": {"app": "web"}},
            id="a service selecting the pod",
        ),
        pytest.param(
            WEB.obj(),
            [{"kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"app": "db"}}}],
            None,
            id="a service selecting other pods",
        ),
        pytest.param(
            WEB.obj(),
            [
                {
                    "kind": "Service",
                    "metadata": {"name": "s", "namespace": "other"},
                    "spec": {"selector": {"app": "web"}},
                }
            ],
            None,
            id="a service of another namespace",
        ),
        pytest.param(
            WEB.obj(),
            [{"kind": "Service", "metadata": {"name": "s"}, "spec": {}}],
            None,
            id="a service without selector selects nothing",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .label("app", "web")
            .owner_reference("rs", gvk("apps/v1", "ReplicaSet"))
            .obj(),
            [
                {
                    "kind": "Service",
                    "metadata": {"name": "s"},
                    "spec": {"selector": {"app": "web"}},
                },
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {
                        "selector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
                    },
                },
            ],
            {
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "Exists"}],
            },
            id="service and replicaset selectors merged",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .label("app", "web")
            .owner_reference("ss", gvk("apps/v1", "StatefulSet"))
            .obj(),
            [
                {
                    "kind": "StatefulSet",
                    "metadata": {"name": "ss"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                }
            ],
            {"matchLabels": {"app": "web"}},
            id="statefulset selector",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .label("app", "web")
            .owner_reference("rc", gvk("v1", "ReplicationController"))
            .obj(),
            [
                {
                    "kind": "ReplicationController",
                    "metadata": {"name": "rc"},
                    "spec": {"selector": {"app": "web"}},
                }
            ],
            {"matchLabels": {"app": "web"}},
            id="replicationcontroller selector",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .label("app", "web")
            .owner_reference("rs", gvk("extensions/v1beta1", "ReplicaSet"))
            .obj(),
            [
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                }
            ],
            None,
            id="owner of an unsupported group version",
        ),
        pytest.param(
            make_pod()
            .name("p")
            .label("app", "web")
            .owner_reference("gone", gvk("apps/v1", "ReplicaSet"))
            .obj(),
            [
                {
                    "kind": "ReplicaSet",
                    "metadata": {"name": "rs"},
                    "spec": {"selector": {"matchLabels": {"app": "web"}}},
                }
            ],
            None,
            id="owner not found",
        ),
    ],
)
def test_default_constraints_take_the_workload_selector(
    pod: Pod, objs: list[dict[str, Any]], want: dict[str, Any] | None
) -> None:
    plugin = new_plugin({}, objs=objs)
    constraints = plugin.build_default_constraints(pod, SCHEDULE_ANYWAY)
    if want is None:
        assert constraints == []
        return
    selector = LabelSelector.parse(want)
    assert constraints == [
        SpreadConstraint(3, HOSTNAME, selector),
        SpreadConstraint(5, ZONE, selector),
    ]
    assert plugin.build_default_constraints(pod, DO_NOT_SCHEDULE) == []


def test_no_lister_is_made_without_default_constraints() -> None:
    assert new_plugin({"defaultingType": LIST_DEFAULTING}).listers == {}
    assert sorted(new_plugin({}).listers) == [
        "ReplicaSet",
        "ReplicationController",
        "Service",
        "StatefulSet",
    ]


# === events ====================================================================================


def test_events_to_register() -> None:
    events = [(e.event.resource, e.event.action) for e in new_plugin().events_to_register()]
    assert events == [
        (
            EventResource.ASSIGNED_POD,
            ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
        ),
        (
            EventResource.UNSCHEDULED_POD,
            ActionType.UPDATE_POD_TOLERATIONS | ActionType.UPDATE_POD_LABEL,
        ),
        (
            EventResource.NODE,
            ActionType.ADD
            | ActionType.DELETE
            | ActionType.UPDATE_NODE_LABEL
            | ActionType.UPDATE_NODE_TAINT,
        ),
    ]
    assert all(e.hint is not None for e in new_plugin().events_to_register())


# === cycle state, counts memory ================================================================

SPREAD_POD = (
    make_pod()
    .name("p")
    .label("foo", "")
    .spread_constraint(1, "zone", DO_NOT_SCHEDULE, foo_selector, None, None, None, None)
)
ZONE_NODES = [
    make_node().name("node-a").label("zone", "zone1").obj(),
    make_node().name("node-b").label("zone", "zone2").obj(),
]


def test_clone_is_independent() -> None:
    snapshot = new_snapshot([], ZONE_NODES)
    plugin = new_plugin(snapshot=snapshot)
    pod = SPREAD_POD.obj()
    state = run_pre_filter(plugin, pod, snapshot)
    copy = state.clone()
    added = make_pod().name("x").node("node-a").label("foo", "").obj()
    assert plugin.add_pod(copy, pod, added, snapshot.get("node-a")) is None
    assert copy.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 1, "zone2": 0}]
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 0, "zone2": 0}]
    assert plugin.filter(copy, pod, snapshot.get("node-a")) == Status.unschedulable(
        ERR_REASON_CONSTRAINTS_NOT_MATCH
    )
    assert plugin.filter(state, pod, snapshot.get("node-a")) is None


def test_pre_filter_extensions_are_hooks() -> None:
    snapshot = new_snapshot([], ZONE_NODES)
    plugin = new_plugin(snapshot=snapshot)
    pod = SPREAD_POD.obj()
    state = run_pre_filter(plugin, pod, snapshot)
    added = make_pod().name("x").node("node-b").label("foo", "").obj()
    assert plugin.pre_filter_add_pod(state, pod, added, snapshot.get("node-b")) is None
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 0, "zone2": 1}]
    assert plugin.pre_filter_remove_pod(state, pod, added, snapshot.get("node-b")) is None
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 0, "zone2": 0}]
    assert plugin.add_pod(CycleState(), pod, added, snapshot.get("node-b")) == Status.error(
        f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
    )


def test_counts_follow_the_pods_of_a_node() -> None:
    """Counts are remembered per NodeInfo; a node whose pods change is counted again."""
    snapshot = new_snapshot([], ZONE_NODES)
    plugin = new_plugin(snapshot=snapshot)
    pod = SPREAD_POD.obj()
    state = run_pre_filter(plugin, pod, snapshot)
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 0, "zone2": 0}]
    # The cache swaps a changed node's fresh copy in (a snapshot's NodeInfos never change in
    # place: the snapshot's journal lists the swapped positions).
    changed = snapshot.get("node-a").clone()
    changed.add_pod(make_pod().name("a1").node("node-a").label("foo", "").obj())
    snapshot._replace(changed)
    state = run_pre_filter(plugin, pod, snapshot)
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 1, "zone2": 0}]
    # A fresh NodeInfo object for the same node (the cache replaced it) is counted again.
    replaced = NodeInfo(
        ZONE_NODES[1], [make_pod().name("b1").node("node-b").label("foo", "").obj()]
    )
    replaced.generation = snapshot.get("node-b").generation
    snapshot._replace(replaced)
    state = run_pre_filter(plugin, pod, snapshot)
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"zone1": 1, "zone2": 1}]


def test_pre_filter_reports_a_bad_selector() -> None:
    pod = (
        make_pod()
        .name("p")
        .spread_constraint(
            1, "zone", DO_NOT_SCHEDULE, {"matchLabels": {"a": "b c"}}, None, None, None, None
        )
        .obj()
    )
    status = new_plugin().pre_filter(CycleState(), pod, [])
    assert status is not None and status.code is Code.ERROR
    assert status.message().startswith(
        "get constraints from pod: obtaining pod's hard topology spread constraints: "
        'matchLabels[a]: Invalid value: "b c"'
    )


def test_filter_reason_strings() -> None:
    assert (
        ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    )
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )


# === end to end ================================================================================


#: The wrappers' pods name no scheduler, so they are the default scheduler's.
SCHEDULER = {"scheduler_name": "default-scheduler"}


def profile(args: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}
    if args is not None:
        body["pluginConfig"] = [{"name": NAME, "args": args}]
    return body


def web_pod(name: str, node: str = "") -> Pod:
    builder = (
        make_pod()
        .name(name)
        .label("app", "web")
        .spread_constraint(
            1, "zone", DO_NOT_SCHEDULE, {"matchLabels": {"app": "web"}}, 3, None, None, None
        )
    )
    if node:
        builder = builder.node(node)
    return builder.obj()


def test_pods_spread_evenly_across_zones() -> None:
    nodes = [make_node().name(f"n-{z}").label("zone", z).obj() for z in ("a", "b", "c")]
    pods = [web_pod(f"web-{i}") for i in range(6)]
    scheduler, backend = make_scheduler(
        {NAME: PodTopologySpread}, profile(), nodes, pods, **SCHEDULER
    )
    run_until_idle(scheduler)
    placed = [backend.pod("default", f"web-{i}").node_name for i in range(6)]
    assert sorted(placed) == ["n-a", "n-a", "n-b", "n-b", "n-c", "n-c"]


def test_rejected_pod_is_explained_and_retried_when_a_domain_appears() -> None:
    clock = [0.0]
    nodes = [
        make_node().name("n-a").label("zone", "a").obj(),
        make_node().name("n-b").label("zone", "b").obj(),
        make_node().name("n-none").obj(),
    ]
    bound = [web_pod("web-a", "n-a"), web_pod("web-b", "n-b")]
    scheduler, backend = make_scheduler(
        {NAME: PodTopologySpread},
        profile(),
        nodes,
        [*bound, web_pod("web-new")],
        clock=lambda: clock[0],
        **SCHEDULER,
    )
    run_until_idle(scheduler)
    # minDomains 3 with 2 zones: the global minimum is 0, so a zone with one pod is full.
    assert backend.conditions["default/web-new"][1] == (
        "0/3 nodes are available: "
        f"1 {ERR_REASON_NODE_LABEL_NOT_MATCH}, 2 {ERR_REASON_CONSTRAINTS_NOT_MATCH}."
    )
    backend.add_node(make_node().name("n-x").label("team", "x").obj())
    assert scheduler.queue.pending()["unschedulable"] == 1  # no zone label: the hint skips
    backend.add_node(make_node().name("n-c").label("zone", "c").obj())
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 10.0
    run_until_idle(scheduler)
    assert backend.pod("default", "web-new").node_name == "n-c"


def test_system_defaults_spread_a_service_over_hostnames() -> None:
    nodes = [make_node().name(n).label(HOSTNAME, n).obj() for n in ("busy", "idle")]
    busy = [make_pod().name(f"b{i}").label("app", "web").node("busy").obj() for i in range(4)]
    scheduler, backend = make_scheduler(
        {NAME: PodTopologySpread},
        profile({}),
        nodes,
        [*busy, *(make_pod().name(f"new-{i}").label("app", "web").obj() for i in range(3))],
        start=False,
        **SCHEDULER,
    )
    backend.objects["Service"] = [
        {"metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}}
    ]
    scheduler.start()
    run_until_idle(scheduler)
    assert [backend.pod("default", f"new-{i}").node_name for i in range(3)] == ["idle"] * 3
