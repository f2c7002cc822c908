"""Pods held at Permit: other plugins (or their own, later) allow or reject them.

A pod waits until every plugin that returned ``Wait`` has allowed it, any plugin rejects it, or
the earliest of those plugins' timeouts (capped at 15 minutes, as kube-scheduler caps it) passes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from .objects import Pod
from .status import Code, Status

__all__ = ["MAX_PERMIT_TIMEOUT", "WaitingPod", "WaitingPods"]

MAX_PERMIT_TIMEOUT = 15 * 60.0


class WaitingPod:
    """One pod held at Permit on ``node_name``."""

    def __init__(self, pod: Pod, node_name: str, waits: dict[str, float]) -> None:
        self.pod = pod
        self.node_name = node_name
        self._pending = set(waits)
        self._deadline = time.monotonic() + min(min(waits.values()), MAX_PERMIT_TIMEOUT)
        self._timeout_plugin = min(waits, key=waits.__getitem__)
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._result: Status | None = None

    def pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; it is released once no plugin is still pending."""
        with self._lock:
            self._pending.discard(plugin)
            if not self._pending and self._result is None:
                self._result = Status.success()
                self._done.set()

    def reject(self, plugin: str, message: str) -> None:
        """``plugin`` turns the pod away; the binding cycle fails with ``message``."""
        with self._lock:
            if self._result is None:
                self._result = Status(Code.UNSCHEDULABLE, message, plugin=plugin)
                self._done.set()

    def wait(self) -> Status:
        """Block until allowed, rejected or timed out (kube's message on timeout)."""
        remaining = self._deadline - time.monotonic()
        if not self._done.wait(max(remaining, 0.0)):
            self.reject(
                self._timeout_plugin,
                f'rejected due to timeout after waiting at permit: plugin "{self._timeout_plugin}"',
            )
        assert self._result is not None
        return self._result


class WaitingPods:
    """The waiting pods of one scheduler, by pod UID; shared by every profile's handle."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}
        self._lock = threading.Lock()

    def add(self, waiting: WaitingPod) -> None:
        with self._lock:
            self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        with self._lock:
            return self._pods.get(uid)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
