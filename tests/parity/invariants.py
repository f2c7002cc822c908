"""What must hold of any placement of a scenario's pods, whichever nodes a scheduler sampled.

A whole-file run (every pod created at once; each scheduler takes them in its own order and
samples its own nodes) ends in placements that need not agree node by node, but each must
respect what the pods required, and both schedulers must place as many pods. The checks here
read only the manifests and a placement (pod name -> node name, or ``None``), not a scheduler:

- :func:`spread_violations`: for every ``DoNotSchedule`` topology spread constraint of a placed
  pod, the matching pods per domain (the domains of the nodes the pod's ``nodeSelector``
  admits: ``nodeAffinityPolicy: Honor``, taints ignored) differ by at most ``maxSkew``. This
  holds at the end because it held at every placement and the pods that count all carry the
  same constraint (the generator's ``web`` workload; no bound pod matches it).
- :func:`anti_affinity_violations`: no placed pod shares a domain with a pod its required
  anti-affinity terms select (either way round: the existing pod's terms count too).
- :func:`over_capacity`: per node, the cpu, memory and pod count requested do not exceed the
  node's allocatable, and no host port has two holders.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from parity_scenarios import Scenario

from kubesched.api.quantity import to_int, to_milli

__all__ = [
    "Placement",
    "anti_affinity_violations",
    "over_capacity",
    "placed_pods",
    "spread_violations",
]

#: Pod name -> the node it was bound to, or ``None`` (not bound).
Placement = Mapping[str, str | None]
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def placed_pods(scenario: Scenario, placement: Placement) -> list[tuple[dict[str, Any], str]]:
    """The bound pods and the placed ones, each with its node."""
    pods = [(p, p["spec"]["nodeName"]) for p in scenario.bound_pods]
    for pod in scenario.pods:
        if (node := placement.get(pod["metadata"]["name"])) is not None:
            pods.append((pod, node))
    return pods


def _labels(manifest: Mapping[str, Any]) -> Mapping[str, str]:
    return manifest["metadata"].get("labels") or {}


def _namespace(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"].get("namespace") or "")


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """``matchLabels`` only: what the medium generator writes (an expression is refused)."""
    if selector is None:
        return False
    if selector.get("matchExpressions"):
        raise ValueError(f"selector {selector}: only matchLabels is checked here")
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def spread_violations(scenario: Scenario, placement: Placement) -> list[str]:
    """Each ``DoNotSchedule`` constraint of a placed pod whose domains end more than
    ``maxSkew`` apart, once per (constraint, selector): ``web: zone skew 2 > 1 (...)``."""
    nodes = {n["metadata"]["name"]: n for n in scenario.nodes}
    placed = placed_pods(scenario, placement)
    seen: set[str] = set()
    problems = []
    for pod, _ in placed:
        for constraint in pod["spec"].get("topologySpreadConstraints") or ():
            if constraint.get("whenUnsatisfiable") != "DoNotSchedule":
                continue
            key = constraint["topologyKey"]
            selector = pod["spec"].get("nodeSelector") or {}
            what = repr((key, constraint.get("labelSelector"), selector, _namespace(pod)))
            if what in seen:
                continue
            seen.add(what)
            counts: Counter[str] = Counter()
            for node in nodes.values():
                labels = _labels(node)
                if key in labels and all(labels.get(k) == v for k, v in selector.items()):
                    counts[labels[key]] += 0
            for other, node_name in placed:
                domain = _labels(nodes[node_name]).get(key)
                if (
                    domain in counts
                    and _namespace(other) == _namespace(pod)
                    and _selects(constraint.get("labelSelector"), _labels(other))
                ):
                    counts[domain] += 1
            if (
                counts
                and (skew := max(counts.values()) - min(counts.values())) > constraint["maxSkew"]
            ):
                spread = ", ".join(f"{d}={n}" for d, n in sorted(counts.items()))
                problems.append(
                    f"{_labels(pod).get('app', pod['metadata']['name'])}: {key} skew {skew} > "
                    f"{constraint['maxSkew']} ({spread})"
                )
    return problems


def _anti_terms(pod: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    affinity = pod["spec"].get("affinity") or {}
    return (affinity.get("podAntiAffinity") or {}).get(_REQUIRED) or ()


def anti_affinity_violations(scenario: Scenario, placement: Placement) -> list[str]:
    """Pairs of pods in one domain where one's required anti-affinity selects the other
    (terms in the pod's own namespace: the generator writes no ``namespaces``)."""
    nodes = {n["metadata"]["name"]: n for n in scenario.nodes}
    placed = placed_pods(scenario, placement)
    problems = []
    for pod, node in placed:
        for term in _anti_terms(pod):
            if term.get("namespaces") or term.get("namespaceSelector") is not None:
                raise ValueError(f"pod {pod['metadata']['name']}: only own-namespace terms")
            key = term["topologyKey"]
            domain = _labels(nodes[node]).get(key)
            for other, other_node in placed:
                if (
                    other is not pod
                    and domain is not None
                    and _labels(nodes[other_node]).get(key) == domain
                    and _namespace(other) == _namespace(pod)
                    and _selects(term.get("labelSelector"), _labels(other))
                ):
                    problems.append(
                        f"{pod['metadata']['name']} and {other['metadata']['name']} share "
                        f"{key}={domain}"
                    )
    return problems


def _requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """Millicores and bytes the pod's containers request (the generator writes no init
    containers, overheads or pod-level resources; a missing request counts 0, as in Filter)."""
    cpu = memory = 0
    for container in pod["spec"]["containers"]:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += to_milli(requests.get("cpu", 0))
        memory += to_int(requests.get("memory", 0))
    return cpu, memory


def over_capacity(scenario: Scenario, placement: Placement) -> list[str]:
    """Nodes whose pods request more cpu, memory or pods than the node allocates, or hold a
    host port twice."""
    used: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    ports: Counter[tuple[str, str, int]] = Counter()
    for pod, node in placed_pods(scenario, placement):
        for container in pod["spec"]["containers"]:
            for port in container.get("ports") or ():
                if port.get("hostPort"):
                    ports[node, port.get("protocol", "TCP"), port["hostPort"]] += 1
        cpu, memory = _requests(pod)
        used[node][0] += cpu
        used[node][1] += memory
        used[node][2] += 1
    problems = [
        f"{n}: host port {p}/{proto} held {k} times" for (n, proto, p), k in ports.items() if k > 1
    ]
    for node in scenario.nodes:
        name = node["metadata"]["name"]
        allocatable = node["status"]["allocatable"]
        limits = (
            to_milli(allocatable["cpu"]),
            to_int(allocatable["memory"]),
            to_int(allocatable["pods"]),
        )
        for resource, have, limit in zip(
            ("cpu", "memory", "pods"), used[name], limits, strict=True
        ):
            if have > limit:
                problems.append(f"{name}: {resource} {have} > {limit}")
    return problems
