"""The narrow interface between the scheduler and a cluster.

Nodes and pods come in as events (``EventHandler``); decisions go out as a bind, a failure report
or a success report. The in-memory backend (``simulate``, unit tests) and the Kubernetes API backend
implement the same interface, so one scheduler code path serves both.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..objects import Node, Pod

__all__ = ["BindError", "ClusterBackend", "EventHandler"]


class BindError(Exception):
    """A bind the cluster refused. ``retryable`` is False when retrying cannot help
    (the pod is gone or already bound elsewhere)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class EventHandler(Protocol):
    """What the scheduler does with cluster changes (kube-scheduler's event handlers)."""

    def on_node_add(self, node: Node) -> None: ...
    def on_node_update(self, old: Node, new: Node) -> None: ...
    def on_node_delete(self, node: Node) -> None: ...
    def on_pod_add(self, pod: Pod) -> None: ...
    def on_pod_update(self, old: Pod, new: Pod) -> None: ...
    def on_pod_delete(self, pod: Pod) -> None: ...


@runtime_checkable
class ClusterBackend(Protocol):
    """A cluster the scheduler reads from and writes to."""

    def start(self, handler: EventHandler) -> None:
        """Deliver every existing node and pod to ``handler``, then keep delivering changes.

        Returns once the initial state has been delivered (caches synced).
        """

    def stop(self) -> None:
        """Stop delivering events and release connections."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """Assign ``pod`` to ``node_name``; raises :class:`BindError` when refused."""

    def report_failure(
        self, pod: Pod, reason: str, message: str, nominated_node_name: str | None
    ) -> None:
        """Record a failed attempt: ``PodScheduled=False`` with ``reason`` (``Unschedulable`` or
        ``SchedulerError``) and ``message``; set (or clear, with ``""``) the nominated node;
        ``None`` leaves the nomination as it is."""

    def report_scheduled(self, pod: Pod, node_name: str) -> None:
        """Record a success (the ``Scheduled`` event)."""

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod (preemption victims)."""
