"""Helpers for the volume plugins, over the raw objects ``Handle.lister`` returns.

What kube-scheduler's volume plugins share through ``k8s.io/component-helpers/storage/volume``,
``k8s.io/component-helpers/storage/ephemeral`` and ``k8s.io/cloud-provider/volume/helpers``: a
claim's and a volume's storage class, the claims a pod uses (generic ephemeral volumes by their
generated names), a PV's node affinity against a node, zone label sets. Kept in the core, as kube
keeps them in a library rather than in one plugin, so the four plugins agree on them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.api.quantity import to_int
from kubesched.api.selectors import NodeSelector

__all__ = [
    "ANN_BETA_STORAGE_CLASS",
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "IndexedLister",
    "PodClaim",
    "by_key",
    "check_node_affinity",
    "claim_class",
    "ephemeral_claim_name",
    "ephemeral_owner_error",
    "label_zones_to_set",
    "manifest_errors",
    "meta",
    "node_affinity",
    "not_found",
    "object_key",
    "pod_claims",
    "pod_volumes",
    "quantity_value",
    "resource_version",
    "storage_capacity",
    "storage_request",
    "uses_claim",
    "volume_class",
]

ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"

#: ``volumehelpers.LabelMultiZoneDelimiter``: a PV's zone label may list zones joined by it.
LABEL_ZONES_DELIMITER = "__"

#: The resource names kube's listers put in a not-found error (``persistentvolumeclaim "x" not
#: found``), by kind.
_RESOURCE_NAMES = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io",
}


def meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``obj``'s metadata (empty when absent or malformed)."""
    if type(obj) is dict:  # the common case, without an ABC check (hot in every lister scan)
        data = obj.get("metadata")
        if type(data) is dict:
            return data
    data = obj.get("metadata") if isinstance(obj, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    m = meta(obj)
    namespace, name = m.get("namespace") or "", m.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


def by_key(objects: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Objects by :func:`object_key` (a lister's answer made searchable)."""
    return {object_key(obj): obj for obj in objects}


class IndexedLister:
    """A lister's objects by :func:`object_key`, built again only when the lister hands out
    other objects than last time.

    Informers and the in-memory backend replace an object on every change (they never edit
    one in place), so "the same objects, in the same order" means nothing changed: the index
    of the previous call is returned, the same dict. That identity is also a version: a value
    worked out from an index stays valid while the index is the same object. The dict is
    shared; callers must not change it.
    """

    __slots__ = ("_last", "_lister")

    def __init__(self, lister: Callable[[], list[Mapping[str, Any]]]) -> None:
        self._lister = lister
        #: The last listing and its index, as one tuple (a reader on another thread sees
        #: either the old pair or the new one).
        self._last: tuple[list[Mapping[str, Any]], dict[str, Mapping[str, Any]]] | None = None

    def __call__(self) -> dict[str, Mapping[str, Any]]:
        """The objects by key, as the lister shows them now."""
        listed = self._lister()
        last = self._last
        if (
            last is not None
            and len(last[0]) == len(listed)
            and all(map(operator.is_, last[0], listed))
        ):
            return last[1]
        index = by_key(listed)
        # A copy: a lister may hand out one list it changes in place.
        self._last = (list(listed), index)
        return index


def not_found(kind: str, name: str) -> str:
    """kube's lister error for a missing object: ``persistentvolumeclaim "data" not found``."""
    return f'{_RESOURCE_NAMES.get(kind, kind.lower())} "{name}" not found'


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = meta(obj).get("annotations")
    return annotations if isinstance(annotations, Mapping) else {}


def claim_class(pvc: Mapping[str, Any]) -> str:
    """A claim's storage class (``GetPersistentVolumeClaimClass``): the beta annotation, else
    ``spec.storageClassName``, else ``""``."""
    annotated = _annotations(pvc).get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return str(annotated)
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


def volume_class(pv: Mapping[str, Any]) -> str:
    """A PersistentVolume's storage class (``GetPersistentVolumeClass``), read the same way."""
    return claim_class(pv)


def pod_volumes(pod: Pod) -> list[Mapping[str, Any]]:
    """``spec.volumes`` of the pod (only the mappings)."""
    volumes = (pod.raw.get("spec") or {}).get("volumes") or ()
    return [v for v in volumes if isinstance(v, Mapping)]


def ephemeral_claim_name(pod: Pod, volume: Mapping[str, Any]) -> str:
    """The claim a generic ephemeral volume gets (``ephemeral.VolumeClaimName``)."""
    return f"{pod.name}-{volume.get('name', '')}"


class PodClaim:
    """One claim a pod's volume uses: its name, and whether it is a generic ephemeral one."""

    __slots__ = ("ephemeral", "name", "volume")

    def __init__(self, name: str, ephemeral: bool, volume: Mapping[str, Any]) -> None:
        self.name = name
        self.ephemeral = ephemeral
        self.volume = volume

    def __repr__(self) -> str:
        return f"PodClaim({self.name!r}, ephemeral={self.ephemeral})"


def pod_claims(pod: Pod, *, ephemeral: bool = True) -> list[PodClaim]:
    """The claims ``pod``'s volumes use, in volume order: ``persistentVolumeClaim`` volumes,
    and (unless ``ephemeral=False``) generic ephemeral volumes by their generated names."""
    claims = []
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, Mapping):
            claims.append(PodClaim(str(source.get("claimName") or ""), False, volume))
        elif ephemeral and isinstance(volume.get("ephemeral"), Mapping):
            claims.append(PodClaim(ephemeral_claim_name(pod, volume), True, volume))
    return claims


def uses_claim(pod: Pod, pvc: Mapping[str, Any] | None, *, ephemeral: bool = True) -> bool:
    """Whether ``pvc`` is one of ``pod``'s claims (same namespace and name): the queueing hint
    every volume plugin asks of a claim event."""
    if pvc is None or meta(pvc).get("namespace") != pod.namespace:
        return False
    name = meta(pvc).get("name")
    return any(claim.name == name for claim in pod_claims(pod, ephemeral=ephemeral))


def ephemeral_owner_error(pod: Pod, pvc: Mapping[str, Any]) -> str:
    """Why an ephemeral volume's claim is not the pod's (``ephemeral.VolumeIsForPod``): ``""``
    when the claim's controller owner is the pod."""
    for ref in meta(pvc).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") and ref.get("uid") == pod.uid:
            return ""
    m = meta(pvc)
    return (
        f"PVC {m.get('namespace', '')}/{m.get('name', '')} was not created for pod "
        f"{pod.namespace}/{pod.name} (pod is not owner)"
    )


#: Parsed PV node affinities by the id of their mapping (held, so the id stays unique).
_AFFINITIES: dict[int, tuple[Mapping[str, Any], NodeSelector]] = {}
_AFFINITIES_MAX = 65536


def _required_affinity(required: Mapping[str, Any]) -> NodeSelector:
    cached = _AFFINITIES.get(id(required))
    if cached is not None and cached[0] is required:
        return cached[1]
    if len(_AFFINITIES) >= _AFFINITIES_MAX:
        _AFFINITIES.clear()
    selector = NodeSelector.parse(required, lazy=True)
    _AFFINITIES[id(required)] = (required, selector)
    return selector


def node_affinity(pv: Mapping[str, Any]) -> NodeSelector | None:
    """The PV's required node affinity, parsed (``None`` when it has none: it fits every
    node). Each affinity is parsed once (listers hand out the same objects until they
    change)."""
    affinity = (pv.get("spec") or {}).get("nodeAffinity")
    if not isinstance(affinity, Mapping):
        return None
    required = affinity.get("required")
    if not isinstance(required, Mapping):
        return None
    return _required_affinity(required)


def check_node_affinity(pv: Mapping[str, Any], node: Node) -> bool:
    """Whether ``node`` satisfies the PV's required node affinity (``CheckNodeAffinity``): a PV
    without one fits every node; its terms are ORed, as in a pod's node affinity."""
    selector = node_affinity(pv)
    return selector is None or selector.matches(node)


def label_zones_to_set(value: str) -> set[str]:
    """The zones of a PV's zone label (``LabelZonesToSet``): ``a__b`` is ``{a, b}``; an empty
    zone is a ``ValueError``."""
    zones = value.split(LABEL_ZONES_DELIMITER)
    if any(not zone for zone in zones):
        raise ValueError(f"provided label value {value!r} has an empty zone")
    return set(zones)


def quantity_value(value: str | int | float) -> int:
    """A quantity (``10Gi``, ``500M``) as an integer, rounded up (``resource.Quantity.Value``)."""
    return to_int(value)


def storage_request(pvc: Mapping[str, Any]) -> int | None:
    """``spec.resources.requests.storage`` of a claim in bytes (``None`` when not requested)."""
    requests = ((pvc.get("spec") or {}).get("resources") or {}).get("requests") or {}
    value = requests.get("storage")
    return None if value is None else to_int(value)


def storage_capacity(pv: Mapping[str, Any]) -> int:
    """``spec.capacity.storage`` of a PersistentVolume in bytes (0 when absent)."""
    value = ((pv.get("spec") or {}).get("capacity") or {}).get("storage")
    return 0 if value is None else to_int(value)


def resource_version(obj: Mapping[str, Any] | None) -> int:
    """``metadata.resourceVersion`` as a number, for "is this copy newer" (kube's
    ``CompareResourceVersion``); 0 when absent or not numeric."""
    digits = "".join(ch for ch in str(meta(obj).get("resourceVersion") or "") if ch.isdigit())
    return int(digits) if digits else 0


#: The quantity fields of the volume kinds, by kind: what :func:`manifest_errors` checks.
_QUANTITY_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "PersistentVolumeClaim": (("spec", "resources", "requests", "storage"),),
    "PersistentVolume": (("spec", "capacity", "storage"),),
    "CSIStorageCapacity": (("capacity",), ("maximumVolumeSize",)),
}


def manifest_errors(kind: str, obj: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver would refuse in a volume object of a cluster file, as far as the
    volume plugins read it: a missing name, a storage quantity that does not parse. One line
    each, naming the field (``spec.capacity.storage: invalid quantity 'lots': …``)."""
    if kind not in _QUANTITY_FIELDS and kind not in _RESOURCE_NAMES:
        return []
    errors = []
    if not meta(obj).get("name"):
        errors.append("metadata.name: Required value")
    for path in _QUANTITY_FIELDS.get(kind, ()):
        value: Any = obj
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            continue
        try:
            to_int(value)
        except ValueError as exc:
            errors.append(f"{'.'.join(path)}: {exc}")
    return errors
