"""The Kubernetes API backend: informers in; bindings, status patches, deletions and events out.

Implements :class:`~kubesched.backends.ClusterBackend` over a real apiserver, so the same
:class:`~kubesched.engine.scheduler.Scheduler` that runs ``simulate`` runs in a cluster.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from kubesched.api.objects import Node, Pod
from kubesched.backends.kube.informer import Informer
from kubesched.backends.kube.recorder import EventRecorder
from kubesched.backends.kube.transport import NOT_SENT, OUTCOME_UNKNOWN, ApiError, Transport
from kubesched.framework.backend import BindError, EventHandler, ObjectWriteError
from kubesched.framework.events import EventResource

__all__ = ["KubernetesBackend"]

log = logging.getLogger(__name__)

#: Where each kind a plugin may consult (``Handle.lister``) is listed and watched.
KIND_PATHS = {
    "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    "Namespace": "/api/v1/namespaces",
    "Service": "/api/v1/services",
    "ReplicaSet": "/apis/apps/v1/replicasets",
    "StatefulSet": "/apis/apps/v1/statefulsets",
    "ReplicationController": "/api/v1/replicationcontrollers",
    "PodGroup": "/apis/scheduling.k8s.io/v1beta1/podgroups",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "PersistentVolumeClaim": "/api/v1/persistentvolumeclaims",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/csistoragecapacities",
    "VolumeAttachment": "/apis/storage.k8s.io/v1/volumeattachments",
    "ResourceClaim": "/apis/resource.k8s.io/v1/resourceclaims",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
}


def object_path(kind: str, namespace: str, name: str, subresource: str = "") -> str:
    """The URL of one object of a consulted ``kind`` (``namespace`` empty when cluster-scoped)."""
    prefix, _, plural = KIND_PATHS[kind].rpartition("/")
    path = f"{prefix}/namespaces/{quote(namespace)}" if namespace else prefix
    path = f"{path}/{plural}/{quote(name)}" if name else f"{path}/{plural}"
    return f"{path}/{subresource}" if subresource else path


def _object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _object_version(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _ignore(*_args: Any) -> None:
    """Plugins read these objects through listers; no handler needs their events."""


#: Terminal pods hold no resources; kube-scheduler's pod informer leaves them out the same way.
NON_TERMINAL_PODS = "status.phase!=Succeeded,status.phase!=Failed"

NOT_LEADER = "not the leader: binding refused"
NOT_LEADER_WRITE = "not the leader: write refused"

#: The apiserver's 409 for a Binding of a pod that already has a node (``assignPod`` in
#: pkg/registry/core/pod/storage): 'pod p is already assigned to node "n"'.
_ALREADY_ASSIGNED = re.compile(r'is already assigned to node "([^"]*)"')


def _pod_path(pod: Pod, sub: str = "") -> str:
    path = f"/api/v1/namespaces/{quote(pod.namespace)}/pods/{quote(pod.name)}"
    return f"{path}/{sub}" if sub else path


class KubernetesBackend:
    """A cluster reached through kube-apiserver."""

    #: Calls go over the network: background calls run on threads of their own.
    synchronous = False

    def __init__(
        self,
        transport: Transport,
        *,
        recorder: EventRecorder | None = None,
        can_bind: Callable[[], bool] = lambda: True,
        watch_seconds: int = 300,
        inactivity_seconds: float = 90.0,
        status_workers: int = 4,
    ) -> None:
        self.transport = transport
        self.recorder = recorder
        self.can_bind = can_bind
        #: Threads that write at once apart from the binding cycles (status patches, events).
        self.writer_threads = status_workers + (recorder.writers if recorder is not None else 0)
        self.watch_seconds = watch_seconds
        self.inactivity_seconds = inactivity_seconds
        self._status_pool = ThreadPoolExecutor(
            max_workers=status_workers, thread_name_prefix="pod-status"
        )
        self.nodes: Informer[Node] | None = None
        self.pods: Informer[Pod] | None = None
        #: Informers for the kinds plugins asked for, started with the others.
        self.others: dict[str, Informer[dict[str, Any]]] = {}
        self._handler: EventHandler | None = None

    # -- events in -----------------------------------------------------------------------------
    def lister(self, kind: str) -> Callable[[], list[Mapping[str, Any]]]:
        """Watch ``kind`` from start-up on and list its objects on demand (``Handle.lister``)."""
        if kind not in KIND_PATHS:
            raise ValueError(f"cannot list {kind!r}: known kinds are {', '.join(KIND_PATHS)}")
        informer = self.others.get(kind)
        if informer is None:
            informer = self.others[kind] = Informer(
                self.transport,
                KIND_PATHS[kind],
                dict,
                _object_key,
                _object_version,
                _ignore,
                _ignore,
                _ignore,
                watch_seconds=self.watch_seconds,
                inactivity_seconds=self.inactivity_seconds,
            )
            if self.nodes is not None:  # asked for after start: start it now
                self._connect(kind, informer)
                informer.start()

        def listed() -> list[Mapping[str, Any]]:
            return list(informer.store.values())  # the store in use now (a re-list replaces it)

        return listed

    def _connect(self, kind: str, informer: Informer[dict[str, Any]]) -> None:
        """Send ``kind``'s changes to the handler, when plugins can register events for it."""
        handler = self._handler
        if EventResource.of_kind(kind) is None or handler is None:
            return
        on_add = getattr(handler, "on_object_add", None)
        on_update = getattr(handler, "on_object_update", None)
        on_delete = getattr(handler, "on_object_delete", None)
        if on_add is None or on_update is None or on_delete is None:
            return
        informer.on_add = lambda obj: on_add(kind, obj)
        informer.on_update = lambda old, new: on_update(kind, old, new)
        informer.on_delete = lambda obj: on_delete(kind, obj)

    def start(self, handler: EventHandler, sync_timeout: float | None = None) -> None:
        """Start both informers; return once both have listed (or ``sync_timeout`` passed)."""
        self._handler = handler
        common: dict[str, Any] = {
            "watch_seconds": self.watch_seconds,
            "inactivity_seconds": self.inactivity_seconds,
        }
        self.nodes = Informer(
            self.transport,
            "/api/v1/nodes",
            Node,
            lambda n: n.name,
            lambda n: n.resource_version,
            handler.on_node_add,
            handler.on_node_update,
            handler.on_node_delete,
            **common,
        )
        self.pods = Informer(
            self.transport,
            "/api/v1/pods",
            Pod,
            lambda p: p.uid,
            lambda p: p.resource_version,
            handler.on_pod_add,
            handler.on_pod_update,
            handler.on_pod_delete,
            field_selector=NON_TERMINAL_PODS,
            **common,
        )
        for kind, informer in self.others.items():
            self._connect(kind, informer)
            informer.start()
        # Nodes first, so the first pods find their nodes in the cache.
        self.nodes.start()
        self.nodes.synced.wait(sync_timeout)
        self.pods.start()
        self.pods.synced.wait(sync_timeout)
        for informer in self.others.values():
            informer.synced.wait(sync_timeout)

    @property
    def synced(self) -> bool:
        informers = [self.nodes, self.pods, *self.others.values()]
        return all(i is not None and i.synced.is_set() for i in informers)

    def unsynced_reason(self) -> str:
        """Why the caches are not ready yet: each informer still listing, and its last error."""
        informers = {"nodes": self.nodes, "pods": self.pods, **self.others}
        waiting = []
        for name, informer in informers.items():
            if informer is None or not informer.synced.is_set():
                error = informer.last_error if informer is not None else "not started"
                waiting.append(f"{name}: {error}" if error else name)
        return "waiting for the first list of " + "; ".join(waiting) if waiting else ""

    def stop(self, wait: bool = True) -> None:
        """Stop the informers and writers; ``wait=False`` (a deposed leader) drops the status
        writes still queued instead of waiting for them."""
        for informer in (self.nodes, self.pods, *self.others.values()):
            if informer is not None:
                informer.stop()
        self._status_pool.shutdown(wait=wait, cancel_futures=not wait)
        if self.recorder is not None:
            self.recorder.stop()

    # -- decisions out -------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        """POST a Binding (the apiserver sets nodeName and PodScheduled=True), once.

        When the answer is lost (the connection broke or the deadline passed after the POST was
        written) the apiserver may have bound the pod: the outcome is read back, from the pod
        informer or a GET, never found out by posting again. A 409 saying the pod is already
        on ``node_name`` is that same success."""
        if not self.can_bind():
            raise BindError(NOT_LEADER, retryable=True)
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }

        def allowed() -> bool:
            # Asked after the client's rate limiter, which may have slept: a node deleted
            # meanwhile (the node watch says so) gets no Binding, which the apiserver would
            # accept and strand the pod on a node that is gone.
            return self.can_bind() and self._has_node(node_name)

        try:
            self.transport.request("POST", _pod_path(pod, "binding"), body=body, guard=allowed)
        except ApiError as exc:
            if exc.reason == NOT_SENT:
                if not self.can_bind():
                    raise BindError(NOT_LEADER, retryable=True) from None
                raise BindError(
                    f"node {node_name} was deleted before pod {pod.key} was bound",
                    retryable=True,
                ) from None
            if exc.status == 409:
                assigned = _ALREADY_ASSIGNED.search(exc.message or "")
                if assigned and assigned.group(1) == node_name:
                    log.info("pod %s was already bound to %s: done", pod.key, node_name)
                    return
            if exc.reason == OUTCOME_UNKNOWN:
                bound_to = self._bound_to(pod)
                if bound_to == node_name:
                    log.info("the Binding of pod %s to %s took effect: %s", pod.key, node_name, exc)
                    return
                if bound_to:  # bound elsewhere meanwhile: the watch brings it to the cache
                    raise BindError(f"pod is bound to {bound_to}", retryable=False) from None
            # Gone: retrying cannot help. Any other refusal (a 409 included) goes back to the
            # queue, as in kube-scheduler: when the pod was really bound elsewhere, the watch
            # removes it from the queue, so a conflict the apiserver did not mean as "already
            # bound" loses no pod.
            raise BindError(exc.message or str(exc), retryable=exc.status != 404) from None

    def _has_node(self, name: str) -> bool:
        """Whether the node watch has ``name`` (True before the informers run)."""
        return self.nodes is None or name in self.nodes.store

    def bound_by_extender(self, pod: Pod, node_name: str) -> None:
        """The extender wrote the binding; the pod watch brings it into the cache."""

    def _bound_to(self, pod: Pod, wait: float = 1.0) -> str:
        """The node ``pod`` (this very pod: same UID) is bound to now, ``""`` if none or unknown:
        the informer's copy (given ``wait`` seconds for the watch to bring the change), then a
        LIST of that one pod (the scheduler may list pods; it has no ``get``)."""
        deadline = time.monotonic() + wait
        while True:
            seen = self.pods.store.get(pod.uid) if self.pods is not None else None
            if seen is not None and seen.node_name:
                return seen.node_name
            if self.pods is None or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        query = [("fieldSelector", f"metadata.name={pod.name}")]
        path = f"/api/v1/namespaces/{quote(pod.namespace)}/pods"
        try:
            answer = self.transport.request("GET", path, query)
        except ApiError as exc:
            log.warning("reading back pod %s after a lost Binding answer: %s", pod.key, exc)
            return ""
        for raw in (answer or {}).get("items") or ():
            if (raw.get("metadata") or {}).get("uid") == pod.uid:
                return str((raw.get("spec") or {}).get("nodeName") or "")
        return ""

    def report_failure(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None
    ) -> None:
        if not self.can_bind():  # a deposed leader writes nothing: its successor owns the pod
            return
        self._status_pool.submit(self._patch_failure, pod, reason, message, nominated_node_name)
        if self.recorder is not None:
            self.recorder.record(
                pod, "Warning", "FailedScheduling", "Scheduling", message, pod.scheduler_name
            )

    def _patch_failure(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None
    ) -> None:
        status = pod.raw.get("status") or {}
        current = next(
            (c for c in status.get("conditions") or () if c.get("type") == "PodScheduled"), None
        )
        same_condition = (
            current is not None
            and current.get("status") == "False"
            and current.get("reason") == reason
            and current.get("message") == message
        )
        same_nomination = (
            nominated_node_name is None
            or (status.get("nominatedNodeName") or "") == nominated_node_name
        )
        if same_condition and same_nomination:
            return  # nothing new: spare the apiserver
        patch: dict = {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": reason,
                        "message": message,
                        "lastProbeTime": None,
                        "lastTransitionTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    }
                ]
            }
        }
        if nominated_node_name is not None:
            patch["status"]["nominatedNodeName"] = nominated_node_name or None
        try:
            self.transport.request(
                "PATCH",
                _pod_path(pod, "status"),
                body=patch,
                content_type="application/strategic-merge-patch+json",
                guard=self.can_bind,
            )
        except ApiError as exc:
            if exc.status != 404 and exc.reason != NOT_SENT:
                log.warning("updating the status of pod %s failed: %s", pod.key, exc)

    def report_scheduled(self, pod: Pod, node_name: str) -> None:
        if self.recorder is not None:
            self.recorder.record(
                pod,
                "Normal",
                "Scheduled",
                "Binding",
                f"Successfully assigned {pod.key} to {node_name}",
                pod.scheduler_name,
            )

    def delete_pod(self, pod: Pod) -> bool:
        """DELETE with a UID precondition and the pod's own grace period (kube's
        ``util.DeletePod``). False on 404; other refusals raise :class:`ApiError`."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": pod.uid}}
        try:
            self.transport.request("DELETE", _pod_path(pod), body=body, guard=self.can_bind)
        except ApiError as exc:
            if exc.status != 404:
                raise
            return False
        return True

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        conditions: Sequence[Mapping[str, Any]] = (),
        nominated_node_name: str | None = None,
    ) -> bool:
        """A strategic-merge patch of ``pods/status``, sent now (conditions merge by type; a
        ``null`` nominatedNodeName removes it). False on 404; other refusals, and a deposed
        leader's call, raise :class:`ApiError`."""
        status: dict[str, Any] = {}
        if conditions:
            status["conditions"] = [dict(c) for c in conditions]
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        if not status:
            return True
        try:
            self.transport.request(
                "PATCH",
                _pod_path(pod, "status"),
                body={"status": status},
                content_type="application/strategic-merge-patch+json",
                guard=self.can_bind,
            )
        except ApiError as exc:
            if exc.status != 404:
                raise
            return False
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
        """Queued on the event recorder (rate-limited, aggregated); ``related`` becomes the
        event's ``related`` object reference."""
        if self.recorder is not None:
            self.recorder.record(
                regarding, event_type, reason, action, note, reporting_controller, related
            )

    def get_pod(self, uid: str) -> Pod | None:
        """From the pod informer's store (non-terminal pods only), updated before handlers run."""
        return self.pods.store.get(uid) if self.pods is not None else None

    # -- consulted objects out (a plugin's PreBind writes) -------------------------------------
    def _write(
        self,
        kind: str,
        method: str,
        namespace: str,
        name: str,
        body: Mapping[str, Any],
        subresource: str = "",
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        key = f"{namespace}/{name}" if namespace else name
        if not self.can_bind():
            raise ObjectWriteError(kind, key, 0, NOT_LEADER_WRITE)
        try:
            answer = self.transport.request(
                method,
                object_path(kind, namespace, "" if method == "POST" else name, subresource),
                body=dict(body),
                content_type=content_type,
                guard=self.can_bind,
            )
        except ApiError as exc:
            if exc.reason == NOT_SENT:
                raise ObjectWriteError(kind, key, 0, NOT_LEADER_WRITE) from None
            raise ObjectWriteError(kind, key, exc.status, exc.message or str(exc)) from None
        return answer if isinstance(answer, dict) else {}

    def create_object(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``obj`` to its kind's collection."""
        meta = obj.get("metadata") or {}
        return self._write(kind, "POST", meta.get("namespace") or "", meta.get("name") or "", obj)

    def update_object(
        self, kind: str, obj: Mapping[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        """PUT ``obj`` (its ``resourceVersion`` makes it a compare-and-swap)."""
        meta = obj.get("metadata") or {}
        return self._write(
            kind, "PUT", meta.get("namespace") or "", meta.get("name") or "", obj, subresource
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
        """A JSON merge patch (``application/merge-patch+json``)."""
        return self._write(
            kind, "PATCH", namespace, name, patch, subresource, "application/merge-patch+json"
        )
