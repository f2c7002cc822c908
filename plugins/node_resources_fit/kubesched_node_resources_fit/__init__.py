"""NodeResourcesFit: kube-scheduler's resource fit filter and allocation scorer.

Filter keeps the nodes with room for the pod's requests (cpu, memory, ephemeral-storage,
extended and hugepages resources, and one more pod); Score ranks them by the configured
``scoringStrategy``: LeastAllocated (spread, the default), MostAllocated (bin-pack) or
RequestedToCapacityRatio (a piecewise-linear shape over utilization).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
    pod_requests,
)
from kubesched.framework.helpers import unreadable

from .args import DEFAULT_RESOURCES, NodeResourcesFitArgs, ScoringStrategy
from .scoring import (
    CPU,
    EPHEMERAL_STORAGE,
    LEAST_ALLOCATED,
    MEMORY,
    MOST_ALLOCATED,
    PODS,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceSpec,
    UtilizationShapePoint,
    is_extended_resource_name,
    is_scalar_resource_name,
    make_scorer,
    node_allocatable_and_requested,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "InsufficientResource",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "fit_requests",
    "fits_request",
    "reason_insufficient",
]

NAME = "NodeResourcesFit"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

REASON_TOO_MANY_PODS = "Too many pods"
REASON_INSUFFICIENT_CPU = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"


def reason_insufficient(resource: str) -> str:
    """The rejection reason for a resource the node lacks (``Insufficient nvidia.com/gpu``)."""
    return f"Insufficient {resource}"


_NATIVE = (CPU, MEMORY, EPHEMERAL_STORAGE)


# --- fit -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """One resource the node lacks for the pod (kube's ``InsufficientResource``)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    #: The request exceeds the node's whole allocatable: preemption cannot help.
    unresolvable: bool = False


def fit_requests(pod: Pod) -> dict[str, int]:
    """What Filter checks: cpu, memory, ephemeral-storage and the scalar resources requested."""
    return {
        name: value
        for name, value in pod_requests(pod).items()
        if name in _NATIVE or is_scalar_resource_name(name)
    }


def fits_request(
    requests: Mapping[str, int],
    node_info: NodeInfo,
    ignored_resources: frozenset[str] | set[str] = frozenset(),
    ignored_resource_groups: frozenset[str] | set[str] = frozenset(),
) -> list[InsufficientResource]:
    """Every resource ``node_info`` lacks for ``requests`` (kube's ``fitsRequest``).

    Order: pods, cpu, memory, ephemeral-storage, then the scalar resources by name.
    """
    insufficient = []
    allocatable, used = node_info.allocatable, node_info.requested
    allowed_pods = allocatable.get(PODS, 0)
    if len(node_info.pods) + 1 > allowed_pods:
        insufficient.append(
            InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, len(node_info.pods), allowed_pods)
        )
    scalars = sorted(name for name in requests if name not in _NATIVE)
    if not scalars and not any(requests.get(name, 0) for name in _NATIVE):
        return insufficient
    for name, reason in (
        (CPU, REASON_INSUFFICIENT_CPU),
        (MEMORY, REASON_INSUFFICIENT_MEMORY),
        (EPHEMERAL_STORAGE, REASON_INSUFFICIENT_EPHEMERAL_STORAGE),
    ):
        request = requests.get(name, 0)
        capacity, in_use = allocatable.get(name, 0), used.get(name, 0)
        if request > 0 and request > capacity - in_use:
            insufficient.append(
                InsufficientResource(name, reason, request, in_use, capacity, request > capacity)
            )
    for name in scalars:
        request = requests[name]
        if request == 0:
            continue
        if is_extended_resource_name(name) and (
            name in ignored_resources or name.split("/")[0] in ignored_resource_groups
        ):
            continue
        capacity, in_use = allocatable.get(name, 0), used.get(name, 0)
        if request > capacity - in_use:
            insufficient.append(
                InsufficientResource(
                    name, reason_insufficient(name), request, in_use, capacity, request > capacity
                )
            )
    return insufficient


def _fits(pod: Pod, node: Node) -> bool:
    return not fits_request(fit_requests(pod), NodeInfo(node))


def _any_requested_resource_increased(pod: Pod, old: Node, new: Node) -> bool:
    if new.allocatable.get(PODS, 0) > old.allocatable.get(PODS, 0):
        return True
    requests = fit_requests(pod)
    return any(
        value > 0 and new.allocatable.get(name, 0) > old.allocatable.get(name, 0)
        for name, value in requests.items()
    )


