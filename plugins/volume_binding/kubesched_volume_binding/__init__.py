"""VolumeBinding: a pod goes where its PersistentVolumeClaims can be, and PreBind binds them.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/volumebinding``,
v1.37). PreFilter sorts the pod's claims (generic ephemeral ones by their generated names) into
bound, unbound ``Immediate`` (left to the PV controller: the pod waits) and unbound
``WaitForFirstConsumer``, and narrows the nodes to those local PVs pin. Filter checks, per node,
the bound PVs' node affinity, then finds for each delay-binding claim the smallest matching
Available PV there, or else provisioning through the class (allowed topologies, CSIStorageCapacity).
Score (``StorageCapacityScoring``) prefers free capacity. Reserve assumes the choice;
PreBindPreFlight says Success while some claim is still to be bound (the scheduler then writes
the pod's nominated node first), Skip otherwise; PreBind writes the choice as kube-scheduler
does (the PV's ``claimRef``; the claim's ``volume.kubernetes.io/selected-node``) and waits
until the claims are bound, at most ``bindTimeoutSeconds``.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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
    ObjectWriteError,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    IndexedLister,
    check_node_affinity,
    claim_class,
    ephemeral_owner_error,
    meta,
    not_found,
    object_key,
    pod_claims,
    quantity_value,
    resource_version,
    storage_capacity,
    storage_request,
    uses_claim,
    volume_class,
)

from . import simulated
from .assume import AssumeCache
from .binder import (
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
    BinderError,
    ClaimPlan,
    Cluster,
    DynamicProvision,
    PodVolumeClaims,
    PodVolumes,
    StaticBinding,
    find_pod_volumes,
    is_volume_bound_to_claim,
)

__all__ = [
    "NAME",
    "REASON_BIND_CONFLICT",
    "REASON_NODE_CONFLICT",
    "REASON_NOT_ENOUGH_SPACE",
    "REASON_PV_NOT_EXIST",
    "REASON_UNBOUND_IMMEDIATE",
    "VolumeBinding",
    "VolumeBindingArgs",
]

NAME = "VolumeBinding"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
STATE_KEY = "PreFilter" + NAME
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
#: kube's ``config.MaxCustomPriorityScore``: shape scores are 0..10, scaled to 0..100.
MAX_CUSTOM_SCORE = 10
MAX_UTILIZATION = 100
#: How often PreBind looks at the claims while waiting (kube polls every second).
POLL_SECONDS = 1.0


@dataclass(frozen=True)
class VolumeBindingArgs:
    """kube's ``VolumeBindingArgs``: ``bindTimeoutSeconds`` (default 600) and ``shape``
    (utilization → score points; default, with StorageCapacityScoring, ``{0: 10, 100: 0}``:
    prefer nodes with more free capacity)."""

    bind_timeout_seconds: int = 600
    shape: tuple[tuple[int, int], ...] = ((0, MAX_CUSTOM_SCORE), (MAX_UTILIZATION, 0))

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> VolumeBindingArgs:
        errors: list[FieldError] = []
        for key in args:
            if key not in ("bindTimeoutSeconds", "shape"):
                errors.append(FieldError(key, "unknown field"))
        timeout = args.get("bindTimeoutSeconds", 600)
        if not isinstance(timeout, int) or isinstance(timeout, bool):
            errors.append(FieldError("bindTimeoutSeconds", f"must be an integer, got {timeout!r}"))
            timeout = 600
        elif timeout < 0:
            errors.append(
                FieldError(
                    "bindTimeoutSeconds",
                    f"Invalid value: {timeout}: invalid BindTimeoutSeconds, "
                    "should not be a negative value",
                )
            )
        shape = args.get("shape")
        points: list[tuple[int, int]] = []
        if shape is not None:
            points = _parse_shape(shape, errors)
        if errors:
            raise ArgsError(errors)
        return cls(timeout, tuple(points) if shape is not None else cls.shape)


def _parse_shape(shape: Any, errors: list[FieldError]) -> list[tuple[int, int]]:
    if not isinstance(shape, list) or not shape:
        errors.append(FieldError("shape", "Required value: at least one point must be specified"))
        return []
    points: list[tuple[int, int]] = []
    for i, point in enumerate(shape):
        path = f"shape[{i}]"
        if not isinstance(point, Mapping):
            errors.append(FieldError(path, "must be an object with utilization and score"))
            continue
        utilization, score = point.get("utilization", 0), point.get("score", 0)
        bad = False
        if not isinstance(utilization, int) or not 0 <= utilization <= MAX_UTILIZATION:
            errors.append(
                FieldError(
                    f"{path}.utilization",
                    f"Invalid value: {utilization!r}: not in valid range [0, {MAX_UTILIZATION}]",
                )
            )
            bad = True
        elif points and utilization <= points[-1][0]:
            errors.append(
                FieldError(
                    f"{path}.utilization",
                    f"Invalid value: {utilization}: values must be sorted in increasing order",
                )
            )
            bad = True
        if not isinstance(score, int) or not 0 <= score <= MAX_CUSTOM_SCORE:
            errors.append(
                FieldError(
                    f"{path}.score",
                    f"Invalid value: {score!r}: not in valid range [0, {MAX_CUSTOM_SCORE}]",
                )
            )
            bad = True
        if not bad:
            points.append((utilization, score))
    return points


def broken_linear(shape: tuple[tuple[int, int], ...]) -> Callable[[int], int]:
    """kube's ``BuildBrokenLinearFunction`` over points with scores scaled to 0..100."""
    scaled = [(u, s * (100 // MAX_CUSTOM_SCORE)) for u, s in shape]

    def f(p: int) -> int:
        for i, (utilization, score) in enumerate(scaled):
            if p <= utilization:
                if i == 0:
                    return score
                u0, s0 = scaled[i - 1]
                return s0 + int((score - s0) * (p - u0) / (utilization - u0))
        return scaled[-1][1]

    return f


@dataclass
class _State:
    """The cycle's data (kube's ``stateData``)."""

    claims: PodVolumeClaims | None = None
    cluster: Cluster | None = None
    by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False
    all_bound: bool = False
    #: What every node needs done, when that does not depend on the node (every claim bound
    #: to an existing PV without node affinity): nothing. One object for all the nodes.
    everywhere: PodVolumes | None = None


def _fully_bound(pvc: Mapping[str, Any]) -> bool:
    """``isPVCFullyBound``: a volume name and the PV controller's bind-completed annotation."""
    return bool((pvc.get("spec") or {}).get("volumeName")) and ANN_BIND_COMPLETED in (
        meta(pvc).get("annotations") or {}
    )


def _claim_ref(pvc: Mapping[str, Any]) -> dict[str, Any]:
    m = meta(pvc)
    ref = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": m.get("namespace"),
        "name": m.get("name"),
        "uid": m.get("uid") or "",
    }
    if m.get("resourceVersion"):
        ref["resourceVersion"] = m["resourceVersion"]
    return ref


def bind_volume_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> tuple[dict, bool]:
    """``GetBindVolumeToClaim``: the PV with its claimRef set (and bound-by-controller when the
    scheduler chose it), and whether anything changed."""
    set_by_controller = not is_volume_bound_to_claim(pv, pvc)
    clone = copy.deepcopy(dict(pv))
    spec = clone.setdefault("spec", {})
    ref = spec.get("claimRef") or {}
    m = meta(pvc)
    dirty = False
    if (ref.get("name"), ref.get("namespace"), ref.get("uid") or "") != (
        m.get("name"),
        m.get("namespace"),
        m.get("uid") or "",
    ):
        spec["claimRef"] = _claim_ref(pvc)
        dirty = True
    annotations = clone.setdefault("metadata", {}).setdefault("annotations", {})
    if set_by_controller and ANN_BOUND_BY_CONTROLLER not in annotations:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return clone, dirty


class VolumeBinding:
    """Places pods where their claims can be bound, and binds them before the pod."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = VolumeBindingArgs.parse(args)
        self.handle = handle
        self.pvs = AssumeCache(handle.lister("PersistentVolume"))
        self.pvcs = AssumeCache(handle.lister("PersistentVolumeClaim"))
        self.classes = IndexedLister(handle.lister("StorageClass"))
        self.list_csi_nodes = handle.lister("CSINode")
        self.drivers = IndexedLister(handle.lister("CSIDriver"))
        self.list_capacities = handle.lister("CSIStorageCapacity")
        self.scorer = broken_linear(self.args.shape)
        #: The clock PreBind's wait reads, and how it sleeps (tests replace both).
        self.clock: Callable[[], float] = time.monotonic
        self.sleep: Callable[[float], None] = time.sleep

    # -- PreFilter -----------------------------------------------------------------------------
    def _pod_claims(self, pod: Pod, pvcs: Mapping[str, Mapping[str, Any]]) -> list | Status:
        """kube's ``podHasPVCs`` checks: every claim exists, is not lost or being deleted, and
        an ephemeral one belongs to the pod. Returns the claims in volume order."""
        found = []
        for claim in pod_claims(pod):
            pvc = pvcs.get(f"{pod.namespace}/{claim.name}")
            if pvc is None:
                if claim.ephemeral:
                    return Status.unresolvable(
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{claim.name}"'
                    )
                return Status.unresolvable(not_found("PersistentVolumeClaim", claim.name))
            if (pvc.get("status") or {}).get("phase") == "Lost":
                volume = (pvc.get("spec") or {}).get("volumeName") or ""
                return Status.unresolvable(
                    f'persistentvolumeclaim "{claim.name}" bound to non-existent '
                    f'persistentvolume "{volume}"'
                )
            if meta(pvc).get("deletionTimestamp"):
                return Status.unresolvable(f'persistentvolumeclaim "{claim.name}" is being deleted')
            if claim.ephemeral:
                problem = ephemeral_owner_error(pod, pvc)
                if problem:
                    return Status.unresolvable(problem)
            found.append(pvc)
        return found

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Sort the claims; reject while an Immediate one is unbound. Skip for a pod without
        claims."""
        if not pod_claims(pod):
            state.write(STATE_KEY, _State())
            return Status.skip()
        claims = self._pod_claims(pod, self.pvcs.objects())
        if isinstance(claims, Status):
            return claims
        classes = self.classes()
        sorted_claims = PodVolumeClaims()
        for pvc in claims:
            if _fully_bound(pvc):
                sorted_claims.bound.append(pvc)
                continue
            storage_class = classes.get(claim_class(pvc)) if claim_class(pvc) else None
            delay = (storage_class or {}).get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER
            if delay and not (pvc.get("spec") or {}).get("volumeName"):
                sorted_claims.unbound_delay_binding.append(pvc)
            else:  # a pre-bound claim waits for the PV controller as an Immediate one does
                sorted_claims.unbound_immediate.append(pvc)
        if sorted_claims.unbound_immediate:
            return Status.unresolvable(REASON_UNBOUND_IMMEDIATE)
        pvs = self.pvs.objects()
        for pvc in sorted_claims.unbound_delay_binding:
            class_name = claim_class(pvc)
            if class_name not in sorted_claims.unbound_volumes:
                sorted_claims.unbound_volumes[class_name] = [
                    pv for pv in pvs.values() if volume_class(pv) == class_name
                ]
            try:
                sorted_claims.plans[object_key(pvc)] = ClaimPlan(
                    pvc, sorted_claims.unbound_volumes[class_name]
                )
            except BinderError as exc:
                return Status.error(str(exc))
        cluster = Cluster(
            pvs,
            classes,
            self.drivers() if sorted_claims.unbound_delay_binding else {},
            self.list_capacities() if sorted_claims.unbound_delay_binding else [],
        )
        data = _State(sorted_claims, cluster)
        if not sorted_claims.unbound_delay_binding and all(
            pv is not None and affinity is None
            for pv, affinity in sorted_claims.bound_volumes(cluster.pvs)
        ):
            data.everywhere = PodVolumes()
        state.write(STATE_KEY, data)
        # kube-scheduler v1.37 narrows no nodes here (its GetEligibleNodes is gone): each node
        # a bound local PV excludes is rejected by Filter, under Filter's reason.
        return None

    # -- Filter, Score -------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Whether the node can take the pod's claims; what it would need done is kept."""
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.claims is None or data.cluster is None:
            return Status.error(f'cannot read "{STATE_KEY}" from cycleState')
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        if data.everywhere is not None:  # find_pod_volumes' answer at every node
            data.by_node[node.name] = data.everywhere
            return None
        try:
            volumes, reasons = find_pod_volumes(data.cluster, data.claims, node)
        except BinderError as exc:
            return Status.error(str(exc))
        if reasons:
            return Status.unresolvable(*reasons)
        data.by_node[node.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return None

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Skip pods without claims (StorageCapacityScoring scores every other pod)."""
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.claims is None:
            return Status.skip()
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Per class, the utilization the pod's volumes would cause, through ``shape``."""
        data: _State | None = state.get(STATE_KEY)
        volumes = data.by_node.get(node_info.name) if data is not None else None
        if volumes is None:
            return 0
        classes: dict[str, list[int]] = {}
        if volumes.static_bindings:
            for binding in volumes.static_bindings:
                entry = classes.setdefault(volume_class(binding.pv), [0, 0])
                entry[0] += storage_request(binding.pvc) or 0
                entry[1] += storage_capacity(binding.pv)
        else:
            for provision in volumes.dynamic_provisions:
                if provision.capacity is None:
                    continue
                entry = classes.setdefault(claim_class(provision.pvc), [0, 0])
                raw = provision.capacity.get("capacity")
                entry[1] = quantity_value(raw) if raw is not None else 0
                entry[0] += storage_request(provision.pvc) or 0
        if not classes:
            return 0
        total = 0
        for requested, capacity in classes.values():
            if capacity == 0 or requested > capacity:
                total += self.scorer(MAX_UTILIZATION)
            else:
                total += self.scorer(requested * MAX_UTILIZATION // capacity)
        return math.floor(total / len(classes) + 0.5)

    # -- Reserve, Unreserve --------------------------------------------------------------------
    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Assume the node's bindings and provisions, so the next pod sees them taken."""
        data: _State | None = state.get(STATE_KEY)
        if data is None:
            return None  # PreFilter disabled in the profile: nothing was decided for volumes
        volumes = data.by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return None
        pvcs = self.pvcs.objects()
        if all(_fully_bound(pvcs.get(f"{pod.namespace}/{c.name}") or {}) for c in pod_claims(pod)):
            data.all_bound = True
            return None
        bindings = []
        for binding in volumes.static_bindings:
            pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                self.pvs.assume(pv)
            bindings.append(StaticBinding(pv, binding.pvc))
        provisions = []
        for provision in volumes.dynamic_provisions:
            claim = copy.deepcopy(dict(provision.pvc))
            claim.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = (
                node_name
            )
            self.pvcs.assume(claim)
            provisions.append(DynamicProvision(claim, provision.capacity))
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        data.all_bound = False
        return None

    def _revert(self, volumes: PodVolumes) -> None:
        for binding in volumes.static_bindings:
            self.pvs.restore(object_key(binding.pv))
        for provision in volumes.dynamic_provisions:
            self.pvcs.restore(object_key(provision.pvc))

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Forget what Reserve assumed."""
        data: _State | None = state.get(STATE_KEY)
        volumes = data.by_node.get(node_name) if data is not None else None
        if volumes is not None:
            self._revert(volumes)

    # -- PreBind -------------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState, node_name: str) -> Status | None:
        """Skip when every claim is bound already; Success when PreBind has bindings to write."""
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.all_bound:
            return Status.skip()
        if node_name not in data.by_node:
            return Status.error(f'no pod volumes found for node "{node_name}"')
        return None

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write the bindings and provisioning requests, then wait until every claim is bound
        (at most ``bindTimeoutSeconds``)."""
        data: _State | None = state.get(STATE_KEY)
        if data is None or data.all_bound:
            return None  # nothing to bind (or PreFilter disabled in the profile)
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return Status.error(f'no pod volumes found for node "{node_name}"')
        backend = self.handle.backend
        try:
            self._write(backend, volumes)
            if getattr(backend, "synchronous", False):
                self._complete_in_memory(backend, volumes, node_name)
            deadline = self.clock() + self.args.bind_timeout_seconds
            while not self._check_bindings(pod, volumes, node_name):
                if self.clock() + POLL_SECONDS > deadline:
                    raise BinderError("binding volumes: context deadline exceeded")
                self.sleep(POLL_SECONDS)
        except ObjectWriteError as exc:
            self._revert(volumes)
            return Status.error(exc.message)
        except BinderError as exc:
            self._revert(volumes)
            return Status.error(str(exc))
        return None

    def _write(self, backend: Any, volumes: PodVolumes) -> None:
        """kube's ``bindAPIUpdate``: PVs first, then claims; each answer is assumed."""
        for i, binding in enumerate(volumes.static_bindings):
            stored = backend.update_object("PersistentVolume", binding.pv)
            self.pvs.assume(stored, written=True)
            volumes.static_bindings[i] = StaticBinding(stored, binding.pvc)
        for i, provision in enumerate(volumes.dynamic_provisions):
            stored = backend.update_object("PersistentVolumeClaim", provision.pvc)
            self.pvcs.assume(stored, written=True)
            volumes.dynamic_provisions[i] = DynamicProvision(stored, provision.capacity)

    def _complete_in_memory(self, backend: Any, volumes: PodVolumes, node_name: str) -> None:
        info = self.handle.snapshot().get(node_name)
        classes = self.classes()
        for binding in volumes.static_bindings:
            simulated.complete_static_binding(backend, binding.pv, binding.pvc)
        for provision in volumes.dynamic_provisions:
            storage_class = classes.get(claim_class(provision.pvc)) or {}
            if info is not None and info.node is not None:
                simulated.provision(backend, provision.pvc, storage_class, info.node)

    def _check_bindings(self, pod: Pod, volumes: PodVolumes, node_name: str) -> bool:
        """kube's ``checkBindings``: True once every claim is fully bound; raises when the
        binding cannot complete any more (the pod gone, a claimRef reset, provisioning failed,
        a PV outside the node's topology)."""
        info = self.handle.snapshot().get(node_name)
        if info is None or info.node is None:
            raise BinderError(f'binding volumes: failed to get node "{node_name}"')
        node = info.node
        if self.handle.backend.get_pod(pod.uid) is None:
            raise BinderError("binding volumes: pod does not exist any more")
        pvs = self.pvs.api_objects()
        pvcs = self.pvcs.api_objects()
        for binding in volumes.static_bindings:
            name = str(meta(binding.pv).get("name"))
            pv, pvc = pvs.get(name), pvcs.get(object_key(binding.pvc))
            if pv is None or pvc is None:
                raise BinderError(f"binding volumes: failed to check binding: {name} not found")
            if resource_version(binding.pv) > resource_version(pv):
                return False  # our write has not come back through the watch yet
            if not check_node_affinity(pv, node):
                raise BinderError(
                    f'binding volumes: pv "{name}" node affinity doesn\'t match node '
                    f'"{node_name}": no matching NodeSelectorTerms'
                )
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            if not ref.get("uid"):
                raise BinderError(f'binding volumes: ClaimRef got reset for pv "{name}"')
            if not _fully_bound(pvc):
                return False
        for provision in volumes.dynamic_provisions:
            key = object_key(provision.pvc)
            pvc = pvcs.get(key)
            if pvc is None:
                raise BinderError(f"binding volumes: failed to check provisioning pvc: {key}")
            if resource_version(provision.pvc) > resource_version(pvc):
                return False
            selected = (meta(pvc).get("annotations") or {}).get(ANN_SELECTED_NODE)
            if selected != node_name:
                raise BinderError(
                    f'binding volumes: provisioning failed for PVC "{meta(pvc).get("name")}"'
                )
            volume_name = (pvc.get("spec") or {}).get("volumeName")
            if volume_name:
                pv = pvs.get(volume_name)
                if pv is None:
                    return False  # not seen yet
                if not check_node_affinity(pv, node):
                    raise BinderError(
                        f'binding volumes: pv "{volume_name}" node affinity doesn\'t match '
                        f'node "{node_name}": no matching NodeSelectorTerms'
                    )
            if not _fully_bound(pvc):
                return False
        return True

    # -- events --------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """kube's list (queueing hints on)."""
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, add_update), _class_changed
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_update), _claim_changed
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_update)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, add_update), _csi_node),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE), _driver_changed
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_update), _capacity_changed
            ),
        ]


def _claim_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE if uses_claim(pod, new) else QueueingHint.SKIP


def _class_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if old is None or (old.get("allowedTopologies") != (new or {}).get("allowedTopologies")):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _csi_node(pod: Pod, old: Any, new: Any) -> QueueingHint:
    key = "storage.alpha.kubernetes.io/migrated-plugins"
    if old is None or (meta(old).get("annotations") or {}).get(key) != (
        meta(new).get("annotations") or {}
    ).get(key):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def _driver_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    before = bool(((old or {}).get("spec") or {}).get("storageCapacity"))
    after = bool(((new or {}).get("spec") or {}).get("storageCapacity"))
    return QueueingHint.QUEUE if before and not after else QueueingHint.SKIP


def _capacity_changed(pod: Pod, old: Any, new: Any) -> QueueingHint:
    if old is None:
        return QueueingHint.QUEUE
    fields = ("capacity", "maximumVolumeSize", "nodeTopology", "storageClassName")
    if any(old.get(f) != (new or {}).get(f) for f in fields):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP
