"""The benchmark's workloads have scheduler_perf's shapes, and every measured pod can be placed.

No control plane: the workloads' objects go through ``kubesched simulate``'s in-memory path with
the default profile (the objects a PV controller or an admission plugin would have changed are
written as they would have left them), which proves the premise of every comparison: both
contenders can bind all the measured pods, and the preemption workloads do preempt.
"""

from __future__ import annotations

import json

import pytest

from bench.cli import default_cases, parse_args, quick_cases
from bench.workloads import (
    CSI_DRIVER,
    DRA_CLASS,
    HIGH_PRIORITY_CLASS,
    HOSTNAME,
    INIT_NAMESPACE,
    NAMESPACE,
    WORKLOADS,
    ZONE,
    Workload,
    object_path,
)
from kubesched.api.manifests import parse_cluster
from kubesched.config import default_config
from kubesched.config.types import DEFAULT_SCHEDULER_NAME
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate

SCHEDULER = DEFAULT_SCHEDULER_NAME
#: scheduler_perf's workloads (issue #23's list, with #17's and #18's rows).
SCHEDULER_PERF = [
    "SchedulingBasic",
    "SchedulingNodeAffinity",
    "SchedulingPodAffinity",
    "SchedulingPodAntiAffinity",
    "TopologySpreading",
    "PreferredTopologySpreading",
    "PreemptionBasic",
    "PreemptionAsync",
    "SchedulingWithMixedChurn",
    "SchedulingCSIPVs",
    "SchedulingWithResourceClaim",
]


