"""Pods held at Permit: other plugins (or their own, later) allow or reject them.

A pod waits until every plugin that returned ``Wait`` has allowed it, any plugin rejects it, or
the earliest of those plugins' timeouts (capped at 15 minutes, as kube-scheduler caps it) passes.

Deadlines are read on the scheduler's clock: the real one under ``kubesched run``, where a
binding thread blocks in :meth:`WaitingPod.wait`; a virtual one under ``simulate`` and the test
harness, where nothing blocks and :meth:`WaitingPods.expire` ends the waits whose deadline the
clock has passed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from kubesched.api.objects import Pod
from kubesched.framework.status import Code, Status

__all__ = ["MAX_PERMIT_TIMEOUT", "WaitingPod", "WaitingPods", "go_duration"]

MAX_PERMIT_TIMEOUT = 15 * 60.0


def go_duration(seconds: float) -> str:
    """``seconds`` as Go prints a ``time.Duration`` (``30s``, ``5m0s``, ``1.5s``, ``50ms``): kube's
    timeout message shows the wait so."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return f"{_trimmed(nanos / size)}{unit}"
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = f"{_trimmed(rest / 1e9)}s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return text


def _trimmed(value: float) -> str:
    return f"{value:.9f}".rstrip("0").rstrip(".")


class WaitingPod:
    """One pod held at Permit on ``node_name``."""

    def __init__(
        self,
        pod: Pod,
        node_name: str,
        waits: dict[str, float],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pod = pod
        self.node_name = node_name
        self._pending = set(waits)
        self._clock = clock
        #: When the wait ends with a timeout, on ``clock``.
        self._timeout_plugin = min(waits, key=waits.__getitem__)
        self._timeout = min(waits[self._timeout_plugin], MAX_PERMIT_TIMEOUT)
        self.deadline = clock() + self._timeout
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._result: Status | None = None
        #: Called once, with the pod, when the wait ends (set by the scheduler).
        self.on_done: Callable[[WaitingPod], None] | None = None

    @property
    def done(self) -> bool:
        """Whether the pod was allowed, rejected or timed out."""
        return self._done.is_set()

    def pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; it is released once no plugin is still pending."""
        with self._lock:
            self._pending.discard(plugin)
            if self._pending or self._result is not None:
                return
            self._result = Status.success()
            self._done.set()
        self._notify()

    def reject(self, plugin: str, message: str) -> None:
        """``plugin`` turns the pod away; the binding cycle fails with ``message``."""
        with self._lock:
            if self._result is not None:
                return
            self._result = Status(Code.UNSCHEDULABLE, message, plugin=plugin)
            self._done.set()
        self._notify()

    def _notify(self) -> None:
        if self.on_done is not None:
            self.on_done(self)

    def expire(self) -> bool:
        """Reject the pod with kube's timeout message if the clock has reached its deadline;
        whether it did."""
        if self._done.is_set() or self._clock() < self.deadline:
            return False
        self.reject(
            self._timeout_plugin,
            f"rejected due to timeout after waiting {go_duration(self._timeout)} "
            f"at plugin {self._timeout_plugin}",
        )
        return True

    def wait(self) -> Status:
        """Block until allowed, rejected or timed out (kube's message on timeout). On a virtual
        clock the wait has ended before this is called (see the module docstring)."""
        while not self._done.is_set():
            remaining = self.deadline - self._clock()
            if remaining <= 0 or not self._done.wait(remaining):
                self.expire()
        assert self._result is not None
        return self._result


class WaitingPods:
    """The waiting pods of one scheduler, by pod UID; shared by every profile's handle."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        #: The clock new waiting pods read their deadline on.
        self.clock = clock
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

    def expire(self) -> int:
        """End every wait whose deadline the clock has reached; how many ended."""
        return sum(1 for waiting in self if waiting.expire())

    def next_deadline(self) -> float | None:
        """The earliest deadline of a pod still waiting, on :attr:`clock`."""
        return min((w.deadline for w in self if not w.done), default=None)

    def __iter__(self) -> Iterator[WaitingPod]:
        with self._lock:
            return iter(list(self._pods.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
