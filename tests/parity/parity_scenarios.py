"""Seeded random scheduling scenarios, and the reductions that shrink one.

A :class:`Scenario` is plain Kubernetes manifests: workload objects (ReplicaSets and Services for
the default spreading, PodDisruptionBudgets for preemption), a few nodes (random capacities,
labels, taints, cordons, images), pods already bound to them (resources and host ports in use,
labels, owners, pod (anti-)affinity, lower priorities) and the pods to schedule, in the order
they are created (mostly priority first, as PrioritySort would pop them; sometimes not, so that a
pod may preempt an earlier one). Every pod to schedule names one of :data:`SCHEDULER_NAMES`.
The manifests are what a user would write: the apiserver's defaults (requests copied from
limits, the overhead of a RuntimeClass, the priority of a class) are applied when they are
created. A pod's ``metadata.namespace`` is logical too: none (the scenario's own namespace) or
:data:`OTHER_NAMESPACE`; the runner maps both, and affinity terms' ``namespaces``, to its own.

Node names are logical (``node-0``, ``node-1``, …); :func:`renamed` gives a copy whose node names,
and every string value equal to one of them (hostname labels, ``nodeName``, affinity values),
carry a prefix, so that each run of a scenario on a cluster has nodes of its own.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

__all__ = [
    "BINPACK_SCHEDULER_NAME",
    "GPU",
    "HOSTNAME_LABEL",
    "NAMESPACE_TEAMS",
    "NON_PREEMPTING_CLASSES",
    "OTHER_NAMESPACE",
    "OWN_NAMESPACE",
    "PRIORITY_CLASSES",
    "RATIO_SCHEDULER_NAME",
    "RUNTIME_CLASS",
    "SCHEDULER_NAME",
    "SCHEDULER_NAMES",
    "TEAM_LABEL",
    "ZONE",
    "Scenario",
    "generate",
    "reductions",
    "renamed",
]

#: The profiles both schedulers run (``parity_profile.PROFILE``): kube-scheduler's defaults, and
#: the same plugins with other args (bin-packing; a ratio shape and an enforced affinity).
SCHEDULER_NAME = "reference-scheduler"
BINPACK_SCHEDULER_NAME = "reference-binpack"
RATIO_SCHEDULER_NAME = "reference-ratio"
SCHEDULER_NAMES = (SCHEDULER_NAME, BINPACK_SCHEDULER_NAME, RATIO_SCHEDULER_NAME)
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: PriorityClasses the scenarios use (created once per cluster): name -> value.
PRIORITY_CLASSES = {
    "parity-low": -10,
    "parity-mid": 100,
    "parity-high": 1000,
    "parity-high-never": 1000,
}
#: The classes with ``preemptionPolicy: Never`` (copied into the pods that name them).
NON_PREEMPTING_CLASSES = frozenset({"parity-high-never"})
#: A pod with this ``metadata.namespace`` runs in the scenario's second namespace; pods without
#: one run in its own. Affinity terms name namespaces by these logical names too.
OWN_NAMESPACE = "own"
OTHER_NAMESPACE = "other"
#: The label that tells a scenario's two namespaces apart (for ``namespaceSelector``).
TEAM_LABEL = "parity.kubesched.io/team"
NAMESPACE_TEAMS = {OWN_NAMESPACE: "blue", OTHER_NAMESPACE: "green"}
#: A RuntimeClass with a pod overhead (created once per cluster): its admission plugin copies
#: the overhead into the pods that name it.
RUNTIME_CLASS = {
    "apiVersion": "node.k8s.io/v1",
    "kind": "RuntimeClass",
    "metadata": {"name": "parity-overhead"},
    "handler": "parity",
    "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
}

GPU = "example.com/gpu"
ZONE = "topology.kubernetes.io/zone"
#: Node label keys and the values they take; ``tier`` is numeric for Gt/Lt.
NODE_LABELS: dict[str, list[str]] = {
    ZONE: ["zone-a", "zone-b", "zone-c"],
    "disktype": ["ssd", "hdd"],
    "tier": ["1", "3", "5", "7", "9", "none"],  # "none": Gt/Lt cannot read it
    "pool": ["blue", "green"],
    "accelerator": ["gpu"],
}
#: Keys no node carries, for Exists/DoesNotExist/NotIn on a missing label.
MISSING_LABEL_KEYS = ["example.com/absent"]
TAINT_KEYS = ["dedicated", "gpu", "maintenance", "example.com/flaky"]
TAINT_VALUES = ["", "infra", "batch"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
#: Images by the name a pod uses, with the names a node reports and the size.
IMAGES: dict[str, tuple[list[str], int]] = {
    "registry.k8s.io/pause:3.10": (["registry.k8s.io/pause:3.10"], 320_000),
    "nginx:1.27": (["docker.io/library/nginx:1.27", "nginx:1.27"], 72 * 2**20),
    "redis": (["redis:latest"], 140 * 2**20),
    "postgres:16": (["postgres:16", "docker.io/library/postgres:16"], 430 * 2**20),
    "example.com/ml/trainer:v2": (["example.com/ml/trainer:v2"], 1900 * 2**20),
    "busybox:1.36": (["busybox:1.36"], 4 * 2**20),
}
NODE_CPU = ["1", "2", "4", "8", "3500m"]
NODE_MEMORY = ["1Gi", "2Gi", "4Gi", "8Gi", "16Gi"]
NODE_PODS = ["2", "3", "5", "110", "110", "110"]
NODE_EPHEMERAL = ["10Gi", "50Gi"]
NODE_GPUS = ["1", "2", "4"]
HUGEPAGES = "hugepages-2Mi"
NODE_HUGEPAGES = ["256Mi", "1Gi"]
POD_CPU = ["100m", "250m", "500m", "1", "1500m", "2", "3"]
POD_MEMORY = ["64Mi", "256Mi", "512Mi", "1Gi", "2Gi", "6Gi"]
POD_EPHEMERAL = ["1Gi", "5Gi", "20Gi"]
POD_HUGEPAGES = ["128Mi", "512Mi"]
#: The cpu (millicores) and memory (MiB) of the quantities above, to keep pod-level requests
#: above what the containers ask for (the apiserver's rule).
_MILLI = {"100m": 100, "250m": 250, "500m": 500, "1": 1000, "1500m": 1500, "2": 2000, "3": 3000}
_MIB = {"64Mi": 64, "256Mi": 256, "512Mi": 512, "1Gi": 1024, "2Gi": 2048, "6Gi": 6144}
#: Pod labels the workloads, spread constraints and (anti-)affinity terms select by.
APPS = ["web", "db", "cache"]
VERSIONS = ["v1", "v2"]
#: Owner references need a uid; nothing checks it (the scheduler finds owners by name).
OWNER_UID = "00000000-0000-4000-8000-000000000001"
HOST_PORTS = [80, 8080]
PROTOCOLS = ["TCP", "TCP", "UDP", "SCTP"]
HOST_IPS = ["", "", "127.0.0.1", "10.1.2.3"]


@dataclass(frozen=True)
class Scenario:
    """Nodes, pods bound to them, and pods to schedule in creation order (all manifests)."""

    name: str
    nodes: list[dict[str, Any]] = field(default_factory=list)
    bound_pods: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    #: Workload objects the plugins consult (Services, ReplicaSets, PodDisruptionBudgets),
    #: created first; a PodDisruptionBudget's ``status`` is written after it is created.
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes]

    def pod_names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]

    def size(self) -> int:
        """A measure that every reduction makes smaller: objects, then their fields."""
        return len(yaml.safe_dump(self.manifests(), sort_keys=True))

    def manifests(self) -> list[dict[str, Any]]:
        return [*self.objects, *self.nodes, *self.bound_pods, *self.pods]

    def to_yaml(self) -> str:
        """The manifests as one multi-document YAML file, in creation order."""
        return yaml.safe_dump_all(self.manifests(), sort_keys=False, default_flow_style=None)


# -- generation -----------------------------------------------------------------------------------


def generate(seed: int, index: int) -> Scenario:
    """Scenario ``index`` of the sequence that ``seed`` gives; the same arguments, the same
    scenario, whatever was generated before."""
    rng = random.Random(f"kubesched-parity:{seed}:{index}")
    nodes = [_node(rng, f"node-{i}") for i in range(rng.randint(2, 8))]
    names = [n["metadata"]["name"] for n in nodes]
    objects = _workload_objects(rng)
    owned = {
        o["spec"]["selector"]["matchLabels"]["app"] for o in objects if o["kind"] == "ReplicaSet"
    }
    bound = [
        _bound_pod(rng, f"bound-{i}", rng.choice(names), owned) for i in range(rng.randint(0, 6))
    ]
    _one_holder_per_host_port(bound)
    # Half the scenarios run replicas of one workload beside the other pods: the same labels,
    # owner and (anti-)affinity or spreading, so that the pods' terms select one another.
    replica = _replica_template(rng, owned) if _pick(rng, 0.6) else None
    pods = [_pod(rng, f"pod-{i}", names, owned, replica) for i in range(rng.randint(1, 8))]
    # Created one at a time in this order: mostly the highest priority first, as PrioritySort
    # would pop them; otherwise as generated, so that a pod may preempt one created before it.
    if _pick(rng, 0.6):
        pods.sort(key=lambda p: -PRIORITY_CLASSES.get(p["spec"].get("priorityClassName", ""), 0))
    scenario = Scenario(f"{seed}-{index}", nodes, bound, pods, objects)
    # Storage and devices draw from generators of their own: the rest stays as it was.
    from parity_resources import add_devices, add_storage

    return add_devices(add_storage(scenario, seed, index), seed, index)


def _pick(rng: random.Random, probability: float) -> bool:
    return rng.random() < probability


def _node(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {HOSTNAME_LABEL: name}
    for key, values in NODE_LABELS.items():
        if _pick(rng, 0.6):
            labels[key] = rng.choice(values)
    resources = {
        "cpu": rng.choice(NODE_CPU),
        "memory": rng.choice(NODE_MEMORY),
        "pods": rng.choice(NODE_PODS),
    }
    if _pick(rng, 0.3):
        resources["ephemeral-storage"] = rng.choice(NODE_EPHEMERAL)
    if labels.get("accelerator") == "gpu" or _pick(rng, 0.15):
        resources[GPU] = rng.choice(NODE_GPUS)
    if _pick(rng, 0.15):
        resources[HUGEPAGES] = rng.choice(NODE_HUGEPAGES)
    spec: dict[str, Any] = {}
    taints = []
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
        taint = {"key": rng.choice(TAINT_KEYS), "effect": rng.choice(EFFECTS)}
        if value := rng.choice(TAINT_VALUES):
            taint["value"] = value
        # The apiserver refuses two taints with the same key and effect.
        if all((t["key"], t["effect"]) != (taint["key"], taint["effect"]) for t in taints):
            taints.append(taint)
    if taints:
        spec["taints"] = taints
    if _pick(rng, 0.15):
        spec["unschedulable"] = True
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}
    status: dict[str, Any] = {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": [ready],
    }
    images = rng.sample(sorted(IMAGES), rng.choice([0, 0, 1, 2, 3]))
    if images:
        status["images"] = [{"names": IMAGES[i][0], "sizeBytes": IMAGES[i][1]} for i in images]
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
    }
    if spec:
        node["spec"] = spec
    node["status"] = status
    return node


def _resources(rng: random.Random, *, allow_limits_only: bool = True) -> dict[str, Any]:
    """A container's resources: requests (or only limits, which the apiserver copies)."""
    requests: dict[str, str] = {}
    if _pick(rng, 0.75):
        requests["cpu"] = rng.choice(POD_CPU)
    if _pick(rng, 0.65):
        requests["memory"] = rng.choice(POD_MEMORY)
    if _pick(rng, 0.1):
        requests["ephemeral-storage"] = rng.choice(POD_EPHEMERAL)
    resources: dict[str, Any] = {}
    if requests:
        if allow_limits_only and _pick(rng, 0.1):
            resources["limits"] = dict(requests)
        else:
            resources["requests"] = requests
    if _pick(rng, 0.12):
        # Extended resources are requested through limits (requests must equal them).
        count = rng.choice(["1", "2"])
        resources.setdefault("requests", {})[GPU] = count
        resources.setdefault("limits", {})[GPU] = count
    if _pick(rng, 0.05):
        # Huge pages: requests equal to limits, and only beside a cpu or memory request.
        size = rng.choice(POD_HUGEPAGES)
        resources.setdefault("requests", {})[HUGEPAGES] = size
        resources.setdefault("limits", {})[HUGEPAGES] = size
        requests, limits = resources["requests"], resources["limits"]
        if not {"cpu", "memory"} & set(requests):
            # Limits alone become the requests; with a requests entry they no longer would.
            kept = {k: v for k, v in limits.items() if k in ("cpu", "memory")}
            requests.update(kept or {"memory": rng.choice(POD_MEMORY)})
    return resources


