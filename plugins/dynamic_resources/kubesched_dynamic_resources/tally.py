"""The cluster's ResourceClaims and the devices their allocations hold, kept across cycles.

kube-scheduler's DynamicResources keeps the allocated devices in a tracker its claim informer
updates on each add, update and delete, so a scheduling cycle does not read every claim. The
listers here hand out the store's objects, a new object for each changed claim and the same one
otherwise; :class:`ClaimTally` compares the listed objects with those of its last look, by
identity and in C, and reads again only the claims added, changed or gone since.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Mapping
from itertools import compress
from types import MappingProxyType
from typing import Any

from .allocator import DeviceID, claim_key

__all__ = ["ClaimTally", "allocated_devices"]


def allocated_devices(allocation: Mapping[str, Any] | None) -> list[DeviceID]:
    """The devices an allocation holds exclusively (admin access shares a device)."""
    results = ((allocation or {}).get("devices") or {}).get("results") or ()
    return [
        (str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", "")))
        for r in results
        if not r.get("adminAccess")
    ]


def _allocation(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    status = claim.get("status")
    return status.get("allocation") if isinstance(status, Mapping) else None


def _uid(claim: Mapping[str, Any]) -> Any:
    meta = claim.get("metadata")
    return meta.get("uid") if isinstance(meta, Mapping) else None


class ClaimTally:
    """The claims by key and by uid, and how many claims hold each device, brought up to date
    with the lister at each :meth:`refresh`. Safe to call from several threads (PreEnqueue and
    the queueing hints run on the event thread, the cycle on the scheduling one)."""

    __slots__ = ("_by_key", "_by_uid", "_entries", "_holders", "_listed", "_lister", "_lock")

    def __init__(self, lister: Callable[[], list[Mapping[str, Any]]]) -> None:
        self._lister = lister
        self._lock = threading.Lock()
        #: the objects of the last look, in the lister's order (which keeps them alive, so
        #: their ids below stay theirs)
        self._listed: list[Mapping[str, Any]] = []
        #: id of a listed claim -> (its key, its uid, the devices it holds)
        self._entries: dict[int, tuple[str, Any, list[DeviceID]]] = {}
        self._by_key: dict[str, Mapping[str, Any]] = {}
        self._by_uid: dict[Any, Mapping[str, Any]] = {}
        #: device -> how many claims hold it
        self._holders: dict[DeviceID, int] = {}

    def refresh(self) -> None:
        """Read the claims that changed since the last call (added, updated or deleted)."""
        with self._lock:
            listed = self._lister()
            old = self._listed
            # map() stops at the shorter list: positions past it changed by definition.
            changed = list(compress(range(len(listed)), map(operator.is_not, listed, old)))
            if not changed and len(listed) == len(old):
                return
            shared = min(len(listed), len(old))
            gone = [old[i] for i in changed] + old[shared:]
            came = [listed[i] for i in changed] + listed[shared:]
            # A claim that only moved (a deletion before it) is in both: left as it is.
            gone_ids, came_ids = set(map(id, gone)), set(map(id, came))
            for claim in gone:
                if id(claim) not in came_ids:
                    self._remove(claim)
            for claim in came:
                if id(claim) not in gone_ids:
                    self._add(claim)
            self._listed = listed

    def by_key(self) -> Mapping[str, Mapping[str, Any]]:
        """The claims by ``namespace/name``, as of now (a read-only view)."""
        self.refresh()
        return MappingProxyType(self._by_key)

    def by_uid(self) -> Mapping[Any, Mapping[str, Any]]:
        """The claims by uid, as of the last :meth:`refresh` (a read-only view)."""
        return MappingProxyType(self._by_uid)

    def allocated(self) -> set[DeviceID]:
        """The devices some claim's allocation holds, as of the last :meth:`refresh`."""
        with self._lock:
            return set(self._holders)

    def _add(self, claim: Mapping[str, Any]) -> None:
        key, uid = claim_key(claim), _uid(claim)
        devices = allocated_devices(_allocation(claim))
        self._entries[id(claim)] = (key, uid, devices)
        self._by_key[key] = claim
        self._by_uid[uid] = claim
        holders = self._holders
        for device in devices:
            holders[device] = holders.get(device, 0) + 1

    def _remove(self, claim: Mapping[str, Any]) -> None:
        key, uid, devices = self._entries.pop(id(claim))
        if self._by_key.get(key) is claim:
            del self._by_key[key]
        if self._by_uid.get(uid) is claim:
            del self._by_uid[uid]
        holders = self._holders
        for device in devices:
            left = holders[device] - 1
            if left:
                holders[device] = left
            else:
                del holders[device]
