"""The workloads: which nodes a run keeps, which pods it places first, and which it measures.

kube-scheduler's scheduler_perf (``test/integration/scheduler_perf`` in kubernetes v1.37) with
the same node and pod templates, labels and constraints: nodes are its ``node-default`` (4 CPU,
32Gi, 110 pods, Ready, no kubelet), pods its ``pod-default`` (one pause container, 100m /
500Mi) unless a workload says otherwise. Where scheduler_perf first has the scheduler place
``initPods``, the harness creates them already bound (``spec.nodeName``, round-robin over the
nodes, in a namespace of their own): both contenders then start from the same placed load, and
only the measured pods are the contender's work.

- ``SchedulingBasic``: pod-default on node-default.
- ``SchedulingNodeAffinity``: every node in zone ``zone1``; pods require zone ``zone1`` or
  ``zone2`` (``pod-with-node-affinity``).
- ``SchedulingPodAffinity``: every node in ``zone1``; pods labelled ``color: blue`` require a
  blue pod in their zone, in either namespace (``pod-with-pod-affinity``).
- ``SchedulingPodAntiAffinity``: pods labelled ``color: green`` refuse a green pod on their
  host (``pod-with-pod-anti-affinity``): one per node at most.
- ``TopologySpreading`` / ``PreferredTopologySpreading``: nodes in zones moon-1..3, init pods
  pod-default, measured pods spread over zones with ``maxSkew: 5``, ``DoNotSchedule`` /
  ``ScheduleAnyway`` (``pod-with-(preferred-)topology-spreading``).
- ``PreemptionBasic``: four low-priority pods per node (900m each, 3.6 of 4 CPU); measured pods
  of priority 10 asking 3 CPU, each of which must preempt three.
- ``PreemptionAsync``: the same init pods; while pod-default pods are measured, a priority-10
  3-CPU pod is created every 200 ms (each preempts).
- ``SchedulingWithMixedChurn``: while pod-default pods are measured, every second a node (with
  room for no pods), a priority-10 pod asking 9 CPU (fits nowhere) and a Service are deleted and
  created again; the contender's RSS is sampled each second, and the churn goes on after the last
  binding so that memory growth shows.
- ``SchedulingCSIPVs``: nodes whose CSINode allows 39 ``ebs.csi.aws.com`` volumes; each measured
  pod mounts its own claim, bound to its own CSI PersistentVolume (``pv-csi``, ReadOnlyMany) by
  kube-controller-manager's PV controller before the run.
- ``SchedulingWithResourceClaim``: the nearest of scheduler_perf's DRA workloads
  (``SchedulingWithResourceClaimTemplate``): every node has a ResourceSlice of 10 devices of
  ``test-driver.cdi.k8s.io``, DeviceClass ``test-class`` selects that driver by CEL, and each
  pod has its own ResourceClaim for one device of the class (made by the harness before the run,
  as the resourceclaim controller makes one from a template).
- ``Mixed``: this project's own mix (zones, instance types, taints; pods in turn plain, node
  affinity with a toleration, zone/hostname spread, hostname anti-affinity in groups of 10).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BASIC",
    "HIGH_PRIORITY_CLASS",
    "INIT_NAMESPACE",
    "MIXED",
    "NAMESPACE",
    "NODE_SET_LABEL",
    "RUN_LABEL",
    "WORKLOADS",
    "Case",
    "Workload",
    "object_path",
    "parse_size",
]

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
#: Marks the nodes of one workload's node set, so a case can tell whether they are in place.
NODE_SET_LABEL = "bench.kubesched.io/node-set"
#: Marks every pod a run creates.
RUN_LABEL = "bench.kubesched.io/run"
#: Where the measured pods go (scheduler_perf's ``sched-1``) and the placed ones (``sched-0``).
NAMESPACE = "bench"
INIT_NAMESPACE = "bench-init"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
ZONES = 10
INSTANCE_TYPES = ("small", "medium", "large")
ANTI_AFFINITY_GROUP = 10
CSI_DRIVER = "ebs.csi.aws.com"
CSI_VOLUME_LIMIT = 39
DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"
DRA_DEVICES_PER_NODE = 10
#: scheduler_perf's ``priority: 10``; the apiserver's Priority admission wants it by class.
HIGH_PRIORITY_CLASS = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "bench-priority-10"},
    "value": 10,
}


def node_manifest(
    name: str,
    labels: dict[str, str],
    taints: list[dict[str, str]],
    allocatable: dict[str, str] | None = None,
) -> dict:
    """scheduler_perf's ``node-default``: capacity = allocatable, Ready, no kubelet."""
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110", **(allocatable or {})}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, **labels}},
        "spec": {},
        "status": {"capacity": resources, "allocatable": dict(resources), "conditions": [ready]},
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def pod_manifest(
    name: str, scheduler_name: str, run: str, cpu: str = "100m", limits: bool = True, **spec: Any
) -> dict:
    """scheduler_perf's ``pod-default`` (requests = limits = 100m / 500Mi), plus ``spec``."""
    labels = spec.pop("labels", {})
    requests = {"cpu": cpu, "memory": "500Mi"}
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = dict(requests)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {RUN_LABEL: run, **labels}},
        "spec": {
            "schedulerName": scheduler_name,
            "containers": [
                {
                    "name": "pause",
                    "image": PAUSE_IMAGE,
                    "ports": [{"containerPort": 80}],
                    "resources": resources,
                }
            ],
            **spec,
        },
    }


