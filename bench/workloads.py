"""The workloads: which nodes a run keeps, and which pods each run creates and measures.

In the spirit of kube-scheduler's scheduler_perf (``test/integration/scheduler_perf``): nodes are
plain Node objects (4 CPU, 32Gi, 110 pods, Ready, no kubelet), pods are its ``pod-default``
template (one pause container requesting 100m CPU and 500Mi).

- ``SchedulingBasic``: only those nodes and pods.
- ``Mixed``: nodes in 10 zones and 3 instance types, one node in 10 (in every zone) tainted
  ``dedicated=infra:NoSchedule``; the pods cycle through four kinds: plain; required node
  affinity (instance type) with a preferred zone and a toleration of the taint; topology spread
  over zones (hard) and hostnames (soft); required anti-affinity on the hostname within groups
  of at most 10 pods. Every pod fits: each contender can bind all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BASIC",
    "MIXED",
    "NODE_SET_LABEL",
    "RUN_LABEL",
    "WORKLOADS",
    "Case",
    "Workload",
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
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
ZONES = 10
INSTANCE_TYPES = ("small", "medium", "large")
ANTI_AFFINITY_GROUP = 10


def node_manifest(name: str, labels: dict[str, str], taints: list[dict[str, str]]) -> dict:
    """scheduler_perf's ``node-default``: capacity = allocatable, Ready, no kubelet."""
    resources = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOSTNAME: name, **labels}},
        "spec": {},
        "status": {"capacity": resources, "allocatable": resources, "conditions": [ready]},
    }
    if taints:
        node["spec"]["taints"] = taints
    return node


def pod_manifest(name: str, scheduler_name: str, run: str, **spec: Any) -> dict:
    """scheduler_perf's ``pod-default`` (requests = limits = 100m / 500Mi), plus ``spec``."""
    labels = spec.pop("labels", {})
    resources = {"cpu": "100m", "memory": "500Mi"}
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
                    "resources": {"requests": resources, "limits": dict(resources)},
                }
            ],
            **spec,
        },
    }


# -- SchedulingBasic ------------------------------------------------------------------------------


def _basic_node(index: int) -> dict:
    return node_manifest(f"basic-{index:05d}", {NODE_SET_LABEL: "basic"}, [])


def _basic_pod(index: int, scheduler_name: str, run: str) -> dict:
    return pod_manifest(f"pod-{index:05d}", scheduler_name, run)


# -- Mixed ----------------------------------------------------------------------------------------

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


# -- workloads and cases --------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A node template and a pod template, both indexed."""

    name: str
    node_set: str
    node: Callable[[int], dict]
    pod: Callable[[int, str, str], dict]
    description: str

    def nodes(self, count: int) -> list[dict]:
        return [self.node(i) for i in range(count)]

    def pods(self, count: int, scheduler_name: str, run: str) -> list[dict]:
        return [self.pod(i, scheduler_name, run) for i in range(count)]


BASIC = Workload(
    "SchedulingBasic",
    "basic",
    _basic_node,
    _basic_pod,
    "scheduler_perf's node-default and pod-default: 4 CPU / 32Gi / 110 pods; 100m / 500Mi",
)
MIXED = Workload(
    "Mixed",
    "mixed",
    _mixed_node,
    _mixed_pod,
    "10 zones, 3 instance types, 1 node in 10 tainted; pods in turn: plain, node affinity + "
    "toleration, zone/hostname spread, hostname anti-affinity (groups of 10)",
)
WORKLOADS = {w.name: w for w in (BASIC, MIXED)}


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
