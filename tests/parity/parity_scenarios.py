"""Seeded random scheduling scenarios, and the reductions that shrink one.

A :class:`Scenario` is plain Kubernetes manifests: a few nodes (random capacities, labels, taints,
cordons, images), pods already bound to them (resources and host ports in use) and the pods to
schedule, in the order they are created (priority first, highest first, so that a queue sorted by
PrioritySort would pop them in the same order). Every pod to schedule names one of
:data:`SCHEDULER_NAMES`. The manifests are what a user would write: the apiserver's defaults
(requests copied from limits, the overhead of a RuntimeClass, the priority of a class) are applied
when they are created.

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
    "PRIORITY_CLASSES",
    "RATIO_SCHEDULER_NAME",
    "RUNTIME_CLASS",
    "SCHEDULER_NAME",
    "SCHEDULER_NAMES",
    "ZONE",
    "Scenario",
    "generate",
    "reductions",
    "renamed",
]

#: The profiles both schedulers run (``parity_runner.PROFILE``): kube-scheduler's defaults, and
#: the same plugins with other args (bin-packing; a ratio shape and an enforced affinity).
SCHEDULER_NAME = "reference-scheduler"
BINPACK_SCHEDULER_NAME = "reference-binpack"
RATIO_SCHEDULER_NAME = "reference-ratio"
SCHEDULER_NAMES = (SCHEDULER_NAME, BINPACK_SCHEDULER_NAME, RATIO_SCHEDULER_NAME)
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: PriorityClasses the scenarios use (created once per cluster): name -> value.
PRIORITY_CLASSES = {"parity-low": -10, "parity-mid": 100, "parity-high": 1000}
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

    @property
    def node_names(self) -> list[str]:
        return [n["metadata"]["name"] for n in self.nodes]

    def pod_names(self) -> list[str]:
        return [p["metadata"]["name"] for p in self.pods]

    def size(self) -> int:
        """A measure that every reduction makes smaller: objects, then their fields."""
        return len(yaml.safe_dump(self.manifests(), sort_keys=True))

    def manifests(self) -> list[dict[str, Any]]:
        return [*self.nodes, *self.bound_pods, *self.pods]

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
    bound = [_bound_pod(rng, f"bound-{i}", rng.choice(names)) for i in range(rng.randint(0, 4))]
    pods = [_pod(rng, f"pod-{i}", names) for i in range(rng.randint(1, 8))]
    # Created one at a time in this order; the highest priority first, as PrioritySort pops them.
    pods.sort(key=lambda p: -PRIORITY_CLASSES.get(p["spec"].get("priorityClassName", ""), 0))
    return Scenario(f"{seed}-{index}", nodes, bound, pods)


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


def _bound_pod(rng: random.Random, name: str, node: str) -> dict[str, Any]:
    ports: set[tuple[str, str, int]] = set()
    containers = [_container(rng, f"app-{i}", ports) for i in range(rng.choice([1, 1, 2]))]
    spec: dict[str, Any] = {"nodeName": node, "containers": containers}
    if _pick(rng, 0.1):
        spec["resources"] = _pod_level_resources(rng, containers)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _pod(rng: random.Random, name: str, nodes: list[str]) -> dict[str, Any]:
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
    tolerations = [_toleration(rng) for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))]
    if tolerations:
        spec["tolerations"] = tolerations
    if _pick(rng, 0.4):
        spec["priorityClassName"] = rng.choice(sorted(PRIORITY_CLASSES))
    if _pick(rng, 0.05):
        spec["runtimeClassName"] = RUNTIME_CLASS["metadata"]["name"]
    if _pick(rng, 0.04):
        spec["schedulingGates"] = [{"name": "example.com/hold"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


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
    """A copy whose node names carry ``prefix``, wherever a string value names a node."""
    mapping = {name: prefix + name for name in scenario.node_names}

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
    )


# -- shrinking ------------------------------------------------------------------------------------

_NODE_AFFINITY = "spec.affinity.nodeAffinity"
_REQUIRED_TERMS = (
    f"{_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
)
_PREFERRED_TERMS = f"{_NODE_AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution"

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
