"""DynamicResources: devices for pods through ResourceClaims (DRA with structured parameters).

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/dynamicresources``,
v1.37): a pod's claims (``spec.resourceClaims``, by name or through the claim a template
generated, ``status.resourceClaimStatuses``) must exist before it is queued; claims not yet
allocated are allocated per node by the structured allocator (:mod:`.allocator`) over the
cluster's DeviceClasses and ResourceSlices; Reserve keeps the chosen devices in flight so the
next pod cannot take them; PreBindPreFlight says Success for a pod with claims (the scheduler
then writes its nominated node first), Skip otherwise; PreBind writes the claim's
``status.allocation`` and ``status.reservedFor``; PostFilter deallocates a claim that keeps the
pod off every node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
    parse_duration,
)
from kubesched.api.selectors import NodeSelector, SelectorError

from .allocator import (
    Allocation,
    AllocationError,
    Allocator,
    DeviceID,
    PoolCache,
    SearchCache,
    claim_key,
)
from .tally import ClaimTally, allocated_devices

__all__ = [
    "FINALIZER",
    "NAME",
    "REASON_CANNOT_ALLOCATE",
    "REASON_DEALLOCATED",
    "REASON_IN_USE",
    "REASON_NOT_AVAILABLE",
    "DynamicResources",
    "DynamicResourcesArgs",
]

NAME = "DynamicResources"
REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
REASON_IN_USE = "resourceclaim in use"
REASON_DEALLOCATED = "deallocation of ResourceClaim completed"
REASON_NOT_SIGNABLE = "pods with dra resource claims are not signable"
#: ``resourceapi.Finalizer``: the claim cannot go while devices are allocated for it.
FINALIZER = "resource.kubernetes.io/delete-protection"

_STATE_KEY = NAME
#: Written by every PreFilter call, claims or not (kube writes its state first thing).
_PRE_FILTER_RAN = f"{NAME}/preFilterRan"
_CLAIM, _CLASS, _SLICE = "ResourceClaim", "DeviceClass", "ResourceSlice"
#: ``retry.DefaultRetry``'s steps: PreBind's status write retried on conflicts.
_CONFLICT_RETRIES = 5


@dataclass(frozen=True)
class DynamicResourcesArgs:
    """``pluginConfig[].args`` of DynamicResources (kube's ``DynamicResourcesArgs``)."""

    #: Seconds Filter may spend allocating for one node; 0 means no limit.
    filter_timeout: float = 10.0
    #: Seconds PreBind would wait for devices' binding conditions.
    binding_timeout: float = 600.0

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> DynamicResourcesArgs:
        errors: list[FieldError] = [
            FieldError(key, "unknown field; allowed: filterTimeout, bindingTimeout")
            for key in args
            if key not in ("filterTimeout", "bindingTimeout")
        ]
        values = {}
        for key, attr, minimum, problem in (
            ("filterTimeout", "filter_timeout", 0.0, "must be zero or positive"),
            ("bindingTimeout", "binding_timeout", 1.0, "must be at least 1 second"),
        ):
            if key not in args:
                continue
            raw = args[key]
            seconds = parse_duration(raw) if isinstance(raw, str) else None
            if seconds is None:
                errors.append(FieldError(key, f"must be a duration such as '10s', got {raw!r}"))
            elif seconds < minimum:
                errors.append(FieldError(key, f"{problem}, got {raw!r}"))
            else:
                values[attr] = seconds
        if errors:
            raise ArgsError(errors)
        return cls(**values)


# -- a pod's claims -------------------------------------------------------------------------------
class _ClaimProblem(Exception):
    """Why a pod's claims are not usable yet (kube's ``foreachPodResourceClaim`` errors)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else {}


def _pod_claims(pod: Pod, claims: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The claims ``pod`` uses, in ``spec.resourceClaims`` order; :class:`_ClaimProblem` when
    one is missing, being deleted or not the pod's own (``resourceclaim.Name``/``IsForPod``)."""
    out = []
    spec = pod.raw.get("spec") or {}
    statuses = (pod.raw.get("status") or {}).get("resourceClaimStatuses") or ()
    for entry in spec.get("resourceClaims") or ():
        must_check_owner = False
        if entry.get("resourceClaimName"):
            name = entry["resourceClaimName"]
        elif entry.get("resourceClaimTemplateName"):
            generated = [s for s in statuses if s.get("name") == entry.get("name")]
            if not generated:
                raise _ClaimProblem(f'pod "{pod.key}": ResourceClaim not created yet')
            name = generated[0].get("resourceClaimName")
            if not name:
                continue  # the controller decided that no claim is needed
            must_check_owner = True
        else:
            raise _ClaimProblem(
                f'pod "{pod.key}", spec.resourceClaim "{entry.get("name")}": '
                "none of the supported fields are set"
            )
        claim = claims.get(f"{pod.namespace}/{name}")
        if claim is None:
            raise _ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
        if _meta(claim).get("deletionTimestamp"):
            raise _ClaimProblem(f'resourceclaim "{name}" is being deleted')
        if must_check_owner and not any(
            ref.get("controller") and ref.get("uid") == pod.uid
            for ref in _meta(claim).get("ownerReferences") or ()
        ):
            raise _ClaimProblem(
                f"ResourceClaim {claim_key(claim)} was not created for Pod {pod.key} "
                "(Pod is not owner)"
            )
        out.append(claim)
    return out


def _reserved_for(claim: Mapping[str, Any], pod: Pod) -> bool:
    return any(r.get("uid") == pod.uid for r in _status(claim).get("reservedFor") or ())


def _has_claims(pod: Pod) -> bool:
    return bool((pod.raw.get("spec") or {}).get("resourceClaims"))


@dataclass
class _CycleData:
    """What PreFilter found for a pod, read by the later points of its cycle."""

    claims: list[Mapping[str, Any]]
    #: indices of the claims to allocate
    to_allocate: list[int]
    #: the claims to allocate (one list for every node: the allocator signs it once)
    to_allocate_claims: list[Mapping[str, Any]] = field(default_factory=list)
    #: claim index -> where its allocation is usable
    available_on: dict[int, NodeSelector] = field(default_factory=dict)
    allocator: Allocator | None = None
    #: node name -> the fit Filter found there (one allocation per claim to allocate)
    node_allocations: dict[str, Allocation] = field(default_factory=dict)
    unavailable: set[int] = field(default_factory=set)
    #: claim index -> the allocation Reserve chose
    allocations: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: whether some claim has ``firstAvailable`` subrequests (the only thing Score rewards)
    first_available: bool = False

    def clone(self) -> _CycleData:
        return self  # preemption's what-ifs do not change it


class DynamicResources:
    """Built once per profile; reads claims, classes and slices through the handle's listers."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = DynamicResourcesArgs.parse(args)
        self.handle = handle
        #: the claims, and the devices their allocations hold, kept across cycles
        self._claims = ClaimTally(handle.lister(_CLAIM))
        self._classes = handle.lister(_CLASS)
        self._slices = handle.lister(_SLICE)
        #: claim uid -> (allocation, the claim's resourceVersions before PreBind's status write):
        #: chosen at Reserve and held until the lister shows a newer claim (kube's pending
        #: allocations and assume cache), so that no other pod takes its devices in between
        self._in_flight: dict[str, tuple[dict[str, Any], frozenset[str] | None]] = {}
        self._versions_before: dict[str, set[str]] = {}
        #: pools per node, kept while the slices stay the same objects
        self._pools = PoolCache()
        #: each node's search answer, kept while what it follows from stays the same
        self._answers = SearchCache()

    # -- helpers -------------------------------------------------------------------------------
    def _claims_by_key(self) -> Mapping[str, Mapping[str, Any]]:
        return self._claims.by_key()

    def _allocated(self) -> set[DeviceID]:
        """Devices in use: allocated claims (as of the last refresh of the claims), and
        allocations in flight not yet visible."""
        devices = self._claims.allocated()
        by_uid = self._claims.by_uid()
        for uid, (allocation, written_over) in list(self._in_flight.items()):
            stored = by_uid.get(uid)
            if written_over is not None and (
                stored is None or _meta(stored).get("resourceVersion") not in written_over
            ):
                del self._in_flight[uid]  # the lister has seen PreBind's write, or later ones
                continue
            devices.update(allocated_devices(allocation))
        return devices

    # -- PreEnqueue --------------------------------------------------------------------------
    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Keep the pod out of the queue until every claim it names exists and is its own."""
        if not _has_claims(pod):
            return None
        try:
            _pod_claims(pod, self._claims_by_key())
        except _ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        return None

    # -- PreFilter / Filter ------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Read the pod's claims; prepare an allocator when some are not allocated yet."""
        state.write(_PRE_FILTER_RAN, True)
        if not _has_claims(pod):
            return Status.skip()
        try:
            claims = _pod_claims(pod, self._claims_by_key())
        except _ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        if not claims:
            return Status.skip()
        data = _CycleData(claims, [])
        data.first_available = any(
            request.get("firstAvailable")
            for claim in claims
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ()
        )
        classes = {str(_meta(c).get("name", "")): c for c in self._classes()}
        for index, claim in enumerate(claims):
            allocation = _status(claim).get("allocation")
            if allocation:
                selector = allocation.get("nodeSelector")
                if selector is not None:
                    try:
                        data.available_on[index] = NodeSelector.parse(selector)
                    except SelectorError as exc:
                        return Status.error(f"claim {claim_key(claim)}: {exc}")
                continue
            uid = _meta(claim).get("uid")
            if uid in self._in_flight:
                return Status.unresolvable(
                    f"resource claim {claim_key(claim)} is in the process of being allocated"
                )
            data.to_allocate.append(index)
            problem = self._check_classes(claim, classes)
            if problem is not None:
                return problem
        if data.to_allocate:
            data.to_allocate_claims = [claims[i] for i in data.to_allocate]
            data.allocator = Allocator(
                classes, self._slices(), self._allocated(), self._pools, self._answers
            )
        state.write(_STATE_KEY, data)
        return None

    @staticmethod
    def _check_classes(
        claim: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]
    ) -> Status | None:
        for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            name = request.get("name", "")
            if request.get("exactly"):
                wanted = [(name, request["exactly"].get("deviceClassName", ""))]
            elif request.get("firstAvailable"):
                wanted = [
                    (f"{name}/{sub.get('name', '')}", sub.get("deviceClassName", ""))
                    for sub in request["firstAvailable"]
                ]
            else:
                return Status.unresolvable(
                    f"resource claim {claim_key(claim)}, request {name}: unknown request type"
                )
            for request_name, class_name in wanted:
                if not class_name:
                    return Status.error(f"request {request_name}: unsupported request type")
                if class_name not in classes:
                    return Status.unresolvable(
                        f"request {request_name}: device class {class_name} does not exist"
                    )
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Can this node serve every claim: allocated ones where they are, the rest allocated."""
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None:
            return None
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        unavailable = [
            index for index, selector in data.available_on.items() if not selector.matches(node)
        ]
        found: Allocation | None = None
        if data.allocator is not None:
            timeout = self.args.filter_timeout or None
            try:
                found = data.allocator.search(node, data.to_allocate_claims, timeout=timeout)
            except TimeoutError:
                return Status.error(f"node {node.name}: timed out trying to allocate devices")
            except AllocationError as exc:
                if exc.on_node:
                    return Status.unresolvable(str(exc))
                return Status.error(str(exc))
            if found is None:
                return Status.unresolvable(REASON_CANNOT_ALLOCATE)
        if unavailable:
            data.unavailable.update(unavailable)
            return Status.unresolvable(REASON_NOT_AVAILABLE)
        if found is not None:
            data.node_allocations[node.name] = found
        return None

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Pods with claims are never signed (kube: whether a claim is per node is not known)."""
        if _has_claims(pod):
            return Status.unschedulable(REASON_NOT_SIGNABLE)
        return None

    # -- PostFilter --------------------------------------------------------------------------
    @hookimpl
    def post_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Deallocate a claim that keeps the pod off every node, when no other pod uses it.

        When PreFilter never ran (an earlier plugin's PreFilter rejected the pod), kube's
        PostFilter fails to read its state: an Error ``not found``, which ends PostFilter before
        DefaultPreemption and ends the pod's message. A profile without this PreFilter (the
        seed's disables every default one) gets no such Error: kubesched's one difference."""
        if state.get(_PRE_FILTER_RAN) is None:
            if NAME in self.handle.plugins_at("preFilter"):
                return Status.error("not found")
            return None
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None:
            return None
        for index in sorted(data.unavailable):
            claim = data.claims[index]
            reserved = _status(claim).get("reservedFor") or []
            if reserved and not (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                continue
            status = dict(_status(claim))
            for key in ("reservedFor", "allocation", "devices"):
                status.pop(key, None)
            try:
                self.handle.backend.update_object(
                    _CLAIM, {**claim, "status": status}, subresource="status"
                )
            except Exception as exc:  # an API refusal is this cycle's error, named
                return Status.error(f"deallocate claim {claim_key(claim)}: {exc}")
            return Status.unschedulable(REASON_DEALLOCATED)
        return None

    # -- Score -------------------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Skip for a pod with no claim that lists ``firstAvailable`` subrequests: its Score is
        0 on every node and NormalizeScore keeps the 0s, so the totals are the same without
        them (kube-scheduler calls both anyway; here a pod without claims, the common case,
        costs no Score column)."""
        data: _CycleData | None = state.get(_STATE_KEY)
        return Status.skip() if data is None or not data.first_available else None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Prefer nodes where subrequests earlier in ``firstAvailable`` were allocated."""
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None or node_info.node is None or not data.first_available:
            return 0
        found = data.node_allocations.get(node_info.node.name)
        if found is None:
            return 0
        by_index = dict(zip(data.to_allocate, found.results(), strict=True))
        score = 0
        for index, claim in enumerate(data.claims):
            allocation = by_index.get(index) or _status(claim).get("allocation") or {}
            chosen = {
                r.get("request")
                for r in (allocation.get("devices") or {}).get("results") or ()
                if "/" in str(r.get("request", ""))
            }
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                for i, sub in enumerate(request.get("firstAvailable") or ()):
                    if f"{request.get('name')}/{sub.get('name')}" in chosen:
                        score += 8 - i  # FirstAvailableDeviceRequestMaxSize - i
        return score

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        """kube's ``DefaultNormalizeScore(MaxNodeScore, false)``: the best node gets 100."""
        highest = max(scores.values(), default=0)
        if highest == 0:
            return
        for node_name, value in scores.items():
            scores[node_name] = value * 100 // highest

    # -- Reserve / Unreserve -----------------------------------------------------------------
    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Hold the devices chosen on ``node_name`` so that the next pod cannot take them."""
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None or data.allocator is None:
            return None
        found = data.node_allocations.get(node_name)
        allocations = found.results() if found is not None else []
        if not allocations:
            return Status.error("claim allocation not found for node")
        if len(allocations) != len(data.to_allocate):
            return Status.error(
                f"internal error, have {len(allocations)} allocations, "
                f"{len(data.to_allocate)} claims to allocate"
            )
        for index, allocation in zip(data.to_allocate, allocations, strict=True):
            claim = data.claims[index]
            data.allocations[index] = allocation
            self._in_flight[str(_meta(claim).get("uid"))] = (allocation, None)
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Release the devices held at Reserve; drop the pod from claims reserved for it."""
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None:
            return
        current = self._claims_by_key()
        for claim in data.claims:
            self._in_flight.pop(str(_meta(claim).get("uid")), None)
            stored = current.get(claim_key(claim))
            if stored is None or not _status(stored).get("allocation"):
                continue
            if not _reserved_for(stored, pod):
                continue
            status = dict(_status(stored))
            status["reservedFor"] = [
                r for r in status.get("reservedFor") or () if r.get("uid") != pod.uid
            ]
            try:
                self.handle.backend.update_object(
                    _CLAIM, {**stored, "status": status}, subresource="status"
                )
            except Exception:  # kube logs the failure and carries on too
                continue

    # -- PreBind -----------------------------------------------------------------------------
    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState) -> Status | None:
        """Success when the pod has claims (PreBind writes or checks each one), else Skip."""
        data: _CycleData | None = state.get(_STATE_KEY)
        return Status.skip() if data is None else None

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Write each claim's allocation and add the pod to its ``reservedFor``."""
        data: _CycleData | None = state.get(_STATE_KEY)
        if data is None:
            return None
        for index, claim in enumerate(data.claims):
            if _reserved_for(claim, pod):
                continue
            allocation = data.allocations.get(index)
            uid = str(_meta(claim).get("uid"))
            try:
                data.claims[index] = self._bind_claim(claim, allocation, pod)
            except _BindError as exc:
                return Status.error(str(exc))
            if allocation is not None and uid in self._in_flight:
                self._in_flight[uid] = (allocation, frozenset(self._versions_before.pop(uid, ())))
        return None

    def _bind_claim(
        self, claim: Mapping[str, Any], allocation: dict[str, Any] | None, pod: Pod
    ) -> Mapping[str, Any]:
        backend = self.handle.backend
        key = claim_key(claim)
        binding = {"resource": "pods", "name": pod.name, "uid": pod.uid}
        current: Mapping[str, Any] | None = claim
        uid = str(_meta(claim).get("uid"))
        versions = self._versions_before[uid] = {str(_meta(claim).get("resourceVersion"))}
        for attempt in range(_CONFLICT_RETRIES):
            if attempt:
                current = self._claims_by_key().get(key)
                if current is None:
                    raise _BindError(f"get updated claim {key} after conflict: not found")
            assert current is not None
            if _meta(current).get("deletionTimestamp"):
                raise _BindError(f"claim {key} got deleted in the meantime")
            try:
                if allocation is not None:
                    if _status(current).get("allocation"):
                        raise _BindError(f"claim {key} got allocated elsewhere in the meantime")
                    finalizers = list(_meta(current).get("finalizers") or ())
                    if FINALIZER not in finalizers:
                        meta = {**_meta(current), "finalizers": [*finalizers, FINALIZER]}
                        try:
                            current = backend.update_object(_CLAIM, {**current, "metadata": meta})
                        except Exception as exc:
                            if getattr(exc, "conflict", False):
                                continue
                            raise _BindError(f"add finalizer to claim {key}: {exc}") from None
                status = dict(_status(current))
                if allocation is not None:
                    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                    status["allocation"] = {**allocation, "allocationTimestamp": stamp}
                status["reservedFor"] = [*(status.get("reservedFor") or ()), binding]
                versions.add(str(_meta(current).get("resourceVersion")))
                stored = backend.update_object(
                    _CLAIM, {**current, "status": status}, subresource="status"
                )
            except _BindError:
                raise
            except Exception as exc:
                if getattr(exc, "conflict", False):
                    continue
                what = "add allocation and reservation to" if allocation else "add reservation to"
                raise _BindError(f"{what} claim {key}: {exc}") from None
            return stored
        raise _BindError(f"claim {key}: the object has been modified; retries exhausted")

    # -- events ------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Nodes, claims, the pod's generated claims, classes and slices (kube's list)."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, ActionType.ALL),
                self._hint_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
                ),
                self._hint_target_pod_update,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
        ]

    def _hint_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """kube's ``isSchedulableAfterClaimChange``."""
        if (old is not None and not isinstance(old, Mapping)) or (
            new is not None and not isinstance(new, Mapping)
        ):
            return QueueingHint.QUEUE
        if new is None:
            return QueueingHint.QUEUE if _status(old or {}).get("allocation") else QueueingHint.SKIP
        try:
            uses = any(
                _meta(c).get("uid") == _meta(new).get("uid")
                for c in _pod_claims(pod, self._claims_by_key())
            )
        except _ClaimProblem:
            return QueueingHint.SKIP
        if (
            old is not None
            and _status(old).get("allocation")
            and not _status(new).get("allocation")
        ):
            return QueueingHint.QUEUE  # deallocated: its devices are free for anyone
        if not uses:
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if _status(old) == _status(new) else QueueingHint.QUEUE

    def _hint_target_pod_update(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod):
            return QueueingHint.QUEUE
        if new.uid != pod.uid:
            return QueueingHint.SKIP
        try:
            _pod_claims(new, self._claims_by_key())
        except _ClaimProblem:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


class _BindError(Exception):
    pass
