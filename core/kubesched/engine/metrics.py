"""kube-scheduler's metrics, in the Prometheus text exposition format 0.0.4.

A small registry of our own (counters, gauges, histograms with labels), thread-safe, with the
names, labels, help texts and buckets of kube-scheduler (``pkg/scheduler/metrics/metrics.go``) and
of client-go's leader election, so dashboards and alerts written for kube-scheduler work
unchanged. As in component-base, each help text starts with the metric's stability level.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence

from kubesched.framework.status import Code

__all__ = [
    "CONTENT_TYPE",
    "STATUS_LABELS",
    "SchedulerMetrics",
    "exponential_buckets",
    "status_label",
]

#: The ``Content-Type`` of :meth:`SchedulerMetrics.render`'s output.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: kube-scheduler's ``Code.String()``: the ``status`` label values.
STATUS_LABELS: Mapping[Code, str] = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


def status_label(code: Code | None) -> str:
    """The ``status`` label for a status code; ``None`` (a hook's Success) is ``"Success"``."""
    return STATUS_LABELS[Code.SUCCESS if code is None else code]


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """Prometheus' ``ExponentialBuckets``: ``count`` upper bounds from ``start``, each × factor.

    Computed by repeated multiplication, as the Go library does, so the bounds are the same floats.
    """
    if count < 1 or start <= 0 or factor <= 1:
        raise ValueError(
            f"exponential_buckets({start}, {factor}, {count}): need count >= 1, "
            f"start > 0 and factor > 1"
        )
    bounds: list[float] = []
    for _ in range(count):
        bounds.append(start)
        start *= factor
    return tuple(bounds)


def _float(value: float) -> str:
    """A sample value or bound as the Go client writes it (shortest form, ``+Inf``, ``NaN``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    pairs = [f'{name}="{_escape_label(value)}"' for name, value in zip(names, values, strict=True)]
    if extra:
        pairs.append(extra)
    return "{" + ",".join(pairs) + "}" if pairs else ""


class _Family:
    """One metric name: its type, help, label names and one child per label-value tuple."""

    kind = ""

    def __init__(self, name: str, help: str, labels: Sequence[str]) -> None:
        self.name = name
        self.help = help
        self.label_names = tuple(labels)
        self._lock = threading.Lock()

    def _key(self, values: Sequence[str]) -> tuple[str, ...]:
        if len(values) != len(self.label_names):
            raise ValueError(f"{self.name}: expected labels {self.label_names}, got {values}")
        return tuple(str(v) for v in values)

    def samples(self) -> Iterator[str]:
        raise NotImplementedError

    def render(self) -> Iterator[str]:
        lines = list(self.samples())
        if not lines:
            return
        yield f"# HELP {self.name} {_escape_help(self.help)}"
        yield f"# TYPE {self.name} {self.kind}"
        yield from lines


class _Counter(_Family):
    kind = "counter"

    def __init__(self, name: str, help: str, labels: Sequence[str]) -> None:
        super().__init__(name, help, labels)
        self._values: dict[tuple[str, ...], float] = {}

    def inc(self, values: Sequence[str], amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError(f"{self.name}: a counter cannot decrease (got {amount})")
        key = self._key(values)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted(self._values.items())
        for key, value in items:
            yield f"{self.name}{_labels(self.label_names, key)} {_float(value)}"


class _Gauge(_Counter):
    kind = "gauge"

    def set(self, values: Sequence[str], value: float) -> None:
        key = self._key(values)
        with self._lock:
            self._values[key] = float(value)


class _Histogram(_Family):
    kind = "histogram"

    def __init__(
        self, name: str, help: str, labels: Sequence[str], buckets: Iterable[float]
    ) -> None:
        super().__init__(name, help, labels)
        self.buckets = tuple(buckets)
        # Per label tuple: [count in each bucket (not cumulative) ..., count above the last], sum.
        self._children: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}

    def observe(self, values: Sequence[str], value: float) -> None:
        key = self._key(values)
        index = bisect.bisect_left(self.buckets, value)  # upper bounds are inclusive ("le")
        with self._lock:
            child = self._children.get(key)
            if child is None:
                child = self._children[key] = ([0] * (len(self.buckets) + 1), [0.0])
            child[0][index] += 1
            child[1][0] += value

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted((k, (list(c[0]), c[1][0])) for k, c in self._children.items())
        for key, (counts, total) in items:
            cumulative = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                cumulative += count
                le = f'le="{_float(bound)}"'
                yield f"{self.name}_bucket{_labels(self.label_names, key, le)} {cumulative}"
            yield f"{self.name}_sum{_labels(self.label_names, key)} {_float(total)}"
            yield f"{self.name}_count{_labels(self.label_names, key)} {cumulative}"


class SchedulerMetrics:
    """The scheduler's metrics: record with the methods below, expose with :meth:`render`.

    Every method is safe to call from any thread. Label values are kube-scheduler's: results
    ``scheduled``, ``unschedulable``, ``error``; statuses from :func:`status_label` (``Success``,
    ``Error``, ``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Wait``, ``Skip``,
    ``Pending``); extension points ``PreFilter``, ``Filter``, ..., ``Bind``, ``PostBind``; queues
    ``active``, ``backoff``, ``unschedulable``, ``gated``.
    """

    def __init__(self) -> None:
        self._schedule_attempts = _Counter(
            "scheduler_schedule_attempts_total",
            "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means "
            "a pod could not be scheduled, while 'error' means an internal scheduler problem.",
            ("result", "profile"),
        )
        self._attempt_duration = _Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ("result", "profile"),
            exponential_buckets(0.001, 2, 15),
        )
        self._pending_pods = _Gauge(
            "scheduler_pending_pods",
            "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods "
            "in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
            "number of pods in unschedulablePods that the scheduler attempted to schedule and "
            "failed; 'gated' is the number of unschedulable pods that the scheduler never "
            "attempted to schedule because they are gated.",
            ("queue",),
        )
        self._extension_point_duration = _Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "[STABLE] Latency for running all plugins of a specific extension point.",
            ("extension_point", "status", "profile"),
            exponential_buckets(0.0001, 2, 12),
        )
        self._plugin_duration = _Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "[ALPHA] Duration for running a plugin at a specific extension point.",
            ("plugin", "extension_point", "status"),
            exponential_buckets(0.00001, 1.5, 20),
        )
        self._binding_duration = _Histogram(
            "scheduler_binding_duration_seconds",
            "[ALPHA] Binding latency in seconds",
            ("result",),
            exponential_buckets(0.001, 2, 15),
        )
        self._leader = _Gauge(
            "leader_election_master_status",
            "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
            "indicates backup, 1 indicates master. 'name' is the string used to identify the "
            "lease. Please make sure to group by name.",
            ("name",),
        )
        self._families: tuple[_Family, ...] = (
            self._schedule_attempts,
            self._attempt_duration,
            self._pending_pods,
            self._extension_point_duration,
            self._plugin_duration,
            self._binding_duration,
            self._leader,
        )

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt: ``scheduler_schedule_attempts_total`` and
        ``scheduler_scheduling_attempt_duration_seconds``, by ``result`` and ``profile``."""
        self._schedule_attempts.inc((result, profile))
        self._attempt_duration.observe((result, profile), seconds)

    def extension_point(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        """All plugins of one extension point, once:
        ``scheduler_framework_extension_point_duration_seconds``."""
        self._extension_point_duration.observe((extension_point, status, profile), seconds)

    def plugin(self, plugin: str, extension_point: str, status: str, seconds: float) -> None:
        """One plugin at one extension point: ``scheduler_plugin_execution_duration_seconds``.

        kube-scheduler records this for a sample of cycles only (10%), as it is the costliest
        metric to keep; sampling is the caller's choice here.
        """
        self._plugin_duration.observe((plugin, extension_point, status), seconds)

    def set_pending(self, counts: Mapping[str, int]) -> None:
        """``scheduler_pending_pods`` for each queue in ``counts``; other queues keep theirs."""
        for queue, count in counts.items():
            self._pending_pods.set((queue,), count)

    def binding(self, result: str, seconds: float) -> None:
        """One binding API call (POST ``pods/binding``): ``scheduler_binding_duration_seconds``.

        The name, help and buckets are kube-scheduler's up to v1.20; kube removed it
        (kubernetes/kubernetes#96447) in favour of
        ``scheduler_framework_extension_point_duration_seconds{extension_point="Bind"}``, which
        :meth:`extension_point` records. The ``result`` label (``success`` or ``error``) is ours.
        """
        self._binding_duration.observe((result,), seconds)

    def set_leader(self, is_leader: bool, name: str = "kube-scheduler") -> None:
        """client-go's ``leader_election_master_status{name}``: 1 while leading, else 0.

        kube-scheduler names its election ``kube-scheduler`` whatever the Lease is called.
        """
        self._leader.set((name,), 1.0 if is_leader else 0.0)

    def render(self) -> bytes:
        """Every metric with at least one sample, in the text exposition format 0.0.4."""
        lines = [line for family in self._families for line in family.render()]
        return ("\n".join(lines) + "\n").encode() if lines else b""
