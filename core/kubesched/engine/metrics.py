"""kube-scheduler's metrics, kept by ``prometheus_client`` in a registry per scheduler.

The names, labels, help texts and buckets are kube-scheduler's (``pkg/scheduler/metrics/
metrics.go``) and client-go's leader election's, so dashboards and alerts written for
kube-scheduler work unchanged. As in component-base, each help text starts with the metric's
stability level. Each :class:`SchedulerMetrics` has its own ``CollectorRegistry``: two schedulers
in one process (tests, ``extender serve``) never share a sample.

Plugin durations are kube's sampled, asynchronous kind: the framework times the plugins of a
fraction of cycles (:data:`PLUGIN_METRICS_SAMPLE_PERCENT`), :meth:`SchedulerMetrics.plugin` only
appends to a buffer of at most :data:`PLUGIN_BUFFER_SIZE` observations (more are dropped, as
kube's ``MetricAsyncRecorder`` drops them), and the buffer goes into the histogram at
:meth:`SchedulerMetrics.flush` — every second from the scheduling loop, and before each scrape.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.status import Code

__all__ = [
    "CONTENT_TYPE",
    "PLUGIN_BUFFER_SIZE",
    "PLUGIN_METRICS_SAMPLE_PERCENT",
    "STATUS_LABELS",
    "SchedulerMetrics",
    "event_label",
    "exponential_buckets",
    "status_label",
]

# kube-scheduler exposes no ``*_created`` series; neither do we (fewer lines per scrape, too).
prometheus_client.disable_created_metrics()

#: The ``Content-Type`` of :meth:`SchedulerMetrics.render`'s output (the text format 0.0.4,
#: which kube-scheduler serves and every Prometheus reads).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: kube-scheduler's ``pluginMetricsSamplePercent``: the share of scheduling cycles whose plugin
#: calls are timed into ``scheduler_plugin_execution_duration_seconds``.
PLUGIN_METRICS_SAMPLE_PERCENT = 10

#: kube-scheduler's ``NewMetricsAsyncRecorder(1000, time.Second, ...)``: plugin observations
#: buffered between two flushes; beyond it they are dropped.
PLUGIN_BUFFER_SIZE = 1000

#: kube-scheduler's ``Code.String()``: the ``status`` label values.
STATUS_LABELS: Mapping[Code, str] = {code: code.kube_name for code in Code}


#: kube-scheduler's ``event`` labels of ``scheduler_queue_incoming_pods_total`` for what is not a
#: cluster event: a new pod, a failed attempt, an ended backoff, ``Activate``, and the pool's
#: time limit.
INCOMING_POD_ADD = "PodAdd"
INCOMING_SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
INCOMING_BACKOFF_COMPLETE = "BackoffComplete"
INCOMING_FORCE_ACTIVATE = "ForceActivate"
INCOMING_UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

#: kube's resource names where ours differ (its ``unschedulablePod``).
_RESOURCE_LABELS = {EventResource.UNSCHEDULED_POD: "UnschedulablePod"}
_ACTION_LABELS: dict[ActionType, str] = {
    ActionType.ALL: "All",
    ActionType.UPDATE: "Update",
    ActionType.UPDATE_OBJECT: "Update",
}


def _action_label(action: ActionType) -> str:
    known = _ACTION_LABELS.get(action)
    if known is not None:
        return known
    # UPDATE_NODE_LABEL -> UpdateNodeLabel; several actions joined by "|", as kube's String().
    return "|".join(
        "".join(word.capitalize() for word in (flag.name or "").split("_"))
        for flag in ActionType
        if flag in action and flag.value.bit_count() == 1
    )


def event_label(event: ClusterEvent) -> str:
    """kube's ``ClusterEvent.Label()``: the resource then the action (``NodeAdd``,
    ``AssignedPodDelete``, ``NodeUpdateNodeTaint``)."""
    resource = _RESOURCE_LABELS.get(event.resource, event.resource.value)
    return f"{resource}{_action_label(event.action)}"


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


class SchedulerMetrics:
    """The scheduler's metrics: record with the methods below, expose with :meth:`render`.

    Every method is safe to call from any thread. Label values are kube-scheduler's: results
    ``scheduled``, ``unschedulable``, ``error``; statuses from :func:`status_label` (``Success``,
    ``Error``, ``Unschedulable``, ``UnschedulableAndUnresolvable``, ``Wait``, ``Skip``,
    ``Pending``); extension points ``PreFilter``, ``Filter``, ..., ``Bind``, ``PostBind``; queues
    ``active``, ``backoff``, ``unschedulable``, ``gated``.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        registry = self.registry
        self._schedule_attempts = Counter(
            "scheduler_schedule_attempts",
            "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means "
            "a pod could not be scheduled, while 'error' means an internal scheduler problem.",
            ("result", "profile"),
            registry=registry,
        )
        self._attempt_duration = Histogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ("result", "profile"),
            buckets=exponential_buckets(0.001, 2, 15),
            registry=registry,
        )
        self._pending_pods = Gauge(
            "scheduler_pending_pods",
            "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods "
            "in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means "
            "number of pods in unschedulablePods that the scheduler attempted to schedule and "
            "failed; 'gated' is the number of unschedulable pods that the scheduler never "
            "attempted to schedule because they are gated.",
            ("queue",),
            registry=registry,
        )
        self._extension_point_duration = Histogram(
            "scheduler_framework_extension_point_duration_seconds",
            "[STABLE] Latency for running all plugins of a specific extension point.",
            ("extension_point", "status", "profile"),
            buckets=exponential_buckets(0.0001, 2, 12),
            registry=registry,
        )
        self._plugin_duration = Histogram(
            "scheduler_plugin_execution_duration_seconds",
            "[ALPHA] Duration for running a plugin at a specific extension point.",
            ("plugin", "extension_point", "status"),
            buckets=exponential_buckets(0.00001, 1.5, 20),
            registry=registry,
        )
        self._binding_duration = Histogram(
            "scheduler_binding_duration_seconds",
            "[ALPHA] Binding latency in seconds",
            ("result",),
            buckets=exponential_buckets(0.001, 2, 15),
            registry=registry,
        )
        self._queue_incoming = Counter(
            "scheduler_queue_incoming_pods",
            "[STABLE] Number of pods added to scheduling queues by event and queue type.",
            ("queue", "event"),
            registry=registry,
        )
        self._leader = Gauge(
            "leader_election_master_status",
            "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 "
            "indicates backup, 1 indicates master. 'name' is the string used to identify the "
            "lease. Please make sure to group by name.",
            ("name",),
            registry=registry,
        )
        # (plugin, extension_point, status, seconds) waiting for flush(); list.append is
        # atomic, and flush() swaps the list under the lock.
        self._plugin_buffer: list[tuple[str, str, str, float]] = []
        self._flush_lock = threading.Lock()
        #: Plugin observations dropped because the buffer was full (kube drops them silently).
        self.plugin_observations_dropped = 0
        # Children by label values: ``labels()`` costs more than the observation itself, and
        # the hot paths (every extension point of every cycle) reuse a handful of them.
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}

    def _child(self, metric: Any, values: tuple[str, ...]) -> Any:
        key = (id(metric), values)
        child = self._children.get(key)
        if child is None:  # a race only makes labels() return the same child twice
            child = self._children[key] = metric.labels(*values)
        return child

    def attempt(self, result: str, profile: str, seconds: float) -> None:
        """One scheduling attempt: ``scheduler_schedule_attempts_total`` and
        ``scheduler_scheduling_attempt_duration_seconds``, by ``result`` and ``profile``."""
        self._child(self._schedule_attempts, (result, profile)).inc()
        self._child(self._attempt_duration, (result, profile)).observe(seconds)

    def extension_point(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        """All plugins of one extension point, once:
        ``scheduler_framework_extension_point_duration_seconds``."""
        point = self._child(self._extension_point_duration, (extension_point, status, profile))
        point.observe(seconds)

    def plugin(self, plugin: str, extension_point: str, status: str, seconds: float) -> None:
        """One plugin call at one extension point, for
        ``scheduler_plugin_execution_duration_seconds``: buffered until :meth:`flush` (kube's
        ``ObservePluginDurationAsync``); dropped when :data:`PLUGIN_BUFFER_SIZE` are waiting.

        The framework calls this for the sampled cycles only (kube's
        ``ShouldRecordPluginMetrics``)."""
        buffer = self._plugin_buffer
        if len(buffer) >= PLUGIN_BUFFER_SIZE:
            self.plugin_observations_dropped += 1
            return
        buffer.append((plugin, extension_point, status, seconds))

    def plugin_buffer_has_room(self) -> bool:
        """Whether :meth:`plugin` would keep an observation now (the framework times plugin
        calls only then)."""
        return len(self._plugin_buffer) < PLUGIN_BUFFER_SIZE

    def flush(self) -> None:
        """Move the buffered plugin observations into their histogram."""
        with self._flush_lock:
            buffered, self._plugin_buffer = self._plugin_buffer, []
            histogram, child_of = self._plugin_duration, self._child
            for plugin, point, status, seconds in buffered:
                child_of(histogram, (plugin, point, status)).observe(seconds)

    def queue_incoming(self, queue: str, event: str) -> None:
        """A pod entered ``queue`` (``active``, ``backoff``, ``unschedulable``) because of
        ``event``: ``scheduler_queue_incoming_pods_total``."""
        self._child(self._queue_incoming, (queue, event)).inc()

    def set_pending(self, counts: Mapping[str, int]) -> None:
        """``scheduler_pending_pods`` for each queue in ``counts``; other queues keep theirs."""
        for queue, count in counts.items():
            self._pending_pods.labels(queue).set(count)

    def binding(self, result: str, seconds: float) -> None:
        """One binding API call (POST ``pods/binding``): ``scheduler_binding_duration_seconds``.

        The name, help and buckets are kube-scheduler's up to v1.20; kube removed it
        (kubernetes/kubernetes#96447) in favour of
        ``scheduler_framework_extension_point_duration_seconds{extension_point="Bind"}``, which
        :meth:`extension_point` records. The ``result`` label (``success`` or ``error``) is ours.
        """
        self._child(self._binding_duration, (result,)).observe(seconds)

    def set_leader(self, is_leader: bool, name: str = "kube-scheduler") -> None:
        """client-go's ``leader_election_master_status{name}``: 1 while leading, else 0.

        kube-scheduler names its election ``kube-scheduler`` whatever the Lease is called.
        """
        self._leader.labels(name).set(1.0 if is_leader else 0.0)

    def render(self) -> bytes:
        """Every metric in the text exposition format 0.0.4 (buffered observations included)."""
        self.flush()
        return generate_latest(self.registry)
