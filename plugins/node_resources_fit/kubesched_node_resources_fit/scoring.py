"""Resource names and the three scoring strategies (kube's resource_allocation.go and friends).

Integer arithmetic follows Go's: divisions of non-negative numbers truncate, the broken-linear
shape truncates toward zero, and RequestedToCapacityRatio rounds half away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kubesched import NodeInfo
from kubesched.api.selectors import label_key_errors
from kubesched.framework.helpers import MAX_NODE_SCORE

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_NODE_SCORE",
    "MEMORY",
    "MOST_ALLOCATED",
    "PODS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "SCORING_STRATEGY_TYPES",
    "ResourceSpec",
    "UtilizationShapePoint",
    "broken_linear_function",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "make_scorer",
    "node_allocatable_and_requested",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = frozenset({LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO})

#: The top score of a ``requestedToCapacityRatio.shape`` point; scaled to MAX_NODE_SCORE.
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

_NAMESPACE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource Score looks at, and its weight."""

    name: str
    weight: int = 1


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio shape: utilization (0-100) -> score (0-10)."""

    utilization: int
    score: int


def is_extended_resource_name(name: str) -> bool:
    """``example.com/gpu``: a domain-prefixed name outside ``kubernetes.io/``."""
    if "/" not in name or _NAMESPACE_PREFIX in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not label_key_errors(_REQUESTS_PREFIX + name)


def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, ``kubernetes.io/``-prefixed or attachable-volume resources."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or _NAMESPACE_PREFIX in name
        or name.startswith("attachable-volumes-")
    )


def node_allocatable_and_requested(
    node_info: NodeInfo, resource: str, pod_request: int, use_requested: bool
) -> tuple[int, int]:
    """The node's allocatable and what it would have requested with the pod on it.

    cpu and memory count the non-zero requests of the pods already there (kube's defaults for
    containers that set none) unless ``use_requested``; a scalar resource the pod does not ask
    for, or that the node does not have, gives ``(0, 0)`` so that it is left out of the score.
    """
    if pod_request == 0 and is_scalar_resource_name(resource):
        return 0, 0
    allocatable = node_info.allocatable
    if resource in (CPU, MEMORY):
        requested = node_info.requested if use_requested else node_info.non_zero_requested
        return allocatable.get(resource, 0), requested.get(resource, 0) + pod_request
    if resource == EPHEMERAL_STORAGE:
        return allocatable.get(resource, 0), node_info.requested.get(resource, 0) + pod_request
    if resource in allocatable and is_scalar_resource_name(resource):
        return allocatable[resource], node_info.requested.get(resource, 0) + pod_request
    return 0, 0


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    # Pods without requests count the defaults, so requested may exceed capacity.
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _weighted(
    per_resource: Callable[[int, int], int], resources: Sequence[ResourceSpec]
) -> Callable[[Sequence[int], Sequence[int]], int]:
    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc == 0:
                continue
            total += per_resource(req, alloc) * spec.weight
            weights += spec.weight
        return total // weights if weights else 0

    return score


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """Piecewise-linear ``utilization -> score`` through the ``shape`` points, flat outside."""

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return score
                u0, s0 = shape[i - 1]
                return s0 + _go_div((score - s0) * (p - u0), utilization - u0)
        return shape[-1][1]

    return f


def _requested_to_capacity_ratio(
    resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Callable[[Sequence[int], Sequence[int]], int]:
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear_function([(p.utilization, p.score * scale) for p in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
        total = weights = 0
        for spec, req, alloc in zip(resources, requested, allocatable, strict=True):
            if alloc == 0:
                continue
            value = resource_score(req, alloc)
            if value > 0:
                total += value * spec.weight
                weights += spec.weight
        if weights == 0:
            return 0
        return math.floor(total / weights + 0.5)  # Go's math.Round for non-negative values

    return score


def make_scorer(
    strategy: str, resources: Sequence[ResourceSpec], shape: Sequence[UtilizationShapePoint]
) -> Callable[[Sequence[int], Sequence[int]], int]:
    """``score(requested, allocatable)`` per resource of ``resources``, for ``strategy``."""
    if strategy == MOST_ALLOCATED:
        return _weighted(_most_requested, resources)
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        return _requested_to_capacity_ratio(resources, shape)
    return _weighted(_least_requested, resources)
