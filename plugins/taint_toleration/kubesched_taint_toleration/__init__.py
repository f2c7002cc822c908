"""TaintToleration: node taints against pod tolerations.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/tainttoleration``,
v1.37): Filter rejects a node with a ``NoSchedule`` or ``NoExecute`` taint the pod does not
tolerate; Score counts the ``PreferNoSchedule`` taints the pod does not tolerate, and
NormalizeScore turns the counts around so that the node with the fewest scores 100.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    FieldError,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.framework.helpers import (
    MAX_NODE_SCORE,
    TolerationIndex,
    default_normalize_score,
    find_untolerated_taint,
    unreadable,
)

__all__ = [
    "MAX_NODE_SCORE",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "REASON_UNTOLERATED",
    "TaintToleration",
    "TolerationIndex",
    "default_normalize_score",
    "find_untolerated_taint",
]

NAME = "TaintToleration"
#: Since v1.35 the reason no longer names the taint: keys and values may be sensitive
#: (kubernetes/kubernetes#134740).
REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
#: The pod's tolerations indexed by key, built by the cycle's first Filter call.
FILTER_INDEX_KEY = "Filter" + NAME + "Index"

_PREFER_NO_SCHEDULE = "PreferNoSchedule"


class TaintToleration:
    """Filters on hard taints; scores on soft ones."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node with an untolerated NoSchedule/NoExecute taint (unresolvable)."""
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        if not node.taints:
            return None
        index = state.get(FILTER_INDEX_KEY)
        if index is None:  # built once per cycle, on the first node with taints
            index = TolerationIndex(pod.tolerations)
            state.write(FILTER_INDEX_KEY, index)
        if find_untolerated_taint(node.taints, index) is None:
            return None
        return Status.unresolvable(REASON_UNTOLERATED)

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Keep the tolerations that can tolerate a PreferNoSchedule taint (empty effect too)."""
        state.write(
            PRE_SCORE_STATE_KEY,
            TolerationIndex(t for t in pod.tolerations if t.effect in ("", _PREFER_NO_SCHEDULE)),
        )
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """How many PreferNoSchedule taints of the node the pod does not tolerate."""
        try:
            tolerations = state.read(PRE_SCORE_STATE_KEY)
        except KeyError as exc:
            return Status.error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: {exc}')
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        return sum(
            1
            for taint in node.taints
            if taint.effect == _PREFER_NO_SCHEDULE and not tolerations.tolerates(taint)
        )

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        """Fewest untolerated PreferNoSchedule taints -> 100, most -> 0."""
        default_normalize_score(MAX_NODE_SCORE, True, scores)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter and Score read the pod's tolerations only."""
        return [[t.key, t.operator, t.value, t.effect] for t in pod.tolerations]

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A node added or its taints changed, or the pod's tolerations changed."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self._hint_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS),
                self._hint_target_pod_toleration_change,
            ),
        ]

    def _hint_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if unreadable(old, new, Node):
            return QueueingHint.QUEUE  # kube queues on objects it cannot read
        was_untolerated = (
            old is None or find_untolerated_taint(old.taints, pod.tolerations) is not None
        )
        is_untolerated = find_untolerated_taint(new.taints, pod.tolerations) is not None
        if was_untolerated and not is_untolerated:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_target_pod_toleration_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        # kube-scheduler registers this for the target pod only (TargetPod) and always queues;
        # the uid check keeps another pod's update, replayed after a cycle, from moving this one.
        if isinstance(new, Pod) and new.uid != pod.uid:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
