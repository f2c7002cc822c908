"""Seeded scenarios of 100–500 nodes, where kube-scheduler samples the nodes it scores.

A medium scenario is a :class:`parity_scenarios.Scenario` like the small ones (logical node
names, logical namespaces, pods in creation order), shaped so that each pod's outcome can be
compared by replay (``replay.py``) and a whole run by invariants (``invariants.py``):

- nodes in three zones with random disk types, tiers and pools; a tenth tainted
  ``dedicated=infra:NoSchedule``, a few ``example.com/flaky:PreferNoSchedule``, a few
  cordoned; a pool of small nodes (2 cpu) labelled ``node-class: small`` and tainted
  ``node-class=small:NoSchedule``, kept for the ``filler`` pods;
- bound pods (``app: legacy`` and a few ``app: db`` in one zone only), light requests;
- the pods to schedule, as replicas of workloads (each with a ReplicaSet, so that the system
  default spreading applies), interleaved: ``web`` (zone spread ``maxSkew: 1``
  ``DoNotSchedule`` and hostname spread ``ScheduleAnyway``), ``front`` (required hostname
  anti-affinity to itself, on the few ``tier: 9`` nodes, so that some replicas find no node),
  ``cache`` (required zone affinity to ``app: db``), ``batch`` (varied requests up to 6 cpu,
  tolerations, preferred node affinity, a disk type or ``tier Gt 4`` required, host port
  8080, images, any of the three profiles), ``filler``
  (1 cpu each on the small pool, more replicas than it holds) and ``stray`` (a selector no
  node matches, or 64 cpu).

No pod has a priority: nothing can be preempted, so that a pod left unschedulable leaves the
cluster as it was (kube-scheduler's preemption also samples its candidates, from a random
offset). Capacity is ample except on the small pool, so how many pods each workload gets is
fixed by its constraints, whatever nodes the sampling picks: the whole-run comparison checks
that count.
"""

from __future__ import annotations

import random
from typing import Any

from parity_scenarios import (
    BINPACK_SCHEDULER_NAME,
    HOSTNAME_LABEL,
    RATIO_SCHEDULER_NAME,
    SCHEDULER_NAME,
    ZONE,
    Scenario,
)

__all__ = [
    "APP_LABEL",
    "FILLER_CPU",
    "HOST_PORT",
    "SMALL_CLASS",
    "WORKLOADS",
    "generate_medium",
]

APP_LABEL = "app"
ZONES = ["zone-a", "zone-b", "zone-c"]
#: The label and taint of the small pool, which only ``filler`` pods select and tolerate.
SMALL_CLASS = "node-class"
SMALL_CPU = "2"
#: The host port some ``batch`` pods ask for (NodePorts: one holder per node).
HOST_PORT = 8080
FILLER_CPU = "1"
WORKLOADS = ("web", "front", "cache", "batch", "filler", "stray")
#: The share of each workload among the pods to schedule.
_WEIGHTS = (30, 12, 12, 30, 10, 6)
_IMAGES = {
    "nginx:1.27": (["docker.io/library/nginx:1.27", "nginx:1.27"], 72 * 2**20),
    "redis": (["redis:latest"], 140 * 2**20),
    "postgres:16": (["postgres:16"], 430 * 2**20),
}
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_OWNER_UID = "00000000-0000-4000-8000-000000000002"


def generate_medium(seed: int, index: int, nodes: int, pods: int) -> Scenario:
    """Medium scenario ``index`` of ``seed``: ``nodes`` nodes (one in 25, at least 3,
    the small pool), a bound pod for every fourth node, ``pods`` pods to schedule."""
    if not 1 <= nodes or pods < 0:
        raise ValueError(f"nodes={nodes}, pods={pods}: expected at least one node")
    rng = random.Random(f"kubesched-parity-medium:{seed}:{index}:{nodes}:{pods}")
    small = max(3, nodes // 25)
    node_list = [_node(rng, f"node-{i}", small=i >= nodes - small) for i in range(nodes)]
    general = [n for n in node_list if SMALL_CLASS not in n["metadata"]["labels"]]
    db_zone = rng.choice(ZONES)
    in_db_zone = [n for n in general if n["metadata"]["labels"][ZONE] == db_zone]
    bound = []
    for i in range(nodes // 4):
        app = "db" if i % 8 == 0 else "legacy"
        host = rng.choice(in_db_zone if app == "db" and in_db_zone else general)
        bound.append(_bound_pod(rng, f"bound-{i}", host["metadata"]["name"], app))
    workloads = rng.choices(WORKLOADS, weights=_WEIGHTS, k=pods)
    to_schedule = [_pod(rng, f"pod-{i}", app) for i, app in enumerate(workloads)]
    objects = [_replica_set(app) for app in WORKLOADS]
    return Scenario(f"medium-{seed}-{index}", node_list, bound, to_schedule, objects)


def _node(rng: random.Random, name: str, *, small: bool) -> dict[str, Any]:
    labels = {HOSTNAME_LABEL: name, ZONE: rng.choice(ZONES)}
    spec: dict[str, Any] = {}
    if small:
        labels[SMALL_CLASS] = "small"
        cpu, memory = SMALL_CPU, "4Gi"
        spec["taints"] = [{"key": SMALL_CLASS, "value": "small", "effect": "NoSchedule"}]
    else:
        labels["disktype"] = rng.choice(["ssd", "hdd"])
        labels["tier"] = rng.choice(["1", "3", "5", "7", "9", "9"]) if rng.random() < 0.5 else "1"
        labels["pool"] = rng.choice(["blue", "green"])
        cpu, memory = rng.choice(["4", "8", "16"]), rng.choice(["8Gi", "16Gi", "32Gi"])
        if rng.random() < 0.1:
            spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        elif rng.random() < 0.06:
            spec["taints"] = [{"key": "example.com/flaky", "effect": "PreferNoSchedule"}]
        if rng.random() < 0.04:
            spec["unschedulable"] = True
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}
    status: dict[str, Any] = {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [ready],
    }
    if images := rng.sample(sorted(_IMAGES), rng.choice([0, 0, 1, 2])):
        status["images"] = [{"names": _IMAGES[i][0], "sizeBytes": _IMAGES[i][1]} for i in images]
    node: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    node["metadata"]["labels"] = labels
    if spec:
        node["spec"] = spec
    node["status"] = status
    return node


def _requests(cpu: str, memory: str) -> dict[str, Any]:
    return {"requests": {"cpu": cpu, "memory": memory}}


def _bound_pod(rng: random.Random, name: str, node: str, app: str) -> dict[str, Any]:
    container = {
        "name": "app",
        "image": rng.choice(sorted(_IMAGES)),
        "resources": _requests(rng.choice(["100m", "500m", "1"]), rng.choice(["256Mi", "1Gi"])),
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {APP_LABEL: app}},
        "spec": {"nodeName": node, "containers": [container], "terminationGracePeriodSeconds": 0},
    }