def _container(rng: random.Random, name: str, ports: set[tuple[str, str, int]]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": rng.choice(sorted(IMAGES))}
    if resources := _resources(rng):
        container["resources"] = resources
    if _pick(rng, 0.3):
        port = (rng.choice(HOST_IPS), rng.choice(PROTOCOLS), rng.choice(HOST_PORTS))
        if port not in ports:  # the apiserver refuses a host port twice in one pod
            ports.add(port)
            entry: dict[str, Any] = {"containerPort": port[2], "hostPort": port[2]}
            if port[1] != "TCP" or _pick(rng, 0.3):
                entry["protocol"] = port[1]
            if port[0]:
                entry["hostIP"] = port[0]
            container["ports"] = [entry]
    return container


def _bound_pod(rng: random.Random, name: str, node: str, owned: set[str]) -> dict[str, Any]:
    ports: set[tuple[str, str, int]] = set()
    containers = [_container(rng, f"app-{i}", ports) for i in range(rng.choice([1, 1, 2]))]
    spec: dict[str, Any] = {"nodeName": node, "containers": containers}
    if _pick(rng, 0.1):
        spec["resources"] = _pod_level_resources(rng, containers)
    metadata: dict[str, Any] = {"name": name}
    labels = _pod_labels(rng)
    if _pick(rng, 0.2):
        metadata["namespace"] = OTHER_NAMESPACE
    elif labels.get("app") in owned and _pick(rng, 0.7):
        metadata["ownerReferences"] = [_owner(labels["app"])]
    if labels:
        metadata["labels"] = labels
    if _pick(rng, 0.3):
        spec["affinity"] = _pod_affinity(rng, labels)
    if _pick(rng, 0.6):
        # Victims of preemption: priorities below (and equal to) the pods to schedule.
        spec["priorityClassName"] = rng.choice(["parity-low", "parity-low", "parity-mid"])
    spec["terminationGracePeriodSeconds"] = 0  # no kubelet: a deleted victim goes at once
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def _one_holder_per_host_port(bound: list[dict[str, Any]]) -> None:
    """Take out the host ports a pod bound earlier to the same node already holds: a kubelet
    would refuse the second pod.

    Kept out besides because kube-scheduler and kubesched count such a node differently:
    kube-scheduler's NodeInfo keeps used host ports as a set, so removing one of two holders
    (preemption's dry run, or the victim's deletion) frees the port for it, while kubesched's
    NodeInfo counts holders (``core/kubesched/nodeinfo.py``) and keeps it in use.
    """
    held: dict[str, set[tuple[str, int]]] = {}
    for pod in bound:
        taken = held.setdefault(pod["spec"]["nodeName"], set())
        for container in pod["spec"]["containers"]:
            ports = [(p.get("protocol", "TCP"), p["hostPort"]) for p in container.get("ports", ())]
            if any(port in taken for port in ports):
                del container["ports"]
            else:
                taken.update(ports)


def _pod(
    rng: random.Random,
    name: str,
    nodes: list[str],
    owned: set[str],
    replica: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    ports: set[tuple[str, str, int]] = set()
    containers = [_container(rng, f"app-{i}", ports) for i in range(rng.choice([1, 1, 1, 2]))]
    spec: dict[str, Any] = {"schedulerName": rng.choices(SCHEDULER_NAMES, weights=(6, 2, 2))[0]}
    if _pick(rng, 0.25):
        init = []
        for i in range(rng.choice([1, 1, 2])):
            container = _container(rng, f"init-{i}", ports)
            if _pick(rng, 0.5):
                container["restartPolicy"] = "Always"  # a sidecar
            init.append(container)
        spec["initContainers"] = init
    spec["containers"] = containers
    if _pick(rng, 0.08):
        spec["resources"] = _pod_level_resources(
            rng, [*spec.get("initContainers", ()), *containers]
        )
    if _pick(rng, 0.25):
        spec["nodeSelector"] = _node_selector(rng)
    affinity: dict[str, Any] = {}
    if _pick(rng, 0.3):
        terms = [_selector_term(rng, nodes) for _ in range(rng.choice([1, 1, 2]))]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if _pick(rng, 0.35):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": _selector_term(rng, nodes)}
            for _ in range(rng.randint(1, 3))
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    metadata: dict[str, Any] = {"name": name}
    labels = _pod_labels(rng)
    if labels.get("app") in owned and _pick(rng, 0.7):
        metadata["ownerReferences"] = [_owner(labels["app"])]
    if _pick(rng, 0.25):
        spec.setdefault("affinity", {}).update(_pod_affinity(rng, labels))
    if _pick(rng, 0.25):
        spec["topologySpreadConstraints"] = _spread_constraints(rng, labels)
    if replica is not None and _pick(rng, 0.7):
        labels = {**labels, **replica["labels"]}
        metadata.pop("ownerReferences", None)
        if "owner" in replica:
            metadata["ownerReferences"] = [replica["owner"]]
        if "affinity" in replica:
            spec.setdefault("affinity", {}).update(copy.deepcopy(replica["affinity"]))
        if "spread" in replica:
            spec["topologySpreadConstraints"] = copy.deepcopy(replica["spread"])
    if labels:
        metadata["labels"] = labels
    tolerations = [_toleration(rng) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    if tolerations:
        spec["tolerations"] = tolerations
    if _pick(rng, 0.5):
        spec["priorityClassName"] = rng.choice(sorted(PRIORITY_CLASSES))
    if _pick(rng, 0.05):
        spec["runtimeClassName"] = RUNTIME_CLASS["metadata"]["name"]
    if _pick(rng, 0.04):
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    spec["terminationGracePeriodSeconds"] = 0
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


# -- workloads: labels, owners, spreading, pod (anti-)affinity ----------------------------------


def _pod_labels(rng: random.Random) -> dict[str, str]:
    labels = {}
    if _pick(rng, 0.7):
        labels["app"] = rng.choice(APPS)
    if _pick(rng, 0.3):
        labels["version"] = rng.choice(VERSIONS)
    return labels


def _owner(app: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": f"{app}-rs",
        "uid": OWNER_UID,
        "controller": True,
    }


def _workload_objects(rng: random.Random) -> list[dict[str, Any]]:
    """ReplicaSets and Services (whose selectors the default spreading uses) and
    PodDisruptionBudgets (which preemption respects), all in the scenario's own namespace."""
    objects: list[dict[str, Any]] = []
    for app in APPS:
        if _pick(rng, 0.3):
            objects.append(
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "metadata": {"name": f"{app}-rs"},
                    "spec": {
                        "replicas": 0,  # no controller runs: it only lends its selector
                        "selector": {"matchLabels": {"app": app}},
                        "template": {
                            "metadata": {"labels": {"app": app}},
                            "spec": {"containers": [{"name": "app", "image": "busybox:1.36"}]},
                        },
                    },
                }
            )
        if _pick(rng, 0.2):
            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": app},
                    "spec": {
                        "clusterIP": "None",
                        "selector": {"app": app},
                        "ports": [{"port": 80}],
                    },
                }
            )
    for i in range(rng.choice([0, 0, 1, 1, 2])):
        spec: dict[str, Any] = {"selector": _label_selector(rng, allow_nil=False)}
        if _pick(rng, 0.5):
            spec["maxUnavailable"] = 1
        else:
            spec["minAvailable"] = rng.choice([1, 2])
        allowed = rng.choice([0, 0, 1])
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"pdb-{i}"},
                "spec": spec,
                # No disruption controller runs: the runner writes this status as it is.
                "status": {
                    "disruptionsAllowed": allowed,
                    "currentHealthy": 2,
                    "desiredHealthy": 2 - allowed,
                    "expectedPods": 2,
                },
            }
        )
    return objects