def _plain_node(node_set: str, labels: Callable[[int], dict[str, str]] | None = None):
    def node(index: int) -> dict:
        extra = labels(index) if labels else {}
        return node_manifest(f"{node_set}-{index:05d}", {NODE_SET_LABEL: node_set, **extra}, [])

    return node


def _default_pod(index: int, scheduler_name: str, run: str) -> dict:
    return pod_manifest(f"pod-{index:05d}", scheduler_name, run)


# -- Mixed (this project's own) ---------------------------------------------------------------

INFRA_TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


def _mixed_node(index: int) -> dict:
    labels = {
        NODE_SET_LABEL: "mixed",
        ZONE: f"zone-{index % ZONES}",
        INSTANCE_TYPE: INSTANCE_TYPES[index % len(INSTANCE_TYPES)],
    }
    # One node in 10 is tainted, spread over every zone: a zone made only of tainted nodes
    # would hold the zone spread (which counts tainted nodes as domains) at a skew it cannot fix.
    tainted = index % 10 == (index // 10) % 10
    return node_manifest(f"mixed-{index:05d}", labels, [INFRA_TAINT] if tainted else [])


def _mixed_pod(index: int, scheduler_name: str, run: str) -> dict:
    name = f"pod-{index:05d}"
    kind = index % 4
    if kind == 1:  # node affinity, preferred zones, tolerates the infra taint
        selector = {"key": INSTANCE_TYPE, "operator": "In", "values": ["medium", "large"]}
        zones = {"key": ZONE, "operator": "In", "values": ["zone-0", "zone-1", "zone-2"]}
        return pod_manifest(
            name,
            scheduler_name,
            run,
            labels={"app": "affinity"},
            affinity={
                "nodeAffinity": {
                    REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": [selector]}]},
                    PREFERRED: [{"weight": 10, "preference": {"matchExpressions": [zones]}}],
                }
            },
            tolerations=[{**INFRA_TAINT, "operator": "Equal"}],
        )
    if kind == 2:  # spread: hard over zones, soft over hostnames
        selector = {"matchLabels": {"app": "spread"}}
        return pod_manifest(
            name,
            scheduler_name,
            run,
            labels={"app": "spread"},
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": selector,
                },
                {
                    "maxSkew": 1,
                    "topologyKey": HOSTNAME,
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": selector,
                },
            ],
        )
    if kind == 3:  # required anti-affinity within a group of at most ANTI_AFFINITY_GROUP pods
        group = f"anti-{index // (4 * ANTI_AFFINITY_GROUP)}"
        term = {"labelSelector": {"matchLabels": {"app": group}}, "topologyKey": HOSTNAME}
        return pod_manifest(
            name,
            scheduler_name,
            run,
            labels={"app": group},
            affinity={"podAntiAffinity": {REQUIRED: [term]}},
        )
    return pod_manifest(name, scheduler_name, run, labels={"app": "plain"})


# -- scheduler_perf's pod templates -------------------------------------------------------------

BOTH_NAMESPACES = [NAMESPACE, INIT_NAMESPACE]