def _replica_set(app: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": f"{app}-rs"},
        "spec": {
            "replicas": 0,  # no controller runs: it only lends its selector
            "selector": {"matchLabels": {APP_LABEL: app}},
            "template": {
                "metadata": {"labels": {APP_LABEL: app}},
                "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]},
            },
        },
    }


def _term(app: str, key: str) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {APP_LABEL: app}}, "topologyKey": key}


def _pod(rng: random.Random, name: str, app: str) -> dict[str, Any]:
    cpu, memory = rng.choice(["100m", "250m", "500m"]), rng.choice(["128Mi", "256Mi", "512Mi"])
    container: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    spec: dict[str, Any] = {"schedulerName": SCHEDULER_NAME}
    selector = {"matchLabels": {APP_LABEL: app}}
    if app == "web":
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": "ScheduleAnyway"},
        ]
        for constraint in spec["topologySpreadConstraints"]:
            constraint["labelSelector"] = selector
    elif app == "front":
        spec["nodeSelector"] = {"tier": "9"}
        anti = [_term(app, HOSTNAME_LABEL)]
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti}
        }
    elif app == "cache":
        spec["schedulerName"] = rng.choice([SCHEDULER_NAME, BINPACK_SCHEDULER_NAME])
        spec["affinity"] = {
            "podAffinity": {_REQUIRED: [_term("db", ZONE)]},
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": _term(app, HOSTNAME_LABEL)}
                ]
            },
        }
    elif app == "batch":
        spec["schedulerName"] = rng.choices(
            [SCHEDULER_NAME, BINPACK_SCHEDULER_NAME, RATIO_SCHEDULER_NAME], weights=(6, 2, 2)
        )[0]
        cpu = rng.choice(["250m", "1", "2", "3", "6"])
        memory = rng.choice(["256Mi", "1Gi", "4Gi", "12Gi"])
        container["image"] = rng.choice(sorted(_IMAGES))
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "infra"}]
        if rng.random() < 0.5:
            preference = {
                "matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]
            }
            spec["affinity"] = {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": rng.randint(1, 100), "preference": preference}
                    ]
                }
            }
        if rng.random() < 0.25:
            spec["nodeSelector"] = {"disktype": rng.choice(["ssd", "hdd"])}
        elif rng.random() < 0.2:
            tier = {"key": "tier", "operator": "Gt", "values": ["4"]}
            spec.setdefault("affinity", {})["nodeAffinity"] = {
                **spec.get("affinity", {}).get("nodeAffinity", {}),
                _REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": [tier]}]},
            }
        if rng.random() < 0.2:
            container["ports"] = [{"containerPort": HOST_PORT, "hostPort": HOST_PORT}]
    elif app == "filler":
        cpu, memory = FILLER_CPU, "256Mi"
        spec["nodeSelector"] = {SMALL_CLASS: "small"}
        spec["tolerations"] = [{"key": SMALL_CLASS, "operator": "Exists", "effect": "NoSchedule"}]
    elif app == "stray":
        if rng.random() < 0.5:
            spec["nodeSelector"] = {"example.com/absent": "yes"}
        else:
            cpu = "64"
    container["resources"] = _requests(cpu, memory)
    spec["containers"] = [container]
    spec["terminationGracePeriodSeconds"] = 0
    metadata = {
        "name": name,
        "labels": {APP_LABEL: app},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{app}-rs",
                "uid": _OWNER_UID,
                "controller": True,
            }
        ],
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
