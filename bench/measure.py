"""What a run measures: process CPU and peak RSS from /proc, and when each pod was bound.

Binding times come from a watch on the run's namespace, read by the harness: each pod's first
event (its creation as the watch reports it) and the first event that shows ``spec.nodeName``
(its binding) are stamped with the harness's monotonic clock. The pods' own timestamps
(``creationTimestamp``, the PodScheduled condition's ``lastTransitionTime``) have whole-second
resolution, too coarse for the latencies measured here; both stamps taken on the same watch
stream share any delay of that stream.

Where a run has pods of two kinds (the measured ones and those a churn creates meanwhile), the
writes about the measured pods are counted apart (:func:`measured_writes`): their Bindings, the
Event objects about them, and the status writes the watch saw them get (each change of the
PodScheduled condition or the nomination before binding; neither scheduler sends a patch that
changes nothing). The rest of the run's writes are the churned pods' (and their victims').
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.backends.kube.transport import ApiError, Transport

__all__ = [
    "PodWatch",
    "ProcSample",
    "RssSampler",
    "event_objects_by_pod",
    "measured_writes",
    "parse_request_counts",
    "percentile",
    "proc_sample",
    "rss_growth",
]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ProcSample:
    """CPU seconds (user + system, all threads) and peak resident set (VmHWM) of one process."""

    cpu_seconds: float
    peak_rss_bytes: int


def proc_sample(pid: int) -> ProcSample:
    """Read ``/proc/<pid>/stat`` and ``/proc/<pid>/status``; zeros once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            # The command name may contain spaces and parentheses: split after the last ')'.
            fields = stat.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
        peak = 0
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) * 1024
                    break
        return ProcSample(cpu, peak)
    except (OSError, IndexError, ValueError):
        return ProcSample(0.0, 0)


def current_rss_bytes(pid: int) -> int:
    """``VmRSS`` of ``pid`` now (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class RssSampler:
    """Samples a process's resident set once a ``period`` on a thread of its own (MB)."""

    def __init__(self, pid: int, period: float = 1.0) -> None:
        self.pid = pid
        self.period = period
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-rss", daemon=True)

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = current_rss_bytes(self.pid)
            if rss:
                self.samples.append(rss / 2**20)
            self._stop.wait(self.period)

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.samples


def rss_growth(samples: Sequence[float], window: int = 5) -> float | None:
    """Relative growth of the resident set over ``samples``: the mean of the last ``window``
    against the mean of the first ``window`` (``None`` with fewer than two windows)."""
    if len(samples) < 2 * window:
        return None
    first = sum(samples[:window]) / window
    last = sum(samples[-window:]) / window
    return (last - first) / first if first else None


def parse_request_counts(text: str) -> dict[tuple[str, str, str], float]:
    """``apiserver_request_total`` of a /metrics text summed by (verb, resource, subresource)."""
    totals: dict[tuple[str, str, str], float] = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels_text, _, value = line.rpartition(" ")
        labels = dict(
            part.split("=", 1) for part in labels_text[labels_text.index("{") + 1 : -1].split(",")
        )
        key = tuple(
            labels.get(name, '""').strip('"') for name in ("verb", "resource", "subresource")
        )
        totals[key] = totals.get(key, 0.0) + float(value)  # type: ignore[index]
    return totals  # type: ignore[return-value]


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (``pct`` in 0..100) of ``values``; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(math.ceil(pct / 100 * len(ordered)), 1)
    return ordered[rank - 1]


