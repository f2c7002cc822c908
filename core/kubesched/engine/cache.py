"""The scheduler cache: nodes and the pods on them, including pods assumed but not yet bound.

An assumed pod counts on its node as soon as the scheduling cycle picks the node, so the next
cycle does not give its room away; the watch confirming the binding turns it into an ordinary
pod, and a failed binding forgets it at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kubesched.api.objects import Node, Pod
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.snapshot import Snapshot

__all__ = ["Cache"]


@dataclass(slots=True)
class _PodState:
    pod: Pod
    node_name: str
    assumed: bool


class Cache:
    """Thread-safe: event handlers write, the scheduling cycle snapshots."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        self._dirty: set[str] = set()
        self._membership_changed = True
        self._images_changed = True
        self._images_snapshot: Snapshot | None = None
        #: Nodes whose ``status.images`` lists something. While there is none the image census
        #: is empty whatever nodes come and go, so adding or deleting a node without images
        #: leaves it (and ImageLocality's signature, which results are reused by) as it was.
        self._nodes_with_images = 0
        #: The snapshot the dirty set is relative to; any other one is rebuilt in full.
        self._last_snapshot: Snapshot | None = None

    # -- nodes ---------------------------------------------------------------------------------
    def add_node(self, node: Node) -> None:
        with self._lock:
            info = self._nodes.get(node.name)
            old = info.node if info is not None else None
            if info is None:
                info = self._nodes[node.name] = NodeInfo(node)
                self._membership_changed = True
            else:
                if old is None:
                    self._membership_changed = True
                info.set_node(node)
            self._nodes_with_images += bool(node.images) - bool(old is not None and old.images)
            if old is None or old.images != node.images:
                self._census_may_change(node)
            self._dirty.add(node.name)

    update_node = add_node

    def remove_node(self, node: Node) -> None:
        with self._lock:
            info = self._nodes.get(node.name)
            if info is None:
                return
            # Pods still bound to a deleted node keep counting until they are deleted
            # (kube-scheduler keeps such a "ghost" NodeInfo); the node itself is gone.
            gone = info.node
            if info.pods:
                info.set_node(None)
            else:
                del self._nodes[node.name]
            self._membership_changed = True
            if gone is not None:
                self._nodes_with_images -= bool(gone.images)
                self._census_may_change(gone)
            self._dirty.add(node.name)

    def _census_may_change(self, node: Node) -> None:
        """``node`` came, went or changed its images: the census changes when it lists images,
        or when other nodes do (their spread is a share of all nodes)."""
        if node.images or self._nodes_with_images:
            self._images_changed = True

    def has_node(self, name: str) -> bool:
        """Whether the node ``name`` is in the cluster as the cache last heard (not deleted)."""
        with self._lock:
            info = self._nodes.get(name)
            return info is not None and info.node is not None

    def node_names(self) -> list[str]:
        with self._lock:
            return [name for name, info in self._nodes.items() if info.node is not None]

    # -- pods ----------------------------------------------------------------------------------
    def _place(self, pod: Pod, node_name: str) -> None:
        info = self._nodes.get(node_name)
        if info is None:
            info = self._nodes[node_name] = NodeInfo(None)
        info.add_pod(pod)
        self._dirty.add(node_name)

    def _unplace(self, pod: Pod, node_name: str) -> None:
        info = self._nodes.get(node_name)
        if info is None:
            return
        info.remove_pod(pod)
        self._dirty.add(node_name)
        if info.node is None and not info.pods:
            del self._nodes[node_name]

    def assume_pod(self, pod: Pod, node_name: str) -> None:
        """Count ``pod`` on ``node_name`` before the binding is confirmed."""
        with self._lock:
            if pod.uid in self._pods:
                raise ValueError(f"pod {pod.key} is already in the cache")
            self._pods[pod.uid] = _PodState(pod, node_name, assumed=True)
            self._place(pod, node_name)

    def forget_pod(self, pod: Pod) -> None:
        """Undo :meth:`assume_pod` (a failed Reserve, Permit or binding)."""
        with self._lock:
            state = self._pods.get(pod.uid)
            if state is not None and state.assumed:
                del self._pods[pod.uid]
                self._unplace(state.pod, state.node_name)

    def is_assumed(self, uid: str) -> bool:
        with self._lock:
            state = self._pods.get(uid)
            return state is not None and state.assumed

    def add_pod(self, pod: Pod) -> None:
        """A bound pod seen by the watch: confirm an assumed pod, or count a new one."""
        with self._lock:
            state = self._pods.get(pod.uid)
            if state is not None:
                self._unplace(state.pod, state.node_name)
            self._pods[pod.uid] = _PodState(pod, pod.node_name, assumed=False)
            self._place(pod, pod.node_name)

    def update_pod(self, old: Pod, new: Pod) -> None:
        self.add_pod(new)

    def remove_pod(self, pod: Pod) -> None:
        with self._lock:
            state = self._pods.pop(pod.uid, None)
            if state is not None:
                self._unplace(state.pod, state.node_name)

    def pod_count(self) -> int:
        with self._lock:
            return len(self._pods)

    # -- snapshots -----------------------------------------------------------------------------
    def update_snapshot(self, snapshot: Snapshot) -> list[str]:
        """Bring ``snapshot`` up to date, copying only the nodes changed since the last call.

        Returns the names of the nodes that left it (deleted, or ghosts kept for their pods):
        the scheduler drops the results it kept for them (``Scheduler.refresh_snapshot``), on
        the scheduling thread, so no cycle still reading the node writes one back afterwards.
        """
        with self._lock:
            departed: list[str] = []
            if snapshot is not self._last_snapshot:
                departed = [
                    name
                    for name in snapshot.by_name
                    if name not in self._nodes or self._nodes[name].node is None
                ]
                snapshot.by_name = {
                    name: info.clone()
                    for name, info in self._nodes.items()
                    if info.node is not None
                }
                snapshot._reorder()
                self._last_snapshot = snapshot
                self._membership_changed = False
            elif self._membership_changed:
                for name in self._dirty:
                    info = self._nodes.get(name)
                    if info is None or info.node is None:
                        if snapshot.by_name.pop(name, None) is not None:
                            departed.append(name)
                    else:
                        snapshot.by_name[name] = info.clone()
                # The cache's insertion order, not the dirty set's, so runs are repeatable.
                snapshot.by_name = {
                    name: snapshot.by_name[name] for name in self._nodes if name in snapshot.by_name
                }
                snapshot._reorder()
                self._membership_changed = False
            else:
                for name in self._dirty:
                    info = self._nodes.get(name)
                    if info is not None and info.node is not None:  # ghosts are not listed
                        snapshot._replace(info.clone())
            self._dirty.clear()
            if self._images_changed or snapshot is not self._images_snapshot:
                snapshot._recount_images()
                self._images_changed = False
                self._images_snapshot = snapshot
        return departed
