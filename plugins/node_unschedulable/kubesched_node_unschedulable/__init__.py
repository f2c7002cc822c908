"""NodeUnschedulable: no pods on a node marked ``spec.unschedulable`` (cordoned), unless tolerated.

kube-scheduler's Filter plugin of the same name (``pkg/scheduler/framework/plugins/
nodeunschedulable``): a pod that tolerates the ``node.kubernetes.io/unschedulable:NoSchedule``
taint also tolerates ``spec.unschedulable``.
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
    Taint,
    hookimpl,
)
from kubesched.framework.helpers import unreadable

__all__ = ["NAME", "REASON_UNSCHEDULABLE", "TAINT_NODE_UNSCHEDULABLE", "NodeUnschedulable"]

NAME = "NodeUnschedulable"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
#: The taint the node lifecycle controller puts on cordoned nodes (``v1.TaintNodeUnschedulable``).
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")


def _tolerates_unschedulable(pod: Pod) -> bool:
    return any(t.tolerates(_UNSCHEDULABLE_TAINT) for t in pod.tolerations)


class NodeUnschedulable:
    """Rejects cordoned nodes for pods that do not tolerate the unschedulable taint."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject an unschedulable node unless the pod tolerates it (preemption cannot help)."""
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        if not node.unschedulable or _tolerates_unschedulable(pod):
            return None
        return Status.unresolvable(REASON_UNSCHEDULABLE)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter reads the pod's tolerations only."""
        return [[t.key, t.operator, t.value, t.effect] for t in pod.tolerations]

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A new schedulable node, a node uncordoned, or the pod gaining the toleration."""
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
        # Queue when a node is added schedulable, or updated from unschedulable to schedulable.
        if new.unschedulable:
            return QueueingHint.SKIP
        if old is None or old.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def _hint_target_pod_toleration_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod) or (old is not None and not isinstance(old, Pod)):
            return QueueingHint.QUEUE
        # kube-scheduler registers this for the target pod only (TargetPod); the uid check keeps
        # another pod's update, replayed after a cycle, from moving this one.
        if new.uid != pod.uid:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE if _tolerates_unschedulable(new) else QueueingHint.SKIP