def _node_affinity_pod(index: int, scheduler_name: str, run: str) -> dict:
    zones = {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}
    return pod_manifest(
        f"pod-{index:05d}",
        scheduler_name,
        run,
        affinity={
            "nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": [zones]}]}}
        },
    )


def _inter_pod_pod(kind: str, color: str, topology_key: str) -> Callable[[int, str, str], dict]:
    """``pod-with-pod-affinity`` (``podAffinity``, blue, zone) and ``pod-with-pod-anti-affinity``
    (``podAntiAffinity``, green, hostname): a required term over both namespaces."""

    def pod(index: int, scheduler_name: str, run: str) -> dict:
        term = {
            "labelSelector": {"matchLabels": {"color": color}},
            "topologyKey": topology_key,
            "namespaces": BOTH_NAMESPACES,
        }
        return pod_manifest(
            f"pod-{index:05d}",
            scheduler_name,
            run,
            labels={"color": color},
            affinity={kind: {REQUIRED: [term]}},
        )

    return pod


_pod_affinity_pod = _inter_pod_pod("podAffinity", "blue", ZONE)
_pod_anti_affinity_pod = _inter_pod_pod("podAntiAffinity", "green", HOSTNAME)


def _spreading_pod(when: str) -> Callable[[int, str, str], dict]:
    def pod(index: int, scheduler_name: str, run: str) -> dict:
        constraint = {
            "maxSkew": 5,
            "topologyKey": ZONE,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"color": "blue"}},
        }
        return pod_manifest(
            f"pod-{index:05d}",
            scheduler_name,
            run,
            labels={"color": "blue"},
            topologySpreadConstraints=[constraint],
        )

    return pod


def _low_priority_pod(index: int, scheduler_name: str, run: str) -> dict:
    """``pod-low-priority``: 900m, priority 0, deleted at once when preempted."""
    return pod_manifest(
        f"low-{index:05d}", scheduler_name, run, cpu="900m", terminationGracePeriodSeconds=0
    )


def high_priority_pod(prefix: str) -> Callable[[int, str, str], dict]:
    """``pod-high-priority``: 3 CPU, priority 10."""

    def pod(index: int, scheduler_name: str, run: str) -> dict:
        return pod_manifest(
            f"{prefix}-{index:05d}",
            scheduler_name,
            run,
            cpu="3",
            priorityClassName=HIGH_PRIORITY_CLASS["metadata"]["name"],
        )

    return pod


def large_cpu_pod(index: int, scheduler_name: str, run: str) -> dict:
    """``pod-high-priority-large-cpu``: 9 CPU (no node has that), priority 10, no limits."""
    return pod_manifest(
        f"churn-{index:05d}",
        scheduler_name,
        run,
        cpu="9",
        limits=False,
        priorityClassName=HIGH_PRIORITY_CLASS["metadata"]["name"],
    )


# -- SchedulingCSIPVs -----------------------------------------------------------------------------


def _csi_node(index: int) -> dict:
    limit = {f"attachable-volumes-csi-{CSI_DRIVER}": str(CSI_VOLUME_LIMIT)}
    name = f"csi-{index:05d}"
    return node_manifest(name, {NODE_SET_LABEL: "csi"}, [], allocatable=limit)


def _csi_node_objects(index: int) -> list[dict]:
    name = f"csi-{index:05d}"
    driver = {"name": CSI_DRIVER, "nodeID": name, "allocatable": {"count": CSI_VOLUME_LIMIT}}
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": name, "labels": {NODE_SET_LABEL: "csi"}},
            "spec": {"drivers": [driver]},
        }
    ]


def _claim_name(index: int) -> str:
    return f"pvc-{index:05d}"


def _csi_pod(index: int, scheduler_name: str, run: str) -> dict:
    claim = {"claimName": _claim_name(index)}
    return pod_manifest(
        f"pod-{index:05d}",
        scheduler_name,
        run,
        volumes=[{"name": "data", "persistentVolumeClaim": claim}],
    )


def _csi_volume_objects(index: int) -> list[dict]:
    """``pv-csi`` pre-bound to its ``pvc``: what scheduler_perf's createPods writes per pod
    (the PV controller then completes the binding)."""
    claim, volume = _claim_name(index), f"bench-pv-{index:05d}"
    return [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": volume, "labels": {NODE_SET_LABEL: "csi"}},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "capacity": {"storage": "1Gi"},
                "csi": {"driver": CSI_DRIVER, "volumeHandle": f"vol-{index:05d}"},
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": NAMESPACE,
                    "name": claim,
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "labels": {NODE_SET_LABEL: "csi"}},
            "spec": {
                "accessModes": ["ReadOnlyMany"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "",
                "volumeName": volume,
            },
        },
    ]