def _label_selector(rng: random.Random, *, allow_nil: bool = True) -> dict[str, Any] | None:
    """A pod label selector: mostly one app, sometimes expressions; rarely nil (selects none)."""
    if allow_nil and _pick(rng, 0.04):
        return None
    if _pick(rng, 0.8):
        return {"matchLabels": {"app": rng.choice(APPS)}}
    operator = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
    expression: dict[str, Any] = {
        "key": rng.choice(["app", "app", "version"]),
        "operator": operator,
    }
    if operator in ("In", "NotIn"):
        vocabulary = APPS if expression["key"] == "app" else VERSIONS
        expression["values"] = rng.sample(vocabulary, rng.randint(1, 2))
    return {"matchExpressions": [expression]}


def _spread_constraints(
    rng: random.Random, labels: Mapping[str, str], *, own_app: bool = False
) -> list[dict[str, Any]]:
    constraints: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(rng.choice([1, 1, 2])):
        key = rng.choice([ZONE, ZONE, HOSTNAME_LABEL, HOSTNAME_LABEL, "disktype"])
        # Replicas spread mostly as a hard rule, which is what rejects nodes.
        when = "DoNotSchedule" if _pick(rng, 0.7 if own_app else 0.5) else "ScheduleAnyway"
        if (key, when) in seen:  # the apiserver refuses a duplicate pair
            continue
        seen.add((key, when))
        constraint: dict[str, Any] = {
            "maxSkew": rng.choice([1, 1, 1, 2, 3]),
            "topologyKey": key,
            "whenUnsatisfiable": when,
        }
        if (own_app or _pick(rng, 0.6)) and "app" in labels:
            selector: dict[str, Any] | None = {"matchLabels": {"app": labels["app"]}}
        else:
            selector = _label_selector(rng)
        if selector is not None:
            constraint["labelSelector"] = selector
            if _pick(rng, 0.2) and "version" not in str(selector):
                constraint["matchLabelKeys"] = ["version"]
        if when == "DoNotSchedule" and _pick(rng, 0.25):
            constraint["minDomains"] = rng.choice([2, 3, 4])
        if _pick(rng, 0.25):
            constraint["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if _pick(rng, 0.25):
            constraint["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        constraints.append(constraint)
    return constraints


def _affinity_term(
    rng: random.Random, labels: Mapping[str, str], *, key: str | None = None
) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": key or rng.choice([HOSTNAME_LABEL, ZONE, ZONE])}
    if _pick(rng, 0.5) and "app" in labels:
        selector: dict[str, Any] | None = {"matchLabels": {"app": labels["app"]}}
    else:
        selector = _label_selector(rng)
    if selector is not None:
        term["labelSelector"] = selector
    where = rng.random()
    if where < 0.12:
        term["namespaces"] = rng.choice([[OTHER_NAMESPACE], [OWN_NAMESPACE, OTHER_NAMESPACE]])
    elif where < 0.24:
        team = rng.choice(sorted(NAMESPACE_TEAMS.values()))
        term["namespaceSelector"] = {"matchLabels": {TEAM_LABEL: team}}
    elif where < 0.28:
        term["namespaceSelector"] = {}  # every namespace
    return term


def _pod_affinity(rng: random.Random, labels: Mapping[str, str]) -> dict[str, Any]:
    """Pod affinity and/or anti-affinity, required and/or preferred."""
    affinity: dict[str, Any] = {}
    while not affinity:
        for kind in ("podAffinity", "podAntiAffinity"):
            terms: dict[str, Any] = {}
            if _pick(rng, 0.3):
                terms["requiredDuringSchedulingIgnoredDuringExecution"] = [
                    _affinity_term(rng, labels) for _ in range(rng.choice([1, 1, 2]))
                ]
            if _pick(rng, 0.3):
                terms["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": _affinity_term(rng, labels)}
                    for _ in range(rng.choice([1, 1, 2]))
                ]
            if terms:
                affinity[kind] = terms
    return affinity


def _replica_template(rng: random.Random, owned: set[str]) -> dict[str, Any]:
    """What the replicas of one workload share: labels, the owner, and one of hostname
    anti-affinity, zone affinity, spreading, or a preference."""
    app = rng.choice(APPS)
    labels = {"app": app}
    template: dict[str, Any] = {"labels": labels}
    if app in owned and _pick(rng, 0.8):
        template["owner"] = _owner(app)
    shape = rng.choice(
        ["anti-hostname", "anti-hostname", "affinity-zone", "spread", "spread", "preferred"]
    )
    selector = {"matchLabels": {"app": app}}
    if shape == "anti-hostname":
        term = {"labelSelector": selector, "topologyKey": HOSTNAME_LABEL}
        template["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    elif shape == "affinity-zone":
        other = {"matchLabels": {"app": rng.choice(APPS)}}
        term = {"labelSelector": rng.choice([selector, other]), "topologyKey": ZONE}
        template["affinity"] = {
            "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
    elif shape == "spread":
        template["spread"] = _spread_constraints(rng, labels, own_app=True)
    else:
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        term = {"labelSelector": selector, "topologyKey": rng.choice([HOSTNAME_LABEL, ZONE])}
        template["affinity"] = {
            kind: {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": term}
                ]
            }
        }
    return template


def _pod_level_resources(rng: random.Random, containers: list[dict[str, Any]]) -> dict[str, Any]:
    """Pod-level cpu and memory: requests (or limits, or both) above every container's sum."""
    cpu = memory = 0
    for container in containers:
        resources = container.get("resources") or {}
        for values in (resources.get("requests") or {}, resources.get("limits") or {}):
            cpu += _MILLI.get(values.get("cpu", ""), 0)
            memory += _MIB.get(values.get("memory", ""), 0)
    amounts: dict[str, str] = {}
    if _pick(rng, 0.8):
        amounts["cpu"] = f"{cpu + rng.choice(list(_MILLI.values()))}m"
    if not amounts or _pick(rng, 0.7):
        amounts["memory"] = f"{memory + rng.choice(list(_MIB.values()))}Mi"
    kind = rng.choice(["requests", "requests", "limits", "both"])
    if kind == "both":
        return {"requests": amounts, "limits": dict(amounts)}
    return {kind: amounts}


def _node_selector(rng: random.Random) -> dict[str, str]:
    keys = rng.sample(sorted(NODE_LABELS), rng.choice([1, 1, 2]))
    return {key: rng.choice(NODE_LABELS[key]) for key in keys}


def _expression(rng: random.Random, nodes: list[str]) -> dict[str, Any]:
    operator = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if operator in ("Gt", "Lt"):
        return {"key": "tier", "operator": operator, "values": [str(rng.randint(0, 10))]}
    if _pick(rng, 0.15):
        key = HOSTNAME_LABEL
        values = rng.sample(nodes, min(len(nodes), rng.randint(1, 2)))
    else:
        key = rng.choice([*sorted(NODE_LABELS), *MISSING_LABEL_KEYS])
        vocabulary = NODE_LABELS.get(key, ["x"])
        values = rng.sample(vocabulary, rng.randint(1, len(vocabulary)))
    if operator in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": operator}
    return {"key": key, "operator": operator, "values": values}


def _selector_term(rng: random.Random, nodes: list[str]) -> dict[str, Any]:
    term: dict[str, Any] = {}
    if _pick(rng, 0.85):
        term["matchExpressions"] = [_expression(rng, nodes) for _ in range(rng.randint(1, 2))]
    if not term or _pick(rng, 0.15):
        # A field requirement takes exactly one value (apiserver validation); two In
        # requirements on different names in every term leave no node ("terms conflict").
        term["matchFields"] = [
            {
                "key": "metadata.name",
                "operator": rng.choice(["In", "In", "NotIn"]),
                "values": [rng.choice(nodes)],
            }
            for _ in range(rng.choice([1, 1, 1, 2]))
        ]
    return term


def _toleration(rng: random.Random) -> dict[str, Any]:
    if _pick(rng, 0.1):
        return {"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}
    if _pick(rng, 0.05):
        return {"operator": "Exists"}  # tolerates every taint
    toleration: dict[str, Any] = {"key": rng.choice(TAINT_KEYS)}
    if _pick(rng, 0.4):
        toleration["operator"] = "Exists"
    else:
        if _pick(rng, 0.5):
            toleration["operator"] = "Equal"
        if value := rng.choice(TAINT_VALUES):
            toleration["value"] = value
    if effect := rng.choice(["", *EFFECTS]):
        toleration["effect"] = effect
        if effect == "NoExecute" and _pick(rng, 0.3):
            toleration["tolerationSeconds"] = 300
    return toleration


# -- renaming -------------------------------------------------------------------------------------


def renamed(scenario: Scenario, prefix: str) -> Scenario:
    """A copy whose node names, and the names of its cluster-scoped storage and device
    objects, carry ``prefix``, wherever a string value names one."""
    from parity_resources import CLUSTER_SCOPED_KINDS

    names = [
        *scenario.node_names,
        *(o["metadata"]["name"] for o in scenario.objects if o["kind"] in CLUSTER_SCOPED_KINDS),
    ]
    mapping = {name: prefix + name for name in names}

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return mapping.get(value, value)
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return Scenario(
        scenario.name,
        [walk(n) for n in scenario.nodes],
        [walk(p) for p in scenario.bound_pods],
        [walk(p) for p in scenario.pods],
        [walk(o) for o in scenario.objects],
    )


# -- shrinking ------------------------------------------------------------------------------------

_NODE_AFFINITY = "spec.affinity.nodeAffinity"
_REQUIRED_TERMS = (
    f"{_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
)
_PREFERRED_TERMS = f"{_NODE_AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution"
_POD_TERMS = tuple(
    f"spec.affinity.{kind}.{when}DuringSchedulingIgnoredDuringExecution"
    for kind in ("podAffinity", "podAntiAffinity")
    for when in ("required", "preferred")
)

#: What a reduction may take out of a manifest, one thing at a time: ``(path, mode)`` where the
#: path is dotted (``*`` is any list index) and the mode is ``each`` (every entry of the list or
#: mapping there, in turn) or ``whole`` (the field itself).
_REMOVABLE: tuple[tuple[str, str], ...] = (
    ("metadata.labels", "each"),
    ("spec.taints", "each"),
    ("spec.unschedulable", "whole"),
    ("status.images", "each"),
    ("spec.tolerations", "each"),
    ("spec.nodeSelector", "each"),
    (f"{_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution", "whole"),
    (_PREFERRED_TERMS, "whole"),
    (_REQUIRED_TERMS, "each"),
    (f"{_REQUIRED_TERMS}.*.matchExpressions", "each"),
    (f"{_REQUIRED_TERMS}.*.matchFields", "whole"),
    (_PREFERRED_TERMS, "each"),
    (f"{_PREFERRED_TERMS}.*.preference.matchExpressions", "each"),
    (f"{_PREFERRED_TERMS}.*.preference.matchFields", "whole"),
    *((path, "whole") for path in _POD_TERMS),
    *((path, "each") for path in _POD_TERMS),
    ("spec.topologySpreadConstraints", "whole"),
    ("spec.topologySpreadConstraints", "each"),
    *(
        (f"spec.topologySpreadConstraints.*.{key}", "whole")
        for key in ("minDomains", "matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy")
    ),
    ("metadata.ownerReferences", "whole"),
    ("metadata.namespace", "whole"),
    ("spec.initContainers", "each"),
    ("spec.containers", "each"),
    ("spec.containers.*.ports", "whole"),
    ("spec.initContainers.*.ports", "whole"),
    ("spec.initContainers.*.restartPolicy", "whole"),
    ("spec.containers.*.resources.requests", "each"),
    ("spec.initContainers.*.resources.requests", "each"),
    ("spec.containers.*.resources.limits", "each"),
    ("spec.initContainers.*.resources.limits", "each"),
    ("spec.priorityClassName", "whole"),
    ("spec.runtimeClassName", "whole"),
    ("spec.schedulingGates", "whole"),
)
#: Entries a reduction keeps: a node keeps its hostname label.
_KEEP = {("metadata.labels", HOSTNAME_LABEL)}


def reductions(scenario: Scenario, target: str) -> Iterator[Scenario]:
    """Smaller scenarios that may still show the mismatch of pod ``target``, biggest cuts first.

    Pods created after ``target`` go first (they cannot change its outcome), then whole nodes
    (with the pods bound to them), bound pods and earlier pods, then one field entry at a time.
    """
    index = scenario.pod_names().index(target)
    if index < len(scenario.pods) - 1:
        yield replace(scenario, pods=scenario.pods[: index + 1])
        return
    for i, node in enumerate(scenario.nodes):
        if len(scenario.nodes) == 1:
            break
        name = node["metadata"]["name"]
        yield replace(
            scenario,
            nodes=scenario.nodes[:i] + scenario.nodes[i + 1 :],
            bound_pods=[p for p in scenario.bound_pods if p["spec"].get("nodeName") != name],
        )
    for i in range(len(scenario.bound_pods)):
        yield replace(scenario, bound_pods=scenario.bound_pods[:i] + scenario.bound_pods[i + 1 :])
    for i in range(len(scenario.objects)):
        yield replace(scenario, objects=scenario.objects[:i] + scenario.objects[i + 1 :])
    for i in range(index):
        yield replace(scenario, pods=scenario.pods[:i] + scenario.pods[i + 1 :])
    groups: tuple[tuple[str, Callable[[Scenario], list[dict[str, Any]]]], ...] = (
        ("nodes", lambda s: s.nodes),
        ("bound_pods", lambda s: s.bound_pods),
        ("pods", lambda s: s.pods),
    )
    for group, objects in groups:
        for i, manifest in enumerate(objects(scenario)):
            for smaller in _field_reductions(manifest):
                items = list(objects(scenario))
                items[i] = smaller
                yield replace(scenario, **{group: items})


def _field_reductions(manifest: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Copies of ``manifest`` with one removable thing taken out (and emptied fields pruned)."""
    for pattern, mode in _REMOVABLE:
        for path in _expand(manifest, pattern.split(".")):
            value = _get(manifest, path)
            if mode == "whole":
                smaller = copy.deepcopy(manifest)
                del _get(smaller, path[:-1])[path[-1]]
                _prune(smaller, path[:-1])
                yield smaller
            elif isinstance(value, list):
                if pattern == "spec.containers" and len(value) == 1:
                    continue  # a pod needs a container
                for i in range(len(value)):
                    smaller = copy.deepcopy(manifest)
                    del _get(smaller, path)[i]
                    _prune(smaller, path)
                    yield smaller
            elif isinstance(value, dict):
                for key in value:
                    if (pattern, key) in _KEEP:
                        continue
                    smaller = copy.deepcopy(manifest)
                    del _get(smaller, path)[key]
                    _prune(smaller, path)
                    yield smaller


def _expand(manifest: Any, parts: list[str], prefix: tuple[Any, ...] = ()) -> Iterator[tuple]:
    if not parts:
        yield prefix
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        if isinstance(manifest, list):
            for i, item in enumerate(manifest):
                yield from _expand(item, rest, (*prefix, i))
    elif isinstance(manifest, dict) and head in manifest:
        yield from _expand(manifest[head], rest, (*prefix, head))


def _get(manifest: Any, path: tuple) -> Any:
    for key in path:
        manifest = manifest[key]
    return manifest


def _prune(manifest: dict[str, Any], path: tuple) -> None:
    """Remove the now empty containers along ``path``, innermost first."""
    for depth in range(len(path), 0, -1):
        value = _get(manifest, path[:depth])
        if value in ({}, []):
            del _get(manifest, path[: depth - 1])[path[depth - 1]]