@dataclass
class PodWatch:
    """Watches pods in ``namespace`` from ``resource_version`` and stamps creation and binding.

    ``wait_bound(count, timeout)`` returns once ``count`` pods were seen bound. Only pods whose
    name starts with ``prefix`` are measured (the churn's pods share the namespace).
    """

    transport: Transport
    namespace: str
    resource_version: str
    added: dict[str, float] = field(default_factory=dict)
    bound: dict[str, float] = field(default_factory=dict)
    #: pod name -> node name, for checks (every pod bound once, to a node of the set).
    nodes: dict[str, str] = field(default_factory=dict)
    error: str = ""
    #: Times the watch had to be started again (a stream ended or failed).
    restarts: int = 0
    prefix: str = "pod-"
    #: pod name (every pod of the namespace) -> status writes seen before it was bound.
    status_writes: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._last_status: dict[str, tuple[object, str]] = {}
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="bench-pod-watch", daemon=True)

    def start(self) -> PodWatch:
        self._thread.start()
        return self

    def _run(self) -> None:
        resource_version = self.resource_version
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        while not self._stop.is_set():
            query = [
                ("watch", "true"),
                ("resourceVersion", resource_version),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", 600),
            ]
            try:
                for line in self.transport.stream_lines(path, query, timeout=(10.0, 60.0)):
                    now = time.monotonic()
                    if self._stop.is_set():
                        return
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    meta = obj.get("metadata") or {}
                    if event.get("type") == "ERROR":  # the version is gone: list, then go on
                        self.error = str(obj.get("message") or obj)
                        resource_version = self._relist(path)
                        break
                    resource_version = meta.get("resourceVersion", resource_version)
                    if event.get("type") in ("BOOKMARK", "DELETED"):
                        continue
                    self.seen(obj, now)
            except ApiError as exc:
                if self._stop.is_set():
                    return
                self.error = str(exc)
                time.sleep(0.2)
            # The apiserver ends a watch that falls behind; go on from the last version seen.
            self.restarts += 1

    def _relist(self, path: str) -> str:
        page = self.transport.request("GET", path)
        now = time.monotonic()
        for pod in page.get("items") or ():
            self.seen(pod, now)
        return str(page["metadata"]["resourceVersion"])

    def seen(self, pod: dict, now: float) -> None:
        """One version of a pod, as the watch (or a re-list) delivered it."""
        name = (pod.get("metadata") or {}).get("name", "")
        spec = pod.get("spec") or {}
        if not spec.get("nodeName"):
            status = pod.get("status") or {}
            scheduled = next(
                (
                    (c.get("status"), c.get("reason"), c.get("message"))
                    for c in status.get("conditions") or ()
                    if c.get("type") == "PodScheduled"
                ),
                None,
            )
            written = (scheduled, status.get("nominatedNodeName") or "")
            last = self._last_status.get(name)
            if last is not None and last != written:
                self.status_writes[name] = self.status_writes.get(name, 0) + 1
            elif last is None and written != (None, ""):
                self.status_writes.setdefault(name, 1)  # first seen already written to
            self._last_status[name] = written
        self._stamp(name, spec, now)

    def _stamp(self, name: str, spec: dict, now: float) -> None:
        if not name.startswith(self.prefix):
            return
        self.added.setdefault(name, now)
        node = spec.get("nodeName")
        if node and name not in self.bound:
            with self._changed:
                self.bound[name] = now
                self.nodes[name] = node
                self._changed.notify_all()

    def wait_bound(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.bound) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 1.0))
        return True

    def stop(self) -> None:
        self._stop.set()


def event_objects_by_pod(transport: Transport, namespace: str) -> dict[str, int]:
    """Pod name -> Event objects (events.k8s.io/v1) about it in ``namespace``: each one is a
    write (repeats fold into a series, patched far less often than a run lasts)."""
    page = transport.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")
    counts: dict[str, int] = {}
    for event in page.get("items") or ():
        regarding = event.get("regarding") or {}
        if regarding.get("kind") == "Pod" and regarding.get("name"):
            counts[regarding["name"]] = counts.get(regarding["name"], 0) + 1
    return counts


def measured_writes(watch: PodWatch, events: dict[str, int]) -> dict[str, float]:
    """The writes about the measured pods (``watch.prefix``) by kind: one Binding per pod bound,
    the Event objects about them, the status writes the watch saw."""
    measured = watch.prefix
    counts = {
        "bindings": float(len(watch.bound)),
        "events": float(sum(n for name, n in events.items() if name.startswith(measured))),
        "pod status": float(
            sum(n for name, n in watch.status_writes.items() if name.startswith(measured))
        ),
    }
    return {kind: n for kind, n in counts.items() if n > 0}
