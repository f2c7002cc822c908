"""``kubesched simulate``: schedule the pending pods of a cluster file, offline.

The same :class:`~kubesched.engine.scheduler.Scheduler` as in a cluster, over the in-memory backend,
with a virtual clock: backoffs pass instantly, so a run is fast and, with a seed, repeatable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Pod
from kubesched.backends.memory import InMemoryBackend
from kubesched.config import SchedulerConfiguration
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.gc_tuning import tune_after_initial_sync

__all__ = ["PodOutcome", "SimulationResult", "VirtualClock", "queue_order", "simulate"]


class VirtualClock:
    """A clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _created(pod: Pod) -> float | None:
    stamp = (pod.raw.get("metadata") or {}).get("creationTimestamp")
    if isinstance(stamp, str) and stamp:
        try:
            stamp = datetime.fromisoformat(stamp)
        except ValueError:
            return None
    if not isinstance(stamp, datetime):  # YAML reads an unquoted timestamp as a datetime
        return None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).timestamp()


def queue_order(pods: Iterable[Pod]) -> list[Pod]:
    """``pods`` in the order a scheduler that watched the cluster all along queued them: by
    ``metadata.creationTimestamp`` (a pod is queued when it is created), then as listed. A pod
    without one (a manifest written by hand) counts as created after every pod that has one.

    With PrioritySort this is kube-scheduler's order for pods of equal priority: by queue
    timestamp, and ties in the order they were queued (the queue's sequence number).
    """
    indexed = list(enumerate(pods))
    indexed.sort(key=lambda item: (_created(item[1]) is None, _created(item[1]) or 0.0, item[0]))
    return [pod for _, pod in indexed]


@dataclass
class PodOutcome:
    namespace: str
    name: str
    scheduler_name: str
    node: str | None
    message: str = ""


@dataclass
class SimulationResult:
    pods: list[PodOutcome] = field(default_factory=list)
    #: Pending pods no profile serves, by their ``schedulerName`` (left alone, as a scheduler
    #: leaves pods that ask for another one).
    left_alone: dict[str, int] = field(default_factory=dict)

    @property
    def scheduled(self) -> int:
        return sum(1 for p in self.pods if p.node is not None)

    @property
    def unschedulable(self) -> int:
        return sum(1 for p in self.pods if p.node is None)

    def to_dict(self) -> dict[str, object]:
        return {
            "pods": [
                {
                    "namespace": p.namespace,
                    "name": p.name,
                    "schedulerName": p.scheduler_name,
                    "node": p.node,
                    "message": p.message,
                }
                for p in self.pods
            ],
            "summary": {
                "scheduled": self.scheduled,
                "unschedulable": self.unschedulable,
                "leftAlone": dict(self.left_alone),
            },
        }

    def left_alone_text(self) -> str:
        """``7 left alone (schedulerName default-scheduler: 7; …)``, or ``""`` when none is."""
        if not self.left_alone:
            return ""
        names = ", ".join(f"{name}: {count}" for name, count in sorted(self.left_alone.items()))
        them = "it" if len(self.left_alone) == 1 else "them"
        return (
            f"{sum(self.left_alone.values())} left alone (schedulerName {names}; no profile "
            f"serves {them}: --scheduler-name NAME or a profile of that name schedules them)"
        )


def simulate(
    cluster: Cluster,
    config: SchedulerConfiguration,
    registry: Registry,
    seed: int | None = 0,
    max_rounds: int = 100_000,
    *,
    on_scheduler: Callable[[Scheduler], object] | None = None,
    tune_gc: bool = False,
) -> SimulationResult:
    """Schedule every pending pod that a profile owns; report each one's node or message.

    ``on_scheduler`` is given the scheduler before it starts (``kubesched explain`` attaches its
    recorder there). ``tune_gc`` applies :mod:`kubesched.service.gc_tuning` while it runs (the CLI
    and
    the benchmarks do; it is process-wide, so it is undone at the end).
    """
    clock = VirtualClock()
    # Succeeded and Failed pods are invisible to kube-scheduler (its pod informer's field
    # selector): they neither hold resources nor get scheduled.
    live = [pod for pod in queue_order(cluster.pods) if not pod.is_terminated]
    backend = InMemoryBackend(cluster.nodes, live, cluster.objects)
    scheduler = Scheduler(
        config, backend, registry, clock=clock, seed=seed, inline_binding=True, wait_on_clock=True
    )
    if on_scheduler is not None:
        on_scheduler(scheduler)
    progress, last_progress = (0, 0), 0.0
    undo_gc_tuning: Callable[[], None] | None = None
    try:
        scheduler.start()
        if tune_gc:
            undo_gc_tuning = tune_after_initial_sync()
        for _ in range(max_rounds):
            while scheduler.schedule_one(timeout=0):
                pass
            scheduler.wait_for_bindings()
            if scheduler.queue.pending()["active"]:
                continue
            expiry = scheduler.next_wakeup()
            if expiry is None:
                break
            # Only bindings and deletions change an in-memory cluster: once a whole maximum
            # backoff passes without either, every pod in backoff has failed again on the
            # cluster as it is, and retrying cannot help. Pods held at Permit (a gang) free
            # their room when their wait times out: two of the longest waits are allowed for,
            # so that what was refused for that room gets its retry.
            now = (sum(1 for a in scheduler.attempts.values() if a.node_name), len(backend.pods))
            if now != progress:
                progress, last_progress = now, clock.now
            elif (
                clock.now - last_progress
                > config.pod_max_backoff_seconds + 2 * scheduler.longest_wait
            ):
                break
            clock.now = max(clock.now, expiry)
            scheduler.expire_waits()
    finally:
        scheduler.stop()
        if undo_gc_tuning is not None:
            undo_gc_tuning()
    gated = {info.pod.uid: info for info in scheduler.queue.parked() if info.gating_plugin}
    result = SimulationResult()
    for pod in cluster.pods:
        if pod.node_name or pod.is_terminated:
            continue
        if pod.scheduler_name not in scheduler.frameworks:
            if not pod.deletion_timestamp:
                name = pod.scheduler_name
                result.left_alone[name] = result.left_alone.get(name, 0) + 1
            continue
        bound = backend.pods.get(pod.uid)
        attempt = scheduler.attempts.get(pod.uid)
        if bound is not None and bound.node_name:
            result.pods.append(
                PodOutcome(pod.namespace, pod.name, pod.scheduler_name, bound.node_name)
            )
        elif pod.uid in gated:
            result.pods.append(
                PodOutcome(
                    pod.namespace, pod.name, pod.scheduler_name, None, gated[pod.uid].gating_message
                )
            )
        else:
            message = attempt.message if attempt is not None else "not attempted"
            held = scheduler.waiting_pods.get(pod.uid)
            if held is not None and not held.done:
                message = (
                    f"waiting at Permit for {', '.join(held.pending_plugins())} when the "
                    "simulation stopped (nothing changed for the longest wait twice over)"
                )
            result.pods.append(
                PodOutcome(pod.namespace, pod.name, pod.scheduler_name, None, message)
            )
    return result
