"""The suite's own machinery, without a cluster: generation, renaming, comparison, the kubesched
side, and shrinking (against a stand-in for the reference scheduler)."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest
import yaml
from parity_compare import (
    DEVICES,
    MESSAGE,
    NODE,
    NOMINATED,
    PREEMPTION,
    SCHEDULED,
    VOLUMES,
    Comparison,
    KubeschedOutcome,
    Outcome,
    compare,
)
from parity_kubesched import claims_of, kubesched_config, kubesched_outcome
from parity_profile import PROFILE
from parity_reference import _OBJECT_PATHS, ScenarioRun, in_namespaces
from parity_scenarios import (
    HOSTNAME_LABEL,
    NON_PREEMPTING_CLASSES,
    OTHER_NAMESPACE,
    OWN_NAMESPACE,
    PRIORITY_CLASSES,
    SCHEDULER_NAME,
    SCHEDULER_NAMES,
    ZONE,
    Scenario,
    generate,
    reductions,
    renamed,
)
from parity_shrink import mismatch_report, pinned, shrink

from kubesched.api.objects import Node, Pod
from kubesched.framework.registry import Registry

# -- generation -----------------------------------------------------------------------------------


def test_a_scenario_depends_on_seed_and_index_only():
    assert generate(7, 3) == generate(7, 3)
    assert generate(7, 3) != generate(8, 3)
    assert generate(7, 3) != generate(7, 4)


@pytest.mark.parametrize("index", range(300))
def test_generated_scenarios_are_small_valid_and_ordered(index: int):
    scenario = generate(0, index)
    assert 2 <= len(scenario.nodes) <= 8
    assert 0 <= len(scenario.bound_pods) <= 6
    assert 1 <= len(scenario.pods) <= 8
    names = scenario.node_names
    for node in scenario.nodes:
        assert node["metadata"]["labels"][HOSTNAME_LABEL] == node["metadata"]["name"]
        Node(node)  # readable
    held: set[tuple[str, str, int]] = set()
    for pod in scenario.bound_pods:
        assert pod["spec"]["nodeName"] in names
        Pod(pod)
        for container in pod["spec"]["containers"]:
            for port in container.get("ports", ()):
                key = (pod["spec"]["nodeName"], port.get("protocol", "TCP"), port["hostPort"])
                assert key not in held  # a kubelet would refuse a second holder
                held.add(key)
    priorities = []
    for pod in scenario.pods:
        assert pod["spec"]["schedulerName"] in SCHEDULER_NAMES
        assert "nodeName" not in pod["spec"]
        Pod(pod)
        priorities.append(PRIORITY_CLASSES.get(pod["spec"].get("priorityClassName", ""), 0))
        ports = [
            (p.get("hostIP", ""), p.get("protocol", "TCP"), p["hostPort"])
            for c in [*pod["spec"].get("initContainers", ()), *pod["spec"]["containers"]]
            for p in c.get("ports", ())
        ]
        assert len(ports) == len(set(ports))  # the apiserver refuses a host port twice
    for obj in scenario.objects:
        assert obj["kind"] in _OBJECT_PATHS
        assert "namespace" not in obj["metadata"]  # the scenario's own namespace
    for pod in [*scenario.bound_pods, *scenario.pods]:
        assert pod["metadata"].get("namespace", OWN_NAMESPACE) in (OWN_NAMESPACE, OTHER_NAMESPACE)
        assert pod["spec"]["terminationGracePeriodSeconds"] == 0  # victims go at once
        pairs = [(c["topologyKey"], c["whenUnsatisfiable"]) for c in _spread(pod)]
        assert len(pairs) == len(set(pairs))  # the apiserver refuses a duplicate pair
        for c in _spread(pod):
            assert "minDomains" not in c or c["whenUnsatisfiable"] == "DoNotSchedule"
            assert "matchLabelKeys" not in c or "labelSelector" in c


def test_pods_mostly_come_in_priority_order_and_sometimes_not():
    """PrioritySort's order, except in some scenarios so that a later pod may preempt one
    created before it."""
    orders = []
    for index in range(200):
        priorities = [
            PRIORITY_CLASSES.get(p["spec"].get("priorityClassName", ""), 0)
            for p in generate(0, index).pods
        ]
        orders.append(priorities == sorted(priorities, reverse=True))
    assert 0.6 < sum(orders) / len(orders) < 0.95


def _spread(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return list(pod["spec"].get("topologySpreadConstraints", ()))


def _pod_terms(pod: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, required or preferred, term) for every pod (anti-)affinity term."""
    affinity = pod["spec"].get("affinity", {})
    out = []
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind, {})
        for term in terms.get("requiredDuringSchedulingIgnoredDuringExecution", ()):
            out.append((kind, "required", term))
        for weighted in terms.get("preferredDuringSchedulingIgnoredDuringExecution", ()):
            out.append((kind, "preferred", weighted["podAffinityTerm"]))
    return out


