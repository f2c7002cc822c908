"""Runs against the control plane: every case, every contender, alternating, several rounds.

A run starts from a clean namespace (the nodes stay), starts one contender, has the pods
created, waits until every one is bound, reads the figures, stops the contender and deletes the
pods. Rounds rotate the contenders' order (ceiling, reference, kubesched; then reference,
kubesched, ceiling; …) so drift on a busy machine spreads over all of them; each figure is the
median over the rounds.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .churn import Churn
from .cluster import BenchCluster, WriteCounter
from .contenders import CONTENDERS, Running, scheduler_name, start_contender
from .measure import (
    PodWatch,
    RssSampler,
    event_objects_by_pod,
    measured_writes,
    percentile,
    proc_sample,
    rss_growth,
)
from .pinning import Placement, pin
from .workloads import Case

__all__ = ["CaseResult", "RunResult", "contenders_for", "rotation", "run_case"]

log = logging.getLogger("bench")


@dataclass
class RunResult:
    """One contender's figures for one run of one case."""

    contender: str
    round: int
    pods: int
    bound: int
    #: The measured window: creation start (burst) or first binding (backlog) → last binding.
    seconds: float
    pods_per_second: float
    #: Creation → binding, milliseconds (burst only).
    p50_ms: float | None
    p99_ms: float | None
    cpu_seconds: float
    peak_rss_mb: float
    #: etcd + kube-apiserver CPU over the same window.
    apiserver_cpu_seconds: float
    #: How fast the harness created the pods (burst), for judging whether creation capped a run.
    created_per_second: float | None
    events: int
    attempts: dict[str, float]
    startup_seconds: float
    #: First creationTimestamp → last PodScheduled transition as the apiserver stamped them
    #: (whole seconds): a cross-check of ``seconds``.
    server_span_seconds: float | None = None
    #: Times the harness's watch was started again (the apiserver ends watches that fall behind).
    watch_restarts: int = 0
    #: The contender's API writes over the run by kind (bindings, events, pod status, pod
    #: deletes, claims and volumes, …), from the apiserver's request counters once the events
    #: had settled, less the harness's own writes.
    writes: dict[str, float] = field(default_factory=dict)
    #: The contender's RSS (MB) once a second while it scheduled, and while the churn went on
    #: after its last binding (churn workloads).
    rss_samples: list[float] = field(default_factory=list)
    rss_after_samples: list[float] = field(default_factory=list)
    #: Objects the churn created over the run.
    churn_ticks: int = 0
    #: Of ``writes``, those about the measured pods (runs with churned pods only): see
    #: :func:`bench.measure.measured_writes`. The rest are the churned pods'.
    measured_writes: dict[str, float] = field(default_factory=dict)
    #: Backlog runs: the contender's ready (caches synced, every pod waiting) → its last
    #: binding. The time before its first binding counts too: a scheduler that decides many
    #: pods before binding any (asynchronous preemption) has a short first → last window.
    ready_to_last_seconds: float | None = None

    @property
    def complete(self) -> bool:
        return self.bound == self.pods

    @property
    def from_ready_seconds(self) -> float | None:
        """Backlog runs: from the contender's ready, or from its first binding when that came
        first, to its last binding. kube-scheduler schedules the moment its caches are
        synced, while the harness polls its /readyz every 0.1 s: it may bind pods before the
        harness sees it ready, and a window that began only then would leave them out (its
        first binding came up to 0.15 s before; Mixed 1,000 / 200: 0.331 s from ready against
        0.485 first → last)."""
        if not self.ready_to_last_seconds:
            return None
        return max(self.ready_to_last_seconds, self.seconds)

    def pods_handled(self) -> int:
        """The measured pods bound plus the pods the churn created meanwhile: a contender that
        takes longer is handed more churned pods, each of which it must write about."""
        return max(self.bound + self.churn_ticks, 1)

    def writes_per_pod(self) -> float:
        """API writes per pod handled: every write the apiserver counted for the contender
        (Bindings, Events, status patches, preemption's deletions, claim and volume updates);
        runs recorded before those counters were read count Bindings and Events only."""
        if self.writes:
            return sum(self.writes.values()) / self.pods_handled()
        return (self.bound + self.events) / max(self.bound, 1)

    def writes_per_measured_pod(self) -> float | None:
        """API writes per measured pod bound (``None``: not counted apart in this run)."""
        if not self.measured_writes:
            return None
        return sum(self.measured_writes.values()) / max(self.bound, 1)

    def writes_per_churned_pod(self) -> float | None:
        """API writes per pod the churn created: the run's writes less the measured pods'."""
        if not self.measured_writes or not self.churn_ticks:
            return None
        rest = sum(self.writes.values()) - sum(self.measured_writes.values())
        return max(rest, 0.0) / self.churn_ticks

    def rss_growth(self) -> float | None:
        """Relative RSS growth over the churn after the last binding (``None``: no churn)."""
        return rss_growth(self.rss_after_samples)

    def cpu_per_1000(self) -> float:
        return self.cpu_seconds / max(self.bound, 1) * 1000

    def apiserver_cpu_per_1000(self) -> float:
        return self.apiserver_cpu_seconds / max(self.bound, 1) * 1000