def _documents(workload: Workload, nodes: int, pods: int) -> tuple[list[dict], list[str]]:
    """Every object a run of ``workload`` has in the cluster, as the apiserver (with its
    admission plugins) and the PV controller would hold them; and the measured pods' names."""
    node_objects = workload.nodes(nodes)
    names = [n["metadata"]["name"] for n in node_objects]
    documents = list(node_objects) + [dict(o) for o in workload.cluster_objects]
    if workload.node_objects is not None:
        documents += [o for i in range(nodes) for o in workload.node_objects(i)]
    placed = workload.init_pods(names, pods)
    for pod in placed:
        pod["metadata"]["namespace"] = INIT_NAMESPACE
    measured = workload.pods(pods, SCHEDULER, "test")
    for pod in measured:
        pod["metadata"]["namespace"] = NAMESPACE
    for pod in placed + measured:
        if pod["spec"].pop("priorityClassName", None):  # the Priority admission plugin
            pod["spec"]["priority"] = HIGH_PRIORITY_CLASS["value"]
    if workload.pod_objects is not None:
        for i in range(pods):
            for obj in workload.pod_objects(i):
                obj = json.loads(json.dumps(obj))
                if obj["kind"] in ("PersistentVolumeClaim", "ResourceClaim"):
                    obj["metadata"]["namespace"] = NAMESPACE
                if obj["kind"] == "PersistentVolumeClaim":  # as the PV controller binds it
                    obj["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
                    obj["status"] = {"phase": "Bound"}
                if obj["kind"] == "PersistentVolume":
                    obj["status"] = {"phase": "Bound"}
                documents.append(obj)
    return documents + placed + measured, [p["metadata"]["name"] for p in measured]


def _simulate(workload: Workload, nodes: int, pods: int):
    documents, measured = _documents(workload, nodes, pods)
    text = "\n---\n".join(json.dumps(d) for d in documents)
    registry = Registry.installed()
    result = simulate(parse_cluster(text, workload.name), default_config(registry), registry)
    outcomes = {p.name: p for p in result.pods if p.namespace == NAMESPACE}
    return [outcomes[name] for name in measured], result


def test_every_scheduler_perf_workload_is_selectable() -> None:
    assert set(SCHEDULER_PERF) <= set(WORKLOADS)
    cases = default_cases()
    for name in WORKLOADS:
        arrivals = {c.arrival for c in cases if c.workload.name == name}
        assert arrivals == {"backlog", "burst"}, name
    args = parse_args(["run", "--workload", "SchedulingCSIPVs", "--arrival", "backlog,burst"])
    assert [(c.workload.name, c.nodes, c.pods, c.arrival) for c in args.cases] == [
        ("SchedulingCSIPVs", 1000, 1000, "backlog"),
        ("SchedulingCSIPVs", 1000, 1000, "burst"),
    ]


@pytest.mark.parametrize(
    ("name", "nodes", "pods"),
    [
        (n, 12, 9)
        for n in SCHEDULER_PERF
        if n not in ("PreemptionBasic", "SchedulingPodAntiAffinity")
    ]
    + [("PreemptionBasic", 6, 6), ("SchedulingPodAntiAffinity", 10, 8)],
)
def test_every_measured_pod_can_be_placed(name: str, nodes: int, pods: int) -> None:
    outcomes, _ = _simulate(WORKLOADS[name], nodes, pods)
    unplaced = [(o.name, o.message) for o in outcomes if o.node is None]
    assert not unplaced


def test_preemption_basic_preempts_three_low_priority_pods_per_pod() -> None:
    """pod-low-priority ×4 fill 3.6 of a node's 4 CPU; a 3-CPU pod fits after 3 are evicted."""
    workload = WORKLOADS["PreemptionBasic"]
    outcomes, result = _simulate(workload, 4, 4)
    assert all(o.node for o in outcomes)
    assert len({o.node for o in outcomes}) == 4  # one 3-CPU pod per node
    low = [p for p in result.pods if p.namespace == INIT_NAMESPACE]
    # The placed pods were bound already; what the simulation reports about them is only
    # that none of them is pending any more.
    assert all(p.node for p in low) or not low


def test_anti_affinity_allows_one_green_pod_per_node() -> None:
    workload = WORKLOADS["SchedulingPodAntiAffinity"]
    with pytest.raises(ValueError, match=r"at 10 nodes fits at most 8 measured pods; asked for 9"):
        workload.check(10, 9)
    outcomes, _ = _simulate(workload, 10, 8)
    nodes = [o.node for o in outcomes]
    assert None not in nodes and len(set(nodes)) == 8
    placed = {p["spec"]["nodeName"] for p in workload.init_pods([f"n{i}" for i in range(10)], 8)}
    assert not placed & set(nodes)


def test_cli_names_a_size_that_does_not_fit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["run", "--workload", "PreemptionBasic", "--sizes", "10x11"])
    assert exit_info.value.code == 2
    assert "PreemptionBasic at 10 nodes fits at most 10 measured pods; asked for 11" in (
        capsys.readouterr().err
    )