# -- SchedulingWithResourceClaim ------------------------------------------------------------------


def _dra_node_objects(index: int) -> list[dict]:
    """The ResourceSlice scheduler_perf's ``createResourceDriver`` writes for one node."""
    name = f"dra-{index:05d}"
    devices = [
        {
            "name": f"instance-{i}",
            "attributes": {
                "model": {"string": "A100"},
                "family": {"string": "GPU"},
                "driverVersion": {"version": "1.2.3"},
                "dra.example.com/numa": {"int": i},
            },
            "capacity": {"memory": {"value": "1Gi"}},
        }
        for i in range(DRA_DEVICES_PER_NODE)
    ]
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-slice", "labels": {NODE_SET_LABEL: "dra"}},
            "spec": {
                "driver": DRA_DRIVER,
                "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }
    ]


DEVICE_CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": DRA_CLASS, "labels": {NODE_SET_LABEL: "dra"}},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
}


def _dra_claim_name(index: int) -> str:
    return f"pod-{index:05d}-resource"


def _dra_pod(index: int, scheduler_name: str, run: str) -> dict:
    pod = pod_manifest(
        f"pod-{index:05d}",
        scheduler_name,
        run,
        resourceClaims=[{"name": "resource", "resourceClaimName": _dra_claim_name(index)}],
    )
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "resource"}]
    return pod


def _dra_claim_objects(index: int) -> list[dict]:
    request = {"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": _dra_claim_name(index), "labels": {NODE_SET_LABEL: "dra"}},
            "spec": {"devices": {"requests": [request]}},
        }
    ]


# -- workloads and cases --------------------------------------------------------------------------


def _no_init(nodes: int, pods: int) -> int:
    return 0


def _no_limit(nodes: int) -> int | None:
    return None


@dataclass(frozen=True)
class Workload:
    """Node and pod templates, indexed, and what else a run of them needs.

    ``init_count(nodes, pods)`` pods of ``init_pod`` are created already bound before the
    contender starts (round-robin over the nodes); ``max_pods(nodes)`` is how many measured
    pods fit (``None``: no limit); ``churn`` names what the harness keeps creating and deleting
    while the pods are measured (``""``, ``"preemptors"`` or ``"mixed"``).
    ``node_objects(i)`` are written with node ``i`` (a CSINode, a ResourceSlice) and
    ``cluster_objects`` once per node set; ``pod_objects(i)`` are what measured pod ``i``
    refers to (its PV and claim, kept for the whole case; its ResourceClaim, made again for
    every run when ``pod_objects_per_run``).
    """

    name: str
    node_set: str
    node: Callable[[int], dict]
    pod: Callable[[int, str, str], dict]
    description: str
    init_pod: Callable[[int, str, str], dict] | None = None
    init_count: Callable[[int, int], int] = _no_init
    max_pods: Callable[[int], int | None] = _no_limit
    churn: str = ""
    node_objects: Callable[[int], list[dict]] | None = None
    cluster_objects: tuple[dict, ...] = ()
    pod_objects: Callable[[int], list[dict]] | None = None
    pod_objects_per_run: bool = False
    needs_pv_controller: bool = False
    #: Whether the binding ceiling is a meaningful bound (it ignores every constraint).
    ceiling: bool = False
    #: scheduler_perf's CI floor for its 5,000-node workload (pods/s, 6 pinned cores).
    upstream_floor: float | None = None
    sizes: tuple[str, ...] = field(default=("1000x1000",))

    def nodes(self, count: int) -> list[dict]:
        return [self.node(i) for i in range(count)]

    def pods(self, count: int, scheduler_name: str, run: str) -> list[dict]:
        return [self.pod(i, scheduler_name, run) for i in range(count)]

    def init_pods(self, nodes: list[str], pods: int) -> list[dict]:
        """The placed pods for a case of ``pods`` measured pods on ``nodes``."""
        count = self.init_count(len(nodes), pods)
        if not count or self.init_pod is None:
            return []
        placed = []
        for i in range(count):
            pod = self.init_pod(i, "bench-init", "init")
            pod["spec"]["nodeName"] = nodes[i % len(nodes)]
            placed.append(pod)
        return placed

    def check(self, nodes: int, pods: int) -> None:
        """``ValueError`` naming the limit when ``pods`` measured pods cannot all fit."""
        limit = self.max_pods(nodes)
        if limit is not None and pods > limit:
            raise ValueError(
                f"{self.name} at {nodes:,} nodes fits at most {limit:,} measured pods; "
                f"asked for {pods:,} (use more nodes or fewer pods)"
            )


