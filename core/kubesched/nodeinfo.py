"""NodeInfo: a node and the aggregates of the pods on it, as one scheduling cycle sees them.

Aggregates follow kube-scheduler's ``framework.NodeInfo``: requested resources (what Filter
checks), non-zero requested (what scoring uses, with the default 100m / 200Mi for containers
that request nothing), used host ports, and the pods with (anti-)affinity terms.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

from .objects import CPU, MEMORY, Container, Node, Pod

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "NodeInfo",
    "next_generation",
    "pod_requests",
]

#: kube-scheduler's defaults for containers without a cpu/memory request, used only for scoring.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
HUGEPAGES_PREFIX = "hugepages-"

#: One counter for every NodeInfo (kube-scheduler's ``nextGeneration``): a generation names one
#: state of one node, never two, even across a node deleted and added again or a what-if copy.
_GENERATIONS = itertools.count(1)


def next_generation() -> int:
    """A generation number no NodeInfo has had before."""
    return next(_GENERATIONS)


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def _max(total: dict[str, int], other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if value > total.get(name, 0):
            total[name] = value


def _container_requests(container: Container, non_zero: bool) -> Mapping[str, int]:
    if not non_zero:
        return container.requests
    requests = dict(container.requests)
    requests.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST)
    requests.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST)
    return requests


def pod_requests(pod: Pod, non_zero: bool = False) -> dict[str, int]:
    """What a pod asks of a node, as ``k8s.io/component-helpers/resource.PodRequests`` counts it.

    The sum of the app containers and the sidecars, or the largest regular init container plus
    the sidecars started before it, whichever is larger; pod-level requests
    (``spec.resources.requests``) of cpu, memory and hugepages replace those sums; then the pod
    overhead. ``non_zero`` substitutes kube-scheduler's defaults for cpu/memory that a container
    leaves unset, as its scoring does.
    """
    total: dict[str, int] = {}
    for container in pod.containers:
        _add(total, _container_requests(container, non_zero))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.init_containers:
        requests = _container_requests(container, non_zero)
        if container.is_sidecar:
            _add(total, requests)
            _add(sidecars, requests)
            candidate: Mapping[str, int] = sidecars
        else:
            candidate = dict(requests)
            _add(candidate, sidecars)  # type: ignore[arg-type]
        _max(init_peak, candidate)
    _max(total, init_peak)
    # Pod-level requests (cpu, memory, hugepages) replace what the containers add up to.
    for name, value in pod.pod_level_requests.items():
        if name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX):
            total[name] = value
    _add(total, pod.overhead)
    return total


class NodeInfo:
    """One node with the pods assigned (or assumed) to it and their aggregates."""

    __slots__ = (
        "generation",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Node | None = None, pods: Iterable[Pod] = ()) -> None:
        self.node = node
        #: The node's name ("" while only pods bound to a deleted node are left); a plain
        #: attribute because every Filter and Score call reads it.
        self.name = node.name if node is not None else ""
        self.pods: dict[str, Pod] = {}
        self.requested: dict[str, int] = {}
        self.non_zero_requested: dict[str, int] = {}
        #: ``(host_ip, protocol, port)`` triples in use.
        self.used_ports: dict[tuple[str, str, int], int] = {}
        self.pods_with_affinity: dict[str, Pod] = {}
        self.pods_with_required_anti_affinity: dict[str, Pod] = {}
        self.generation = next_generation()
        for pod in pods:
            self.add_pod(pod)

    def set_node(self, node: Node | None) -> None:
        """Replace the node object (an update, or ``None`` once it is deleted)."""
        self.node = node
        self.name = node.name if node is not None else ""
        self.generation = next_generation()

    @property
    def allocatable(self) -> Mapping[str, int]:
        return self.node.allocatable if self.node is not None else {}

    def add_pod(self, pod: Pod) -> None:
        """Count ``pod`` on this node (a bound or an assumed pod)."""
        self.pods[pod.uid] = pod
        self._account(pod, 1)

    def remove_pod(self, pod: Pod) -> bool:
        """Stop counting the pod with ``pod.uid``; returns whether it was here."""
        known = self.pods.pop(pod.uid, None)
        if known is None:
            return False
        self._account(known, -1)
        return True

    def _account(self, pod: Pod, sign: int) -> None:
        for name, value in pod_requests(pod).items():
            self.requested[name] = self.requested.get(name, 0) + sign * value
        non_zero = pod_requests(pod, non_zero=True)
        for name in (CPU, MEMORY):
            value = non_zero.get(name, 0)
            self.non_zero_requested[name] = self.non_zero_requested.get(name, 0) + sign * value
        # Regular init containers have exited before the app starts: only sidecars hold ports
        # (kube-scheduler's GetHostPorts).
        sidecars = [c for c in pod.init_containers if c.is_sidecar]
        for container in (*sidecars, *pod.containers):
            for port in container.host_ports:
                key = (port.host_ip, port.protocol, port.host_port)
                count = self.used_ports.get(key, 0) + sign
                if count > 0:
                    self.used_ports[key] = count
                else:
                    self.used_ports.pop(key, None)
        affinity = pod.affinity
        if affinity.get("podAffinity") or affinity.get("podAntiAffinity"):
            self._track(self.pods_with_affinity, pod, sign)
        anti = affinity.get("podAntiAffinity") or {}
        if anti.get("requiredDuringSchedulingIgnoredDuringExecution"):
            self._track(self.pods_with_required_anti_affinity, pod, sign)
        self.generation = next_generation()

    @staticmethod
    def _track(index: dict[str, Pod], pod: Pod, sign: int) -> None:
        if sign > 0:
            index[pod.uid] = pod
        else:
            index.pop(pod.uid, None)

    def clone(self) -> NodeInfo:
        """An independent copy (for what-if evaluation such as preemption)."""
        other = NodeInfo(self.node)
        other.pods = dict(self.pods)
        other.requested = dict(self.requested)
        other.non_zero_requested = dict(self.non_zero_requested)
        other.used_ports = dict(self.used_ports)
        other.pods_with_affinity = dict(self.pods_with_affinity)
        other.pods_with_required_anti_affinity = dict(self.pods_with_required_anti_affinity)
        other.generation = self.generation
        return other

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"
