"""The scheduling queue: activeQ, backoffQ and the unschedulable pool.

- activeQ is a heap ordered by the QueueSort plugin; ``pop`` blocks until a pod is there.
- A pod that failed with an Error, or was rejected while a relevant event arrived during its
  cycle, waits out its backoff (initial × 2^(attempts−1), capped) in backoffQ.
- A pod rejected by plugins waits in the unschedulable pool until an event one of those plugins
  registered (and whose hint says Queue) arrives, or at most ``max_unschedulable_seconds``.
- A pod gated by PreEnqueue also waits in the pool, without counting as an attempt. The gating
  plugin joins the pod's rejectors (as in kube-scheduler): an event the gating plugin registered
  moves the pod when the hint of any rejector (the gating plugin, or a plugin that rejected the
  pod in its last cycle) says Queue, and PreEnqueue then decides whether it passes. Released,
  it goes where any moved pod goes: to backoffQ while a backoff from an earlier attempt runs,
  else to activeQ (a pod never attempted has no backoff).
- ``activate`` moves pods from the pool or backoffQ to activeQ at once (kube's ``Activate``).

Events that arrive while a pod is in its scheduling cycle are logged and checked when the pod
comes back, so none is lost.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import Pod
from kubesched.engine.extender import EXTENDER_NAME
from kubesched.engine.metrics import (
    INCOMING_BACKOFF_COMPLETE,
    INCOMING_FORCE_ACTIVATE,
    INCOMING_POD_ADD,
    INCOMING_SCHEDULE_ATTEMPT_FAILURE,
    INCOMING_UNSCHEDULABLE_TIMEOUT,
    SchedulerMetrics,
    event_label,
)
from kubesched.engine.nominator import Nominator
from kubesched.framework.events import ActionType, ClusterEvent, EventResource, QueueingHint
from kubesched.framework.results import QueuedPodInfo

if TYPE_CHECKING:
    from kubesched.engine.runtime import Framework

__all__ = ["DEFAULT_MAX_UNSCHEDULABLE_SECONDS", "SchedulingQueue"]

log = logging.getLogger(__name__)

DEFAULT_MAX_UNSCHEDULABLE_SECONDS = 300.0

#: kube's ``EventForceActivate``: logged by ``activate`` for a pod in its scheduling cycle, with
#: the pod as the new object, so that only that pod is retried when it comes back.
_FORCE_ACTIVATE = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)


def pod_group_key(pod: Pod) -> tuple[str, str] | None:
    """The pod's group (``spec.schedulingGroup.podGroupName``, scheduling.k8s.io/v1beta1) with
    its namespace; ``None`` for a pod in no group."""
    group = (pod.raw.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return (pod.namespace, name) if isinstance(name, str) and name else None


class _ActiveEntry:
    """A heap entry ordered by the QueueSort plugin's ``less``, then by when it was queued.

    Pods the plugin finds equal (same priority and timestamp: every pod of a cluster file is
    queued at virtual time 0) leave in the order they were queued, never in whatever order the
    heap's internals happen to leave them (``seq``).
    """

    __slots__ = ("info", "less", "live", "seq")

    def __init__(
        self,
        info: QueuedPodInfo,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        seq: int,
    ):
        self.info, self.less, self.live, self.seq = info, less, True, seq

    def __lt__(self, other: _ActiveEntry) -> bool:
        if self.less(self.info, other.info):
            return True
        if self.less(other.info, self.info):
            return False
        return self.seq < other.seq


@dataclass(slots=True)
class _LoggedEvent:
    event: ClusterEvent
    old: Any
    new: Any
    #: For an update of one pending pod: only that pod may be moved by it.
    target_uid: str = ""


class SchedulingQueue:
    """Thread-safe queue of pending pods for every profile of one scheduler."""

    def __init__(
        self,
        frameworks: Mapping[str, Framework],
        clock: Callable[[], float] = time.monotonic,
        initial_backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 10.0,
        max_unschedulable_seconds: float = DEFAULT_MAX_UNSCHEDULABLE_SECONDS,
        nominator: Nominator | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        """``nominator``: where nominated pods are kept (the scheduler passes the one its
        profiles' handles read); a new one when left out. ``metrics``: where pods entering
        activeQ, backoffQ and the pool are counted (``scheduler_queue_incoming_pods_total``)."""
        self._frameworks = frameworks
        first = next(iter(frameworks.values()), None)
        self._less = first.less if first is not None else (lambda a, b: a.timestamp < b.timestamp)
        self._events = {name: fw.events_to_register() for name, fw in frameworks.items()}
        self._registered: dict[ClusterEvent, bool] = {}
        self.clock = clock
        self.initial_backoff = initial_backoff_seconds
        self.max_backoff = max_backoff_seconds
        self.max_unschedulable = max_unschedulable_seconds
        self._cond = threading.Condition()
        self._active: list[_ActiveEntry] = []
        self._active_by_uid: dict[str, _ActiveEntry] = {}
        self._backoff: list[tuple[float, int, str]] = []
        self._backoff_by_uid: dict[str, QueuedPodInfo] = {}
        self._unschedulable: dict[str, tuple[QueuedPodInfo, float]] = {}
        self._in_flight: dict[str, int] = {}
        self._deleted_in_flight: set[str] = set()
        #: The latest version of in-flight pods that changed during their cycle.
        self._updated_in_flight: dict[str, Pod] = {}
        self._log: list[_LoggedEvent] = []
        self._log_base = 0
        self._seq = itertools.count()
        self._closed = False
        #: The pod group (namespace, name) of the pod popped last, while more may follow.
        self._group: tuple[str, str] | None = None
        self.scheduling_cycle = 0
        #: Pods nominated to nodes by preemption (read by Filter through the handle).
        self.nominator = nominator if nominator is not None else Nominator()
        self._metrics = metrics

    # -- entering the queue ----------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        """A new pending pod (or one seen again after a re-list)."""
        if pod.nominated_node_name:
            self.nominator.update(pod)
        with self._cond:
            if pod.uid in self._in_flight:
                self._updated_in_flight[pod.uid] = pod
                return
            if self._knows(pod.uid):
                self._replace_pod(pod)
                return
            now = self.clock()
            info = QueuedPodInfo(pod, timestamp=now, initial_attempt_timestamp=now)
            self._enqueue_checked(info, INCOMING_POD_ADD)

    def _knows(self, uid: str) -> bool:
        return (
            uid in self._active_by_uid
            or uid in self._backoff_by_uid
            or uid in self._unschedulable
            or uid in self._in_flight
        )

    def _incoming(self, queue: str, event: str) -> None:
        if self._metrics is not None:
            self._metrics.queue_incoming(queue, event)

    def _enqueue_checked(self, info: QueuedPodInfo, event: str) -> None:
        """Run PreEnqueue; park the pod gated, or push it to activeQ (``event``: why it came,
        kube's label for ``scheduler_queue_incoming_pods_total``)."""
        if self._gated(info):
            self._unschedulable[info.pod.uid] = (info, self.clock())
            self._incoming("unschedulable", event)
            return
        self._push_active(info)
        self._incoming("active", event)

    def _gated(self, info: QueuedPodInfo) -> bool:
        """Run PreEnqueue on ``info`` and record the outcome on it (kube's
        ``runPreEnqueuePlugins``); whether a plugin gates the pod."""
        framework = self._frameworks.get(info.pod.scheduler_name)
        status = framework.run_pre_enqueue(info.pod) if framework is not None else None
        if status is None or status.is_success():
            info.gating_plugin = ""
            return False
        info.gating_plugin = status.plugin or "?"
        # kube's runPreEnqueuePlugin: the gating plugin is one of the pod's rejectors, whose
        # hints decide whether an event moves the pod (see _worth_requeuing).
        info.unschedulable_plugins.add(info.gating_plugin)
        info.gating_message = status.message()
        log.debug("pod %s gated by %s: %s", info.pod.key, status.plugin, status.message())
        return True

    def _push_active(self, info: QueuedPodInfo, seq: int | None = None) -> None:
        entry = _ActiveEntry(info, self._less, next(self._seq) if seq is None else seq)
        self._active_by_uid[info.pod.uid] = entry
        heapq.heappush(self._active, entry)
        self._cond.notify()

    # -- the scheduling cycle's side -------------------------------------------------------------
    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod to schedule, or None when closed (or ``timeout`` passed)."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                self._flush_backoff_locked()
                mate = self._next_of_group()
                if mate is not None:
                    mate.live = False  # its heap entry is skipped when it comes up
                    return self._popped(mate.info)
                while self._active:
                    entry = heapq.heappop(self._active)
                    if entry.live:
                        return self._popped(entry.info)
                if self._closed:
                    return None
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return None
                waits = [] if deadline is None else [deadline - now]
                if self._backoff:
                    waits.append(max(self._backoff[0][0] - self.clock(), 0.001))
                self._cond.wait(min(waits) if waits else None)

    def _popped(self, info: QueuedPodInfo) -> QueuedPodInfo:
        del self._active_by_uid[info.pod.uid]
        info.attempts += 1
        self.scheduling_cycle += 1
        # Popped again before its last cycle was done with: moved to the end, so that the
        # map stays in log order (``_prune_log`` reads its first entry as the oldest).
        self._in_flight.pop(info.pod.uid, None)
        self._in_flight[info.pod.uid] = self._log_base + len(self._log)
        self._group = pod_group_key(info.pod)
        return info

    def _next_of_group(self) -> _ActiveEntry | None:
        """The first pod in activeQ (by QueueSort) of the pod group popped last, if any: a
        group's pods are popped one after another, so that pods of two gangs do not take turns
        and each hold part of the room (kube-scheduler v1.37 schedules a PodGroup in one
        pod-group cycle). Looked for only after a pod of a group, so costs nothing otherwise."""
        if self._group is None:
            return None
        best: _ActiveEntry | None = None
        for entry in self._active_by_uid.values():
            if entry.live and pod_group_key(entry.info.pod) == self._group:
                if best is None or entry < best:
                    best = entry
        if best is None:
            self._group = None
        return best

    def backoff_seconds(self, info: QueuedPodInfo) -> float:
        """initial × 2^(attempts−1), capped at the maximum."""
        # The exponent is bounded so that a pod retried for hours cannot overflow the float.
        seconds = self.initial_backoff * 2.0 ** min(max(info.attempts - 1, 0), 64)
        return min(seconds, self.max_backoff)

    def requeue_after_failure(
        self, info: QueuedPodInfo, rejected_by: set[str], error: bool = False
    ) -> None:
        """Put back a pod whose cycle failed. ``rejected_by``: the plugins that rejected it."""
        with self._cond:
            uid = info.pod.uid
            start = self._in_flight.pop(uid, self._log_base + len(self._log))
            latest = self._updated_in_flight.pop(uid, None)
            if uid in self._deleted_in_flight:
                self._deleted_in_flight.discard(uid)
                self._prune_log()
                return
            if latest is not None:  # changed during the cycle: retry the current version
                info.pod = latest
            info.timestamp = self.clock()
            info.unschedulable_plugins = set(rejected_by)
            info.last_failure_was_error = error
            missed = self._log[max(start - self._log_base, 0) :]
            self._prune_log()
            # No plugin to wait for (an Error, or a failure no plugin owns): retry after backoff,
            # as kube-scheduler does, rather than wait in the pool for any event.
            if (
                error
                or not rejected_by
                or any(
                    self._worth_requeuing(info, e.event, e.old, e.new)
                    for e in missed
                    if not e.target_uid or e.target_uid == uid
                )
            ):
                self._to_backoff_or_active(info, INCOMING_SCHEDULE_ATTEMPT_FAILURE)
            else:
                self._unschedulable[uid] = (info, self.clock())
                self._incoming("unschedulable", INCOMING_SCHEDULE_ATTEMPT_FAILURE)

    def done(self, uid: str) -> None:
        """The pod's cycle ended with it assumed (or dropped): stop tracking it."""
        with self._cond:
            self._in_flight.pop(uid, None)
            self._deleted_in_flight.discard(uid)
            self._updated_in_flight.pop(uid, None)
            self._prune_log()

    def _prune_log(self) -> None:
        if not self._in_flight:
            self._log_base += len(self._log)
            self._log.clear()
            return
        # Entries go in at the log's growing end and leave from anywhere: the first is the
        # oldest (thousands are in flight while bindings wait; min() over them cost 1.3 % of
        # the interpreter's samples at 5,000 nodes).
        oldest = next(iter(self._in_flight.values()))
        drop = oldest - self._log_base
        if drop > 0:
            del self._log[:drop]
            self._log_base = oldest

    # -- moving pods on events -------------------------------------------------------------------
    def _worth_requeuing(
        self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any
    ) -> bool:
        """Whether ``event`` may make ``info`` schedulable (kube's ``isPodWorthRequeuing``): the
        hints of the pod's rejectors that registered the event are asked, in the profile's order,
        until one says Queue. The rejectors are the plugins that rejected the pod in its last
        cycle and the PreEnqueue plugins that gated it since; none means Queue. A wildcard event
        (``activate``'s) queues the pod it names, or every pod when it names none."""
        rejectors = info.unschedulable_plugins
        if not rejectors:
            return True
        if event.resource is EventResource.WILDCARD and event.action == ActionType.ALL:
            return new is None or (isinstance(new, Pod) and new.uid == info.pod.uid)
        if EXTENDER_NAME in rejectors:  # extenders register no events: any event may help
            return True
        registered = self._events.get(info.pod.scheduler_name, {})
        for plugin, entries in registered.items():
            if plugin not in rejectors:
                continue
            for entry in entries:
                if not entry.event.matches(event):
                    continue
                if entry.hint is None:
                    return True
                try:
                    if entry.hint(info.pod, old, new) is QueueingHint.QUEUE:
                        return True
                except Exception:  # a broken hint must not strand the pod
                    log.exception('queueing hint of plugin "%s" raised', plugin)
                    return True
        return False

    def registered(self, event: ClusterEvent) -> bool:
        """Whether a plugin of any profile registered an event covering ``event``."""
        known = self._registered.get(event)
        if known is None:
            known = self._registered[event] = any(
                entry.event.matches(event)
                for registered in self._events.values()
                for entries in registered.values()
                for entry in entries
            )
        return known

    def _gate_registered(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether the plugin gating ``info`` registered ``event`` (kube's
        ``GatingPluginEvents``): no other event can lift its gate, so no hint is asked."""
        registered = self._events.get(info.pod.scheduler_name, {})
        return any(entry.event.matches(event) for entry in registered.get(info.gating_plugin, ()))

    def _gate_may_lift(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether ``event`` may let the gated ``info`` through: its gating plugin registered
        the event and no longer refuses the pod. Asked before any hint, so that an event
        every gated pod registered (an assigned pod's deletion, while preemptors wait for
        their victims) costs one PreEnqueue call per pod still gated, not every hint and the
        whole PreEnqueue chain; a pod its gating plugin still refuses stays, its time in the
        pool going on."""
        if not self._gate_registered(info, event):
            return False
        framework = self._frameworks.get(info.pod.scheduler_name)
        return framework is None or not framework.pre_enqueue_still_gates(
            info.gating_plugin, info.pod
        )

    def move_on_event(
        self, event: ClusterEvent, old: Any = None, new: Any = None, *, skip_uid: str = ""
    ) -> int:
        """Move the unschedulable pods that ``event`` may help (but the pod ``skip_uid``);
        returns how many moved."""
        with self._cond:
            if self._in_flight:
                self._log.append(_LoggedEvent(event, old, new))
            moved = [
                info
                for info, _ in self._unschedulable.values()
                if info.pod.uid != skip_uid
                and (not info.gating_plugin or self._gate_may_lift(info, event))
                and self._worth_requeuing(info, event, old, new)
            ]
            label = event_label(event) if moved else ""
            for info in moved:
                self._move_out_of_pool(info, label)
            return len(moved)

    def activate(self, pods: Iterable[Pod]) -> int:
        """Move each of ``pods`` from the unschedulable pool or backoffQ to activeQ at once
        (kube's ``Activate``); PreEnqueue still runs, so a pod it gates stays in the pool. A pod
        in its scheduling cycle is retried (after backoff) when the cycle fails, rather than
        wait in the pool; a pod already in activeQ, or one the queue does not hold, is left
        alone. Returns how many pods reached activeQ."""
        moved = 0
        with self._cond:
            for pod in pods:
                uid = pod.uid
                parked = self._unschedulable.pop(uid, None)
                if parked is not None:
                    info = parked[0]
                else:
                    backing_off = self._backoff_by_uid.pop(uid, None)
                    if backing_off is None:
                        if uid in self._in_flight:
                            self._log.append(_LoggedEvent(_FORCE_ACTIVATE, None, pod, uid))
                        continue
                    info = backing_off  # its heap entry is skipped once the map forgets it
                self._enqueue_checked(info, INCOMING_FORCE_ACTIVATE)
                if uid in self._active_by_uid:
                    moved += 1
                elif parked is not None:  # gated again: its time in the pool goes on
                    self._unschedulable[uid] = (info, parked[1])
        return moved

    def _move_out_of_pool(self, info: QueuedPodInfo, event: str) -> None:
        """An event (or the time limit) moves a parked pod, gated or not, as kube's
        ``requeuePodWithQueueingStrategy`` does: to backoffQ while it is backing off, else
        to activeQ. A gated pod bound for backoffQ meets PreEnqueue first (kube's
        ``moveToBackoffQ`` under ``SchedulerPopFromBackoffQ``, on by default in v1.37): a pod
        still gated stays in the pool, its time there going on."""
        uid = info.pod.uid
        _, since = self._unschedulable.pop(uid)
        if info.gating_plugin and self._backing_off(info):
            if self._gated(info):
                self._unschedulable[uid] = (info, since)
                self._incoming("unschedulable", event)
                return
            self._push_backoff(info, event)
            return
        self._to_backoff_or_active(info, event)

    def _backing_off(self, info: QueuedPodInfo) -> bool:
        """Whether ``info``'s backoff has yet to end (kube's ``isPodBackingoff``). A pod never
        attempted (one gated since it was added) has no backoff at all."""
        return bool(info.attempts) and info.timestamp + self.backoff_seconds(info) > self.clock()

    def _to_backoff_or_active(self, info: QueuedPodInfo, event: str) -> None:
        if self._backing_off(info):
            self._push_backoff(info, event)
        else:
            self._enqueue_checked(info, event)

    def _push_backoff(self, info: QueuedPodInfo, event: str) -> None:
        """Into backoffQ until its backoff ends (PreEnqueue runs again then, on the way to
        activeQ)."""
        expiry = info.timestamp + self.backoff_seconds(info)
        self._backoff_by_uid[info.pod.uid] = info
        heapq.heappush(self._backoff, (expiry, next(self._seq), info.pod.uid))
        self._incoming("backoff", event)
        self._cond.notify()

    def _flush_backoff_locked(self) -> None:
        now = self.clock()
        while self._backoff and self._backoff[0][0] <= now:
            _, _, uid = heapq.heappop(self._backoff)
            info = self._backoff_by_uid.get(uid)
            if info is None:
                continue
            if info.timestamp + self.backoff_seconds(info) > now:
                continue  # left by an earlier stay of a pod deleted and added again
            del self._backoff_by_uid[uid]
            # PreEnqueue runs whenever a pod enters activeQ
            self._enqueue_checked(info, INCOMING_BACKOFF_COMPLETE)

    def flush(self) -> None:
        """Backoff ended: to activeQ. In the pool past the limit: out (to backoff or activeQ)."""
        with self._cond:
            self._flush_backoff_locked()
            now = self.clock()
            stale = [
                info
                for info, since in self._unschedulable.values()
                if now - since >= self.max_unschedulable
            ]
            for info in stale:
                self._move_out_of_pool(info, INCOMING_UNSCHEDULABLE_TIMEOUT)

    # -- pending pods that change or go away -----------------------------------------------------
    def _replace_pod(self, pod: Pod) -> QueuedPodInfo | None:
        uid = pod.uid
        entry = self._active_by_uid.get(uid)
        if entry is not None:
            # Re-queued so that a changed priority re-sorts the heap (the old entry is skipped).
            entry.live = False
            entry.info.pod = pod
            self._push_active(entry.info, entry.seq)  # an update keeps its place among equals
            return None
        backing_off = self._backoff_by_uid.get(uid)
        if backing_off is not None:
            backing_off.pod = pod
            return None
        parked = self._unschedulable.get(uid)
        if parked is not None:
            parked[0].pod = pod
            return parked[0]
        return None

    def update(self, old: Pod, new: Pod, event: ClusterEvent) -> None:
        """A pending pod changed: update it, and give a parked pod another chance if the change
        is one its rejectors (or gate) registered for."""
        with self._cond:
            if new.uid in self._in_flight:
                # Not the nominator: an in-flight pod may be assumed, and the binding cycle's
                # own status.nominatedNodeName write must not count it twice on its node
                # (kube's Update returns for in-flight pods before updating nominations).
                self._log.append(_LoggedEvent(event, old, new, new.uid))
                self._updated_in_flight[new.uid] = new
                return
            if new.nominated_node_name or self.nominator.node_of(new):
                self.nominator.update(new)
            if not self._knows(new.uid):
                self.add(new)
                return
            parked = self._replace_pod(new)
            if parked is not None and self._worth_requeuing(parked, event, old, new):
                self._move_out_of_pool(parked, event_label(event))

    def delete(self, pod: Pod) -> None:
        self.nominator.remove(pod)
        with self._cond:
            uid = pod.uid
            entry = self._active_by_uid.pop(uid, None)
            if entry is not None:
                entry.live = False
            self._backoff_by_uid.pop(uid, None)
            self._unschedulable.pop(uid, None)
            if uid in self._in_flight:
                self._deleted_in_flight.add(uid)

    # -- introspection ---------------------------------------------------------------------------
    def pending(self) -> dict[str, int]:
        """Pods per place, as the ``scheduler_pending_pods`` metric reports them."""
        with self._cond:
            gated = sum(1 for info, _ in self._unschedulable.values() if info.gating_plugin)
            return {
                "active": len(self._active_by_uid),
                "backoff": len(self._backoff_by_uid),
                "unschedulable": len(self._unschedulable) - gated,
                "gated": gated,
            }

    def next_backoff_expiry(self) -> float | None:
        with self._cond:
            return self._backoff[0][0] if self._backoff else None

    def parked(self) -> list[QueuedPodInfo]:
        """The pods in the unschedulable pool (gated ones included)."""
        with self._cond:
            return [info for info, _ in self._unschedulable.values()]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