@dataclass
class CaseResult:
    """Every run of one case, and the medians per contender."""

    key: str
    title: str
    workload: str
    nodes: int
    pods: int
    arrival: str
    runs: list[RunResult] = field(default_factory=list)
    node_setup_seconds: float = 0.0
    #: Why the case stopped before every run was done ("" when it was not).
    error: str = ""

    def of(self, contender: str) -> list[RunResult]:
        return [r for r in self.runs if r.contender == contender]

    def median(self, contender: str, figure: Callable[[RunResult], float | None]) -> float | None:
        values = [v for r in self.of(contender) if (v := figure(r)) is not None]
        return statistics.median(values) if values else None

    def peak_rss_mb(self, contender: str) -> float | None:
        values = [r.peak_rss_mb for r in self.of(contender)]
        return max(values) if values else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for run, data in zip(self.runs, out["runs"], strict=True):
            data["complete"] = run.complete
            data["cpu_per_1000"] = run.cpu_per_1000()
            data["apiserver_cpu_per_1000"] = run.apiserver_cpu_per_1000()
        return out


def rotation(round_index: int, contenders: tuple[str, ...] = CONTENDERS) -> list[str]:
    """The contenders' order in round ``round_index``: rotated by one every round."""
    shift = round_index % len(contenders)
    return list(contenders[shift:] + contenders[:shift])


def _cpu(pids: list[int]) -> float:
    return sum(proc_sample(pid).cpu_seconds for pid in pids)


#: Seconds the mixed churn goes on after the last binding, RSS sampled, and its pace then.
CHURN_AFTER_SECONDS = 30.0
CHURN_AFTER_INTERVAL = 0.1