def test_templates_keep_scheduler_perfs_shapes() -> None:
    def pod(name: str) -> dict:
        return WORKLOADS[name].pod(0, SCHEDULER, "t")

    affinity = pod("SchedulingNodeAffinity")["spec"]["affinity"]["nodeAffinity"]
    term = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchExpressions"] == [
        {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
    ]
    assert {
        WORKLOADS["SchedulingNodeAffinity"].node(i)["metadata"]["labels"][ZONE] for i in range(5)
    } == {"zone1"}
    (required,) = pod("SchedulingPodAffinity")["spec"]["affinity"]["podAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert (required["topologyKey"], required["namespaces"]) == (ZONE, [NAMESPACE, INIT_NAMESPACE])
    (anti,) = pod("SchedulingPodAntiAffinity")["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert anti["topologyKey"] == HOSTNAME and anti["labelSelector"]["matchLabels"] == {
        "color": "green"
    }
    for name, when in (
        ("TopologySpreading", "DoNotSchedule"),
        ("PreferredTopologySpreading", "ScheduleAnyway"),
    ):
        (constraint,) = pod(name)["spec"]["topologySpreadConstraints"]
        assert (
            constraint["maxSkew"],
            constraint["topologyKey"],
            constraint["whenUnsatisfiable"],
        ) == (5, ZONE, when)
        zones = {WORKLOADS[name].node(i)["metadata"]["labels"][ZONE] for i in range(6)}
        assert zones == {"moon-1", "moon-2", "moon-3"}
    requests = pod("PreemptionBasic")["spec"]["containers"][0]["resources"]["requests"]
    assert requests["cpu"] == "3" and pod("PreemptionBasic")["spec"]["priorityClassName"]
    (low,) = [WORKLOADS["PreemptionBasic"].init_pod(0, SCHEDULER, "t")]  # type: ignore[misc]
    assert low["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "900m"
    assert low["spec"]["terminationGracePeriodSeconds"] == 0


def test_placed_pods_go_round_robin_over_the_nodes() -> None:
    workload = WORKLOADS["PreemptionBasic"]
    placed = workload.init_pods(["a", "b", "c"], 3)
    assert [p["spec"]["nodeName"] for p in placed] == ["a", "b", "c"] * 4
    assert len({p["metadata"]["name"] for p in placed}) == 12
    assert WORKLOADS["SchedulingWithMixedChurn"].init_pods(["a"], 5) == []


def test_csi_pods_each_mount_a_claim_pre_bound_to_its_own_volume() -> None:
    workload = WORKLOADS["SchedulingCSIPVs"]
    assert workload.needs_pv_controller and not workload.pod_objects_per_run
    (csinode,) = workload.node_objects(3)  # type: ignore[misc]
    assert csinode["spec"]["drivers"] == [
        {"name": CSI_DRIVER, "nodeID": "csi-00003", "allocatable": {"count": 39}}
    ]
    volume, claim = workload.pod_objects(7)  # type: ignore[misc]
    pod = workload.pod(7, SCHEDULER, "t")
    assert (
        pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    )
    assert claim["spec"]["volumeName"] == volume["metadata"]["name"]
    assert volume["spec"]["claimRef"]["name"] == claim["metadata"]["name"]
    assert volume["spec"]["csi"]["driver"] == CSI_DRIVER
    assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadOnlyMany"]


def test_dra_pods_each_claim_one_device_of_the_class() -> None:
    workload = WORKLOADS["SchedulingWithResourceClaim"]
    assert workload.pod_objects_per_run  # allocated claims do not outlive their run
    (slice_,) = workload.node_objects(2)  # type: ignore[misc]
    assert slice_["spec"]["nodeName"] == "dra-00002" and len(slice_["spec"]["devices"]) == 10
    (claim,) = workload.pod_objects(4)  # type: ignore[misc]
    pod = workload.pod(4, SCHEDULER, "t")
    assert pod["spec"]["resourceClaims"] == [
        {"name": "resource", "resourceClaimName": claim["metadata"]["name"]}
    ]
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == DRA_CLASS
    with pytest.raises(ValueError, match="at 2 nodes fits at most 20 measured pods"):
        workload.check(2, 21)


def test_every_object_kind_has_a_collection() -> None:
    kinds = set()
    for workload in WORKLOADS.values():
        kinds |= {o["kind"] for o in workload.nodes(1) + list(workload.cluster_objects)}
        if workload.node_objects is not None:
            kinds |= {o["kind"] for o in workload.node_objects(0)}
        if workload.pod_objects is not None:
            kinds |= {o["kind"] for o in workload.pod_objects(0)}
    kinds |= {"Pod", "Service", HIGH_PRIORITY_CLASS["kind"]}
    assert all(object_path(kind).startswith("/api") for kind in kinds)
    assert (
        object_path("ResourceClaim", "ns")
        == "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims"
    )
    with pytest.raises(ValueError, match="no API path for kind 'Secret'"):
        object_path("Secret")


def test_the_smoke_run_stays_small() -> None:
    """``tox -e bench`` runs these: a handful of pods each."""
    assert all(c.nodes <= 6 and c.pods <= 12 for c in quick_cases())
