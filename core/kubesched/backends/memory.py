"""An in-memory cluster: for ``kubesched simulate`` and plugin unit tests.

Binding updates the stored pod and delivers the same pod-update event a watch would, so the
scheduler confirms its assumed pod exactly as it does against a real apiserver. A status patch is
delivered as a pod update too, and a deletion removes the pod at once (there is no kubelet to
wait for), so ``simulate`` shows a preemptor bound in the end.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Node, Pod
from kubesched.framework.backend import BindError, EventHandler, ObjectWriteError

__all__ = ["InMemoryBackend", "RecordedEvent", "merge_patch"]

#: Kinds whose ``status`` is a subresource: an update of the object keeps the stored status and
#: a status update changes nothing else, as kube-apiserver does.
STATUS_SUBRESOURCE_KINDS = frozenset(
    {"PersistentVolume", "PersistentVolumeClaim", "VolumeAttachment", "ResourceClaim"}
)


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with the JSON merge ``patch`` applied (RFC 7386); neither is changed."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _object_key(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """What the scheduler reported about a pod (as Kubernetes Events would record it)."""

    type: str
    reason: str
    pod: str
    message: str
    #: The key of the other pod involved (a ``Preempted`` victim's preemptor), or ``""``.
    related: str = ""


class InMemoryBackend:
    """Nodes and pods held in dictionaries; every change is delivered to the handler at once."""

    #: Every call has taken effect, and been delivered to the handler, when it returns: work a
    #: plugin would send to the API in the background runs inline (``Handle.run_in_background``),
    #: which keeps ``simulate`` repeatable.
    synchronous = True

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.nodes: dict[str, Node] = {node.name: node for node in nodes}
        self.pods: dict[str, Pod] = {pod.uid: pod for pod in pods}
        #: Other objects by kind (PodDisruptionBudget, Namespace, …) for ``lister``.
        self.objects: dict[str, list[Mapping[str, Any]]] = {
            kind: list(items) for kind, items in (objects or {}).items()
        }
        self.events: list[RecordedEvent] = []
        #: pod key -> (reason, message) of its last failed attempt.
        self.conditions: dict[str, tuple[str, str]] = {}
        self.nominations: dict[str, str] = {}
        #: Writes of consulted objects so far (``create_object``, ``update_object``, …).
        self.object_writes = 0
        self._resource_version = 0
        #: kind -> (the list indexed, its length then, object key -> position) (:meth:`_find`).
        self._positions: dict[str, tuple[list[Mapping[str, Any]], int, dict[str, int]]] = {}
        self._handler: EventHandler | None = None
        self._lock = threading.RLock()

    # -- ClusterBackend ----------------------------------------------------------------------
    def start(self, handler: EventHandler, sync_timeout: float | None = None) -> None:
        with self._lock:
            self._handler = handler
            for node in list(self.nodes.values()):
                handler.on_node_add(node)
            for pod in list(self.pods.values()):
                handler.on_pod_add(pod)

    def stop(self) -> None:
        self._handler = None

    def bind(self, pod: Pod, node_name: str) -> None:
        with self._lock:
            current = self.pods.get(pod.uid)
            if current is None:
                raise BindError(f'pods "{pod.name}" not found', retryable=False)
            if current.node_name:
                raise BindError(
                    f'pod {pod.key} is already assigned to node "{current.node_name}"',
                    retryable=False,
                )
            if node_name not in self.nodes:
                raise BindError(f'node "{node_name}" not found')
            raw = dict(copy.deepcopy(current.raw))
            raw.setdefault("spec", {})["nodeName"] = node_name
            # The apiserver clears the nomination on binding (ClearingNominatedNodeNameAfter-
            # Binding, on by default since v1.35); ``nominations`` keeps what was written.
            (raw.get("status") or {}).pop("nominatedNodeName", None)
            bound = Pod(raw)
            self.pods[pod.uid] = bound
            self.conditions.pop(pod.key, None)
            if self._handler is not None:
                self._handler.on_pod_update(current, bound)

    def bound_by_extender(self, pod: Pod, node_name: str) -> None:
        # The simulated cluster has no API the extender could write to: record its binding.
        self.bind(pod, node_name)

    def report_failure(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None
    ) -> None:
        """Record the failure. A nomination to set (a node) or clear (``""``) is written to the
        stored pod's ``status.nominatedNodeName`` too, and the change delivered, as kube's
        ``updatePod`` patches the pod and the watch reports it; nothing is written when the
        stored pod already says so (``updatePod`` then sends no patch)."""
        with self._lock:
            self.conditions[pod.key] = (reason, message)
            if nominated_node_name is not None:
                self.nominations[pod.key] = nominated_node_name
                current = self.pods.get(pod.uid)
                if current is not None and current.nominated_node_name != nominated_node_name:
                    self.patch_pod_status(current, nominated_node_name=nominated_node_name)
            self.events.append(RecordedEvent("Warning", "FailedScheduling", pod.key, message))

    def report_scheduled(self, pod: Pod, node_name: str) -> None:
        with self._lock:
            self.events.append(
                RecordedEvent(
                    "Normal",
                    "Scheduled",
                    pod.key,
                    f"Successfully assigned {pod.key} to {node_name}",
                )
            )

    def lister(self, kind: str) -> Callable[[], list[Mapping[str, Any]]]:
        """Objects of ``kind`` held by this cluster (see ``Handle.lister``)."""
        return lambda: list(self.objects.get(kind, ()))

    # -- consulted objects: writes take effect at once ------------------------------------------
    def _find(self, kind: str, key: str) -> int:
        """The position of ``key`` in ``objects[kind]``, or -1: from an index by key, so a write
        costs a look-up rather than a scan of every object of the kind. The index is rebuilt
        when the list was replaced or resized behind it (tests assign ``objects[kind]``)."""
        items = self.objects.get(kind, [])
        cached = self._positions.get(kind)
        if cached is None or cached[0] is not items or cached[1] != len(items):
            positions: dict[str, int] = {}
            for index, obj in enumerate(items):
                positions.setdefault(_object_key(obj), index)  # the first, as a scan finds
            cached = self._positions[kind] = (items, len(items), positions)
        return cached[2].get(key, -1)

    def _stamp(self, obj: dict[str, Any]) -> dict[str, Any]:
        self._resource_version += 1
        obj["metadata"] = {**_meta(obj), "resourceVersion": f"m{self._resource_version}"}
        self.object_writes += 1
        return obj

    def _deliver(self, kind: str, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> None:
        if self._handler is None:
            return
        if old is None:
            on_add = getattr(self._handler, "on_object_add", None)
            if on_add is not None:
                on_add(kind, new)
        else:
            on_update = getattr(self._handler, "on_object_update", None)
            if on_update is not None:
                on_update(kind, old, new)

    def create_object(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            key = _object_key(obj)
            if self._find(kind, key) >= 0:
                raise ObjectWriteError(kind, key, 409, "already exists")
            stored = self._stamp(copy.deepcopy(dict(obj)))
            items = self.objects.setdefault(kind, [])
            items.append(stored)
            cached = self._positions.get(kind)
            if cached is not None and cached[0] is items and cached[1] == len(items) - 1:
                cached[2][key] = len(items) - 1
                self._positions[kind] = (items, len(items), cached[2])
            self._deliver(kind, None, stored)
            return copy.deepcopy(stored)

    def _replace(
        self, kind: str, key: str, change: Callable[[Mapping[str, Any]], dict[str, Any]], rv: Any
    ) -> dict[str, Any]:
        index = self._find(kind, key)
        if index < 0:
            raise ObjectWriteError(kind, key, 404, "not found")
        items = self.objects[kind]
        old = items[index]
        current = _meta(old).get("resourceVersion")
        if rv and current and rv != current:
            raise ObjectWriteError(
                kind,
                key,
                409,
                "the object has been modified; please apply your changes to the latest "
                "version and try again",
            )
        stored = self._stamp(change(old))
        items[index] = stored
        self._deliver(kind, old, stored)
        return copy.deepcopy(stored)

    @staticmethod
    def _scoped(kind: str, old: Mapping[str, Any], new: dict[str, Any], subresource: str) -> dict:
        """``new`` as the apiserver stores it: a status write changes only the status, and an
        object write keeps the stored status of a kind whose status is a subresource."""
        if subresource == "status":
            merged = copy.deepcopy(dict(old))
            merged["status"] = new.get("status")
            return merged
        if subresource:
            raise ValueError(f"unknown subresource {subresource!r}")
        if kind in STATUS_SUBRESOURCE_KINDS:
            new = dict(new)
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        return new

    def update_object(
        self, kind: str, obj: Mapping[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        with self._lock:
            new = copy.deepcopy(dict(obj))
            return self._replace(
                kind,
                _object_key(obj),
                lambda old: self._scoped(kind, old, new, subresource),
                _meta(obj).get("resourceVersion"),
            )

    def patch_object(
        self,
        kind: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        with self._lock:
            key = f"{namespace}/{name}" if namespace else name
            return self._replace(
                kind,
                key,
                lambda old: self._scoped(kind, old, merge_patch(old, patch), subresource),
                (patch.get("metadata") or {}).get("resourceVersion"),
            )

    def delete_object(self, kind: str, namespace: str, name: str) -> bool:
        """Remove an object (tests, simulate); its deletion is delivered. False when absent."""
        with self._lock:
            index = self._find(kind, f"{namespace}/{name}" if namespace else name)
            if index < 0:
                return False
            gone = self.objects[kind].pop(index)
            self._positions.pop(kind, None)  # the later positions moved
            self.object_writes += 1
            on_delete = getattr(self._handler, "on_object_delete", None)
            if on_delete is not None:
                on_delete(kind, gone)
            return True

    def delete_pod(self, pod: Pod) -> bool:
        with self._lock:
            gone = self.pods.pop(pod.uid, None)
            if gone is not None and self._handler is not None:
                self._handler.on_pod_delete(gone)
            return gone is not None

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        conditions: Sequence[Mapping[str, Any]] = (),
        nominated_node_name: str | None = None,
    ) -> bool:
        with self._lock:
            current = self.pods.get(pod.uid)
            if current is None:
                return False
            raw = dict(copy.deepcopy(current.raw))
            status = raw.setdefault("status", {})
            if conditions:
                # Each replaces the condition of its type in place, or is added at the end.
                merged = {c.get("type"): c for c in status.get("conditions") or ()}
                merged.update((c.get("type"), dict(c)) for c in conditions)
                status["conditions"] = list(merged.values())
            if nominated_node_name is not None:
                self.nominations[current.key] = nominated_node_name
                if nominated_node_name:
                    status["nominatedNodeName"] = nominated_node_name
                else:
                    status.pop("nominatedNodeName", None)
            updated = Pod(raw)
            self.pods[pod.uid] = updated
            if self._handler is not None:
                self._handler.on_pod_update(current, updated)
            return True

    def record_event(
        self,
        regarding: Pod,
        *,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        reporting_controller: str,
        related: Pod | None = None,
    ) -> None:
        with self._lock:
            self.events.append(
                RecordedEvent(
                    event_type,
                    reason,
                    regarding.key,
                    note,
                    related.key if related is not None else "",
                )
            )

    def get_pod(self, uid: str) -> Pod | None:
        # No lock: PreEnqueue asks under the queue's lock, while a change made here holds this
        # one and then takes the queue's; a single dict read needs none.
        return self.pods.get(uid)

    # -- Changing the cluster (tests, simulate) ------------------------------------------------
    def add_node(self, node: Node) -> None:
        with self._lock:
            old = self.nodes.get(node.name)
            self.nodes[node.name] = node
            if self._handler is not None:
                if old is None:
                    self._handler.on_node_add(node)
                else:
                    self._handler.on_node_update(old, node)

    def update_node(self, node: Node) -> None:
        self.add_node(node)

    def delete_node(self, name: str) -> None:
        with self._lock:
            node = self.nodes.pop(name, None)
            if node is not None and self._handler is not None:
                self._handler.on_node_delete(node)

    def add_pod(self, pod: Pod) -> None:
        with self._lock:
            old = self.pods.get(pod.uid)
            self.pods[pod.uid] = pod
            if self._handler is not None:
                if old is None:
                    self._handler.on_pod_add(pod)
                else:
                    self._handler.on_pod_update(old, pod)

    def pod(self, namespace: str, name: str) -> Pod | None:
        """The stored pod ``namespace/name`` (with ``node_name`` once bound)."""
        with self._lock:
            for pod in self.pods.values():
                if pod.namespace == namespace and pod.name == name:
                    return pod
        return None
