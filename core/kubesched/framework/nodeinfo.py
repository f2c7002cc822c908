"""NodeInfo: a node and the aggregates of the pods on it, as one scheduling cycle sees them.

Aggregates follow kube-scheduler's ``framework.NodeInfo``: requested resources (what Filter
checks), non-zero requested (what scoring uses, with the default 100m / 200Mi for containers
that request nothing), used host ports, and the pods with (anti-)affinity terms.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping

from kubesched.api.objects import CPU, MEMORY, Container, Node, Pod

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "NodeInfo",
    "compute_pod_requests",
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
    """What a pod asks of a node (see :func:`compute_pod_requests`), remembered on the Pod.

    A pod's requests are counted each time it is added to or removed from a node (the cache,
    preemption's what-ifs), so they are computed once per Pod object. The memo carries the
    object's ``id``: a ``copy.copy`` of the pod (changed afterwards, as NodeResourcesFit's
    scoring view) does not inherit it. Returns a fresh dict the caller may change.
    """
    try:
        memo = pod._requests_memo
    except AttributeError:  # a Pod built without __init__
        memo = None
    if memo is None or memo[0] != id(pod):
        memo = (id(pod), None, None)
    known = memo[2] if non_zero else memo[1]
    if known is None:
        known = compute_pod_requests(pod, non_zero)
        memo = (memo[0], memo[1], known) if non_zero else (memo[0], known, memo[2])
        try:
            pod._requests_memo = memo
        except AttributeError:  # not a kubesched Pod (a test double): nothing to remember on
            pass
    return dict(known)


def compute_pod_requests(pod: Pod, non_zero: bool = False) -> dict[str, int]:
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


class _Footprint:
    """What a pod adds to a node's aggregates, computed once per Pod object."""

    __slots__ = (
        "non_zero",
        "owner",
        "ports",
        "requests",
        "with_affinity",
        "with_required_anti_affinity",
    )

    def __init__(self, pod: Pod) -> None:
        self.owner = id(pod)
        self.requests = tuple(compute_pod_requests(pod).items())
        non_zero = compute_pod_requests(pod, non_zero=True)
        self.non_zero = tuple((name, non_zero.get(name, 0)) for name in (CPU, MEMORY))
        # Regular init containers have exited before the app starts: only sidecars hold ports
        # (kube-scheduler's GetHostPorts).
        sidecars = [c for c in pod.init_containers if c.is_sidecar]
        self.ports = tuple(
            (port.host_ip, port.protocol, port.host_port)
            for container in (*sidecars, *pod.containers)
            for port in container.host_ports
        )
        affinity = pod.affinity
        self.with_affinity = bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
        anti = affinity.get("podAntiAffinity") or {}
        self.with_required_anti_affinity = bool(
            anti.get("requiredDuringSchedulingIgnoredDuringExecution")
        )


def _footprint(pod: Pod) -> _Footprint:
    """The pod's footprint, remembered on the Pod object (guarded by its ``id`` like
    :func:`pod_requests`' memo, so a changed copy computes its own)."""
    try:
        known = pod._footprint
    except AttributeError:
        known = None
    if known is None or known.owner != id(pod):
        known = _Footprint(pod)
        try:
            pod._footprint = known
        except AttributeError:  # not a kubesched Pod (a test double)
            pass
    return known


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
        footprint = _footprint(pod)
        requested = self.requested
        for name, value in footprint.requests:
            requested[name] = requested.get(name, 0) + sign * value
        non_zero = self.non_zero_requested
        for name, value in footprint.non_zero:
            non_zero[name] = non_zero.get(name, 0) + sign * value
        used = self.used_ports
        for key in footprint.ports:
            count = used.get(key, 0) + sign
            if count > 0:
                used[key] = count
            else:
                used.pop(key, None)
        if footprint.with_affinity:
            self._track(self.pods_with_affinity, pod, sign)
        if footprint.with_required_anti_affinity:
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
