"""NodeName: a pod whose ``spec.nodeName`` is set may only run on that node.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/nodename``):
PreFilter narrows the candidates to the named node, Filter rejects every other node. kubesched
treats a pod with ``spec.nodeName`` as bound and never queues it, so this plugin decides
something only for callers that run the framework on such pods themselves; it is here so that
kube-scheduler's default profile can be written as it is.
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
    NodeInfo,
    Pod,
    PreFilterResult,
    Status,
    hookimpl,
)

__all__ = ["NAME", "REASON", "NodeName", "fits"]

NAME = "NodeName"
REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether the pod names no node, or names this one."""
    return not pod.node_name or pod.node_name == node_info.name


class NodeName:
    """Keeps a pod with ``spec.nodeName`` on that node."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )

    @hookimpl
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> PreFilterResult | None:
        """Restrict the candidates to the named node (the others cannot be helped by preemption)."""
        if pod.node_name:
            return PreFilterResult({pod.node_name})
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject every node but the one the pod names."""
        if fits(pod, node_info):
            return None
        return Status.unresolvable(REASON)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter reads ``spec.nodeName`` only."""
        return pod.node_name

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A new node (it may be the one named); no hint, as in kube-scheduler."""
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]
