"""The structured allocator: which devices of a node's ResourceSlices satisfy a pod's claims.

A pure port of the semantics of ``k8s.io/dynamic-resource-allocation/structured`` (v1.37): the
objects are the API's own mappings (``resource.k8s.io/v1`` ResourceClaim, DeviceClass,
ResourceSlice), nothing here talks to a cluster. :meth:`Allocator.allocate` searches depth first,
claim by claim, request by request, device by device, and backtracks as kube's ``allocateOne``
does, so that the same inputs give kube's answer where it is unique.

Covered: pools built from slices (generations, ``resourceSliceCount`` completeness, slices for
the node by ``nodeName``, ``allNodes``, ``nodeSelector`` or per device), ``ExactCount`` and
``All``, class and request selectors (CEL, :mod:`.cel`), ``matchAttribute`` constraints, admin
access, ``firstAvailable`` subrequests, device taints and request tolerations, shared counters of
partitionable devices, the allocation result's config and node selector. Not covered (v1.37
beta features): consumable capacity (``allowMultipleAllocations`` devices are handed out whole,
to one claim), binding conditions (devices with ``bindingConditions`` are not selectable, as
with the gate off), extended resources backed by DRA.
"""

from __future__ import annotations

import copy
import json
import operator
import time
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kubesched import InvalidQuantity, Node, parse_quantity
from kubesched.api.selectors import NodeSelector, SelectorError

from .cel import CELError, DeviceInput, compile_selector, device_input

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "Allocation",
    "AllocationError",
    "Allocator",
    "DeviceID",
    "PoolCache",
    "SearchCache",
    "claim_key",
    "node_matches",
]

#: ``resourceapi.AllocationResultsMaxSize``: devices per claim.
ALLOCATION_RESULTS_MAX_SIZE = 32

#: ``(driver, pool, device)``.
DeviceID = tuple[str, str, str]


class AllocationError(Exception):
    """A claim that cannot be allocated as it is (kube returns an error, not "no fit").

    ``on_node`` is set when the problem is this node's (invalid pools: kube's
    ``ErrFailedAllocationOnNode``), so the node is rejected rather than the cycle failed.
    """

    def __init__(self, message: str, *, on_node: bool = False) -> None:
        super().__init__(message)
        self.on_node = on_node


def claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _node_selector(data: Any) -> NodeSelector:
    try:
        return NodeSelector.parse(data)
    except SelectorError as exc:
        raise AllocationError(f"failed to parse node selector: {exc}") from None


