"""From cluster changes to cache updates and queue moves (kube-scheduler's eventhandlers.go).

Every bound pod, whatever its scheduler, is load in the cache; pending pods whose
``schedulerName`` names one of our profiles go to the queue; node and pod changes become
:class:`~kubesched.ClusterEvent` values that move back the pods they may help.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.nodeinfo import pod_requests

if TYPE_CHECKING:
    from kubesched.engine.cache import Cache
    from kubesched.engine.queue import SchedulingQueue
    from kubesched.framework.waiting_pods import WaitingPods

__all__ = ["SchedulerEventHandler", "node_update_actions", "pod_update_actions"]

log = logging.getLogger(__name__)


def _conditions(node: Node) -> list[tuple[str, str]]:
    return sorted(
        (c.get("type", ""), c.get("status", ""))
        for c in (node.raw.get("status") or {}).get("conditions") or ()
    )


def _taints(node: Node) -> list[tuple[str, str, str]]:
    return sorted((t.key, t.value, t.effect) for t in node.taints)


def _declared_features(node: Node) -> object:
    return (node.raw.get("status") or {}).get("declaredFeatures") or []


def node_update_actions(old: Node, new: Node) -> ActionType:
    """What changed between two versions of a node, as far as scheduling cares."""
    actions = ActionType(0)
    if old.unschedulable and not new.unschedulable:
        actions |= ActionType.UPDATE_NODE_TAINT  # kube-scheduler files this under taints
    if old.allocatable != new.allocatable:
        actions |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.labels != new.labels:
        actions |= ActionType.UPDATE_NODE_LABEL
    if _taints(old) != _taints(new):
        actions |= ActionType.UPDATE_NODE_TAINT
    if _conditions(old) != _conditions(new):
        actions |= ActionType.UPDATE_NODE_CONDITION
    if old.annotations != new.annotations:
        actions |= ActionType.UPDATE_NODE_ANNOTATION
    if _declared_features(old) != _declared_features(new):
        actions |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return actions


def _claim_statuses(pod: Pod) -> object:
    return (pod.raw.get("status") or {}).get("resourceClaimStatuses") or []


def pod_update_actions(old: Pod, new: Pod) -> ActionType:
    """What changed between two versions of a pod, as far as scheduling cares."""
    actions = ActionType(0)
    if old.labels != new.labels:
        actions |= ActionType.UPDATE_POD_LABEL
    if [(t.key, t.operator, t.value, t.effect) for t in old.tolerations] != [
        (t.key, t.operator, t.value, t.effect) for t in new.tolerations
    ]:
        actions |= ActionType.UPDATE_POD_TOLERATIONS
    if old.scheduling_gates and not new.scheduling_gates:
        actions |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    old_requests, new_requests = pod_requests(old), pod_requests(new)
    if any(new_requests.get(name, 0) < value for name, value in old_requests.items()):
        actions |= ActionType.UPDATE_POD_SCALE_DOWN
    if _claim_statuses(old) != _claim_statuses(new):
        actions |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    return actions or ActionType.UPDATE_POD_OTHER


_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)


class SchedulerEventHandler:
    """Implements :class:`~kubesched.backends.EventHandler` over a cache and a queue."""

    def __init__(
        self, cache: Cache, queue: SchedulingQueue, profiles: set[str], waiting_pods: WaitingPods
    ) -> None:
        self.cache = cache
        self.queue = queue
        self.profiles = profiles
        self.waiting_pods = waiting_pods

    def responsible_for(self, pod: Pod) -> bool:
        return pod.scheduler_name in self.profiles

    # -- nodes ---------------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        self.cache.add_node(node)
        self.queue.move_on_event(ClusterEvent(EventResource.NODE, ActionType.ADD), None, node)

    def on_node_update(self, old: Node, new: Node) -> None:
        self.cache.update_node(new)
        actions = node_update_actions(old, new)
        if actions:
            self.queue.move_on_event(ClusterEvent(EventResource.NODE, actions), old, new)

    def on_node_delete(self, node: Node) -> None:
        self.cache.remove_node(node)
        self.queue.move_on_event(ClusterEvent(EventResource.NODE, ActionType.DELETE), node, None)

    # -- pods ----------------------------------------------------------------------------------
    def on_pod_add(self, pod: Pod) -> None:
        if pod.node_name:
            if pod.is_terminated:
                return
            self.cache.add_pod(pod)
            self.queue.move_on_event(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), None, pod
            )
        elif self.responsible_for(pod) and not pod.deletion_timestamp:
            self.queue.add(pod)
            # A new pending pod can complete a gang (kube sends this event with GenericWorkload
            # on); sent only when some plugin registered it, so a large pool is not walked for
            # every pod added otherwise.
            if self.queue.registered(_UNSCHEDULED_POD_ADD):
                self.queue.move_on_event(_UNSCHEDULED_POD_ADD, None, pod)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        if new.node_name:
            if not old.node_name:
                self.queue.delete(new)  # bound (by us or anyone): no longer pending
            if new.is_terminated:
                self._remove_assigned(new)
                return
            self.cache.update_pod(old, new)
            actions = ActionType.ADD if not old.node_name else pod_update_actions(old, new)
            self.queue.move_on_event(ClusterEvent(EventResource.ASSIGNED_POD, actions), old, new)
        elif self.responsible_for(new):
            if new.deletion_timestamp:
                self.queue.delete(new)
                return
            event = ClusterEvent(EventResource.UNSCHEDULED_POD, pod_update_actions(old, new))
            self.queue.update(old, new, event)

    def on_pod_delete(self, pod: Pod) -> None:
        waiting = self.waiting_pods.get(pod.uid)
        if waiting is not None:
            waiting.reject("", "pod was deleted while waiting at permit")
        if pod.node_name or self.cache.is_assumed(pod.uid):
            self._remove_assigned(pod)
        else:
            self.queue.delete(pod)

    # -- consulted kinds (PersistentVolumes, PersistentVolumeClaims, CSINodes, …) ---------------
    # The listers already hold the change (a backend updates its store first), so a hint that
    # lists sees it; kinds no plugin can register events for (Namespaces, …) move nothing.
    def on_object_add(self, kind: str, obj: Mapping[str, Any]) -> None:
        self._object_event(kind, ActionType.ADD, None, obj)

    def on_object_update(self, kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self._object_event(kind, ActionType.UPDATE_OBJECT, old, new)

    def on_object_delete(self, kind: str, obj: Mapping[str, Any]) -> None:
        self._object_event(kind, ActionType.DELETE, obj, None)

    def _object_event(
        self,
        kind: str,
        action: ActionType,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> None:
        resource = EventResource.of_kind(kind)
        if resource is not None:
            self.queue.move_on_event(ClusterEvent(resource, action), old, new)

    def _remove_assigned(self, pod: Pod) -> None:
        self.cache.remove_pod(pod)
        self.queue.move_on_event(
            ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), pod, None
        )
