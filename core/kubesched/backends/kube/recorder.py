"""Kubernetes Events for scheduling decisions, written as client-go's events library writes them.

``Scheduled`` (Normal) and ``FailedScheduling`` (Warning) events, as kube-scheduler writes them
(``events.k8s.io/v1``, reportingController = the profile's schedulerName), and any other event a
plugin records, with its ``related`` object (a victim's preemptor).

The semantics are client-go's ``tools/events`` broadcaster, the one kube-scheduler uses:

- every event is written: one ``Scheduled`` event per bound pod, however fast pods are bound;
  writes run on a small pool of threads so that the recorder keeps pace with binding, and a slow
  apiserver never holds up scheduling;
- repeats of an event fold into a series. Two events are the same when their type, action,
  reason, reporting controller and instance, regarding and related objects are (client-go's
  ``getKey``; the note is not part of it). The second occurrence patches ``series.count`` to 2 at
  once; later ones only count, and the count is written when the series is refreshed (every
  ``series_refresh_seconds``) or ends (``series_finish_seconds`` after its last occurrence);
- a spam filter per regarding object (client-go ``tools/record``'s defaults: a burst of 25 new
  events, then one every 5 minutes) keeps one pod that fails in many different ways from flooding
  the API; it never delays another object's events;
- what is kept is bounded by count, not only by time: at most :data:`MAX_TRACKED` series and as
  many spam-filter buckets (client-go's ``maxLruCacheEntries``), each series holding only what
  its patch and a re-creation need (the event's name, namespace and encoded body, its counts).
  Under churn every new pod that fails opens a series; a bound by time alone (6 minutes) lets
  them pile up;
- the queue in front of the writers is bounded: an event that does not fit is dropped, counted in
  :attr:`EventRecorder.dropped` and logged (at most once every 10 seconds);
- an overall cap (``qps``) exists only when asked for, and is off by default.
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cachetools import TTLCache

from kubesched.api.objects import Pod
from kubesched.backends.kube.transport import ApiError, TokenBucket, Transport

__all__ = ["EventRecorder"]

log = logging.getLogger(__name__)

#: client-go ``tools/record``'s spam filter: 25 events at once per object, then one per 5 minutes.
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
#: client-go ``tools/record``'s ``maxLruCacheEntries``: objects the spam filter tracks, and (here)
#: event series kept at once.
MAX_TRACKED = 4096


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


#: (type, action, reason, reportingController, regarding uid, related uid): client-go's eventKey
#: (the reporting instance is the same for every event of one recorder).
_Key = tuple[str, str, str, str, str, str]


@dataclass(slots=True)
class _Series:
    """One event written (or being written) and how often it recurred since.

    The body is kept encoded (a third of the dict's size): only a re-creation after the event
    expired on the server reads it again."""

    name: str
    namespace: str
    encoded: bytes
    count: int = 1
    last_observed: float = field(default_factory=time.monotonic)
    #: The count the apiserver was last told (1: the event as created).
    written_count: int = 1
    last_refresh: float = field(default_factory=time.monotonic)


@dataclass(slots=True)
class _Write:
    """What a writer thread sends: a new event (``body``) or a series count (a patch)."""

    series: _Series
    body: dict[str, Any] | None = None

    @staticmethod
    def new(body: dict[str, Any]) -> _Write:
        encoded = json.dumps(body, separators=(",", ":")).encode()
        meta = body["metadata"]
        return _Write(_Series(meta["name"], meta["namespace"], encoded), body)


class _SpamFilter:
    """A token bucket per regarding object (client-go ``tools/record``'s
    ``EventSourceObjectSpamFilter``), kept in a bounded cache: an object unseen for as long as
    its bucket takes to fill again is forgotten, which is the same as a full bucket."""

    def __init__(self, burst: int, refill_seconds: float, max_objects: int = MAX_TRACKED) -> None:
        self.burst = burst
        self.refill_seconds = refill_seconds
        ttl = max(burst * refill_seconds, 1.0)
        self._buckets: TTLCache[str, list[float]] = TTLCache(max_objects, ttl, timer=time.monotonic)

    def allow(self, uid: str, now: float) -> bool:
        bucket = self._buckets.get(uid)
        if bucket is None:
            bucket = [float(self.burst), now]
        tokens = bucket[0]
        if self.refill_seconds > 0:
            tokens = min(self.burst, tokens + (now - bucket[1]) / self.refill_seconds)
        allowed = tokens >= 1
        self._buckets[uid] = [tokens - 1 if allowed else tokens, now]
        return allowed


class EventRecorder:
    """Queues events and writes them from a pool of background threads."""

    def __init__(
        self,
        transport: Transport,
        *,
        writers: int = 8,
        qps: float = 0.0,
        burst: int = 50,
        spam_burst: int = SPAM_BURST,
        spam_refill_seconds: float = SPAM_REFILL_SECONDS,
        series_finish_seconds: float = 360.0,
        series_refresh_seconds: float = 1800.0,
        max_queue: int = 10_000,
        max_series: int = MAX_TRACKED,
        guard: Callable[[], bool] | None = None,
    ) -> None:
        """``qps`` > 0 caps event writes overall (off by default, as in client-go);
        ``writers`` threads write concurrently; ``max_queue`` events may wait for them."""
        self.transport = transport
        #: Asked before each write (a deposed leader writes no events).
        self.guard = guard
        self.bucket = TokenBucket(qps, burst)
        self.series_finish_seconds = series_finish_seconds
        self.series_refresh_seconds = series_refresh_seconds
        self.max_series = max_series
        self.instance = socket.gethostname()
        #: Events dropped: the queue was full, the spam filter or the overall cap refused them.
        self.dropped = 0
        #: Events created, and series counts patched.
        self.written = 0
        self.patched = 0
        self._spam = _SpamFilter(spam_burst, spam_refill_seconds)
        self._lock = threading.Lock()
        self._series: dict[_Key, _Series] = {}
        self._last_drop_log = 0.0
        self._queue: queue.Queue[_Write | None] = queue.Queue(max_queue)
        self._stopped = threading.Event()
        #: Threads writing events at once.
        self.writers = max(writers, 1)
        self._threads = [
            threading.Thread(target=self._run, name=f"event-writer-{i}", daemon=True)
            for i in range(self.writers)
        ]
        self._threads.append(
            threading.Thread(target=self._tend_series, name="event-series", daemon=True)
        )
        for thread in self._threads:
            thread.start()

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
        """Record an event about ``pod``, with ``related`` (another pod involved, written as the
        event's ``related`` object reference) when given; never blocks.

        A repeat of an event already written only counts (see the module docstring); a new one
        is queued for the writers, or dropped and counted when the queue is full."""
        key = (event_type, action, reason, controller, pod.uid, related.uid if related else "")
        now = time.monotonic()
        with self._lock:
            series = self._series.get(key)
            if series is not None:
                series.count += 1
                series.last_observed = now
                if series.count != 2:
                    return  # written when the series is refreshed or ends
                write = _Write(series)
            else:
                if not self._spam.allow(pod.uid, now) or not self._take_overall():
                    self._drop("the spam filter or the overall cap refused it")
                    return
                body = self._body(pod, event_type, reason, action, note, controller)
                if related is not None:
                    body["related"] = _reference(related)
                if len(self._series) >= self.max_series:
                    self._forget_oldest()
                write = _Write.new(body)
                self._series[key] = write.series
        try:
            self._queue.put_nowait(write)
        except queue.Full:
            self._drop("the event queue is full")

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until queued events are written (tests, shutdown), at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self, timeout: float = 5.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds), then stop the writers."""
        self.flush(timeout)
        self._stopped.set()
        for _ in self._threads:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break
        for thread in self._threads:
            thread.join(timeout=1.0)

    # -- internals --------------------------------------------------------------------------

    def _body(
        self, pod: Pod, event_type: str, reason: str, action: str, note: str, controller: str
    ) -> dict[str, Any]:
        return {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{pod.name}.{uuid.uuid4().hex[:16]}", "namespace": pod.namespace},
            "eventTime": _now(),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.instance}",
            "action": action,
            "reason": reason,
            "note": note[:1024],
            "type": event_type,
            "regarding": _reference(pod),
        }

    def _take_overall(self) -> bool:
        bucket = self.bucket
        if bucket.qps <= 0:
            return True
        with bucket._lock:
            now = time.monotonic()
            bucket._tokens = min(bucket.burst, bucket._tokens + (now - bucket._last) * bucket.qps)
            bucket._last = now
            if bucket._tokens < 1:
                return False
            bucket._tokens -= 1
            return True

    def _drop(self, why: str) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._last_drop_log >= 10.0:
            self._last_drop_log = now
            log.warning("event dropped (%s); %d dropped so far", why, self.dropped)

    def _forget_oldest(self) -> None:
        """Make room in the series table (called with the lock held): the oldest half goes."""
        by_age = sorted(self._series, key=lambda k: self._series[k].last_observed)
        for key in by_age[: max(len(by_age) // 2, 1)]:
            del self._series[key]

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._send(item)
            except ApiError as exc:
                log.debug("writing an event failed: %s", exc)
            except Exception:
                log.exception("writing an event failed")
            finally:
                self._queue.task_done()

    def _send(self, write: _Write) -> None:
        series = write.series
        path = f"/apis/events.k8s.io/v1/namespaces/{series.namespace}/events"
        if write.body is not None:
            # Encoded once, when it was recorded: the series keeps the same bytes.
            self.transport.request("POST", path, body=series.encoded, guard=self.guard)
            self.written += 1
            return
        with self._lock:
            count = series.count
            series.written_count = count
            series.last_refresh = time.monotonic()
        patch = {"series": {"count": count, "lastObservedTime": _now()}}
        try:
            self.transport.request(
                "PATCH",
                f"{path}/{series.name}",
                body=patch,
                content_type="application/merge-patch+json",
                guard=self.guard,
            )
        except ApiError as exc:
            if exc.status != 404:
                raise
            # The event expired on the server: write it anew with its series, as client-go does.
            body = {**json.loads(series.encoded), **patch}
            self.transport.request("POST", path, body=body, guard=self.guard)
        self.patched += 1

    def _tend_series(self) -> None:
        """Write the counts of series that ended or are due a refresh; forget ended ones."""
        tick = max(min(self.series_finish_seconds, self.series_refresh_seconds) / 4, 0.05)
        while not self._stopped.wait(min(tick, 5.0)):
            now = time.monotonic()
            due: list[_Series] = []
            with self._lock:
                for key, series in list(self._series.items()):
                    ended = now - series.last_observed >= self.series_finish_seconds
                    stale = now - series.last_refresh >= self.series_refresh_seconds
                    if series.count > series.written_count and (ended or stale):
                        due.append(series)
                    if ended:
                        del self._series[key]
            for series in due:
                try:
                    self._queue.put_nowait(_Write(series))
                except queue.Full:
                    self._drop("the event queue is full")
