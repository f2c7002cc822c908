"""Kubernetes Events for scheduling decisions, rate-limited and aggregated.

``Scheduled`` (Normal) and ``FailedScheduling`` (Warning) events, as kube-scheduler writes them
(``events.k8s.io/v1``, reportingController = the profile's schedulerName), and any other event a
plugin records, with its ``related`` object (a victim's preemptor). Writes happen on a
background thread so a slow apiserver never holds up scheduling, and two limits keep a thousand
unschedulable pods from flooding the API (as client-go's event broadcaster does):

- the same (pod, reason, message, related pod) within ``dedup_seconds`` is folded into one
  event whose ``series.count`` grows (patched at most every ``series_update_seconds``);
- a token bucket caps event writes overall; what does not fit is dropped and counted.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from ..objects import Pod
from .transport import ApiError, TokenBucket, Transport

__all__ = ["EventRecorder"]

log = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _reference(pod: Pod) -> dict[str, str]:
    """The ``ObjectReference`` of ``pod`` (an event's ``regarding`` or ``related``)."""
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
    }


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    first_seen: float
    last_patch: float
    dirty: bool = False


class EventRecorder:
    """Queues events and writes them from one background thread."""

    def __init__(
        self,
        transport: Transport,
        *,
        qps: float = 10.0,
        burst: int = 50,
        dedup_seconds: float = 600.0,
        series_update_seconds: float = 30.0,
        max_queue: int = 10_000,
        guard: Callable[[], bool] | None = None,
    ) -> None:
        self.transport = transport
        #: Asked before each write (a deposed leader writes no events).
        self.guard = guard
        self.bucket = TokenBucket(qps, burst)
        self.dedup_seconds = dedup_seconds
        self.series_update_seconds = series_update_seconds
        self.instance = socket.gethostname()
        self.dropped = 0
        self.written = 0
        self._queue: queue.Queue[tuple[str, Pod, str, str, str, str, Pod | None] | None] = (
            queue.Queue(max_queue)
        )
        self._series: dict[tuple[str, str, str, str], _Series] = {}
        self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
        self._thread.start()

    def record(
        self,
        pod: Pod,
        event_type: str,
        reason: str,
        action: str,
        note: str,
        controller: str,
        related: Pod | None = None,
    ) -> None:
        """Queue an event about ``pod``, with ``related`` (another pod involved, written as the
        event's ``related`` object reference) when given; never blocks (a full queue drops and
        counts it)."""
        try:
            self._queue.put_nowait((event_type, pod, reason, action, note, controller, related))
        except queue.Full:
            self.dropped += 1

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until queued events are written (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while not self._queue.empty() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                self._write(*item)
            except ApiError as exc:
                log.debug("writing an event failed: %s", exc)
            except Exception:
                log.exception("writing an event failed")

    def _write(
        self,
        event_type: str,
        pod: Pod,
        reason: str,
        action: str,
        note: str,
        controller: str,
        related: Pod | None = None,
    ) -> None:
        key = (pod.uid, reason, note, related.uid if related is not None else "")
        now = time.monotonic()
        series = self._series.get(key)
        if series is not None and now - series.first_seen < self.dedup_seconds:
            series.count += 1
            if now - series.last_patch >= self.series_update_seconds:
                self._patch_series(series)
                series.last_patch = now
            return
        if len(self._series) > 50_000:  # forget the oldest half rather than grow without end
            for old in sorted(self._series, key=lambda k: self._series[k].first_seen)[:25_000]:
                del self._series[old]
        if self.bucket.qps > 0 and not self._try_take():
            self.dropped += 1
            return
        name = f"{pod.name}.{uuid.uuid4().hex[:16]}"
        body = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": pod.namespace},
            "eventTime": _now(),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.instance}",
            "action": action,
            "reason": reason,
            "note": note[:1024],
            "type": event_type,
            "regarding": _reference(pod),
        }
        if related is not None:
            body["related"] = _reference(related)
        self.transport.request(
            "POST",
            f"/apis/events.k8s.io/v1/namespaces/{pod.namespace}/events",
            body=body,
            guard=self.guard,
        )
        self.written += 1
        self._series[key] = _Series(name, pod.namespace, 1, now, now)

    def _try_take(self) -> bool:
        bucket = self.bucket
        with bucket._lock:
            now = time.monotonic()
            bucket._tokens = min(bucket.burst, bucket._tokens + (now - bucket._last) * bucket.qps)
            bucket._last = now
            if bucket._tokens < 1:
                return False
            bucket._tokens -= 1
            return True

    def _patch_series(self, series: _Series) -> None:
        patch = {"series": {"count": series.count, "lastObservedTime": _now()}}
        self.transport.request(
            "PATCH",
            f"/apis/events.k8s.io/v1/namespaces/{series.namespace}/events/{series.name}",
            body=patch,
            content_type="application/merge-patch+json",
            guard=self.guard,
        )