def run_once(
    cluster: BenchCluster,
    case: Case,
    contender: str,
    round_index: int,
    workdir: Path,
    timeout: float,
    placement: Placement | None = None,
) -> RunResult:
    assert cluster.transport is not None
    run = f"{case.key}-{round_index}"
    name = scheduler_name(contender)
    pods = case.workload.pods(case.pods, name, run)
    cluster.create_run_objects(case)
    watch = PodWatch(cluster.transport, cluster.namespace, cluster.resource_version()).start()
    api_pids = cluster.apiserver_cpu_pids()
    running: Running | None = None
    created: tuple[float, float] | None = None
    ready_at = 0.0
    churn: Churn | None = None
    sampler: RssSampler | None = None
    after: list[float] = []
    try:
        if case.arrival == "backlog":
            created = cluster.create_pods(pods)
        counter = WriteCounter(cluster)
        running = start_contender(contender, cluster.control_plane, workdir, cluster.namespace)
        if placement is not None:
            pin(running.pid, placement.contender)
        sampler = RssSampler(running.pid).start()
        if case.workload.churn:
            churn = Churn(case.workload.churn, cluster.transport, cluster.namespace, name, run)
            churn.start()
        before, api_before = proc_sample(running.pid), _cpu(api_pids)
        ready_at = time.monotonic()
        if case.arrival == "burst":
            created = cluster.create_pods(pods)
        watch.wait_bound(len(pods), timeout)
        end, api_after = proc_sample(running.pid), _cpu(api_pids)
        during = list(sampler.stop())
        if churn is not None and case.workload.churn == "mixed":
            # Memory must stay flat while objects come and go: go on churning, faster.
            churn.interval = CHURN_AFTER_INTERVAL
            sampler = RssSampler(running.pid).start()
            time.sleep(CHURN_AFTER_SECONDS)
            after = sampler.stop()
        if churn is not None:
            churn.stop()
        # Counted once the events have settled: a recorder that falls behind must not look
        # cheaper than one that writes every event.
        events = cluster.settled_event_count()
        writes = counter.writes(harness_deletes=churn.deletes if churn else 0)
        # Pods of two kinds: the measured pods' writes apart, so that contenders handed other
        # mixes of them are compared kind for kind.
        measured = (
            measured_writes(watch, event_objects_by_pod(cluster.transport, cluster.namespace))
            if churn is not None
            else {}
        )
        attempts = running.attempts()
        server_span = cluster.server_span()
    finally:
        if sampler is not None:
            sampler.stop()
        if churn is not None:
            churn.stop()
        if running is not None:
            running.stop()
        watch.stop()
    if watch.error:
        log.warning("%s: pod watch reported: %s", contender, watch.error)
    bound = sorted(watch.bound.values())
    if case.arrival == "burst" and created is not None:
        start = created[0]
        latencies = [(t - watch.added[name]) * 1000 for name, t in watch.bound.items()]
        p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
        created_rate = len(pods) / max(created[1] - created[0], 1e-9)
        count = len(bound)
    else:
        start = bound[0] if bound else time.monotonic()
        p50 = p99 = created_rate = None
        count = max(len(bound) - 1, 0)  # the first binding opens the window
    seconds = (bound[-1] - start) if bound else 0.0
    ready_to_last = (
        bound[-1] - ready_at if case.arrival == "backlog" and bound and ready_at else None
    )
    return RunResult(
        contender=contender,
        round=round_index,
        pods=len(pods),
        bound=len(bound),
        seconds=seconds,
        pods_per_second=count / seconds if seconds > 0 else 0.0,
        p50_ms=p50,
        p99_ms=p99,
        cpu_seconds=end.cpu_seconds - before.cpu_seconds,
        peak_rss_mb=max(end.peak_rss_bytes / 2**20, *during, *after, 0.0),
        apiserver_cpu_seconds=api_after - api_before,
        created_per_second=created_rate,
        events=events,
        attempts=attempts,
        startup_seconds=running.startup_seconds if running else 0.0,
        server_span_seconds=server_span,
        watch_restarts=watch.restarts,
        writes=writes,
        rss_samples=[round(v, 1) for v in during],
        rss_after_samples=[round(v, 1) for v in after],
        churn_ticks=churn.ticks if churn else 0,
        measured_writes=measured,
        ready_to_last_seconds=ready_to_last,
    )


def contenders_for(case: Case, contenders: tuple[str, ...]) -> tuple[str, ...]:
    """``contenders`` without the binding ceiling where it means nothing (it ignores every
    constraint, so it is a bound for SchedulingBasic only)."""
    if case.workload.ceiling:
        return contenders
    return tuple(c for c in contenders if c != "ceiling") or contenders


def run_case(
    cluster: BenchCluster,
    case: Case,
    rounds: int,
    workdir: Path,
    contenders: tuple[str, ...] = CONTENDERS,
    progress: Callable[[str], None] = print,
    placement: Placement | None = None,
) -> CaseResult:
    """Every contender ``rounds`` times on ``case``, alternating."""
    result = CaseResult(
        case.key, case.title, case.workload.name, case.nodes, case.pods, case.arrival
    )
    result.node_setup_seconds = cluster.ensure_nodes(case.workload, case.nodes)
    cluster.delete_pods()
    result.node_setup_seconds += cluster.ensure_pod_objects(case)
    if result.node_setup_seconds:
        progress(f"  nodes and volumes set up in {result.node_setup_seconds:.1f}s")
    if not case.workload.needs_pv_controller:
        cluster.stop_pv_controller()
    timeout = max(120.0, case.pods / 5)
    contenders = contenders_for(case, contenders)
    for round_index in range(rounds):
        for contender in rotation(round_index, contenders):
            placing = cluster.ensure_init_pods(case)
            if placing:
                progress(f"  placed {case.workload.name}'s init pods in {placing:.1f}s")
            run = run_once(cluster, case, contender, round_index, workdir, timeout, placement)
            result.runs.append(run)
            cleanup = cluster.delete_pods()
            latency = (
                f", p50 {run.p50_ms:.0f} ms, p99 {run.p99_ms:.0f} ms"
                if run.p50_ms is not None and run.p99_ms is not None
                else ""
            )
            progress(
                f"  {case.key} round {round_index + 1}/{rounds} {contender:9}: "
                f"{run.bound}/{run.pods} bound, {run.pods_per_second:.0f} pods/s{latency}, "
                f"CPU {run.cpu_per_1000():.2f} s/1000, RSS {run.peak_rss_mb:.0f} MB "
                f"(cleanup {cleanup:.1f}s)"
            )
    return result