BASIC = Workload(
    "SchedulingBasic",
    "basic",
    _plain_node("basic"),
    _default_pod,
    "node-default and pod-default: 4 CPU / 32Gi / 110 pods; 100m / 500Mi; "
    "init pods min(nodes, 1,000)",
    init_pod=_default_pod,
    init_count=lambda nodes, pods: min(nodes, 1000),
    ceiling=True,
    upstream_floor=680,
    sizes=("500x1000", "5000x5000"),
)
NODE_AFFINITY = Workload(
    "SchedulingNodeAffinity",
    "zone1",
    _plain_node("zone1", lambda i: {ZONE: "zone1"}),
    _node_affinity_pod,
    "every node in zone1; pods require zone1 or zone2; init pods = nodes, the same",
    init_pod=_node_affinity_pod,
    init_count=lambda nodes, pods: nodes,
    upstream_floor=540,
)
POD_AFFINITY = Workload(
    "SchedulingPodAffinity",
    "zone1",
    _plain_node("zone1", lambda i: {ZONE: "zone1"}),
    _pod_affinity_pod,
    "every node in zone1; color=blue pods require a blue pod in their zone (both "
    "namespaces); init pods = nodes, the same",
    init_pod=_pod_affinity_pod,
    init_count=lambda nodes, pods: nodes,
    upstream_floor=70,
)
POD_ANTI_AFFINITY = Workload(
    "SchedulingPodAntiAffinity",
    "basic",
    _plain_node("basic"),
    _pod_anti_affinity_pod,
    "color=green pods refuse a green pod on their host (both namespaces); init pods nodes/5, "
    "the same",
    init_pod=_pod_anti_affinity_pod,
    init_count=lambda nodes, pods: nodes // 5,
    max_pods=lambda nodes: nodes - nodes // 5,
    upstream_floor=180,
    sizes=("1000x800",),
)
_MOONS = ("moon-1", "moon-2", "moon-3")
TOPOLOGY_SPREADING = Workload(
    "TopologySpreading",
    "moons",
    _plain_node("moons", lambda i: {ZONE: _MOONS[i % 3]}),
    _spreading_pod("DoNotSchedule"),
    "nodes in zones moon-1..3; init pods pod-default min(2 × nodes, 5,000); pods spread over "
    "zones, maxSkew 5, DoNotSchedule",
    init_pod=_default_pod,
    init_count=lambda nodes, pods: min(2 * nodes, 5000),
    upstream_floor=460,
)
PREFERRED_TOPOLOGY_SPREADING = Workload(
    "PreferredTopologySpreading",
    "moons",
    _plain_node("moons", lambda i: {ZONE: _MOONS[i % 3]}),
    _spreading_pod("ScheduleAnyway"),
    "as TopologySpreading, ScheduleAnyway",
    init_pod=_default_pod,
    init_count=lambda nodes, pods: min(2 * nodes, 5000),
    upstream_floor=340,
)
PREEMPTION_BASIC = Workload(
    "PreemptionBasic",
    "basic",
    _plain_node("basic"),
    high_priority_pod("pod"),
    "4 low-priority pods per node (900m); pods of priority 10 asking 3 CPU preempt 3 each",
    init_pod=_low_priority_pod,
    init_count=lambda nodes, pods: 4 * nodes,
    max_pods=lambda nodes: nodes,
)
PREEMPTION_ASYNC = Workload(
    "PreemptionAsync",
    "basic",
    _plain_node("basic"),
    _default_pod,
    "4 low-priority pods per node (900m); pod-default measured while a 3-CPU priority-10 pod "
    "is created every 200 ms (each preempts)",
    init_pod=_low_priority_pod,
    init_count=lambda nodes, pods: 4 * nodes,
    churn="preemptors",
    upstream_floor=570,
)
MIXED_CHURN = Workload(
    "SchedulingWithMixedChurn",
    "basic",
    _plain_node("basic"),
    _default_pod,
    "pod-default measured while a node, an unschedulable 9-CPU priority-10 pod and a Service "
    "are deleted and created again every second; RSS sampled each second",
    churn="mixed",
    upstream_floor=710,
)
CSI_PVS = Workload(
    "SchedulingCSIPVs",
    "csi",
    _csi_node,
    _csi_pod,
    f"CSINode limit {CSI_VOLUME_LIMIT} {CSI_DRIVER} volumes; each pod mounts its own claim, "
    "bound to its own CSI PV by the PV controller",
    node_objects=_csi_node_objects,
    pod_objects=_csi_volume_objects,
    needs_pv_controller=True,
    max_pods=lambda nodes: nodes * CSI_VOLUME_LIMIT,
    upstream_floor=100,
)
RESOURCE_CLAIM = Workload(
    "SchedulingWithResourceClaim",
    "dra",
    _plain_node("dra"),
    _dra_pod,
    f"a ResourceSlice of {DRA_DEVICES_PER_NODE} devices per node; each pod claims one device "
    f"of DeviceClass {DRA_CLASS} (CEL selector on the driver)",
    node_objects=_dra_node_objects,
    cluster_objects=(DEVICE_CLASS,),
    pod_objects=_dra_claim_objects,
    pod_objects_per_run=True,
    max_pods=lambda nodes: nodes * DRA_DEVICES_PER_NODE,
    sizes=("1000x1000",),
)
MIXED = Workload(
    "Mixed",
    "mixed",
    _mixed_node,
    _mixed_pod,
    "10 zones, 3 instance types, 1 node in 10 tainted; pods in turn: plain, node affinity + "
    "toleration, zone/hostname spread, hostname anti-affinity (groups of 10)",
)
WORKLOADS = {
    w.name: w
    for w in (
        BASIC,
        NODE_AFFINITY,
        POD_AFFINITY,
        POD_ANTI_AFFINITY,
        TOPOLOGY_SPREADING,
        PREFERRED_TOPOLOGY_SPREADING,
        PREEMPTION_BASIC,
        PREEMPTION_ASYNC,
        MIXED_CHURN,
        CSI_PVS,
        RESOURCE_CLAIM,
        MIXED,
    )
}

