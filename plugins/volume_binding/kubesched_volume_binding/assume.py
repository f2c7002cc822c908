"""kube's assume cache (``pkg/scheduler/util/assumecache``) over a lister of raw objects.

Reserve assumes the PV and claim versions it decided on, so the next pod's cycle sees a PV as
taken (and a claim as headed for a node) before the API has the writes; PreBind assumes what the
API answered. An assumed copy gives way as soon as the lister shows a newer version (the API
moved on), or, for a written copy, the version written; Unreserve restores the lister's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.storage import IndexedLister, object_key, resource_version

Obj = Mapping[str, Any]


class AssumeCache:
    """The lister's objects by key, with assumed versions laid over them."""

    def __init__(self, lister: Callable[[], list[Obj]]) -> None:
        self._index = IndexedLister(lister)
        self._assumed: dict[str, tuple[Obj, bool]] = {}
        self._lock = threading.Lock()

    def api_objects(self) -> Mapping[str, Obj]:
        """The lister's objects only (kube's ``GetAPIObj``), by key (shared: not to be
        changed)."""
        return self._index()

    def objects(self) -> Mapping[str, Obj]:
        """The latest version of each object: an assumed one while it is current (shared
        while nothing is assumed: not to be changed)."""
        listed = self.api_objects()
        with self._lock:
            if not self._assumed:
                return listed
            latest = dict(listed)
            for key, (assumed, written) in list(self._assumed.items()):
                api = listed.get(key)
                if api is None:
                    del self._assumed[key]  # deleted in the API
                    continue
                api_rv, assumed_rv = resource_version(api), resource_version(assumed)
                if api_rv > assumed_rv or (written and api_rv >= assumed_rv):
                    del self._assumed[key]  # the API has this version, or a newer one
                    continue
                latest[key] = assumed
        return latest

    def assume(self, obj: Obj, *, written: bool = False) -> None:
        """Lay ``obj`` over the lister's version; ``written`` when the API answered with it."""
        with self._lock:
            self._assumed[object_key(obj)] = (obj, written)

    def restore(self, key: str) -> None:
        """Drop the assumed version of ``key`` (kube's ``Restore``); idempotent."""
        with self._lock:
            self._assumed.pop(key, None)
