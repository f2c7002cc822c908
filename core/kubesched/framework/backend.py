"""The narrow interface between the scheduler and a cluster.

Nodes and pods come in as events (``EventHandler``); decisions go out as a bind, a failure report
or a success report, and preemption's writes (a status patch, a deletion, an event) go out as
calls of their own. The in-memory backend (``simulate``, unit tests) and the Kubernetes API backend
implement the same interface, so one scheduler code path serves both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from kubesched.api.objects import Node, Pod

__all__ = ["BindError", "ClusterBackend", "EventHandler", "ObjectWriteError"]


class BindError(Exception):
    """A bind the cluster refused. ``retryable`` is False when retrying cannot help
    (the pod is gone or already bound elsewhere)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class ObjectWriteError(Exception):
    """A write of a consulted object (``create_object``, ``update_object``, ``patch_object``)
    the cluster refused. ``status`` is the HTTP status the apiserver would answer: 404 (gone),
    409 (a ``resourceVersion`` conflict, or already exists), 0 (not sent: not the leader)."""

    def __init__(self, kind: str, key: str, status: int, message: str) -> None:
        super().__init__(f"{kind} {key}: {message}")
        self.kind = kind
        self.key = key
        self.status = status
        self.message = message

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def not_found(self) -> bool:
        return self.status == 404


class EventHandler(Protocol):
    """What the scheduler does with cluster changes (kube-scheduler's event handlers)."""

    def on_node_add(self, node: Node) -> None: ...
    def on_node_update(self, old: Node, new: Node) -> None: ...
    def on_node_delete(self, node: Node) -> None: ...
    def on_pod_add(self, pod: Pod) -> None: ...
    def on_pod_update(self, old: Pod, new: Pod) -> None: ...
    def on_pod_delete(self, pod: Pod) -> None: ...
    # Consulted kinds (``Handle.lister``): raw objects, with their kind. A backend delivers them
    # only to handlers that have these methods.
    def on_object_add(self, kind: str, obj: Mapping[str, Any]) -> None: ...
    def on_object_update(
        self, kind: str, old: Mapping[str, Any], new: Mapping[str, Any]
    ) -> None: ...
    def on_object_delete(self, kind: str, obj: Mapping[str, Any]) -> None: ...


@runtime_checkable
class ClusterBackend(Protocol):
    """A cluster the scheduler reads from and writes to: everything the engine and the
    Handle call on a backend is declared here."""

    #: Whether every call takes effect at once on the caller's thread (the in-memory backend):
    #: the Handle then runs background calls inline, which keeps ``simulate`` repeatable.
    synchronous: bool

    def start(self, handler: EventHandler, sync_timeout: float | None = None) -> None:
        """Deliver every existing node and pod to ``handler``, then keep delivering changes.

        Returns once the initial state has been delivered (caches synced), or after
        ``sync_timeout`` seconds for a backend that lists remotely (``None``: its default).
        """

    def lister(self, kind: str) -> Callable[[], list[Mapping[str, Any]]]:
        """A function listing the cluster's objects of ``kind`` as raw mappings, kept current;
        asking for a kind the first time makes the backend watch it (``Handle.lister``)."""

    def stop(self) -> None:
        """Stop delivering events and release connections."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """Assign ``pod`` to ``node_name``; raises :class:`BindError` when refused."""

    def bound_by_extender(self, pod: Pod, node_name: str) -> None:
        """An extender bound ``pod`` (it writes the binding itself, as kube-scheduler leaves it
        to): a backend watching a real cluster learns of it from its watch, so does nothing
        here; one that holds the cluster itself records the binding."""

    def report_failure(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None
    ) -> None:
        """Record a failed attempt: ``PodScheduled=False`` with ``reason`` (``Unschedulable`` or
        ``SchedulerError``) and ``message``; set (or clear, with ``""``) the nominated node;
        ``None`` leaves the nomination as it is."""

    def report_scheduled(self, pod: Pod, node_name: str) -> None:
        """Record a success (the ``Scheduled`` event)."""

    def delete_pod(self, pod: Pod) -> bool:
        """Delete ``pod`` (a preemption victim, with its own grace period), only if it is still
        the pod with that UID. False when it was already gone; raises when the cluster refuses."""

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        conditions: Sequence[Mapping[str, Any]] = (),
        nominated_node_name: str | None = None,
    ) -> bool:
        """Patch ``pod``'s status and return once the cluster has it (kube's ``PatchPodStatus``).

        Each of ``conditions`` replaces the pod's condition of the same ``type``, or is added;
        ``nominated_node_name`` sets ``status.nominatedNodeName`` (``""`` clears it, ``None``
        leaves it). False when the pod no longer exists; raises when the cluster refuses.
        """

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
        """Record an Event about ``regarding`` (kube's ``EventRecorder.Eventf``): ``event_type``
        ``Normal`` or ``Warning``, reported by the profile ``reporting_controller``; ``related``
        is the other pod involved (the preemptor of a ``Preempted`` victim). Never blocks on the
        API and never raises for a refused write."""

    def get_pod(self, uid: str) -> Pod | None:
        """The pod with ``uid`` as this backend last saw it (the pod informer's store), or
        ``None`` once it is deleted. Already updated when the handler hears of the change."""

    # -- consulted objects (``Handle.lister``'s kinds) ----------------------------------------
    # A plugin's writes beyond pods (VolumeBinding's PV claimRef and PVC annotation, a status
    # write): kube's Create / Update / Patch. The in-memory backend applies them at once and
    # delivers the change to the handler, so the next pod's listers see them; the Kubernetes
    # backend sends them behind the leader-election write guard.

    def create_object(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create ``obj`` (of ``kind``); returns it as stored (with its ``resourceVersion``).
        Raises :class:`ObjectWriteError` (409 when it exists)."""

    def update_object(
        self, kind: str, obj: Mapping[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        """Replace the stored object named by ``obj``'s metadata (kube's ``Update``; with
        ``subresource="status"``, ``UpdateStatus``). A ``resourceVersion`` in ``obj`` must be the
        stored one (409 otherwise). Returns the object as stored; raises
        :class:`ObjectWriteError`."""

    def patch_object(
        self,
        kind: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        """Apply a JSON merge patch (RFC 7386: ``None`` removes a key) to the object; returns it
        as stored; raises :class:`ObjectWriteError`."""