_PATHS = {
    "Node": "/api/v1/nodes",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "Pod": "/api/v1/namespaces/{ns}/pods",
    "Service": "/api/v1/namespaces/{ns}/services",
    "PersistentVolumeClaim": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
}


def object_path(kind: str, namespace: str = NAMESPACE) -> str:
    """The collection an object of ``kind`` is POSTed to."""
    try:
        return _PATHS[kind].format(ns=namespace)
    except KeyError:
        raise ValueError(f"no API path for kind {kind!r}; known: {', '.join(_PATHS)}") from None


@dataclass(frozen=True)
class Case:
    """One workload at one size, with one way for pods to arrive.

    ``burst``: the contender is running and synced; the harness then creates every pod as fast
    as it can (scheduler_perf's way): pods/s over creation start → last binding, and each pod's
    latency from creation to binding. ``backlog``: every pod exists before the contender starts;
    pods/s over first → last binding (the apiserver's binding limit, for the ceiling), no latency.
    """

    workload: Workload
    nodes: int
    pods: int
    arrival: str = "burst"

    @property
    def title(self) -> str:
        return f"{self.workload.name}, {self.nodes:,} nodes / {self.pods:,} pods ({self.arrival})"

    @property
    def key(self) -> str:
        return f"{self.workload.name}-{self.nodes}x{self.pods}-{self.arrival}"


def parse_size(text: str) -> tuple[int, int]:
    """``500x1000`` -> (500 nodes, 1000 pods)."""
    nodes, sep, pods = text.lower().partition("x")
    try:
        if not sep:
            raise ValueError
        size = (
            int(nodes.replace(",", "").replace("_", "")),
            int(pods.replace(",", "").replace("_", "")),
        )
    except ValueError:
        raise ValueError(f"size {text!r}: expected NODESxPODS, e.g. 500x1000") from None
    if size[0] < 1 or size[1] < 1:
        raise ValueError(f"size {text!r}: nodes and pods must be at least 1")
    return size
