"""GangScheduling: the pods of a gang PodGroup are bound together, or not at all.

kube-scheduler v1.37's plugin of the same name (``pkg/scheduler/framework/plugins/
gangscheduling``, enabled there by the ``GenericWorkload`` gate, beta and off by default), over
the ``scheduling.k8s.io/v1beta1`` API: a pod names its group in
``spec.schedulingGroup.podGroupName``; the ``PodGroup`` of that name in the pod's namespace has
``spec.schedulingPolicy.gang.minCount`` (``basic`` instead: no gang).

- PreEnqueue: a member waits outside the active queue until its PodGroup exists and at least
  ``minCount`` pods of the group exist (pending, assumed or bound).
- Permit: a member waits (5 minutes) until ``minCount`` members are reserved; while it waits it
  activates the group's pending members, so the queue brings them to their cycles together.
  The member that completes the quorum allows every waiting one. A wait that times out is
  rejected, and the group's pods held at Permit time out together with it.
- Events: a new pod of the same group (pending or bound) lets a gated member try again.

Not carried over: CompositePodGroups (alpha gate), the pod-group scheduling cycle
(``PlacementFeasible``), and PodGroup Add/Update events (kubesched's queue has no event for
that kind: a member gated for a missing PodGroup, or waiting for a smaller ``minCount``, is
retried at the pool's periodic flush).
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
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = [
    "NAME",
    "PERMIT_TIMEOUT_SECONDS",
    "REASON_WAITING_AT_PERMIT",
    "REASON_WAITING_FOR_PODS",
    "GangScheduling",
    "pod_group_name",
    "reason_pod_group_missing",
]

NAME = "GangScheduling"
#: How long members wait at Permit for the quorum before being rejected (kube's
#: ``permitTimeoutDuration``).
PERMIT_TIMEOUT_SECONDS = 5 * 60.0
#: PreEnqueue, while fewer than ``minCount`` pods of the group exist.
REASON_WAITING_FOR_PODS = "waiting for minCount pods from a gang to appear in scheduling queue"
#: Permit, while fewer than ``minCount`` pods of the group are reserved.
REASON_WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
#: The kind this plugin reads (``Handle.lister``).
POD_GROUP_KIND = "PodGroup"


def reason_pod_group_missing(name: str) -> str:
    """PreEnqueue, while the pod's PodGroup does not exist (kube's words, "pods's" and all)."""
    return f"waiting for pods's pod group {_quoted(name)} to appear in scheduling queue"


def _quoted(value: str) -> str:
    """Go's ``%q`` for the plain names Kubernetes allows."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def pod_group_name(pod: Pod) -> str | None:
    """``spec.schedulingGroup.podGroupName``, or ``None`` for a pod outside any group."""
    group = (pod.raw.get("spec") or {}).get("schedulingGroup")
    if not isinstance(group, Mapping):
        return None
    name = group.get("podGroupName")
    return name if isinstance(name, str) and name else None


def _min_count(pod_group: Mapping[str, Any]) -> int | None:
    """The gang's ``minCount``; ``None`` when the group's policy is not a gang."""
    policy = (pod_group.get("spec") or {}).get("schedulingPolicy") or {}
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    if not isinstance(gang, Mapping):
        return None
    try:
        return int(gang.get("minCount", 0))
    except (TypeError, ValueError):
        return None


class GangScheduling:
    """All-or-nothing scheduling for the pods of a gang PodGroup."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.handle = handle
        self._pod_groups = handle.lister(POD_GROUP_KIND)
        #: The members seen at PreEnqueue (every pending pod passes there), by group key then
        #: UID; with the group's pods in the snapshot, they are the group's pods.
        self._members: dict[tuple[str, str], dict[str, Pod]] = {}

    # -- reading the cluster ---------------------------------------------------------------------
    def _pod_group(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        for obj in self._pod_groups():
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and meta.get("namespace", "default") == namespace:
                return obj
        return None

    def _scheduled(self, key: tuple[str, str]) -> dict[str, Pod]:
        """The group's pods on nodes in the snapshot: bound, or assumed (held at Permit or
        binding)."""
        found: dict[str, Pod] = {}
        for info in self.handle.snapshot().node_infos:
            for uid, pod in info.pods.items():
                if pod.namespace == key[0] and pod_group_name(pod) == key[1]:
                    found[uid] = pod
        return found

    # -- hooks -----------------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Gate a member until its PodGroup exists and ``minCount`` pods of the group do."""
        name = pod_group_name(pod)
        if name is None:
            return None
        key = (pod.namespace, name)
        self._members.setdefault(key, {})[pod.uid] = pod
        pod_group = self._pod_group(*key)
        if pod_group is None:
            return Status.unresolvable(reason_pod_group_missing(name))
        need = _min_count(pod_group)
        if need is None:
            return None
        if len(self._scheduled(key).keys() | self._members[key].keys()) < need:
            return Status.unresolvable(REASON_WAITING_FOR_PODS)
        return None

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Wait until ``minCount`` members are reserved; the one that completes the quorum
        allows the others."""
        name = pod_group_name(pod)
        if name is None:
            return None
        key = (pod.namespace, name)
        pod_group = self._pod_group(*key)
        if pod_group is None:
            return Status.error(
                f"failed to get podGroup {pod.namespace}/{name}: "
                f'podgroup.scheduling.k8s.io "{name}" not found'
            )
        need = _min_count(pod_group)
        if need is None:
            return None
        scheduled = self._scheduled(key)
        scheduled[pod.uid] = pod  # assumed just now: not in this cycle's snapshot
        if len(scheduled) < need:
            # The group's unscheduled pods may be waiting for this one: their turn now.
            members = self._members.get(key, {})
            self.handle.activate([p for uid, p in members.items() if uid not in scheduled])
            return Status.wait(PERMIT_TIMEOUT_SECONDS, REASON_WAITING_AT_PERMIT)
        for uid in scheduled:
            waiting = self.handle.waiting_pods.get(uid)
            if waiting is not None:
                waiting.allow(NAME)
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A new pod of the same group, pending or bound, may complete the gang (the group
        field is immutable, so updates are not registered)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD), self._after_pod_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), self._after_pod_added
            ),
        ]

    def _after_pod_added(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod):
            return QueueingHint.QUEUE  # kube queues on objects it cannot read
        mine, theirs = pod_group_name(pod), pod_group_name(new)
        if mine is None or theirs is None:
            return QueueingHint.SKIP
        if (pod.namespace, mine) == (new.namespace, theirs):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