def _scaled_down_for(target: Pod, old: Pod, new: Pod) -> bool:
    """Whether ``new`` (a scale-down of ``old``) frees something ``target`` asks for."""
    if new.uid == target.uid:
        return True
    if not new.node_name:
        return False
    before, after = fit_requests(old), fit_requests(new)
    return any(
        value > 0 and before.get(name, 0) > after.get(name, 0)
        for name, value in fit_requests(target).items()
    )


def _without_pod_level_requests(pod: Pod) -> Pod:
    """The pod as kube-scheduler v1.37's NodeResourcesFit scores it: its containers' requests
    only (plus overhead), with pod-level requests (``spec.resources``) left out.

    kube builds this plugin's scorer without the PodLevelResources flag that Filter and
    NodeResourcesBalancedAllocation get, so the pod being scheduled is scored on its
    containers, with the defaults for unset cpu and memory, while the pods already on a node
    count their pod-level requests. Found by the parity suite (tests/parity).
    """
    if not pod.pod_level_requests:
        return pod
    containers_only = copy.copy(pod)
    containers_only.pod_level_requests = {}
    return containers_only


# --- the plugin ----------------------------------------------------------------------------------


class NodeResourcesFit:
    """Filters nodes without room for the pod; scores the rest by the scoring strategy."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeResourcesFitArgs.parse(args)
        self.handle = handle
        self._ignored = frozenset(self.args.ignored_resources)
        self._ignored_groups = frozenset(self.args.ignored_resource_groups)
        strategy = self.args.scoring_strategy
        self._resources: Sequence[ResourceSpec] = strategy.resources
        self._scorer = make_scorer(strategy.type, strategy.resources, strategy.shape or ())

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Compute the pod's requests once (init containers, sidecars and overhead included)."""
        state.write(PRE_FILTER_STATE_KEY, fit_requests(pod))
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node that lacks any requested resource (or room for one more pod)."""
        requests = state.get(PRE_FILTER_STATE_KEY)
        if requests is None:
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        insufficient = fits_request(requests, node_info, self._ignored, self._ignored_groups)
        if not insufficient:
            return None
        reasons = [r.reason for r in insufficient]
        if any(r.unresolvable for r in insufficient):
            return Status.unresolvable(*reasons)
        return Status.unschedulable(*reasons)

    def _pod_score_requests(self, pod: Pod) -> list[int]:
        requests = pod_requests(_without_pod_level_requests(pod), non_zero=True)
        return [requests.get(spec.name, 0) for spec in self._resources]

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """The pod's requests per scored resource, with kube's defaults for unset cpu/memory."""
        state.write(PRE_SCORE_STATE_KEY, self._pod_score_requests(pod))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """The strategy's score of the node once the pod is on it."""
        if not self._resources:
            return Status.error("resources not found")
        requests = state.get(PRE_SCORE_STATE_KEY)
        if requests is None:  # PreScore disabled
            requests = self._pod_score_requests(pod)
        allocatable, requested = [], []
        for spec, request in zip(self._resources, requests, strict=True):
            alloc, req = node_allocatable_and_requested(node_info, spec.name, request, False)
            allocatable.append(alloc)
            requested.append(req if alloc else 0)
        return self._scorer(requested, allocatable)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter reads the pod's requests, Score its requests as scoring counts them."""
        return [fit_requests(pod), self._pod_score_requests(pod)]

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Freed room (an assigned pod deleted or scaled down) or a bigger or new node."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN
                ),
                self.is_schedulable_after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_event(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """Queue on the deletion of a scheduled (or nominated) pod, or a useful scale-down."""
        if (old is not None and not isinstance(old, Pod)) or (
            new is not None and not isinstance(new, Pod)
        ):
            return QueueingHint.QUEUE
        if new is None:
            if old is None or old.node_name or old.nominated_node_name:
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if old is not None and _scaled_down_for(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue when the pod fits the node and, on an update, a requested resource grew."""
        if unreadable(old, new, Node) or new is None:  # (the second test narrows the type)
            return QueueingHint.QUEUE
        if not _fits(pod, new):
            return QueueingHint.SKIP
        if old is None or _any_requested_resource_increased(pod, old, new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
