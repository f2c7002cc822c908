"""NodeVolumeLimits: a node takes no more volumes of a CSI driver than its CSINode allows.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/nodevolumelimits``,
``CSILimits``, v1.37). Filter counts the unique volumes (``driver/volumeHandle``) the pod would
add on the node, per driver, against ``CSINode.spec.drivers[].allocatable.count``; the volumes of
the node's pods, and those VolumeAttachments show attached there, count once each. In-tree
volumes of plugins migrated to CSI (GCE PD, AWS EBS, Azure Disk, Cinder, vSphere) count under
their CSI driver when the CSINode says the migration is on. A claim not yet bound counts under
its class's provisioner.
"""

from __future__ import annotations

import operator
import uuid
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
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.storage import (
    IndexedLister,
    claim_class,
    ephemeral_owner_error,
    meta,
    not_found,
    pod_claims,
    pod_volumes,
    uses_claim,
)
from kubesched.framework.helpers import NodeMemo

__all__ = ["IN_TREE_DRIVERS", "NAME", "REASON_MAX_VOLUME_COUNT", "NodeVolumeLimits"]

NAME = "NodeVolumeLimits"
STATE_KEY = "PreFilter" + NAME
REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
#: The CSINode annotation listing the in-tree plugins migrated to CSI on that node.
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"

#: In-tree volume source -> (in-tree plugin name, CSI driver, the field naming the volume).
IN_TREE_DRIVERS: dict[str, tuple[str, str, str]] = {
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "pdName"),
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com", "volumeID"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com", "diskURI"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org", "volumeID"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", "volumePath"),
}
_PROVISIONER_DRIVERS = {plugin: driver for plugin, driver, _ in IN_TREE_DRIVERS.values()}


def _migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """kube's ``isCSIMigrationOn`` (every migration is GA): the CSINode lists the plugin."""
    if csi_node is None:
        return False
    listed = (meta(csi_node).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS) or ""
    return plugin in {p.strip() for p in str(listed).split(",")}


def _migrated_plugins(csi_node: Mapping[str, Any] | None) -> str | None:
    """What of a CSINode decides how a pod's volumes count there (:func:`_migration_on`)."""
    if csi_node is None:
        return None
    return str((meta(csi_node).get("annotations") or {}).get(ANN_MIGRATED_PLUGINS) or "")


