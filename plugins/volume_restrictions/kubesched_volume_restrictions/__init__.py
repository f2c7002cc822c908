"""VolumeRestrictions: volumes that cannot be shared with the pods already placed.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/volumerestrictions``,
v1.37). Filter rejects a node where another pod mounts the same inline disk in a conflicting way
(GCE PD and iSCSI unless every mount is read-only, AWS EBS always, Ceph RBD images sharing a
monitor, pool and image unless all read-only); and a pod whose ``ReadWriteOncePod`` claim some
scheduled pod already uses fits nowhere (preemption of that pod can help).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.storage import (
    IndexedLister,
    meta,
    not_found,
    pod_claims,
    pod_volumes,
    uses_claim,
)

__all__ = [
    "NAME",
    "REASON_DISK_CONFLICT",
    "REASON_RWOP_CONFLICT",
    "VolumeRestrictions",
    "is_volume_conflict",
    "needs_restrictions_check",
]

NAME = "VolumeRestrictions"
REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod"
)
STATE_KEY = "PreFilter" + NAME
READ_WRITE_ONCE_POD = "ReadWriteOncePod"

_INLINE_DISKS = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


def needs_restrictions_check(volume: Mapping[str, Any]) -> bool:
    """Whether ``volume`` is an inline disk this plugin checks (GCE PD, AWS EBS, RBD, iSCSI)."""
    return any(isinstance(volume.get(kind), Mapping) for kind in _INLINE_DISKS)


def _src(volume: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    source = volume.get(kind)
    return source if isinstance(source, Mapping) else None


def is_volume_conflict(volume: Mapping[str, Any], pod: Pod) -> bool:
    """Whether ``volume`` conflicts with one of ``pod``'s volumes (kube's ``isVolumeConflict``)."""
    gce, ebs, rbd, iscsi = (_src(volume, kind) for kind in _INLINE_DISKS)
    for existing in pod_volumes(pod):
        other = _src(existing, "gcePersistentDisk")
        if gce is not None and other is not None:
            if gce.get("pdName") == other.get("pdName") and not (
                gce.get("readOnly") and other.get("readOnly")
            ):
                return True
        other = _src(existing, "awsElasticBlockStore")
        if ebs is not None and other is not None and ebs.get("volumeID") == other.get("volumeID"):
            return True
        other = _src(existing, "iscsi")
        if iscsi is not None and other is not None:
            if iscsi.get("iqn") == other.get("iqn") and not (
                iscsi.get("readOnly") and other.get("readOnly")
            ):
                return True
        other = _src(existing, "rbd")
        if rbd is not None and other is not None:
            if (
                set(rbd.get("monitors") or ()) & set(other.get("monitors") or ())
                and (rbd.get("pool") or "rbd") == (other.get("pool") or "rbd")
                and rbd.get("image") == other.get("image")
                and not (rbd.get("readOnly") and other.get("readOnly"))
            ):
                return True
    return False


def _satisfies_volume_conflicts(pod: Pod, pods: Iterable[Pod]) -> bool:
    checked = [v for v in pod_volumes(pod) if needs_restrictions_check(v)]
    if not checked:
        return True
    existing = list(pods)
    return not any(is_volume_conflict(v, other) for v in checked for other in existing)


def _claim_names(pod: Pod) -> list[str]:
    return [claim.name for claim in pod_claims(pod, ephemeral=False)]


@dataclass
class _State:
    """The pod's ReadWriteOncePod claims, and how many references scheduled pods hold to them."""

    rwop_claims: frozenset[str]
    conflicting_refs: int

    def refs_of(self, pod: Pod, namespace: str) -> int:
        if pod.namespace != namespace:
            return 0
        return sum(1 for name in _claim_names(pod) if name in self.rwop_claims)

    def clone(self) -> _State:
        return _State(self.rwop_claims, self.conflicting_refs)


class VolumeRestrictions:
    """Refuses inline disk conflicts and a second user of a ReadWriteOncePod claim."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.handle = handle
        self.pvcs = IndexedLister(handle.lister("PersistentVolumeClaim"))

    def _rwop_claims(self, pod: Pod) -> frozenset[str] | Status:
        names = _claim_names(pod)
        if not names:
            return frozenset()
        pvcs = self.pvcs()
        rwop = set()
        for name in names:
            pvc = pvcs.get(f"{pod.namespace}/{name}")
            if pvc is None:
                return Status.unresolvable(not_found("PersistentVolumeClaim", name))
            if READ_WRITE_ONCE_POD in ((pvc.get("spec") or {}).get("accessModes") or ()):
                rwop.add(str(meta(pvc).get("name") or name))
        return frozenset(rwop)

    def _used_by_scheduled_pods(self, pod: Pod, claims: frozenset[str]) -> int:
        """kube's ``IsPVCUsedByPods`` per claim: how many of ``claims`` a pod in the snapshot
        (bound or assumed) uses."""
        if not claims:
            return 0
        used: set[str] = set()
        for info in self.handle.snapshot():
            for other in info.pods.values():
                if other.namespace == pod.namespace and other.uid != pod.uid:
                    used.update(name for name in _claim_names(other) if name in claims)
        return len(used)

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Find the pod's ReadWriteOncePod claims and whether they are in use; Skip when there
        is neither an inline disk nor such a conflict to check."""
        needs_check = any(needs_restrictions_check(v) for v in pod_volumes(pod))
        claims = self._rwop_claims(pod)
        if isinstance(claims, Status):
            return claims
        data = _State(claims, self._used_by_scheduled_pods(pod, claims))
        if not needs_check and data.conflicting_refs == 0:
            return Status.skip()
        state.write(STATE_KEY, data)
        return None

    @hookimpl
    def pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        data = state.get(STATE_KEY)
        if data is not None:
            data = data.clone()
            data.conflicting_refs += data.refs_of(pod_to_add, pod_to_schedule.namespace)
            state.write(STATE_KEY, data)
        return None

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        data = state.get(STATE_KEY)
        if data is not None:
            data = data.clone()
            data.conflicting_refs -= data.refs_of(pod_to_remove, pod_to_schedule.namespace)
            state.write(STATE_KEY, data)
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """An inline disk conflict on this node, or a ReadWriteOncePod claim in use anywhere."""
        if not _satisfies_volume_conflicts(pod, node_info.pods.values()):
            return Status.unschedulable(REASON_DISK_CONFLICT)
        data = state.get(STATE_KEY)
        if data is None:
            return Status.error(f'cannot read "{STATE_KEY}" from cycleState')
        if data.conflicting_refs > 0:
            return Status.unschedulable(REASON_RWOP_CONFLICT)
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """kube's list (queueing hints on): a pod deleted that held a conflicting disk or one
        of the pod's claims; a node added; a claim of the pod created."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), self._pod_deleted
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self._claim_added,
            ),
        ]

    @staticmethod
    def _claim_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if uses_claim(pod, new, ephemeral=False) else QueueingHint.SKIP

    @staticmethod
    def _pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        deleted = old
        if not isinstance(deleted, Pod) or deleted.namespace != pod.namespace:
            return QueueingHint.SKIP
        if not _satisfies_volume_conflicts(pod, [deleted]):
            return QueueingHint.QUEUE
        # Any shared claim: it may have been ReadWriteOncePod (kube does not look it up either).
        if set(_claim_names(pod)) & set(_claim_names(deleted)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
