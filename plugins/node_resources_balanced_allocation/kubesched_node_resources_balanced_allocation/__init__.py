"""NodeResourcesBalancedAllocation: prefer nodes whose resource use stays balanced.

kube-scheduler's score plugin (``pkg/scheduler/framework/plugins/noderesources``, v1.37): each
configured resource of a node is used at some fraction of its allocatable, and the closer those
fractions are to each other (the smaller their standard deviation), the better balanced the node
is: ``(1 - std) * 100``. A node scores by how much the pod improves its balance: the balance with
the pod against the balance without it, mapped onto ``[50, 100]`` (75: no change).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import (
    ArgsError,
    CycleState,
    FieldError,
    Handle,
    NodeInfo,
    Pod,
    Status,
    hookimpl,
    pod_requests,
)
from kubesched.api.selectors import label_key_errors
from kubesched.framework.helpers import MAX_NODE_SCORE

__all__ = [
    "DEFAULT_RESOURCES",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesBalancedAllocationArgs",
    "ResourceSpec",
    "balanced_allocation_score",
    "balanced_resource_score",
]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
_NAMESPACE_PREFIX = "kubernetes.io/"
_REQUESTS_PREFIX = "requests."


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource whose use is balanced against the others (weight is always 1)."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@dataclass(frozen=True)
class NodeResourcesBalancedAllocationArgs:
    """``pluginConfig[].args`` of NodeResourcesBalancedAllocation."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> NodeResourcesBalancedAllocationArgs:
        """Default and validate ``args``; raises :class:`ArgsError` listing every bad field."""
        errors = [
            FieldError(key, "unknown field; allowed: resources")
            for key in args
            if key != "resources"
        ]
        data = args.get("resources")
        if not data:  # none given: cpu and memory
            if errors:
                raise ArgsError(errors)
            return cls()
        if not isinstance(data, list | tuple):
            raise ArgsError([*errors, FieldError("resources", "must be a list of {name, weight}")])
        resources: list[ResourceSpec] = []
        seen: set[str] = set()
        for i, item in enumerate(data):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                errors.append(
                    FieldError(f"resources[{i}]", "must be an object with a name and a weight")
                )
                continue
            name = item["name"]
            weight = item.get("weight") or 1  # an unset or zero weight defaults to 1
            if name in seen:
                errors.append(FieldError(f"resources[{i}].name", f'Duplicate value: "{name}"'))
            seen.add(name)
            if isinstance(weight, bool) or not isinstance(weight, int) or weight != 1:
                errors.append(
                    FieldError(f"resources[{i}].weight", f"Invalid value: {weight}: must be 1")
                )
            resources.append(ResourceSpec(name, 1))
        if errors:
            raise ArgsError(errors)
        return cls(tuple(resources))


def _is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, ``kubernetes.io/``-prefixed or attachable-volume resources."""
    extended = (
        "/" in name
        and _NAMESPACE_PREFIX not in name
        and not name.startswith(_REQUESTS_PREFIX)
        and not label_key_errors(_REQUESTS_PREFIX + name)
    )
    return (
        extended
        or name.startswith("hugepages-")
        or _NAMESPACE_PREFIX in name
        or name.startswith("attachable-volumes-")
    )


def _allocatable_and_allocated(
    node_info: NodeInfo, resource: str, pod_request: int
) -> tuple[int, int]:
    """The node's allocatable and what its pods request already (actual requests, no defaults).

    A scalar resource the pod does not ask for, or the node lacks, gives ``(0, 0)``: left out.
    """
    if pod_request == 0 and _is_scalar_resource_name(resource):
        return 0, 0
    allocatable = node_info.allocatable
    if resource in (CPU, MEMORY, EPHEMERAL_STORAGE) or (
        resource in allocatable and _is_scalar_resource_name(resource)
    ):
        return allocatable.get(resource, 0), node_info.requested.get(resource, 0)
    return 0, 0


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """``(1 - std) * 100`` of the used fractions (capped at 1) of the resources the node has."""
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    # Same float operations, in the same order, as kube-scheduler: the same truncated score.
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_allocation_score(
    requested: Sequence[int], allocated: Sequence[int], allocatable: Sequence[int]
) -> int:
    """The score of a node: how the pod changes its balance (kube's ``balancedResourceScorer``).

    ``requested`` is what the node's pods and the pod ask for, ``allocated`` what the node's pods
    ask for alone. Both balances lie in ``[50, 100]``, so their difference in ``[-50, 50]``; it
    is mapped onto ``[50, 100]``: 75 when the pod leaves the balance as it was, towards 100 when
    it improves it, towards 50 when it worsens it. The sum halved is never negative, so Python's
    floor division truncates as Go's does.
    """
    with_pod = balanced_resource_score(requested, allocatable)
    without_pod = balanced_resource_score(allocated, allocatable)
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without_pod) // 2


class NodeResourcesBalancedAllocation:
    """Scores nodes by how evenly the configured resources would be used."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeResourcesBalancedAllocationArgs.parse(args)
        self.handle = handle

    def _pod_requests(self, pod: Pod) -> list[int]:
        requests = pod_requests(pod)
        return [requests.get(spec.name, 0) for spec in self.args.resources]

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """The pod's requests per resource; Skip for a pod that requests none of them."""
        requests = self._pod_requests(pod)
        if not any(requests):
            # Best-effort pods would all pile onto the emptiest node (kubernetes#129138).
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, requests)
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Score reads the pod's requests of the configured resources only."""
        return self._pod_requests(pod)

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """How much the pod would improve the balance of the node's resource use."""
        if not self.args.resources:
            return Status.error("resources not found")
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:  # PreScore disabled
            requests = self._pod_requests(pod)
            if not any(requests):
                return 0
        allocatable, allocated, requested = [], [], []
        for spec, request in zip(self.args.resources, requests, strict=True):
            capacity, in_use = _allocatable_and_allocated(node_info, spec.name, request)
            if capacity == 0:  # left out: zero everywhere
                in_use = request = 0
            allocatable.append(capacity)
            allocated.append(in_use)
            requested.append(in_use + request)
        return balanced_allocation_score(requested, allocated, allocatable)
