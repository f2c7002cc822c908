"""Pods nominated to a node by preemption, waiting for the room their victims leave.

Other pods' Filters count a nominated pod of at least their priority on its node (so the room is
not given away), as kube-scheduler's nominator does. A nomination comes from a pod's
``status.nominatedNodeName`` or from a PostFilter plugin, and ends when the pod is scheduled,
deleted, or nominated elsewhere.
"""

from __future__ import annotations

import threading

from kubesched.api.objects import Pod

__all__ = ["Nominator"]


class Nominator:
    """Thread-safe map of node name -> nominated pods."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def add(self, pod: Pod, node_name: str) -> None:
        """Nominate ``pod`` to ``node_name`` (replacing an earlier nomination); ``""`` clears."""
        with self._lock:
            self._remove_locked(pod.uid)
            if node_name:
                self._by_node.setdefault(node_name, {})[pod.uid] = pod
                self._node_of[pod.uid] = node_name

    def update(self, pod: Pod) -> None:
        """Follow the pod's own ``status.nominatedNodeName`` (a pending pod seen again)."""
        with self._lock:
            node = self._node_of.get(pod.uid, "")
        if pod.nominated_node_name:
            self.add(pod, pod.nominated_node_name)
        elif node:
            self.add(pod, node)  # keep our nomination, with the pod's newest version

    def remove(self, pod: Pod) -> None:
        with self._lock:
            self._remove_locked(pod.uid)

    def _remove_locked(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is not None:
            pods = self._by_node.get(node, {})
            pods.pop(uid, None)
            if not pods:
                self._by_node.pop(node, None)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        with self._lock:
            return list(self._by_node.get(node_name, {}).values())

    def node_names(self) -> frozenset[str]:
        """The nodes with at least one nominated pod."""
        with self._lock:
            return frozenset(self._by_node)

    def node_of(self, pod: Pod) -> str:
        with self._lock:
            return self._node_of.get(pod.uid, "")

    def __len__(self) -> int:
        with self._lock:
            return len(self._node_of)