def test_scenarios_cover_every_feature_the_brief_names():
    scenarios = [generate(0, i) for i in range(200)]
    nodes = [n for s in scenarios for n in s.nodes]
    pods = [p for s in scenarios for p in s.pods]
    effects = {t["effect"] for n in nodes for t in n.get("spec", {}).get("taints", ())}
    assert effects == {"NoSchedule", "PreferNoSchedule", "NoExecute"}
    assert any(n.get("spec", {}).get("unschedulable") for n in nodes)
    assert any(n["status"].get("images") for n in nodes)
    operators = {
        expression["operator"]
        for p in pods
        for term in _terms(p)
        for expression in term.get("matchExpressions", ())
    }
    assert operators == {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
    assert any("matchFields" in term for p in pods for term in _terms(p))
    assert any(p["spec"].get("tolerations") for p in pods)
    assert any(p["spec"].get("nodeSelector") for p in pods)
    assert any("restartPolicy" in c for p in pods for c in p["spec"].get("initContainers", ()))
    assert any("ports" in c for p in pods for c in p["spec"]["containers"])
    assert any("resources" in p["spec"] for p in pods)  # pod-level resources
    assert any(p["spec"].get("priorityClassName") for p in pods)
    assert any(p["spec"].get("schedulingGates") for p in pods)
    assert any(p["spec"].get("runtimeClassName") for p in pods)
    assert any(s.bound_pods for s in scenarios)
    assert {p["spec"]["schedulerName"] for p in pods} == set(SCHEDULER_NAMES)
    # Spreading: every field PodTopologySpread reads.
    constraints = [c for p in pods for c in _spread(p)]
    assert {c["topologyKey"] for c in constraints} >= {ZONE, HOSTNAME_LABEL}
    assert {c["whenUnsatisfiable"] for c in constraints} == {"DoNotSchedule", "ScheduleAnyway"}
    assert {c["maxSkew"] for c in constraints} == {1, 2, 3}
    for key in ("minDomains", "matchLabelKeys"):
        assert any(key in c for c in constraints)
    for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        assert {c.get(key) for c in constraints} == {None, "Honor", "Ignore"}
    assert any("labelSelector" not in c for c in constraints)  # selects nothing
    # Owners and the objects behind the default spreading, and PodDisruptionBudgets.
    objects = [o for s in scenarios for o in s.objects]
    assert {o["kind"] for o in objects} == {
        "ReplicaSet",
        "Service",
        "PodDisruptionBudget",
        *("StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CSINode"),
        *("CSIStorageCapacity", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"),
    }
    _assert_storage_and_devices(objects, [*pods, *(b for s in scenarios for b in s.bound_pods)])
    budgets = [o for o in objects if o["kind"] == "PodDisruptionBudget"]
    assert {b["status"]["disruptionsAllowed"] for b in budgets} == {0, 1}
    assert any(p["metadata"].get("ownerReferences") for p in pods)
    # Pod affinity and anti-affinity, required and preferred, across namespaces.
    terms = [
        t for p in [*pods, *(b for s in scenarios for b in s.bound_pods)] for t in _pod_terms(p)
    ]
    assert {(kind, when) for kind, when, _ in terms} == {
        (kind, when)
        for kind in ("podAffinity", "podAntiAffinity")
        for when in ("required", "preferred")
    }
    assert {t["topologyKey"] for _, _, t in terms} == {ZONE, HOSTNAME_LABEL}
    assert any(OTHER_NAMESPACE in t.get("namespaces", ()) for _, _, t in terms)
    assert any(t.get("namespaceSelector") == {} for _, _, t in terms)
    assert any(t.get("namespaceSelector", {}).get("matchLabels") for _, _, t in terms)
    bound = [b for s in scenarios for b in s.bound_pods]
    assert any(b["metadata"].get("namespace") == OTHER_NAMESPACE for b in bound)
    # Priorities that make preemption worthwhile, and one that may not preempt.
    assert {p["spec"].get("priorityClassName") for p in pods} >= set(PRIORITY_CLASSES)
    assert any(b["spec"].get("priorityClassName") for b in bound)
    assert NON_PREEMPTING_CLASSES <= set(PRIORITY_CLASSES)


def _assert_storage_and_devices(objects: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
    """What the volume plugins and DynamicResources read, all of it in 200 scenarios."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objects:
        by_kind.setdefault(o["kind"], []).append(o)
    classes = by_kind["StorageClass"]
    assert {c["volumeBindingMode"] for c in classes} == {"Immediate", "WaitForFirstConsumer"}
    assert any("allowedTopologies" in c for c in classes)
    assert any("allowedTopologies" not in c for c in classes)
    volumes = by_kind["PersistentVolume"]
    keys = {
        e["key"]
        for v in volumes
        for t in v["spec"].get("nodeAffinity", {}).get("required", {}).get("nodeSelectorTerms", ())
        for e in t["matchExpressions"]
    }
    assert keys == {ZONE, HOSTNAME_LABEL}
    assert any(ZONE in v["metadata"].get("labels", {}) for v in volumes)
    claims = by_kind["PersistentVolumeClaim"]
    assert any(c["spec"].get("volumeName") for c in claims)  # bound
    assert any(not c["spec"].get("volumeName") for c in claims)  # unbound
    assert any(c["spec"]["accessModes"] == ["ReadWriteOncePod"] for c in claims)
    assert any(
        d.get("allocatable", {}).get("count")
        for n in by_kind["CSINode"]
        for d in n["spec"]["drivers"]
    )
    assert by_kind["CSIStorageCapacity"]
    volume_users = [p for p in pods if p["spec"].get("volumes")]
    assert any(p["spec"].get("nodeName") for p in volume_users)  # bound pods use claims too
    assert any("ephemeral" in v for p in volume_users for v in p["spec"]["volumes"])
    slices = by_kind["ResourceSlice"]
    assert len({s["spec"]["driver"] for s in slices}) == 2
    assert len({(s["spec"]["driver"], s["spec"]["pool"]["name"]) for s in slices}) > 2
    assert any(d.get("capacity") for s in slices for d in s["spec"]["devices"])
    requests = [r for c in by_kind["ResourceClaim"] for r in c["spec"]["devices"]["requests"]]
    assert any("firstAvailable" in r for r in requests)
    assert any(r.get("exactly", {}).get("allocationMode") == "All" for r in requests)
    assert any(r.get("exactly", {}).get("selectors") for r in requests)
    assert any(c["spec"]["devices"].get("constraints") for c in by_kind["ResourceClaim"])
    entries = [e for p in pods for e in p["spec"].get("resourceClaims", ())]
    assert any("resourceClaimName" in e for e in entries)
    assert any("resourceClaimTemplateName" in e for e in entries)


def _terms(pod: dict[str, Any]) -> list[dict[str, Any]]:
    affinity = pod["spec"].get("affinity", {}).get("nodeAffinity", {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution", ())
    return [*required.get("nodeSelectorTerms", ()), *(p["preference"] for p in preferred)]


def test_renaming_reaches_every_reference_to_a_node_and_nothing_else():
    scenario = Scenario(
        "s",
        nodes=[_node("node-0", {"zone": "node-0-zone"})],
        bound_pods=[{"metadata": {"name": "b"}, "spec": {"nodeName": "node-0"}}],
        pods=[_pod("p", affinity_values=["node-0", "node-1"])],
    )
    real = renamed(scenario, "r7-")
    assert real.node_names == ["r7-node-0"]
    assert real.nodes[0]["metadata"]["labels"] == {
        HOSTNAME_LABEL: "r7-node-0",
        "zone": "node-0-zone",
    }
    assert real.bound_pods[0]["spec"]["nodeName"] == "r7-node-0"
    term = _terms(real.pods[0])[0]
    assert term["matchFields"][0]["values"] == ["r7-node-0"]
    assert term["matchExpressions"][0]["values"] == ["r7-node-0", "node-1"]  # not a node here
    assert scenario.node_names == ["node-0"]  # the original is untouched


def test_renaming_reaches_the_names_of_cluster_scoped_storage_and_devices():
    objects = [
        {"kind": "StorageClass", "metadata": {"name": "sc-wffc"}},
        {"kind": "PersistentVolume", "metadata": {"name": "pv-0"}, "spec": {"claimRef": {}}},
        {"kind": "PersistentVolumeClaim", "metadata": {"name": "claim-0"}, "spec": {}},
        {"kind": "ResourceSlice", "metadata": {"name": "node-0-gpu"}, "spec": {}},
    ]
    objects[1]["spec"] = {"storageClassName": "sc-wffc"}
    objects[2]["spec"] = {"storageClassName": "sc-wffc", "volumeName": "pv-0"}
    objects[3]["spec"] = {"nodeName": "node-0", "pool": {"name": "node-0"}}
    real = renamed(Scenario("s", nodes=[_node("node-0", {})], objects=objects), "r2-")
    names = [o["metadata"]["name"] for o in real.objects]
    assert names == ["r2-sc-wffc", "r2-pv-0", "claim-0", "r2-node-0-gpu"]  # claims: namespaced
    assert real.objects[1]["spec"]["storageClassName"] == "r2-sc-wffc"
    assert real.objects[2]["spec"] == {"storageClassName": "r2-sc-wffc", "volumeName": "r2-pv-0"}
    assert real.objects[3]["spec"] == {"nodeName": "r2-node-0", "pool": {"name": "r2-node-0"}}


def test_claims_of_reads_volumes_and_devices_of_the_pods_claims_only():
    pod = {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "volumes": [
                {"name": "a", "persistentVolumeClaim": {"claimName": "c"}},
                {"name": "e", "ephemeral": {"volumeClaimTemplate": {}}},
            ],
            "resourceClaims": [{"name": "g", "resourceClaimName": "d"}],
        },
    }
    pvcs = [
        {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"volumeName": "r1-pv-0"}},
        {"metadata": {"name": "c", "namespace": "other"}, "spec": {"volumeName": "r1-pv-9"}},
    ]
    result = {"request": "gpu", "driver": "gpu.parity.test", "pool": "r1-node-0", "device": "g-0"}
    claims = [
        {
            "metadata": {"name": "d", "namespace": "ns"},
            "status": {"allocation": {"devices": {"results": [result]}}},
        }
    ]
    volumes, devices = claims_of(pod, pvcs, claims, lambda n: n.removeprefix("r1-"))
    assert volumes == {"c": "pv-0", "p-e": ""}  # the ephemeral volume's claim does not exist
    assert devices == {"d": ("gpu=gpu.parity.test/node-0/g-0",)}


# -- comparison -----------------------------------------------------------------------------------


def _preempting(
    nominated: str, final: str | None, *victims: str, kubesched: bool = False
) -> Outcome:
    kind = KubeschedOutcome if kubesched else Outcome
    return kind(message="0/2 x.", nominated=nominated, final_node=final, victims=victims)


@pytest.mark.parametrize(
    ("reference", "kubesched", "mismatch", "node_check"),
    [
        (Outcome(node="a"), KubeschedOutcome(node="a", feasible=["a"]), "", "unique"),
        (
            Outcome(node="b"),
            KubeschedOutcome(node="a", feasible=["a", "b", "c"], totals={"a": 5, "b": 5, "c": 1}),
            "",
            "tie",
        ),
        (
            Outcome(node="c"),
            KubeschedOutcome(node="a", feasible=["a", "b", "c"], totals={"a": 5, "b": 5, "c": 1}),
            NODE,
            "tie",
        ),
        (
            Outcome(node="b"),
            KubeschedOutcome(node="a", feasible=["a", "b"], totals={"a": 6, "b": 5}),
            NODE,
            "unique",
        ),
        (Outcome(message="0/2 x."), KubeschedOutcome(message="0/2 x."), "", ""),
        (Outcome(message="0/2 x."), KubeschedOutcome(message="0/2 y."), MESSAGE, ""),
        (Outcome(node="a"), KubeschedOutcome(message="0/2 y."), SCHEDULED, ""),
        (Outcome(gated=True), KubeschedOutcome(gated=True, message="waiting"), "", ""),
        (Outcome(gated=True), KubeschedOutcome(message="0/2 y."), "gated", ""),
        (Outcome(error="no decision"), KubeschedOutcome(node="a", feasible=["a"]), "error", ""),
        (_preempting("a", "a", "v1"), _preempting("a", "a", "v1", kubesched=True), "", ""),
        (_preempting("a", "a", "v1"), _preempting("b", "b", "v2", kubesched=True), NOMINATED, ""),
        (_preempting("a", "a", "v1"), _preempting("a", "a", "v2", kubesched=True), PREEMPTION, ""),
        (_preempting("a", "a", "v1"), _preempting("a", None, "v1", kubesched=True), PREEMPTION, ""),
        (_preempting("a", None, "v1"), _preempting("a", "a", "v1", kubesched=True), "", ""),
        (_preempting("a", "a", "v1"), KubeschedOutcome(message="0/2 x."), NOMINATED, ""),
        (
            Outcome(node="a", volumes={"c": "pv-0"}, devices={"d": ("gpu=g/a/gpu-0",)}),
            KubeschedOutcome(
                node="a", feasible=["a"], volumes={"c": "pv-0"}, devices={"d": ("gpu=g/a/gpu-0",)}
            ),
            "",
            "unique",
        ),
        (
            Outcome(node="a", volumes={"c": "pv-0"}),
            KubeschedOutcome(node="a", feasible=["a"], volumes={"c": "pv-1"}),
            VOLUMES,
            "unique",
        ),
        (
            Outcome(node="a", devices={"d": ("gpu=g/a/gpu-0",)}),
            KubeschedOutcome(node="a", feasible=["a"], devices={"d": ("gpu=g/a/gpu-1",)}),
            DEVICES,
            "unique",
        ),
        (  # on another (tied) node the claims may differ
            Outcome(node="b", volumes={"c": "pv-b"}),
            KubeschedOutcome(
                node="a", feasible=["a", "b"], totals={"a": 5, "b": 5}, volumes={"c": "pv-a"}
            ),
            "",
            "tie",
        ),
    ],
    ids=[
        "only-feasible-node",
        "among-tied-best",
        "outside-tied-best",
        "unique-best-differs",
        "same-message",
        "different-message",
        "bound-vs-unschedulable",
        "both-gated",
        "gated-vs-attempted",
        "reference-error",
        "same-preemption",
        "other-nominated-node",
        "other-victims",
        "not-bound-after-preemption",
        "reference-not-bound-in-time",
        "preempted-vs-not",
        "same-volumes-and-devices",
        "other-volume",
        "other-devices",
        "tied-nodes-other-volumes",
    ],
)
def test_compare(reference, kubesched, mismatch, node_check):
    result = compare("p", reference, kubesched)
    assert (result.mismatch, result.node_check) == (mismatch, node_check)


def test_pods_land_in_the_run_namespaces_and_so_do_the_terms_naming_them():
    pod = _pod("p")
    pod["metadata"]["namespace"] = OTHER_NAMESPACE
    term = {"topologyKey": HOSTNAME_LABEL, "namespaces": [OWN_NAMESPACE, OTHER_NAMESPACE]}
    pod["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": term}
            ]
        },
    }
    placed = in_namespaces(pod, {OWN_NAMESPACE: "ns-a", OTHER_NAMESPACE: "ns-b"})
    assert placed["metadata"]["namespace"] == "ns-b"
    affinity = placed["spec"]["affinity"]
    required = affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    preferred = affinity["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert required[0]["namespaces"] == ["ns-a", "ns-b"]
    assert preferred[0]["podAffinityTerm"]["namespaces"] == ["ns-a", "ns-b"]
    assert pod["metadata"]["namespace"] == OTHER_NAMESPACE  # the original is untouched
    assert in_namespaces(_pod("q"), {OWN_NAMESPACE: "ns-a"})["metadata"]["namespace"] == "ns-a"


def test_kubesched_outcome_of_a_preemption(registry: Registry):
    nodes = [_node("n1", cpu="2"), _node("n2", cpu="2")]
    low = _stored(_pod("low", cpu="1500m"), "u1")
    low["spec"].update(nodeName="n1", priority=-10)
    other = _stored(_pod("other", cpu="1800m"), "u2")
    other["spec"].update(nodeName="n2", priority=0)
    high = _stored(_pod("high", cpu="1"), "u3")
    high["spec"]["priority"] = 1000
    config = kubesched_config(registry, SCHEDULER_NAME)
    outcome = kubesched_outcome(nodes, [low, other], high, config, registry, str)
    assert outcome.node is None  # the first attempt preempts
    assert outcome.message.startswith("0/2 nodes are available: 2 Insufficient cpu. preemption: ")
    assert (outcome.nominated, outcome.final_node, outcome.victims) == ("n1", "n1", ("low",))


# -- the kubesched side ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.installed()


def _stored(manifest: dict[str, Any], uid: str) -> dict[str, Any]:
    stored = copy.deepcopy(manifest)
    stored["metadata"].update(namespace="ns", uid=uid)
    return stored


def test_kubesched_outcome_reports_feasible_nodes_and_totals(registry: Registry):
    nodes = [
        _node("n-big", cpu="8"),
        _node("n-small", cpu="2"),
        _node("n-cordoned", cpu="8", unschedulable=True),
    ]
    pod = _stored(_pod("p", cpu="1"), "u1")
    outcome = kubesched_outcome(
        nodes, [], pod, kubesched_config(registry), registry, lambda n: n.removeprefix("n-")
    )
    assert outcome.node == "big"
    assert sorted(outcome.feasible) == ["big", "small"]
    assert outcome.best == ["big"]
    # NodeAffinity skips itself at PreScore: the pod prefers nothing. So does DynamicResources
    # for a pod without claims (kube calls its Score, which gives 0 on every node: the same
    # totals).
    assert set(outcome.scores["big"]) == {
        "TaintToleration",
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    }


def test_kubesched_outcome_message_and_gate(registry: Registry):
    config = kubesched_config(registry)
    nodes = [_node("n1", cpu="1"), _node("n2", cpu="1", unschedulable=True)]
    too_big = _stored(_pod("big", cpu="2"), "u1")
    outcome = kubesched_outcome(nodes, [], too_big, config, registry, str)
    assert outcome.node is None
    filtered, preemption = outcome.message.split(" preemption: ")
    assert filtered == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    assert preemption.startswith("0/2 nodes are available: ")  # nothing to evict
    gated = _stored(_pod("gated", cpu="1"), "u2")
    gated["spec"]["schedulingGates"] = [{"name": "hold"}]
    assert kubesched_outcome(nodes, [], gated, config, registry, str).gated


def test_pinning_turns_earlier_pods_into_bound_pods_where_the_reference_put_them():
    scenario = Scenario(
        "s",
        nodes=[_node("node-0"), _node("node-1")],
        pods=[_pod("a"), _pod("b"), _pod("c"), _pod("d")],
    )
    run = ScenarioRun(
        scenario,
        [
            _agreeing("a", Outcome(node="node-1")),
            _agreeing("b", Outcome(message="0/2 ...")),
            Comparison("c", Outcome(node="node-0"), KubeschedOutcome(node="node-1"), NODE),
            _agreeing("d", Outcome(node="node-0")),
        ],
    )
    small = pinned(run, "c")
    assert [p["metadata"]["name"] for p in small.bound_pods] == ["a"]
    assert small.bound_pods[0]["spec"]["nodeName"] == "node-1"
    assert "schedulerName" not in small.bound_pods[0]["spec"]
    assert small.pod_names() == ["c"]
    # A pod that preempted is bound where it went, and its victims are gone.
    preempting = Outcome(message="0/2 ...", nominated="node-0", final_node="node-0", victims=("a",))
    run.comparisons[1] = _agreeing("b", preempting)
    small = pinned(run, "c")
    assert [p["metadata"]["name"] for p in small.bound_pods] == ["b"]
    assert small.bound_pods[0]["spec"]["nodeName"] == "node-0"


def _agreeing(pod: str, outcome: Outcome) -> Comparison:
    kubesched = KubeschedOutcome(
        node=outcome.node,
        message=outcome.message,
        nominated=outcome.nominated,
        final_node=outcome.final_node,
        victims=outcome.victims,
    )
    return Comparison(pod, outcome, kubesched)


# -- shrinking ------------------------------------------------------------------------------------


def test_every_reduction_is_smaller_and_keeps_the_target_and_a_node():
    scenario = generate(0, 11)
    target = scenario.pod_names()[-1]
    count = 0
    for smaller in reductions(scenario, target):
        count += 1
        assert smaller.size() < scenario.size()
        assert target in smaller.pod_names()
        assert smaller.nodes
        for node in smaller.nodes:
            assert node["metadata"]["labels"][HOSTNAME_LABEL] == node["metadata"]["name"]
        for pod in smaller.pods:
            assert pod["spec"]["containers"]
    assert count > 10


def test_pods_after_the_target_go_first():
    scenario = Scenario("s", [_node("node-0")], [], [_pod("a"), _pod("b"), _pod("c")])
    first = next(reductions(scenario, "b"))
    assert first.pod_names() == ["a", "b"]


class StandInRunner:
    """Plays the reference scheduler: pod "p" is said to differ exactly when the node with the
    label ``bad`` is present and the pod still tolerates ``key``."""

    def __init__(self) -> None:
        self.runs = 0

    def run(self, scenario: Scenario) -> ScenarioRun:
        self.runs += 1
        bad = any("bad" in n["metadata"].get("labels", {}) for n in scenario.nodes)
        pod = next((p for p in scenario.pods if p["metadata"]["name"] == "p"), None)
        tolerates = pod is not None and any(
            t.get("key") == "key" for t in pod["spec"].get("tolerations", ())
        )
        comparisons = [_agreeing(name, Outcome(node="node-0")) for name in scenario.pod_names()]
        if pod is not None and bad and tolerates:
            index = scenario.pod_names().index("p")
            comparisons[index] = Comparison(
                "p", Outcome(message="0/1 a."), KubeschedOutcome(message="0/1 b."), MESSAGE
            )
        return ScenarioRun(scenario, comparisons)


def test_shrink_keeps_only_what_the_mismatch_needs():
    noisy = _pod("p")
    noisy["spec"]["tolerations"] = [{"key": "key", "operator": "Exists"}, {"key": "other"}]
    noisy["spec"]["nodeSelector"] = {"zone": "a"}
    scenario = Scenario(
        "s",
        nodes=[
            _node("node-0", {"zone": "a"}),
            _node("node-1", {"bad": "yes", "zone": "a"}),
            _node("node-2"),
        ],
        bound_pods=[{"metadata": {"name": "b"}, "spec": {"nodeName": "node-2", "containers": []}}],
        pods=[_pod("before"), noisy, _pod("after")],
    )
    runner = StandInRunner()
    smallest = shrink(runner, runner.run(scenario), "p", budget_seconds=30)  # type: ignore[arg-type]
    assert smallest.comparison("p").mismatch == MESSAGE
    assert smallest.scenario.node_names == ["node-1"]
    assert smallest.scenario.nodes[0]["metadata"]["labels"] == {
        HOSTNAME_LABEL: "node-1",
        "bad": "yes",
    }
    assert smallest.scenario.bound_pods == []
    assert smallest.scenario.pod_names() == ["p"]
    assert smallest.scenario.pods[0]["spec"]["tolerations"] == [
        {"key": "key", "operator": "Exists"}
    ]
    assert "nodeSelector" not in smallest.scenario.pods[0]["spec"]


def test_shrink_stops_at_its_budget():
    scenario = replace(generate(0, 3), name="s")
    runner = StandInRunner()
    run = ScenarioRun(
        scenario,
        [
            Comparison(p, Outcome(message="x"), KubeschedOutcome(message="y"), MESSAGE)
            for p in scenario.pod_names()
        ],
    )
    assert shrink(runner, run, scenario.pod_names()[0], budget_seconds=0) is run  # type: ignore[arg-type]
    assert runner.runs <= 1


def test_the_report_reproduces_the_scenario():
    scenario = Scenario("0-4", nodes=[_node("node-0"), _node("node-1")], pods=[_pod("p")])
    kubesched = KubeschedOutcome(
        node="node-0",
        feasible=["node-0", "node-1"],
        totals={"node-0": 9, "node-1": 7},
        scores={"node-0": {"NodeResourcesFit": 9}, "node-1": {"NodeResourcesFit": 7}},
    )
    run = ScenarioRun(scenario, [compare("p", Outcome(node="node-1"), kubesched)])
    report = mismatch_report(run, "p", run)
    assert report.splitlines()[:5] == [
        "scenario 0-4: pod p: node differs",
        "  reference kube-scheduler: bound to node-1",
        "  kubesched:                bound to node-0 (totals: node-0=9, node-1=7)",
        "  kubesched's best nodes:   node-0",
        "    node-0: NodeResourcesFit 9",
    ]
    profile, manifests = report.split("--- # profile.yaml\n")[1].split("--- # scenario.yaml\n")
    assert yaml.safe_load(profile) == PROFILE
    assert list(yaml.safe_load_all(manifests)) == scenario.manifests()


# -- builders -------------------------------------------------------------------------------------


def _node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    cpu: str = "4",
    unschedulable: bool = False,
) -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME_LABEL: name, **(labels or {})}},
        "status": {"capacity": resources, "allocatable": resources},
    }
    if unschedulable:
        node["spec"] = {"unschedulable": True}
    return node


def _pod(
    name: str, *, cpu: str | None = None, affinity_values: list[str] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "pause"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME, "containers": [container]}
    if affinity_values:
        term = {
            "matchExpressions": [
                {"key": HOSTNAME_LABEL, "operator": "In", "values": affinity_values}
            ],
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": affinity_values[:1]}
            ],
        }
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}
