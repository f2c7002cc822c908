"""The medium-scale mode's own machinery, without a cluster: the sampling rule, the replay
comparison, the whole-run invariants, the generator, and the replay against a stand-in for
kube-scheduler that samples (kubesched with the profile as it is)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
from invariants import anti_affinity_violations, over_capacity, spread_violations
from medium_scenarios import FILLER_CPU, SMALL_CLASS, WORKLOADS, generate_medium
from parity_compare import ERROR, MESSAGE, NODE, SCHEDULED, KubeschedOutcome, Outcome
from parity_kubesched import kubesched_config, kubesched_outcome
from parity_reference import in_namespaces
from parity_scenarios import HOSTNAME_LABEL, OWN_NAMESPACE, SCHEDULER_NAMES, ZONE, Scenario
from replay import (
    CHECK_FEASIBLE,
    CHECK_MESSAGE,
    CHECK_TOP_TIE,
    CHECK_TOP_UNIQUE,
    FEASIBLE,
    MediumStats,
    compare_replay,
    full_evaluation_configs,
    sampled,
)
from whole_run import WholeRun

from kubesched.api.objects import Node, Pod
from kubesched.engine.algorithm import num_feasible_nodes_to_find
from kubesched.framework.registry import Registry

# -- the sampling rule ----------------------------------------------------------------------------


# (nodes, percentageOfNodesToScore, kube-scheduler's numFeasibleNodesToFind), worked out by hand
# from pkg/scheduler/schedule_one.go v1.37.2: below 100 nodes all; adaptive 50 - nodes/125
# percent, at least 5; at least 100 nodes.
@pytest.mark.parametrize(
    ("nodes", "percentage", "expected"),
    [
        (1, None, 1),
        (99, None, 99),
        (99, 10, 99),
        (100, None, 100),
        (120, None, 100),
        (200, None, 100),  # 49 % = 98
        (300, None, 144),  # 48 %
        (400, None, 188),  # 47 %
        (500, None, 230),  # 46 %
        (1000, None, 420),  # 42 %
        (5000, None, 500),  # 10 %
        (6000, None, 300),  # 2 % -> 5 %
        (300, 10, 100),  # 30 -> at least 100
        (300, 50, 150),
        (300, 100, 300),
        (500, 0, 230),  # 0 is adaptive too
    ],
    ids=lambda v: str(v),
)
def test_kubesched_finds_as_many_feasible_nodes_as_kube_scheduler(nodes, percentage, expected):
    assert num_feasible_nodes_to_find(nodes, percentage) == expected


@pytest.mark.parametrize(
    ("feasible", "nodes", "expected"),
    [(100, 120, False), (101, 120, True), (99, 99, False), (144, 300, False), (145, 300, True)],
)
def test_kube_scheduler_samples_only_past_its_limit(feasible, nodes, expected):
    # length > numNodesToFind cancels the search: exactly the limit is still every node.
    assert sampled(feasible, nodes) is expected


# -- the replay comparison ------------------------------------------------------------------------

_MSG = (
    "0/120 nodes are available: 20 Insufficient cpu, "
    "100 node(s) didn't match Pod's node affinity/selector."
)


def _ours(node: str | None, feasible: int = 0, totals: dict[str, int] | None = None, **kw: Any):
    names = [f"n{i}" for i in range(feasible)]
    return KubeschedOutcome(node=node, feasible=names, totals=totals or {}, **kw)


@pytest.mark.parametrize(
    ("reference", "kubesched", "check", "mismatch"),
    [
        pytest.param(
            Outcome(message=_MSG), _ours(None, message=_MSG), CHECK_MESSAGE, "", id="same-message"
        ),
        pytest.param(
            Outcome(message=_MSG),
            _ours(None, message=_MSG.replace("20 Insufficient", "21 Insufficient")),
            CHECK_MESSAGE,
            MESSAGE,
            id="a-count-differs",
        ),
        pytest.param(
            Outcome(node="n1"), _ours(None, message=_MSG), "", SCHEDULED, id="bound-vs-not"
        ),
        pytest.param(
            Outcome(node="x"), _ours("n0", feasible=3), CHECK_FEASIBLE, FEASIBLE, id="infeasible"
        ),
        pytest.param(
            Outcome(node="n1"),
            _ours("n0", 3, {"n0": 300, "n1": 290, "n2": 10}),
            "",
            NODE,
            id="not-sampled-not-top",
        ),
        pytest.param(
            Outcome(node="n1"),
            _ours("n0", 3, {"n0": 300, "n1": 300, "n2": 10}),
            CHECK_TOP_TIE,
            "",
            id="not-sampled-tie",
        ),
        pytest.param(
            Outcome(node="n0"),
            _ours("n0", 100, {"n0": 300}),
            CHECK_TOP_UNIQUE,
            "",
            id="at-the-limit-still-every-node",
        ),
        pytest.param(
            Outcome(node="n7"),
            _ours("n0", 101, {"n0": 300, "n7": 12}),
            CHECK_FEASIBLE,
            "",
            id="sampled-feasible-is-enough",
        ),
        pytest.param(Outcome(error="no decision"), _ours("n0", 1), "", ERROR, id="error"),
    ],
)
def test_replay_rules(reference, kubesched, check, mismatch):
    result = compare_replay("p", reference, kubesched, nodes=120)
    assert (result.mismatch, result.ok) == (mismatch, not mismatch)
    if mismatch != NODE:
        assert result.check == check
    else:
        assert result.check == CHECK_TOP_UNIQUE  # the top is n0 alone
        assert "n0: " in result.describe() and "n1: " in result.describe()


def test_the_tally_counts_checks_and_names_each_difference():
    stats = MediumStats()
    ok = compare_replay("a", Outcome(message=_MSG), _ours(None, message=_MSG), 120)
    bad = compare_replay("b", Outcome(node="x"), _ours("n0", 2), 120)
    stats.add("medium-0-0", [ok, bad])
    (line,) = stats.summary()
    assert "1/2 pods agree" in line and "medium-0-0 b: node feasible" in line


def test_full_evaluation_is_the_same_profile_scoring_every_node():
    registry = Registry.installed()
    for name, config in full_evaluation_configs(registry).items():
        (profile,) = config.profiles
        (same,) = kubesched_config(registry, name).profiles
        assert profile.scheduler_name == same.scheduler_name == name
        assert profile.percentage_of_nodes_to_score == 100
        assert same.percentage_of_nodes_to_score in (None, 0)
        assert profile.plugins == same.plugins and profile.plugin_args == same.plugin_args


# -- invariants -----------------------------------------------------------------------------------


def _node(name: str, zone: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    node_labels = {HOSTNAME_LABEL: name, ZONE: zone, **labels}
    resources = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    return {"metadata": {"name": name, "labels": node_labels}, "status": {"allocatable": resources}}


def _pod(name: str, app: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    containers = [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]
    return {
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": containers, **spec},
    }


def _bound(pod: dict[str, Any], node: str) -> dict[str, Any]:
    return {**pod, "spec": {**pod["spec"], "nodeName": node}}


_SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
]
_NODES = [_node("a1", "a"), _node("a2", "a"), _node("b1", "b"), _node("c1", "c", disk="ssd")]


@pytest.mark.parametrize(
    ("placement", "broken"),
    [
        ({"w0": "a1", "w1": "b1", "w2": "c1"}, False),
        ({"w0": "a1", "w1": "a2", "w2": "b1"}, True),  # c has 0, a has 2
        ({"w0": "a1", "w1": "a2", "w2": None}, True),  # an empty domain counts
        ({"w0": "a1", "w1": "b1", "w2": None}, False),
    ],
)
def test_spread_skew_over_every_domain(placement, broken):
    pods = [_pod(f"w{i}", "web", topologySpreadConstraints=_SPREAD) for i in range(3)]
    problems = spread_violations(Scenario("s", _NODES, [], pods), placement)
    assert bool(problems) is broken, problems


def test_spread_domains_are_those_the_pods_node_selector_admits():
    pods = [
        _pod(f"w{i}", "web", topologySpreadConstraints=_SPREAD, nodeSelector={"disk": "ssd"})
        for i in range(2)
    ]
    # Only zone c has an ssd node: both there is no skew at all.
    assert spread_violations(Scenario("s", _NODES, [], pods), {"w0": "c1", "w1": "c1"}) == []


def test_required_anti_affinity_either_way_round():
    term = {"labelSelector": {"matchLabels": {"app": "front"}}, "topologyKey": HOSTNAME_LABEL}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pods = [_pod("f0", "front", affinity=anti), _pod("f1", "front", affinity=anti)]
    scenario = Scenario("s", _NODES, [_bound(_pod("old", "front"), "a1")], pods)
    assert anti_affinity_violations(scenario, {"f0": "a2", "f1": "b1"}) == []
    problems = anti_affinity_violations(scenario, {"f0": "a1", "f1": "b1"})
    assert problems == [f"f0 and old share {HOSTNAME_LABEL}=a1"]


def test_capacity_counts_bound_and_placed_pods():
    bound = {
        **_pod("old", "x", cpu="3"),
        "spec": {**_pod("old", "x", cpu="3")["spec"], "nodeName": "a1"},
    }
    scenario = Scenario(
        "s", _NODES, [bound], [_pod("p0", "y", cpu="500m"), _pod("p1", "y", cpu="1")]
    )
    assert over_capacity(scenario, {"p0": "a1", "p1": "a2"}) == []
    assert over_capacity(scenario, {"p0": "a1", "p1": "a1"}) == ["a1: cpu 4500 > 4000"]


def test_a_whole_run_compares_counts_per_workload():
    pods = [_pod("w0", "web"), _pod("w1", "web"), _pod("f0", "front")]
    run = WholeRun(Scenario("s", _NODES, [], pods))
    run.reference = {"w0": "a1", "w1": "a2", "f0": None}
    run.kubesched = {"w0": "b1", "w1": None, "f0": "c1"}
    (problem,) = run.problems()
    assert problem.startswith("bound per workload: kube-scheduler {'web': 2, 'front': 0}")
    run.kubesched = {"w0": "b1", "w1": "c1", "f0": None}
    assert run.problems() == []


# -- the generator --------------------------------------------------------------------------------


def test_a_medium_scenario_depends_on_its_arguments_only():
    assert generate_medium(0, 1, 120, 30) == generate_medium(0, 1, 120, 30)
    assert generate_medium(0, 1, 120, 30) != generate_medium(0, 2, 120, 30)


@pytest.mark.parametrize(("nodes", "pods"), [(100, 50), (120, 100), (500, 300)])
def test_medium_scenarios_have_the_shape_the_comparisons_rely_on(nodes, pods):
    scenario = generate_medium(3, 0, nodes, pods)
    assert len(scenario.nodes) == nodes and len(scenario.pods) == pods
    small = [n for n in scenario.nodes if SMALL_CLASS in n["metadata"]["labels"]]
    assert len(small) == max(3, nodes // 25)
    for node in scenario.nodes:
        Node(node)
    for pod in [*scenario.bound_pods, *scenario.pods]:
        Pod(pod)
        assert "priorityClassName" not in pod["spec"]  # nothing to preempt
        assert pod["metadata"]["labels"]["app"] not in ("web", "front") or pod in scenario.pods
    assert {p["metadata"]["labels"]["app"] for p in scenario.pods} <= set(WORKLOADS)
    assert {p["spec"]["schedulerName"] for p in scenario.pods} <= set(SCHEDULER_NAMES)
    fillers = [p for p in scenario.pods if p["metadata"]["labels"]["app"] == "filler"]
    for pod in fillers:
        assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == FILLER_CPU


# -- the replay against a stand-in that samples ---------------------------------------------------


def _stored(manifest: dict[str, Any], uid: str) -> dict[str, Any]:
    """A manifest as the apiserver would store it, in the run namespace ``own``."""
    pod = in_namespaces(manifest, {OWN_NAMESPACE: "own", "other": "other"})
    pod["metadata"]["uid"] = uid
    return pod


def test_replay_agrees_with_a_reference_that_samples():
    """kubesched with the profile as it is (sampling the first 100 feasible of 150 nodes)
    stands in for kube-scheduler: every pod must agree by the replay rules with kubesched
    scoring every node, and some pods must have been sampled (else this proves nothing)."""
    registry = Registry.installed()
    scenario = generate_medium(0, 0, 150, 80)
    stray = [p for p in scenario.pods[20:] if p["metadata"]["labels"]["app"] == "stray"]
    scenario = replace(scenario, pods=scenario.pods[:20] + stray[:2])
    sampling = {name: kubesched_config(registry, name) for name in SCHEDULER_NAMES}
    every_node = full_evaluation_configs(registry)
    bound = [_stored(p, f"b{i}") for i, p in enumerate(scenario.bound_pods)]
    objects = {"ReplicaSet": [copy.deepcopy(o) for o in scenario.objects]}
    for o in objects["ReplicaSet"]:
        o["metadata"]["namespace"] = "own"
    checks = []
    for i, manifest in enumerate(scenario.pods):
        pod = _stored(manifest, f"p{i}")
        name = pod["spec"]["schedulerName"]
        reference = kubesched_outcome(
            scenario.nodes, bound, pod, sampling[name], registry, str, objects
        )
        ours = kubesched_outcome(
            scenario.nodes, bound, pod, every_node[name], registry, str, objects
        )
        result = compare_replay(manifest["metadata"]["name"], reference, ours, len(scenario.nodes))
        assert result.ok, result.describe()
        checks.append(result.check)
        if reference.node is not None:
            bound.append(_bound(pod, reference.node))
    assert CHECK_FEASIBLE in checks and CHECK_MESSAGE in checks
    assert {CHECK_TOP_UNIQUE, CHECK_TOP_TIE} & set(checks)


def test_a_host_port_has_one_holder_per_node():
    pods = [_pod(f"p{i}", "y", cpu="100m") for i in range(2)]
    for pod in pods:
        pod["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
    scenario = Scenario("s", _NODES, [], pods)
    assert over_capacity(scenario, {"p0": "a1", "p1": "a2"}) == []
    assert over_capacity(scenario, {"p0": "a1", "p1": "a1"}) == [
        "a1: host port 8080/TCP held 2 times"
    ]