def node_matches(
    node: Node | None, node_name: str, all_nodes: bool, selector: Mapping[str, Any] | None
) -> bool:
    """kube's ``NodeMatches``: a slice (or device) for one node, for all, or for a selector."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return _node_selector(selector).matches(node)
    return False


def _quantity(value: Any) -> Decimal:
    try:
        return parse_quantity(value if isinstance(value, str | int | float) else str(value))
    except InvalidQuantity as exc:
        raise AllocationError(str(exc)) from None


# -- pools --------------------------------------------------------------------------------------
@dataclass
class _Device:
    id: DeviceID
    raw: Mapping[str, Any]
    slice: Mapping[str, Any]
    pool: _Pool
    _input: DeviceInput | None = None
    #: CEL expression -> whether it selects this device (the device's contents decide: the
    #: answer holds as long as the pool, and so this object, is kept)
    selected: dict[str, bool] = field(default_factory=dict)

    def cel_input(self) -> DeviceInput:
        if self._input is None:
            self._input = device_input(
                self.id[0],
                self.raw.get("attributes"),
                self.raw.get("capacity"),
                bool(self.raw.get("allowMultipleAllocations")),
            )
        return self._input


@dataclass
class _Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: str = ""
    slices: list[Mapping[str, Any]] = field(default_factory=list)
    other_slices: list[Mapping[str, Any]] = field(default_factory=list)
    #: counter set name -> counter name -> value
    counter_sets: dict[str, dict[str, Decimal]] = field(default_factory=dict)
    devices: list[_Device] = field(default_factory=list)
    #: every device of the pool's slices, those for other nodes too: the devices whose being
    #: in use a search on this pool reads (its own, and the shared counters' consumers)
    device_ids: frozenset[DeviceID] = frozenset()

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_targets(slice_: Mapping[str, Any], node: Node | None) -> bool:
    spec = _spec(slice_)
    node_name, all_nodes = spec.get("nodeName") or "", bool(spec.get("allNodes"))
    selector = spec.get("nodeSelector")
    if node_name or all_nodes or selector is not None:
        return node_matches(node, node_name, all_nodes, selector)
    if spec.get("perDeviceNodeSelection"):
        return any(
            node_matches(
                node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")
            )
            for d in spec.get("devices") or ()
        )
    return False


def _pool_of(slice_: Mapping[str, Any]) -> tuple[str, str, int, int]:
    spec = _spec(slice_)
    pool = spec.get("pool") or {}
    return (
        str(spec.get("driver", "")),
        str(pool.get("name", "")),
        int(pool.get("generation") or 0),
        int(pool.get("resourceSliceCount") or 0),
    )


class SliceIndex:
    """The slices, indexed once per scheduling cycle: by the node they name and by pool, so that
    gathering one node's pools reads that node's slices and the cluster-wide ones only."""

    def __init__(self, slices: Iterable[Mapping[str, Any]]) -> None:
        self.by_node: dict[str, list[Mapping[str, Any]]] = {}
        #: slices for all nodes, a node selector, per device, or with shared counters
        self.elsewhere: list[Mapping[str, Any]] = []
        self.by_pool: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for slice_ in slices:
            spec = _spec(slice_)
            node_name = spec.get("nodeName")
            if node_name and not spec.get("sharedCounters"):
                self.by_node.setdefault(str(node_name), []).append(slice_)
            else:
                self.elsewhere.append(slice_)
            self.by_pool.setdefault(_pool_of(slice_)[:2], []).append(slice_)

    def candidates(self, node: Node | None) -> list[Mapping[str, Any]]:
        named = self.by_node.get(node.name, []) if node is not None else []
        return [*named, *self.elsewhere]


def gather_pools(
    slices: SliceIndex | Iterable[Mapping[str, Any]], node: Node | None
) -> list[_Pool]:
    """The pools with devices for ``node`` (kube's ``GatherPools``), sorted by driver and pool.

    kube walks a Go map here, so its order among pools is random; sorting makes ours stable.
    """
    index = slices if isinstance(slices, SliceIndex) else SliceIndex(slices)
    chosen: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for slice_ in index.candidates(node):
        spec = _spec(slice_)
        if not (spec.get("sharedCounters") or _slice_targets(slice_, node)):
            continue
        driver, pool, generation, _ = _pool_of(slice_)
        current = chosen.get((driver, pool))
        if current is None or generation > _pool_of(current[0])[2]:
            chosen[(driver, pool)] = [slice_]
        elif generation == _pool_of(current[0])[2]:
            current.append(slice_)
    pools = []
    for (driver, name), for_pool in sorted(chosen.items()):
        _, _, generation, count = _pool_of(for_pool[0])
        everything = index.by_pool.get((driver, name), [])
        if any(_pool_of(s)[2] > generation for s in everything):
            continue  # obsolete: a newer generation is being published
        same_generation = [s for s in everything if _pool_of(s)[2] == generation]
        if len(same_generation) != count:
            pools.append(_Pool(driver, name, incomplete=True))
            continue
        pools.append(_build_pool(driver, name, for_pool, same_generation))
    return pools


class PoolCache:
    """Each node's pools, kept from one scheduling cycle to the next while the slices are the
    same objects in the same order (the listers hand out a new object for a changed slice)
    and the node is the same object: gathering and building pools, and the devices' CEL
    inputs and selector answers, are then done once per node instead of once per Filter call.
    """

    __slots__ = ("_index", "_pools", "_slices")

    def __init__(self) -> None:
        self._slices: list[Mapping[str, Any]] = []
        self._index = SliceIndex(())
        self._pools: dict[str, tuple[Node, list[_Pool]]] = {}

    def index(self, slices: Sequence[Mapping[str, Any]]) -> SliceIndex:
        """The index of ``slices``; a different list of slices drops every pool kept."""
        if len(slices) != len(self._slices) or not all(map(operator.is_, slices, self._slices)):
            self._slices = list(slices)
            self._index = SliceIndex(self._slices)
            self._pools.clear()
        return self._index

    def pools(self, node: Node | None) -> list[_Pool]:
        """:func:`gather_pools` for ``node`` over the slices last given to :meth:`index`."""
        if node is None:
            return gather_pools(self._index, node)
        entry = self._pools.get(node.name)
        if entry is None or entry[0] is not node:
            entry = self._pools[node.name] = (node, gather_pools(self._index, node))
        return entry[1]


class SearchCache:
    """Each node's search answer, kept across scheduling cycles and pods.

    A search's answer follows from the node's pools, the claims' ``spec.devices``, the device
    classes and which devices of those pools are in use: while all four are the same, a later
    pod whose claims ask the same thing gets the answer again without a search (the next pod of
    a workload whose pods ask alike finds every node it did not change as it was). Errors are
    not kept: a search that raises is run again.
    """

    __slots__ = ("_answers", "_classes")

    #: answers kept at most; past it all are dropped (nodes gone, claims no longer asked for)
    LIMIT = 100_000

    def __init__(self) -> None:
        self._classes: list[Mapping[str, Any]] = []
        #: (node name, claims' signature) -> (pools, devices of theirs in use, the fit or None)
        self._answers: dict[
            tuple[str, str], tuple[list[_Pool], AbstractSet[DeviceID], _Fit | None]
        ] = {}

    def use_classes(self, classes: Mapping[str, Mapping[str, Any]]) -> None:
        """Drop every answer unless ``classes`` are the same objects as last time."""
        current = list(classes.values())
        if len(current) != len(self._classes) or not all(map(operator.is_, current, self._classes)):
            self._classes = current
            self._answers.clear()

    def get(
        self, node: str, signature: str, pools: list[_Pool], in_use: AbstractSet[DeviceID]
    ) -> tuple[bool, _Fit | None]:
        """(whether an answer is kept for these inputs, the answer)."""
        entry = self._answers.get((node, signature))
        if entry is None or entry[0] is not pools or entry[1] != in_use:
            return False, None
        return True, entry[2]

    def put(
        self,
        node: str,
        signature: str,
        pools: list[_Pool],
        in_use: AbstractSet[DeviceID],
        found: _Fit | None,
    ) -> None:
        """Keep ``found`` as the answer for these inputs (``in_use`` is not changed after)."""
        if len(self._answers) >= self.LIMIT:
            self._answers.clear()
        self._answers[(node, signature)] = (pools, in_use, found)


def claims_signature(claims: Sequence[Mapping[str, Any]]) -> str:
    """What a search reads of ``claims`` (each one's ``spec.devices``, in order) as one string:
    claims with equal signatures get equal answers on a node."""
    return json.dumps(
        [_spec(claim).get("devices") for claim in claims], sort_keys=True, default=str
    )


def _build_pool(
    driver: str,
    name: str,
    slices: list[Mapping[str, Any]],
    all_slices: list[Mapping[str, Any]],
) -> _Pool:
    pool = _Pool(driver, name)
    device_slices = [s for s in slices if not _spec(s).get("sharedCounters")]
    seen: set[str] = set()
    for slice_ in device_slices:
        for device in _spec(slice_).get("devices") or ():
            if device.get("name") in seen:
                pool.invalid = f"duplicate device name {device.get('name')}"
                return pool
            seen.add(device.get("name"))
    for slice_ in all_slices:
        for counter_set in _spec(slice_).get("sharedCounters") or ():
            set_name = counter_set.get("name", "")
            if set_name in pool.counter_sets:
                pool.invalid = f"duplicate counter set name {set_name}"
                return pool
            pool.counter_sets[set_name] = {
                counter: _quantity((value or {}).get("value", "0"))
                for counter, value in (counter_set.get("counters") or {}).items()
            }
    targeted = {id(s) for s in slices}
    pool.other_slices = [
        s for s in all_slices if id(s) not in targeted and not _spec(s).get("sharedCounters")
    ]
    for slice_ in [*device_slices, *pool.other_slices]:
        for device in _spec(slice_).get("devices") or ():
            for consumption in device.get("consumesCounters") or ():
                counters = pool.counter_sets.get(consumption.get("counterSet", ""))
                if counters is None:
                    pool.invalid = f"counter set {consumption.get('counterSet')} not found"
                    return pool
                for counter in consumption.get("counters") or {}:
                    if counter not in counters:
                        pool.invalid = (
                            f"counter {counter} not found in counter set "
                            f"{consumption.get('counterSet')}"
                        )
                        return pool
    pool.slices = device_slices
    pool.devices = [
        _Device((driver, name, str(device.get("name", ""))), device, slice_, pool)
        for slice_ in device_slices
        for device in _spec(slice_).get("devices") or ()
    ]
    pool.device_ids = frozenset(
        (driver, name, str(device.get("name", "")))
        for slice_ in [*device_slices, *pool.other_slices]
        for device in _spec(slice_).get("devices") or ()
    )
    return pool


# -- requests -----------------------------------------------------------------------------------
@dataclass
class _Request:
    """One request without subrequests, or one subrequest (``parent`` set)."""

    claim_index: int
    name: str
    parent: str
    spec: Mapping[str, Any]
    class_: Mapping[str, Any]
    count: int = 0
    all_devices: list[_Device] = field(default_factory=list)

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def admin_access(self) -> bool:
        return not self.parent and bool(self.spec.get("adminAccess"))

    @property
    def mode(self) -> str:
        return self.spec.get("allocationMode") or "ExactCount"

    @property
    def tolerations(self) -> list[Mapping[str, Any]]:
        return list(self.spec.get("tolerations") or ())


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``resourceclaim.ToleratesTaint``."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def _taint_prevents(device: _Device, request: _Request) -> bool:
    return any(
        taint.get("effect") in ("NoSchedule", "NoExecute")
        and not any(_tolerates(t, taint) for t in request.tolerations)
        for taint in device.raw.get("taints") or ()
    )


def _lookup_attribute(device: _Device, name: str) -> Mapping[str, Any] | None:
    attributes = device.raw.get("attributes") or {}
    if name in attributes:
        return attributes[name]
    domain, sep, ident = name.partition("/")
    if sep and domain == device.id[0] and ident in attributes:
        return attributes[ident]
    return None


class _MatchAttribute:
    """A ``matchAttribute`` constraint: every device of its requests has the same value."""

    def __init__(self, requests: Sequence[str], attribute: str) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.value: tuple[str, Any] | None = None
        self.devices = 0

    def _applies(self, request: _Request) -> bool:
        if not self.requests:
            return True
        if not request.parent:
            return request.name in self.requests
        return request.parent in self.requests or request.full_name in self.requests

    def add(self, request: _Request, device: _Device) -> bool:
        if not self._applies(request):
            return True
        attribute = _lookup_attribute(device, self.attribute)
        if not attribute:
            return False
        kind = next((k for k in ("string", "int", "bool", "version") if k in attribute), None)
        if kind is None:
            return False
        value = (kind, attribute[kind])
        if self.devices == 0:
            self.value = value
        elif value != self.value:
            return False
        self.devices += 1
        return True

    def remove(self, request: _Request) -> None:
        if self._applies(request):
            self.devices -= 1


# -- the allocator ------------------------------------------------------------------------------
class Allocator:
    """Allocations over a snapshot of classes, slices and the devices already in use."""

    def __init__(
        self,
        classes: Mapping[str, Mapping[str, Any]],
        slices: Sequence[Mapping[str, Any]],
        allocated: Iterable[DeviceID] = (),
        pools: PoolCache | None = None,
        answers: SearchCache | None = None,
    ) -> None:
        """``pools`` and ``answers``: caches kept across allocators (a plugin's, across
        cycles); without ``answers`` every search is run."""
        self.classes = classes
        self.pools = pools if pools is not None else PoolCache()
        self.slices = self.pools.index(slices)
        self.allocated = set(allocated)
        self.answers = answers
        if answers is not None:
            answers.use_classes(classes)
        #: the claims last searched for and their signature (Filter asks for the same claims
        #: on every node)
        self._signed: tuple[Sequence[Mapping[str, Any]], str] | None = None

    def allocate(
        self,
        node: Node | None,
        claims: Sequence[Mapping[str, Any]],
        *,
        deadline: float | None = None,
    ) -> list[dict[str, Any]] | None:
        """One ``status.allocation`` per claim, in order; ``None`` when the node cannot serve them.

        Raises :class:`AllocationError` for what no node can fix (an unknown class, a selector
        that fails, an ``All`` request over an incomplete pool), with kube's message, and
        ``TimeoutError`` once ``time.monotonic()`` passes ``deadline``.
        """
        found = self.search(node, claims, deadline=deadline)
        return found.results() if found is not None else None

    def search(
        self,
        node: Node | None,
        claims: Sequence[Mapping[str, Any]],
        *,
        deadline: float | None = None,
        timeout: float | None = None,
    ) -> Allocation | None:
        """:meth:`allocate`, with the ``status.allocation`` mappings built only when asked for
        (Filter finds a fit on many nodes, Reserve takes one); raises as :meth:`allocate`.

        ``timeout``: seconds a search may take, counted from its start (instead of a
        ``deadline``; an answer kept takes none). With ``answers``, a node's answer kept from an
        earlier search for the same inputs is given again (see :class:`SearchCache`): Filter
        asks on every node and most answers are kept, so this path is kept short."""
        answers = self.answers
        if answers is None or node is None:
            found = self._run(node, claims, deadline, timeout)
            return Allocation(found) if found is not None else None
        pools = self.pools.pools(node)
        in_use = self._in_use(pools)
        signed = self._signed
        if signed is None or signed[0] is not claims:
            signed = self._signed = (claims, claims_signature(claims))
        kept, found = answers.get(node.name, signed[1], pools, in_use)
        if not kept:
            found = self._run(node, claims, deadline, timeout)
            answers.put(node.name, signed[1], pools, in_use, found)
        return Allocation(found) if found is not None else None

    def _run(
        self,
        node: Node | None,
        claims: Sequence[Mapping[str, Any]],
        deadline: float | None,
        timeout: float | None,
    ) -> _Fit | None:
        if timeout is not None:
            deadline = time.monotonic() + timeout
        return _Allocation(self, node, claims, deadline).run()

    def _in_use(self, pools: Sequence[_Pool]) -> set[DeviceID]:
        """The devices of ``pools`` in use: all that a search over them reads of
        :attr:`allocated` (a new set)."""
        if len(pools) == 1:
            return self.allocated.intersection(pools[0].device_ids)
        return set().union(*(self.allocated.intersection(p.device_ids) for p in pools))


class Allocation:
    """A fit found by :meth:`Allocator.search`: :meth:`results` builds one ``status.allocation``
    per claim, once."""

    __slots__ = ("_fit", "_results")

    def __init__(self, fit: _Fit) -> None:
        self._fit = fit
        self._results: list[dict[str, Any]] | None = None

    def results(self) -> list[dict[str, Any]]:
        if self._results is None:
            fit = self._fit
            self._results = [fit.result(i) for i in range(len(fit.claims))]
        return self._results


@dataclass(frozen=True)
class _Fit:
    """What a successful search chose, without the search's working state (a
    :class:`SearchCache` keeps it, and a cycle's allocator must not stay alive with it)."""

    claims: Sequence[Mapping[str, Any]]
    #: per claim, the (request, device) pairs taken, in order
    results: list[list[tuple[_Request, _Device]]]
    #: per claim, per request: the alternative allocated
    chosen: list[list[_Request]]
    #: per claim, the allocation's node selector
    node_selectors: list[dict[str, Any] | None]

    def result(self, claim_index: int) -> dict[str, Any]:
        """The ``status.allocation`` of the claim at ``claim_index``."""
        claim = self.claims[claim_index]
        devices = _spec(claim).get("devices") or {}
        results = []
        for request, device in self.results[claim_index]:
            entry: dict[str, Any] = {
                "request": request.full_name,
                "driver": device.id[0],
                "pool": device.id[1],
                "device": device.id[2],
            }
            if request.admin_access:
                entry["adminAccess"] = True
            if request.tolerations:
                entry["tolerations"] = request.tolerations
            results.append(entry)
        chosen = self.chosen[claim_index]
        config: list[dict[str, Any]] = []
        by_class: dict[str, list[dict[str, Any]]] = {}
        for request in chosen:
            class_name = (request.class_.get("metadata") or {}).get("name", "")
            if class_name in by_class:
                for entry in by_class[class_name]:
                    entry["requests"].append(request.full_name)
                continue
            entries = [
                {"source": "FromClass", "requests": [request.full_name], **dict(c)}
                for c in _spec(request.class_).get("config") or ()
            ]
            by_class[class_name] = entries
            config.extend(entries)
        names = {r.parent or r.name for r in chosen} | {r.full_name for r in chosen}
        for entry in devices.get("config") or ():
            wanted = entry.get("requests") or []
            if not wanted or any(name in names for name in wanted):
                config.append({"source": "FromClaim", **dict(entry)})
        all_names = [r.parent or r.name for r in chosen]
        for entry in config:
            wanted = entry.get("requests") or []
            if wanted and all(
                name in wanted or r.full_name in wanted
                for name, r in zip(all_names, chosen, strict=True)
            ):
                entry["requests"] = None
        for entry in config:
            if entry.get("requests") is None:
                entry.pop("requests")
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        selector = self.node_selectors[claim_index]
        if selector is not None:  # a copy: pods given the same kept fit share nothing
            allocation["nodeSelector"] = copy.deepcopy(selector)
        return allocation


class _Allocation:
    def __init__(
        self,
        allocator: Allocator,
        node: Node | None,
        claims: Sequence[Mapping[str, Any]],
        deadline: float | None = None,
    ) -> None:
        self.allocator = allocator
        self.deadline = deadline
        self.steps = 0
        self.node = node
        self.claims = claims
        self.pools = allocator.pools.pools(node)
        #: per claim, per request: the alternatives (one, or the subrequests in order)
        self.requests: list[list[list[_Request]]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.results: list[list[tuple[_Request, _Device]]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.matches: dict[tuple[DeviceID, int, str], bool] = {}
        self.consumed: dict[str, dict[str, dict[str, Decimal]]] = {}
        self.available: dict[str, dict[str, dict[str, Decimal]]] = {}
        #: (claim, request) -> the alternative that was allocated
        self.chosen: dict[tuple[int, int], _Request] = {}

    # -- set-up ------------------------------------------------------------------------------
    def run(self) -> _Fit | None:
        """Search; the fit when every claim was allocated, else ``None``."""
        self._set_up()
        if not self._claim(0):
            for pool in self.pools:
                if pool.invalid:
                    raise AllocationError(
                        f"invalid resource pools were encountered: {pool.id}: {pool.invalid}"
                    )
            return None
        return _Fit(
            self.claims,
            self.results,
            [
                [self.chosen[(i, j)] for j in range(len(self.requests[i]))]
                for i in range(len(self.claims))
            ],
            [self._node_selector([d for _, d in self.results[i]]) for i in range(len(self.claims))],
        )

    def _constraints(self, claim: Mapping[str, Any]) -> list[_MatchAttribute]:
        constraints = []
        devices = _spec(claim).get("devices") or {}
        for i, constraint in enumerate(devices.get("constraints") or ()):
            if not constraint.get("matchAttribute"):
                raise AllocationError(
                    f"claim {claim_key(claim)}, constraint #{i}: empty constraint "
                    "(unsupported constraint type?)"
                )
            constraints.append(
                _MatchAttribute(constraint.get("requests") or (), constraint["matchAttribute"])
            )
        return constraints

    def _set_up(self) -> None:
        for claim_index, claim in enumerate(self.claims):
            devices = _spec(claim).get("devices") or {}
            per_claim: list[list[_Request]] = []
            minimum = 0
            for request in devices.get("requests") or ():
                name = str(request.get("name", ""))
                if request.get("firstAvailable"):
                    alternatives = [
                        self._request(claim_index, sub.get("name", ""), name, sub)
                        for sub in request["firstAvailable"]
                    ]
                else:
                    alternatives = [
                        self._request(claim_index, name, "", request.get("exactly") or {})
                    ]
                least = min(r.count for r in alternatives)
                if least > ALLOCATION_RESULTS_MAX_SIZE - minimum:
                    raise AllocationError(
                        f"claim {claim_key(claim)}, request {name}: adding {least} devices "
                        f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with "
                        f"{minimum} already accounted for"
                    )
                minimum += least
                per_claim.append(alternatives)
            self.requests.append(per_claim)
            self.constraints.append(self._constraints(claim))

    def _request(
        self, claim_index: int, name: str, parent: str, spec: Mapping[str, Any]
    ) -> _Request:
        claim = self.claims[claim_index]
        where = f"claim {claim_key(claim)}, request {name}"
        for i, selector in enumerate(spec.get("selectors") or ()):
            if not (selector.get("cel") or {}).get("expression"):
                raise AllocationError(
                    f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        class_ = self.allocator.classes.get(class_name)
        if class_ is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        request = _Request(claim_index, name, parent, spec, class_)
        mode = request.mode
        if mode == "ExactCount":
            request.count = int(spec.get("count") or 1)
        elif mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.id} is "
                        "currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.id} is "
                        "currently invalid"
                    )
                request.all_devices.extend(d for d in pool.devices if self._selectable(request, d))
            request.count = len(request.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return request

    # -- matching ----------------------------------------------------------------------------
    def _selectable(self, request: _Request, device: _Device) -> bool:
        key = (device.id, request.claim_index, request.full_name)
        known = self.matches.get(key)
        if known is not None:
            return known
        if device.raw.get("bindingConditions"):
            result = False
        else:
            result = self._selectors_match(
                request, device, request.class_, _spec(request.class_).get("selectors")
            ) and self._selectors_match(request, device, None, request.spec.get("selectors"))
            if result and _spec(device.slice).get("perDeviceNodeSelection"):
                raw = device.raw
                result = node_matches(
                    self.node,
                    raw.get("nodeName") or "",
                    bool(raw.get("allNodes")),
                    raw.get("nodeSelector"),
                )
        self.matches[key] = result
        return result

    def _selectors_match(
        self,
        request: _Request,
        device: _Device,
        class_: Mapping[str, Any] | None,
        selectors: Sequence[Mapping[str, Any]] | None,
    ) -> bool:
        def owner() -> str:
            if class_ is not None:
                return f"class {(class_.get('metadata') or {}).get('name', '')}"
            return f"claim {claim_key(self.claims[request.claim_index])}"

        for i, selector in enumerate(selectors or ()):
            compiled = compile_selector(str((selector.get("cel") or {}).get("expression", "")))
            if compiled.error is not None:
                raise AllocationError(
                    f"{owner()}: selector #{i}: CEL compile error: {compiled.error}"
                )
            expression = compiled.expression
            known = device.selected.get(expression)
            if known is not None:
                if not known:
                    return False
                continue
            try:
                selected = device.selected[expression] = compiled.matches(device.cel_input())
                if not selected:
                    return False
            except CELError as exc:
                device_name = "/".join(device.id)
                raise AllocationError(
                    f"{owner()}: selector #{i} on device {device_name}: CEL runtime error: {exc}"
                ) from None
        return True

    def _in_use(self, device: DeviceID) -> bool:
        return device in self.allocator.allocated or bool(self.allocating.get(device))

    # -- shared counters ---------------------------------------------------------------------
    def _available_counters(self, pool: _Pool) -> dict[str, dict[str, Decimal]]:
        available = self.available.get(pool.id)
        if available is None:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for slice_ in [*pool.slices, *pool.other_slices]:
                for device in _spec(slice_).get("devices") or ():
                    if (pool.driver, pool.name, device.get("name")) not in self.allocator.allocated:
                        continue
                    for consumption in device.get("consumesCounters") or ():
                        counters = available.get(consumption.get("counterSet", ""), {})
                        for name, value in (consumption.get("counters") or {}).items():
                            if name in counters:
                                counters[name] -= _quantity((value or {}).get("value", "0"))
            self.available[pool.id] = available
        return available

    def _consume(self, device: _Device, sign: int) -> None:
        consumed = self.consumed.setdefault(device.pool.id, {})
        for consumption in device.raw.get("consumesCounters") or ():
            counters = consumed.setdefault(consumption.get("counterSet", ""), {})
            for name, value in (consumption.get("counters") or {}).items():
                amount = _quantity((value or {}).get("value", "0"))
                counters[name] = counters.get(name, Decimal(0)) + sign * amount

    def _counters_fit(self, device: _Device) -> bool:
        available = self._available_counters(device.pool)
        self._consume(device, 1)
        consumed = self.consumed[device.pool.id]
        for set_name, counters in available.items():
            for name, value in counters.items():
                if value < consumed.get(set_name, {}).get(name, Decimal(0)):
                    self._consume(device, -1)
                    return False
        return True

    # -- the search --------------------------------------------------------------------------
    def _claim(self, claim_index: int) -> bool:
        if claim_index >= len(self.claims):
            return True
        return self._request_at(claim_index, 0)

    def _request_at(self, claim_index: int, request_index: int) -> bool:
        if request_index >= len(self.requests[claim_index]):
            return self._claim(claim_index + 1)
        alternatives = self._alternatives(claim_index, request_index)
        for request in alternatives:
            if self._device(request, request_index, 0):
                self.chosen[(claim_index, request_index)] = request
                return True
        return False

    def _alternatives(self, claim_index: int, request_index: int) -> list[_Request]:
        alternatives = self.requests[claim_index][request_index]
        room = ALLOCATION_RESULTS_MAX_SIZE - len(self.results[claim_index])
        return [r for r in alternatives if r.count <= room]

    def _device(self, request: _Request, request_index: int, device_index: int) -> bool:
        claim_index = request.claim_index
        self.steps += 1
        if self.deadline is not None and self.steps % 64 == 0 and time.monotonic() > self.deadline:
            raise TimeoutError("allocation timed out")
        if request.mode == "All" and not request.all_devices:
            return False
        if device_index >= request.count:
            return self._request_at(claim_index, request_index + 1)
        if request.mode == "All":
            device = request.all_devices[device_index]
            undo = self._take(request, device)
            if undo is None:
                return False
            if self._device(request, request_index, device_index + 1):
                return True
            undo()
            return False
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for device in pool.devices:
                if request.admin_access:
                    if claim_index in self.allocating.get(device.id, ()):
                        continue
                elif self._in_use(device.id):
                    continue
                if not self._selectable(request, device):
                    continue
                undo = self._take(request, device)
                if undo is None:
                    continue
                if self._device(request, request_index, device_index + 1):
                    return True
                undo()
        return False

    def _take(self, request: _Request, device: _Device) -> Any:
        """Add ``device`` to the request's result; the function undoing it, ``None`` if it can't."""
        claim_index = request.claim_index
        if request.admin_access:
            if claim_index in self.allocating.get(device.id, ()):
                return None
        elif self._in_use(device.id):
            return None
        counters = bool(device.raw.get("consumesCounters"))
        if counters and not self._counters_fit(device):
            return None
        if _taint_prevents(device, request):
            if counters:
                self._consume(device, -1)
            return None
        added: list[_MatchAttribute] = []
        for constraint in self.constraints[claim_index]:
            if not constraint.add(request, device):
                for done in reversed(added):
                    done.remove(request)
                if counters:
                    self._consume(device, -1)
                if request.mode == "All":
                    raise AllocationError(
                        f"claim {claim_key(self.claims[claim_index])}, request {request.name}: "
                        f"cannot add device {'/'.join(device.id)} because a claim constraint "
                        "would not be satisfied"
                    )
                return None
            added.append(constraint)
        self.allocating.setdefault(device.id, set()).add(claim_index)
        self.results[claim_index].append((request, device))

        def undo() -> None:
            self.results[claim_index].pop()
            self.allocating[device.id].discard(claim_index)
            for done in reversed(added):
                done.remove(request)
            if counters:
                self._consume(device, -1)

        return undo

    def _node_selector(self, devices: list[_Device]) -> dict[str, Any] | None:
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for device in devices:
            spec = _spec(device.slice)
            source = device.raw if spec.get("perDeviceNodeSelection") else spec
            if source.get("nodeName"):
                return {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {
                                    "key": "metadata.name",
                                    "operator": "In",
                                    "values": [source["nodeName"]],
                                }
                            ]
                        }
                    ]
                }
            selector = source.get("nodeSelector")
            if selector:
                terms = selector.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(
                        f"create NodeSelector for claim {claim_key(self.claims[0])}: "
                        f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
                    )
                for term in terms:
                    for requirement in term.get("matchFields") or ():
                        if not _contains(fields, requirement):
                            fields.append(dict(requirement))
                    for requirement in term.get("matchExpressions") or ():
                        if not _contains(expressions, requirement):
                            expressions.append(dict(requirement))
        if not fields and not expressions:
            return None
        merged: dict[str, Any] = {}
        if expressions:
            merged["matchExpressions"] = expressions
        if fields:
            merged["matchFields"] = fields
        return {"nodeSelectorTerms": [merged]}


def _contains(requirements: list[dict[str, Any]], requirement: Mapping[str, Any]) -> bool:
    values = set(requirement.get("values") or ())
    return any(
        r.get("key") == requirement.get("key")
        and r.get("operator") == requirement.get("operator")
        and set(r.get("values") or ()) == values
        for r in requirements
    )