def _in_tree(source_holder: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """``(plugin, driver, handle)`` of an in-tree migratable source in a volume or PV spec."""
    for field, (plugin, driver, key) in IN_TREE_DRIVERS.items():
        source = source_holder.get(field)
        if isinstance(source, Mapping):
            return plugin, driver, str(source.get(key) or "")
    return None


def _limits(csi_node: Mapping[str, Any] | None) -> dict[str, int]:
    """Per driver, ``allocatable.count`` of the CSINode (kube's ``getVolumeLimits``)."""
    if csi_node is None:
        return {}
    limits = {}
    for driver in (csi_node.get("spec") or {}).get("drivers") or ():
        count = (driver.get("allocatable") or {}).get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            limits[str(driver.get("name") or "")] = count
    return limits


#: What a count of a node's volumes was worked out from besides the node and its CSINode: the
#: PVC, PV, StorageClass and VolumeAttachment indexes (each the same object while none of its
#: kind changed).
_Sources = tuple[Mapping[str, Any], ...]

#: The volumes held on a node (``driver/handle -> driver``) and their number per driver, or
#: the error of a pod there.
_Counted = tuple[Status | None, dict[str, str], dict[str, int]]


class _Held:
    """What Filter reads of one node besides the pod: its CSINode's migrated plugins and
    limits, and (once asked for) the volumes held there; valid while the node's NodeInfo, its
    CSINode and the sources stay the same objects."""

    __slots__ = ("counted", "csi_node", "limits", "migrated", "sources")

    def __init__(self, sources: _Sources, csi_node: Mapping[str, Any] | None) -> None:
        self.sources = sources
        self.csi_node = csi_node
        self.migrated = _migrated_plugins(csi_node)
        self.limits = _limits(csi_node)
        self.counted: _Counted | None = None


class _Lookup:
    """One cycle's view of the listers, each listed once."""

    __slots__ = ("attachments", "classes", "csi_nodes", "own_volumes", "pvcs", "pvs", "sources")

    def __init__(self, plugin: NodeVolumeLimits) -> None:
        self.pvcs = plugin.pvcs()
        self.pvs = plugin.pvs()
        self.classes = plugin.classes()
        self.attachments = plugin.attachments()
        self.csi_nodes = plugin.csi_nodes()
        sources: _Sources = (self.pvcs, self.pvs, self.classes, self.attachments)
        last = plugin.last_sources
        if last is not None and all(map(operator.is_, last, sources)):
            sources = last  # the same tuple: one identity check per node tells it is current
        #: What the volumes counted on a node depend on besides its pods and CSINode.
        self.sources = sources
        plugin.last_sources = sources
        #: (pod UID, the CSINode's migrated plugins) -> the pod's own counted volumes (or the
        #: rejection): all the pod's volumes depend on of a node, worked out once per cycle
        #: rather than at each of the hundreds of nodes Filter visits.
        self.own_volumes: dict[tuple[str, str | None], tuple[Status | None, dict[str, str]]] = {}

    def clone(self) -> _Lookup:
        return self

    def pvc(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def pv(self, name: str) -> Mapping[str, Any] | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> Mapping[str, Any] | None:
        return self.classes.get(name)


#: A node without a CSINode: no migrated plugins, no limits.
_NO_CSI_NODE = _Held((), None)


class NodeVolumeLimits:
    """Keeps a node's CSI volumes within its drivers' attach limits."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.csi_nodes = IndexedLister(handle.lister("CSINode"))
        self.pvs = IndexedLister(handle.lister("PersistentVolume"))
        self.pvcs = IndexedLister(handle.lister("PersistentVolumeClaim"))
        self.classes = IndexedLister(handle.lister("StorageClass"))
        self.attachments = IndexedLister(handle.lister("VolumeAttachment"))
        #: Per node with a CSINode, its :class:`_Held`: kept while the node's pods
        #: (NodeInfo), its CSINode and the volume objects stay the same.
        self._held = NodeMemo()
        #: The sources of the last cycle (:meth:`_Lookup.sources`).
        self.last_sources: _Sources | None = None
        # kube's randomVolumeIDPrefix: an unbound claim's stand-in handle never meets a real one.
        self._unbound_prefix = uuid.uuid4().hex

    @staticmethod
    def _counted(volume: Mapping[str, Any], csi_node: Mapping[str, Any] | None) -> bool:
        return (
            isinstance(volume.get("persistentVolumeClaim"), Mapping)
            or isinstance(volume.get("ephemeral"), Mapping)
            or _in_tree(volume) is not None
        )

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Skip pods without a claim, an ephemeral volume or a migratable in-tree volume; for
        the others, list what Filter reads once for the cycle."""
        if any(self._counted(v, None) for v in pod_volumes(pod)):
            lookup = _Lookup(self)
            state.write(STATE_KEY, lookup)
            if len(self._held) > len(lookup.csi_nodes) + 1024:  # nodes or CSINodes deleted
                self._held.forget(lookup.csi_nodes)
            return None
        return Status.skip()

    def _driver_info(
        self, lookup: _Lookup, csi_node: Mapping[str, Any] | None, pvc: Mapping[str, Any]
    ) -> tuple[str, str]:
        """kube's ``getCSIDriverInfo``: the claim's driver and volume handle, or ``("", "")``
        when it does not count."""
        pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
        pv = lookup.pv(pv_name) if pv_name else None
        if pv is None:
            return self._driver_info_from_class(lookup, csi_node, pvc)
        spec = pv.get("spec") or {}
        csi = spec.get("csi")
        if isinstance(csi, Mapping):
            return str(csi.get("driver") or ""), str(csi.get("volumeHandle") or "")
        in_tree = _in_tree(spec)
        if in_tree is None or not _migration_on(csi_node, in_tree[0]):
            return "", ""
        return in_tree[1], in_tree[2]

    def _driver_info_from_class(
        self, lookup: _Lookup, csi_node: Mapping[str, Any] | None, pvc: Mapping[str, Any]
    ) -> tuple[str, str]:
        class_name = claim_class(pvc)
        storage_class = lookup.storage_class(class_name) if class_name else None
        if storage_class is None:
            return "", ""
        m = meta(pvc)
        handle = f"{self._unbound_prefix}-{m.get('namespace', '')}/{m.get('name', '')}"
        provisioner = str(storage_class.get("provisioner") or "")
        if provisioner in _PROVISIONER_DRIVERS:
            if not _migration_on(csi_node, provisioner):
                return "", ""
            return _PROVISIONER_DRIVERS[provisioner], handle
        return provisioner, handle

    def _attachable(
        self,
        lookup: _Lookup,
        pod: Pod,
        csi_node: Mapping[str, Any] | None,
        new_pod: bool,
        result: dict[str, str],
    ) -> Status | None:
        """kube's ``filterAttachableVolumes``: ``driver/handle -> driver`` for each of the pod's
        volumes that counts. For the pod being scheduled a missing claim is a rejection; for
        the node's pods it is not counted."""
        claims = {id(c.volume): c for c in pod_claims(pod)}
        for volume in pod_volumes(pod):
            claim = claims.get(id(volume))
            if claim is None:
                in_tree = _in_tree(volume)
                if in_tree is not None and _migration_on(csi_node, in_tree[0]) and in_tree[2]:
                    result[f"{in_tree[1]}/{in_tree[2]}"] = in_tree[1]
                continue
            if not claim.name:
                return Status.error("PersistentVolumeClaim had no name")
            pvc = lookup.pvc(pod.namespace, claim.name)
            if pvc is None:
                if new_pod:
                    return Status.unresolvable(
                        f"looking up PVC {pod.namespace}/{claim.name}: "
                        + not_found("PersistentVolumeClaim", claim.name)
                    )
                continue
            if claim.ephemeral:
                problem = ephemeral_owner_error(pod, pvc)
                if problem:
                    return Status.error(problem)
            driver, handle = self._driver_info(lookup, csi_node, pvc)
            if driver and handle:
                result[f"{driver}/{handle}"] = driver
        return None

    def _attached_by_attachments(
        self, lookup: _Lookup, node_name: str, result: dict[str, str]
    ) -> None:
        """Volumes VolumeAttachments hold on the node (a deleted pod's volume not yet
        detached still takes a slot)."""
        for attachment in lookup.attachments.values():
            spec = attachment.get("spec") or {}
            if spec.get("nodeName") != node_name:
                continue
            pv_name = (spec.get("source") or {}).get("persistentVolumeName")
            pv = lookup.pv(pv_name) if pv_name else None
            csi = ((pv or {}).get("spec") or {}).get("csi")
            if isinstance(csi, Mapping) and csi.get("driver") and csi.get("volumeHandle"):
                result[f"{csi['driver']}/{csi['volumeHandle']}"] = str(csi["driver"])

    def _count_held(
        self, lookup: _Lookup, node_info: NodeInfo, csi_node: Mapping[str, Any] | None
    ) -> _Counted:
        """The volumes the node's pods and VolumeAttachments hold there."""
        attached: dict[str, str] = {}
        attached_count: dict[str, int] = {}
        problem = None
        for existing in node_info.pods.values():
            problem = self._attachable(lookup, existing, csi_node, False, attached)
            if problem is not None:
                break
        else:
            self._attached_by_attachments(lookup, node_info.name, attached)
            for driver in attached.values():
                attached_count[driver] = attached_count.get(driver, 0) + 1
        return problem, attached, attached_count

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject the node when a driver's new volumes would pass its attach limit."""
        lookup = state.get(STATE_KEY)
        if lookup is None:
            if not pod_volumes(pod):
                return None
            lookup = _Lookup(self)
        # The node's _Held, made again when its pods, its CSINode, or a PVC, PV, StorageClass
        # or VolumeAttachment changed (inline: this runs at every node).
        csi_node = lookup.csi_nodes.get(node_info.name)
        held: _Held | None
        if csi_node is None:
            held = _NO_CSI_NODE
        else:
            memo = self._held.get(node_info)
            held = memo.get(NAME)
            if held is None or held.sources is not lookup.sources or held.csi_node is not csi_node:
                held = memo[NAME] = _Held(lookup.sources, csi_node)
        key = (pod.uid, held.migrated)
        own = lookup.own_volumes.get(key)
        if own is None:
            found: dict[str, str] = {}
            own = lookup.own_volumes[key] = (
                self._attachable(lookup, pod, held.csi_node, True, found),
                found,
            )
        problem, counted = own
        if problem is not None:
            return problem
        if not counted:
            return None
        limits = held.limits
        if not limits:
            return None
        if held.counted is None:
            held.counted = self._count_held(lookup, node_info, held.csi_node)
        problem, attached, attached_count = held.counted
        if problem is not None:
            return problem
        new_count: dict[str, int] = {}
        for unique, driver in counted.items():
            if unique not in attached:  # a volume shared with a pod there counts once
                new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(REASON_MAX_VOLUME_COUNT)
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """kube's list: a CSINode added (no hint), a pod with volumes deleted from a node, a
        claim of the pod added."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE), self._pod_deleted
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                self._claim_added,
            ),
        ]

    def _pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod) or not old.node_name:
            return QueueingHint.SKIP
        if any(self._counted(v, None) for v in pod_volumes(old)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def _claim_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
        return QueueingHint.QUEUE if uses_claim(pod, new) else QueueingHint.SKIP
