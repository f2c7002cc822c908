"""What VolumeBinding decides per node, as pure functions over raw objects.

Mirrors kube-scheduler's ``volumebinding/binder.go`` (``FindPodVolumes``, ``checkBoundClaims``,
``findMatchingVolumes``, ``checkVolumeProvisions``, ``hasEnoughCapacity``) and
``component-helpers/storage/volume``'s ``FindMatchingVolume``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched import Node
from kubesched.api.selectors import LabelSelector, NodeSelector, SelectorError
from kubesched.api.storage import (
    ANN_SELECTED_NODE,
    check_node_affinity,
    claim_class,
    meta,
    node_affinity,
    quantity_value,
    storage_capacity,
    storage_request,
    volume_class,
)

REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"

#: ``volume.NotSupportedProvisioner``: a class for static PVs only.
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
LABEL_HOSTNAME = "kubernetes.io/hostname"

Obj = Mapping[str, Any]


class BinderError(Exception):
    """An internal error of a decision (kube returns it as an Error status)."""


@dataclass
class StaticBinding:
    """An unbound claim matched with an available PV on a node (kube's ``BindingInfo``)."""

    pv: Obj
    pvc: Obj


@dataclass
class DynamicProvision:
    """An unbound claim to provision on a node, and the capacity that allowed it."""

    pvc: Obj
    capacity: Obj | None = None


@dataclass
class PodVolumes:
    """What a node needs done for the pod's unbound claims (kube's ``PodVolumes``)."""

    static_bindings: list[StaticBinding] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass
class PodVolumeClaims:
    """The pod's claims by state (kube's ``PodVolumeClaims``)."""

    bound: list[Obj] = field(default_factory=list)
    unbound_immediate: list[Obj] = field(default_factory=list)
    unbound_delay_binding: list[Obj] = field(default_factory=list)
    #: Per class of the delay-binding claims: the class's PVs.
    unbound_volumes: dict[str, list[Obj]] = field(default_factory=dict)
    #: Per delay-binding claim (by ``namespace/name``): its candidate PVs (:func:`plan_claim`).
    plans: dict[str, ClaimPlan] = field(default_factory=dict)
    #: The bound claims' PVs with their parsed node affinities, and the PV index they were
    #: looked up in (:meth:`bound_volumes`).
    _bound_volumes: tuple[Mapping[str, Obj], list[BoundVolume]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def bound_volumes(self, pvs: Mapping[str, Obj]) -> list[BoundVolume]:
        """Each bound claim's PV in ``pvs`` (``None``: not found) and its required node
        affinity: what ``checkBoundClaims`` reads of them at every node, looked up once per
        cycle (again for another ``pvs``)."""
        known = self._bound_volumes
        if known is not None and known[0] is pvs:
            return known[1]
        volumes: list[BoundVolume] = []
        for pvc in self.bound:
            pv = pvs.get((pvc.get("spec") or {}).get("volumeName") or "")
            volumes.append((pv, None if pv is None else node_affinity(pv)))
        self._bound_volumes = (pvs, volumes)
        return volumes


#: A bound claim's PV (``None``: not found) and its required node affinity (``None``: none).
BoundVolume = tuple[Obj | None, NodeSelector | None]


def access_modes_fit(pvc: Obj, pv: Obj) -> bool:
    """``CheckAccessModes``: the PV offers every mode the claim asks for."""
    offered = set((pv.get("spec") or {}).get("accessModes") or ())
    return all(mode in offered for mode in (pvc.get("spec") or {}).get("accessModes") or ())


def _volume_mode(spec: Mapping[str, Any]) -> str:
    return str(spec.get("volumeMode") or "Filesystem")


def is_volume_bound_to_claim(pv: Obj, pvc: Obj) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names this claim (and its UID, when set)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not isinstance(ref, Mapping):
        return False
    m = meta(pvc)
    if ref.get("name") != m.get("name") or ref.get("namespace") != m.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == m.get("uid")


def claim_selector(pvc: Obj) -> LabelSelector | None:
    """The claim's ``spec.selector`` (``None`` when it has none); a bad one is an error."""
    data = (pvc.get("spec") or {}).get("selector")
    if data is None:
        return None
    try:
        return LabelSelector.parse(data)
    except SelectorError as exc:
        raise BinderError(f"error creating internal label selector for claim: {exc}") from None


def find_matching_volume(
    pvc: Obj, volumes: Sequence[Obj], node: Node | None, excluded: Mapping[str, Obj]
) -> Obj | None:
    """``FindMatchingVolume`` (scheduler path, delay binding): a PV pre-bound to the claim if
    there is one (``None`` when its node affinity does not fit), else the smallest Available
    PV of the claim's class, capacity, volume mode, selector, access modes and node affinity."""
    requested = storage_request(pvc) or 0
    requested_class = claim_class(pvc)
    spec = pvc.get("spec") or {}
    selector = claim_selector(pvc)
    smallest: Obj | None = None
    smallest_size = 0
    for pv in volumes:
        name = meta(pv).get("name")
        if name in excluded:
            continue
        pv_spec = pv.get("spec") or {}
        if isinstance(pv_spec.get("claimRef"), Mapping) and not is_volume_bound_to_claim(pv, pvc):
            continue
        size = storage_capacity(pv)
        if size < requested:
            continue
        if _volume_mode(spec) != _volume_mode(pv_spec):
            continue
        if meta(pv).get("deletionTimestamp"):
            continue
        affinity_ok = node is None or check_node_affinity(pv, node)
        if is_volume_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if ((pv.get("status") or {}).get("phase")) != "Available":
            continue
        if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
            continue
        if volume_class(pv) != requested_class or not affinity_ok:
            continue
        if node is not None and not access_modes_fit(pvc, pv):
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = pv, size
    return smallest


def _pinned_hostnames(pv: Obj) -> frozenset[str] | None:
    """The hostnames a PV's node affinity can match at most, when every term pins some
    (``kubernetes.io/hostname In``); ``None`` when a term could match any node."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}
    terms = required.get("nodeSelectorTerms") or ()
    if not terms:
        return None
    pinned: set[str] = set()
    for term in terms:
        nodes: set[str] | None = None
        for expression in (term or {}).get("matchExpressions") or ():
            if expression.get("key") == LABEL_HOSTNAME and expression.get("operator") == "In":
                values = set(expression.get("values") or ())
                nodes = values if nodes is None else nodes & values
        if nodes is None:
            return None
        pinned |= nodes
    return frozenset(pinned)


class ClaimPlan:
    """:func:`find_matching_volume` split in two: what does not depend on the node, once per
    cycle (PreFilter), and per node only the node affinity, over candidates indexed by the
    hostnames local PVs are pinned to. Same answers; kube iterates every PV per node."""

    def __init__(self, pvc: Obj, volumes: Sequence[Obj]) -> None:
        requested = storage_request(pvc) or 0
        requested_class = claim_class(pvc)
        spec = pvc.get("spec") or {}
        selector = claim_selector(pvc)
        #: PVs pre-bound to the claim (``claimRef``) passing the node-independent checks.
        self.prebound: list[Obj] = []
        candidates: list[tuple[int, int, Obj]] = []
        for index, pv in enumerate(volumes):
            pv_spec = pv.get("spec") or {}
            if isinstance(pv_spec.get("claimRef"), Mapping) and not is_volume_bound_to_claim(
                pv, pvc
            ):
                continue
            size = storage_capacity(pv)
            if size < requested or _volume_mode(spec) != _volume_mode(pv_spec):
                continue
            if meta(pv).get("deletionTimestamp"):
                continue
            if is_volume_bound_to_claim(pv, pvc):
                self.prebound.append(pv)
                continue
            if (pv.get("status") or {}).get("phase") != "Available":
                continue
            if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
                continue
            if volume_class(pv) != requested_class or not access_modes_fit(pvc, pv):
                continue
            candidates.append((size, index, pv))
        candidates.sort(key=lambda c: (c[0], c[1]))
        self._anywhere: list[tuple[int, int, Obj]] = []
        self._by_host: dict[str, list[tuple[int, int, Obj]]] = {}
        for candidate in candidates:
            hosts = _pinned_hostnames(candidate[2])
            if hosts is None:
                self._anywhere.append(candidate)
            else:
                for host in hosts:
                    self._by_host.setdefault(host, []).append(candidate)

    def match(self, node: Node, excluded: Mapping[str, Obj]) -> Obj | None:
        """The PV :func:`find_matching_volume` would pick on ``node``."""
        for pv in self.prebound:
            if meta(pv).get("name") in excluded:
                continue
            return pv if check_node_affinity(pv, node) else None
        local = self._by_host.get(node.labels.get(LABEL_HOSTNAME, ""), [])
        ordered = (
            sorted(local + self._anywhere, key=lambda c: (c[0], c[1]))
            if local
            else (self._anywhere)
        )
        for _, _, pv in ordered:
            if meta(pv).get("name") not in excluded and check_node_affinity(pv, node):
                return pv
        return None


def _topology_terms_match(terms: Any, node: Node) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; else any term whose every
    ``matchLabelExpressions`` entry has the node's label among its values."""
    if not terms:
        return True
    for term in terms:
        expressions = (term or {}).get("matchLabelExpressions") or ()
        if all(node.labels.get(e.get("key")) in (e.get("values") or ()) for e in expressions):
            return True
    return False


@dataclass
class Cluster:
    """The objects one decision reads (each listed once per cycle by the plugin)."""

    pvs: Mapping[str, Obj]
    classes: Mapping[str, Obj]
    drivers: Mapping[str, Obj]
    capacities: Sequence[Obj]


def _capacity_limit(capacity: Obj) -> int | None:
    value = capacity.get("maximumVolumeSize")
    if value is None:
        value = capacity.get("capacity")
    return None if value is None else quantity_value(value)


def _node_has_access(node: Node, capacity: Obj) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        return LabelSelector.parse(topology).matches(node.labels)
    except SelectorError:
        return False


def has_enough_capacity(
    cluster: Cluster, provisioner: str, pvc: Obj, storage_class: Obj, node: Node
) -> tuple[bool, Obj | None]:
    """``hasEnoughCapacity``: only for CSI drivers that opt into capacity tracking, a
    CSIStorageCapacity of the class, reachable from the node, large enough."""
    size = storage_request(pvc)
    if size is None:
        return True, None
    driver = cluster.drivers.get(provisioner)
    if driver is None or not (driver.get("spec") or {}).get("storageCapacity"):
        return True, None
    class_name = meta(storage_class).get("name")
    for capacity in cluster.capacities:
        if capacity.get("storageClassName") != class_name:
            continue
        limit = _capacity_limit(capacity)
        if limit is not None and limit >= size and _node_has_access(node, capacity):
            return True, capacity
    return False, None


def check_volume_provisions(
    cluster: Cluster, claims: Sequence[Obj], node: Node
) -> tuple[bool, bool, list[DynamicProvision]]:
    """``checkVolumeProvisions``: (provisioning satisfied, enough storage, provisions)."""
    provisions = []
    for pvc in claims:
        class_name = claim_class(pvc)
        name = f"{meta(pvc).get('namespace')}/{meta(pvc).get('name')}"
        if not class_name:
            raise BinderError(f'no class for claim "{name}"')
        storage_class = cluster.classes.get(class_name)
        if storage_class is None:
            raise BinderError(f'failed to find storage class "{class_name}"')
        provisioner = str(storage_class.get("provisioner") or "")
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, True, []
        if not _topology_terms_match(storage_class.get("allowedTopologies"), node):
            return False, True, []
        sufficient, capacity = has_enough_capacity(cluster, provisioner, pvc, storage_class, node)
        if not sufficient:
            return True, False, []
        provisions.append(DynamicProvision(pvc, capacity))
    return True, True, provisions


def check_bound_claims(volumes: Sequence[BoundVolume], node: Node) -> tuple[bool, bool]:
    """``checkBoundClaims``: (node affinity satisfied, every bound PV exists), over the bound
    claims' PVs as :meth:`PodVolumeClaims.bound_volumes` looked them up, in claim order."""
    for pv, affinity in volumes:
        if pv is None:
            return True, False
        if affinity is not None and not affinity.matches(node):
            return False, True
    return True, True


def find_pod_volumes(
    cluster: Cluster, claims: PodVolumeClaims, node: Node
) -> tuple[PodVolumes, list[str]]:
    """``FindPodVolumes``: what the node needs done for the pod, or the reasons it cannot."""
    volumes = PodVolumes()
    bound_ok = unbound_ok = enough_storage = pvs_found = True
    if claims.bound:
        bound_ok, pvs_found = check_bound_claims(claims.bound_volumes(cluster.pvs), node)
    if claims.unbound_delay_binding:
        to_match: list[Obj] = []
        to_provision: list[Obj] = []
        for pvc in claims.unbound_delay_binding:
            selected = (meta(pvc).get("annotations") or {}).get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    unbound_ok = False  # fast path: provisioning started for another node
                    return volumes, _reasons(bound_ok, unbound_ok, enough_storage, pvs_found)
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        if to_match:
            unbound_ok, volumes.static_bindings, unmatched = find_matching_volumes(
                claims.plans, to_match, node
            )
            to_provision.extend(unmatched)
        if to_provision:
            unbound_ok, enough_storage, volumes.dynamic_provisions = check_volume_provisions(
                cluster, to_provision, node
            )
    return volumes, _reasons(bound_ok, unbound_ok, enough_storage, pvs_found)


def _reasons(bound_ok: bool, unbound_ok: bool, enough: bool, found: bool) -> list[str]:
    reasons = []
    if not bound_ok:
        reasons.append(REASON_NODE_CONFLICT)
    if not unbound_ok:
        reasons.append(REASON_BIND_CONFLICT)
    if not enough:
        reasons.append(REASON_NOT_ENOUGH_SPACE)
    if not found:
        reasons.append(REASON_PV_NOT_EXIST)
    return reasons


def find_matching_volumes(
    plans: Mapping[str, ClaimPlan], claims: Sequence[Obj], node: Node
) -> tuple[bool, list[StaticBinding], list[Obj]]:
    """``findMatchingVolumes``: claims by increasing request, each the smallest PV left."""
    chosen: dict[str, Obj] = {}
    bindings: list[StaticBinding] = []
    unmatched: list[Obj] = []
    found = True
    for pvc in sorted(claims, key=lambda c: storage_request(c) or 0):
        key = f"{meta(pvc).get('namespace')}/{meta(pvc).get('name')}"
        pv = plans[key].match(node, chosen)
        if pv is None:
            unmatched.append(pvc)
            found = False
            continue
        chosen[str(meta(pv).get("name"))] = pv
        bindings.append(StaticBinding(pv, pvc))
    return found, bindings, unmatched
