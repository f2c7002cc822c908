"""VolumeZone: a pod's bound volumes must be in the node's zone and region.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/volumezone``, v1.37):
PreFilter reads the zone and region labels (GA and beta keys) of the PersistentVolume each of the
pod's claims is bound to; Filter rejects a node whose labels name another zone or region. A node
without any topology label fits (a single-zone cluster). Claims not yet bound are left to
VolumeBinding when their class waits for the first consumer; any other unbound claim is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    claim_class,
    label_zones_to_set,
    meta,
    not_found,
    pod_claims,
    uses_claim,
)

__all__ = [
    "NAME",
    "REASON_CONFLICT",
    "TOPOLOGY_LABELS",
    "PVTopology",
    "VolumeZone",
    "pv_topologies",
]

NAME = "VolumeZone"
REASON_CONFLICT = "node(s) had no available volume zone"
REASON_NO_NAME = "PersistentVolumeClaim had no name"
REASON_NO_PV_NO_CLASS = "PersistentVolumeClaim had no pv name and storageClass name"
REASON_NO_PV = "PersistentVolume had no name"
STATE_KEY = "PreFilter" + NAME

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
#: The labels compared, in kube's order.
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"


@dataclass(frozen=True)
class PVTopology:
    """One topology label of a bound PV: its key and the zones (or regions) it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


def pv_topologies(pv: Mapping[str, Any]) -> list[PVTopology]:
    """The PV's topology labels (kube's ``getPVTopologies``); a label that does not parse as a
    zone set is ignored. Node affinity is not read here: NodeAffinity-like checks of a PV are
    VolumeBinding's."""
    labels = meta(pv).get("labels") or {}
    found = []
    for key in TOPOLOGY_LABELS:
        value = labels.get(key)
        if value is None:
            continue
        try:
            zones = label_zones_to_set(str(value))
        except ValueError:
            continue
        found.append(PVTopology(str(meta(pv).get("name") or ""), key, frozenset(zones)))
    return found


class VolumeZone:
    """Keeps pods off nodes outside their bound volumes' zones and regions."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.pvs = IndexedLister(handle.lister("PersistentVolume"))
        self.pvcs = IndexedLister(handle.lister("PersistentVolumeClaim"))
        self.classes = IndexedLister(handle.lister("StorageClass"))

    def _topologies(self, pod: Pod) -> list[PVTopology] | Status:
        """kube's ``getPVbyPod``: the topologies of the PVs the pod's claims are bound to."""
        claims = pod_claims(pod, ephemeral=False)
        if not claims:
            return []
        pvcs = self.pvcs()
        pvs: dict[str, Mapping[str, Any]] | None = None
        classes: dict[str, Mapping[str, Any]] | None = None
        found: list[PVTopology] = []
        for claim in claims:
            if not claim.name:
                return Status.unresolvable(REASON_NO_NAME)
            pvc = pvcs.get(f"{pod.namespace}/{claim.name}")
            if pvc is None:
                return Status.unresolvable(not_found("PersistentVolumeClaim", claim.name))
            pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
            if not pv_name:
                class_name = claim_class(pvc)
                if not class_name:
                    return Status.unresolvable(REASON_NO_PV_NO_CLASS)
                if classes is None:
                    classes = self.classes()
                storage_class = classes.get(class_name)
                if storage_class is None:
                    return Status.unresolvable(not_found("StorageClass", class_name))
                # kube-apiserver defaults the mode to Immediate.
                mode = storage_class.get("volumeBindingMode") or "Immediate"
                if mode == WAIT_FOR_FIRST_CONSUMER:
                    continue  # VolumeBinding decides where it goes
                return Status.unresolvable(REASON_NO_PV)
            if pvs is None:
                pvs = self.pvs()
            pv = pvs.get(pv_name)
            if pv is None:
                return Status.unresolvable(not_found("PersistentVolume", pv_name))
            found.extend(pv_topologies(pv))
        return found

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Read the bound PVs' topologies; Skip when the pod has none."""
        topologies = self._topologies(pod)
        if isinstance(topologies, Status):
            return topologies
        if not topologies:
            return Status.skip()
        state.write(STATE_KEY, topologies)
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node whose zone or region labels differ from a bound PV's."""
        if not (pod.raw.get("spec") or {}).get("volumes"):
            return None
        topologies = state.get(STATE_KEY)
        if topologies is None:
            topologies = self._topologies(pod)
            if isinstance(topologies, Status):
                return topologies
        node = node_info.node
        labels = node.labels if node is not None else {}
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a single-zone cluster's nodes may carry no topology label
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                # A PV with a beta label matches a node with the GA one.
                value = labels.get(_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return Status.unresolvable(REASON_CONFLICT)
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """kube's list (queueing hints on): a WaitForFirstConsumer class added, a node added or
        relabelled, a claim of the pod added or updated, a PV added or its topology changed."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD), self._class_added
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                self._claim_changed,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                self._volume_changed,
            ),
        ]

    @staticmethod
    def _claim_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if uses_claim(pod, new, ephemeral=False) else QueueingHint.SKIP

    @staticmethod
    def _class_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if new is not None and new.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _volume_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None or new is None:
            return QueueingHint.QUEUE
        if pv_topologies(old) != pv_topologies(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
