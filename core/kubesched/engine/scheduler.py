"""The scheduler: queue → scheduling cycle → binding cycle, over any cluster backend.

One code path serves ``kubesched simulate`` (in-memory backend, virtual clock, bindings inline)
and ``kubesched run`` (API backend, real clock, bindings on a bounded pool of threads so the next
pod's scheduling cycle does not wait on the API).
"""

from __future__ import annotations

import copy
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from kubesched.api.objects import Pod
from kubesched.config import SchedulerConfiguration
from kubesched.engine.algorithm import CycleError, FitError, SchedulingAlgorithm
from kubesched.engine.binding_workers import BINDING_WORKERS, BindingWorkers
from kubesched.engine.cache import Cache
from kubesched.engine.event_handlers import SchedulerEventHandler
from kubesched.engine.extender import ExtenderError, HTTPExtender
from kubesched.engine.metrics import PLUGIN_METRICS_SAMPLE_PERCENT, status_label
from kubesched.engine.nominator import Nominator
from kubesched.engine.queue import SchedulingQueue
from kubesched.engine.runtime import RUNNING_BINDING_PLUGIN, Framework, ProfileBuildError
from kubesched.engine.watchdog import Abandoned, Cycle, PluginCall, Watchdog
from kubesched.errors import ConfigError, FieldError
from kubesched.framework.backend import BindError, ClusterBackend
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.handle import Handle
from kubesched.framework.registry import Registry
from kubesched.framework.results import QueuedPodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod, WaitingPods

if TYPE_CHECKING:
    from kubesched.engine.metrics import SchedulerMetrics

__all__ = ["Attempt", "Scheduler"]

log = logging.getLogger(__name__)

#: kube-scheduler's extension point label values, by profile field name.
#: A binding-cycle point: the profile field whose plugins run there, and its metrics name.
_POINT_NAMES = {
    "preBindPreFlight": ("preBind", "PreBindPreFlight"),
    "preBind": ("preBind", "PreBind"),
    "bind": ("bind", "Bind"),
    "postBind": ("postBind", "PostBind"),
}

REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"

#: The nomination a failure reports to end the pod's nomination (kube's ``clearNominatedNode``).
CLEAR_NOMINATION = ""

T = TypeVar("T")


@dataclass(slots=True)
class Attempt:
    """The outcome of a pod's latest attempt (what ``simulate`` reports)."""

    pod: Pod
    node_name: str | None
    reason: str = ""
    message: str = ""


def build_frameworks(
    config: SchedulerConfiguration, registry: Registry, handle_for: Callable[[str], Handle]
) -> dict[str, Framework]:
    """One framework per profile; every plugin error of every profile in one ConfigError."""
    frameworks: dict[str, Framework] = {}
    errors: list[FieldError] = []
    for profile in config.profiles:
        try:
            frameworks[profile.scheduler_name] = Framework(
                profile, registry, handle_for(profile.scheduler_name)
            )
        except ProfileBuildError as exc:
            errors.extend(exc.errors)
    if errors:
        raise ConfigError(errors)
    return frameworks


class Scheduler:
    """Schedules the pods of every profile in ``config`` onto ``backend``'s nodes."""

    def __init__(
        self,
        config: SchedulerConfiguration,
        backend: ClusterBackend,
        registry: Registry | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        seed: int | None = None,
        inline_binding: bool = False,
        binding_workers: int | None = None,
        metrics: SchedulerMetrics | None = None,
        plugin_timeout: float | None = None,
        wait_on_clock: bool = False,
        record_attempts: bool = True,
    ) -> None:
        """``plugin_timeout``: the longest the plugin calls of one extension point may take
        (the scheduling cycle from PreFilter to NormalizeScore as one, then PostFilter, Reserve,
        Permit, PreBind, Bind and PostBind each); past it the pod's attempt ends with an Error
        naming the point and plugin, and the scheduler goes on with other pods (the call is left
        on its thread; a new thread goes on with the loop or the binding queue, see
        engine/watchdog.py). The wait at Permit is not a plugin call: it has its own timeout.
        ``None``: no limit.
        ``binding_workers``: binding cycles run at once (default :data:`BINDING_WORKERS`; the
        config's ``parallelism`` is what plugins are given, as kube-scheduler's, and does not
        bound binding, which kube-scheduler does not bound either).

        ``wait_on_clock`` (``simulate`` and the test harness, with ``inline_binding`` and a
        virtual ``clock``): no thread blocks on a pod waiting at Permit. Its binding cycle runs
        once the wait ends: allowed or rejected (after the scheduling cycle that did it, or at
        :meth:`run_ended_waits`), or timed out when the clock has passed its deadline
        (:meth:`expire_waits`; :meth:`next_wakeup` says when).

        ``record_attempts``: keep each pod's latest :class:`Attempt` in :attr:`attempts` (what
        ``simulate`` and ``explain`` report). ``run`` passes False: a long-running scheduler
        would otherwise keep every pod it ever saw; :meth:`observe_attempts` sees every attempt
        anyway."""
        self.config = config
        self.backend = backend
        self.metrics = metrics
        self.cache = Cache()
        self.snapshot = Snapshot()
        self.wait_on_clock = wait_on_clock
        self.waiting_pods = WaitingPods(clock if wait_on_clock else time.monotonic)
        #: Under ``wait_on_clock``: the binding cycles held until their pod's wait ends, by UID,
        #: and the UIDs whose wait has ended, in that order.
        self._held_bindings: dict[
            str, tuple[Framework, CycleState, QueuedPodInfo, str, float, tuple[Status, bool]]
        ] = {}
        self._ended_waits: list[str] = []
        self._held_lock = threading.Lock()
        #: The longest wait at Permit held so far under ``wait_on_clock``, in seconds.
        self.longest_wait = 0.0
        self.rng = random.Random(seed)
        registry = registry if registry is not None else Registry.installed()
        self.extenders = [HTTPExtender(extender) for extender in config.extenders]
        #: Pods nominated by preemption: kept by the queue, read by the plugins' handles.
        self.nominator = Nominator()
        self.frameworks = build_frameworks(config, registry, self._handle_for)
        self.queue = SchedulingQueue(
            self.frameworks,
            clock=clock,
            initial_backoff_seconds=config.pod_initial_backoff_seconds,
            max_backoff_seconds=config.pod_max_backoff_seconds,
            nominator=self.nominator,
            metrics=metrics,
        )
        self.algorithm = SchedulingAlgorithm(
            config.percentage_of_nodes_to_score,
            self.rng,
            self.extenders,
            observe_point=metrics.extension_point if metrics is not None else None,
        )
        #: Which cycles time their plugin calls (its own source: ``rng`` stays the seed's).
        self._plugin_sampler = random.Random()
        if metrics is not None:
            for framework in self.frameworks.values():
                framework.record_plugin_durations(metrics.plugin, metrics.plugin_buffer_has_room)
        self.handler = SchedulerEventHandler(
            self.cache, self.queue, set(self.frameworks), self.waiting_pods
        )
        self.inline_binding = inline_binding
        # Binding cycles have their own bound, not `parallelism` (docs/design.md).
        workers = BINDING_WORKERS if binding_workers is None else binding_workers
        #: Plugin calls run on the thread that needs them; one that overruns the limit is
        #: taken over (engine/watchdog.py).
        self.watchdog = Watchdog(plugin_timeout, self._overrun)
        self._binder = BindingWorkers(workers, serving=self.watchdog.serve_as)
        self._in_flight_bindings = 0
        self._bindings_done = threading.Condition()
        self.attempts: dict[str, Attempt] = {}
        self.record_attempts = record_attempts
        self._attempts_lock = threading.Lock()
        self._stop = threading.Event()
        self.plugin_timeout = plugin_timeout
        self._attempt_observers: list[Callable[[Attempt, float], None]] = []
        #: The thread running the scheduling loop, when it runs (a new one after the watchdog
        #: took over from a stuck one); when its latest cycle began; whether it ended (asked to
        #: stop).
        self.loop_thread: threading.Thread | None = None
        self.heartbeat = time.monotonic()
        self.loop_ended = False
        self._loop_done = threading.Event()
        #: The pod whose binding cycle the current scheduling cycle started (it owns it then).
        self._handed_over: QueuedPodInfo | None = None

    def refresh_snapshot(self) -> None:
        """Bring the snapshot up to date with the cache, and drop from every profile's reuse
        tables the results of the nodes that left it (a deleted node is never looked up
        again, so its entries would stay as long as the tables live)."""
        departed = self.cache.update_snapshot(self.snapshot)
        if departed:
            for framework in self.frameworks.values():
                framework.memo.forget(departed)

    def _handle_for(self, profile_name: str) -> Handle:
        return Handle(
            profile_name,
            self.backend,
            lambda: self.snapshot,
            self.waiting_pods,
            self.config.parallelism,
            self.rng,
            self.extenders,
            nominator=self.nominator,
            activator=self._activate,
        )

    def _activate(self, pods: Iterable[Pod]) -> None:
        """The plugins' ``Handle.activate``: the pods back to activeQ at once."""
        self.queue.activate(pods)

    # -- running -------------------------------------------------------------------------------
    def start(self, sync_timeout: float | None = None) -> None:
        """Connect the backend: the cache and queue fill with what the cluster has.

        ``sync_timeout`` bounds the wait for the initial lists (backends that list remotely).
        """
        self.backend.start(self.handler, sync_timeout=sync_timeout)

    def run(self, stop: threading.Event | None = None, poll_seconds: float = 1.0) -> None:
        """Schedule until ``stop`` is set (or :meth:`stop` is called); returns when the loop
        has ended.

        The loop runs on a thread of its own (:attr:`loop_thread`), so that the watchdog can
        hand it to a new thread when a plugin call overruns the limit. Nothing a cycle raises
        ends the loop: :meth:`schedule_one` turns it into an Error for that pod, and a failure
        between cycles is logged. :attr:`heartbeat` is set before each cycle, so a loop that
        stopped turning (a call with no limit that hangs) shows in :meth:`loop_stalled`."""
        stop = stop or self._stop
        self.loop_ended = False
        self._loop_done.clear()
        self.loop_thread = threading.Thread(
            target=self._loop, args=(stop, poll_seconds), name="scheduling-loop", daemon=True
        )
        self.loop_thread.start()
        self._loop_done.wait()

    def _loop(self, stop: threading.Event, poll_seconds: float) -> None:
        """The scheduling loop, on :attr:`loop_thread`; also what a thread that takes over
        from a stuck loop resumes."""
        self.loop_thread = threading.current_thread()
        self.watchdog.serve_as(lambda: self._loop(stop, poll_seconds))
        ended = True
        try:
            self._turn(stop, poll_seconds)
        except Abandoned:  # stuck in a plugin call: the thread that took over loops now
            ended = False
        finally:
            if ended:
                self.loop_ended = True
                self._loop_done.set()

    def _turn(self, stop: threading.Event, poll_seconds: float) -> None:
        last_flush = time.monotonic()
        while not stop.is_set() and not self._stop.is_set():
            self.heartbeat = time.monotonic()
            try:
                self.schedule_one(timeout=poll_seconds)
                if time.monotonic() - last_flush >= poll_seconds:
                    self.queue.flush()
                    if self.metrics is not None:  # buffered plugin durations, once a second
                        self.metrics.flush()
                    last_flush = time.monotonic()
            except Exception:
                log.exception("scheduling loop: unexpected error; going on")
                stop.wait(min(poll_seconds, 0.1))  # a failure that repeats must not spin

    def loop_stalled(self, limit: float) -> str:
        """Why the scheduling loop is not healthy (``""`` when it is, or never started): its
        thread ended while it should run, or no cycle began for ``limit`` seconds."""
        thread = self.loop_thread
        if thread is None or self.loop_ended:
            return ""
        if not thread.is_alive():
            return "the scheduling loop has exited"
        idle = time.monotonic() - self.heartbeat
        if idle > limit:
            return f"the scheduling loop has not started a cycle for {idle:.0f}s (limit {limit:g}s)"
        return ""

    def stop(self, wait_for_bindings: bool = True) -> None:
        self._stop.set()
        self.queue.close()
        self._binder.shutdown(wait=wait_for_bindings)
        self.watchdog.close()  # after the bindings: a stuck one is still taken over
        for extender in self.extenders:
            extender.close()

    def wait_for_bindings(self, timeout: float | None = None) -> bool:
        """Block until no binding cycle is running; False on timeout."""
        with self._bindings_done:
            return self._bindings_done.wait_for(lambda: self._in_flight_bindings == 0, timeout)

    # -- waits at Permit on a virtual clock -------------------------------------------------------
    def _wait_ended(self, waiting: WaitingPod) -> None:
        with self._held_lock:
            self._ended_waits.append(waiting.pod.uid)

    def run_ended_waits(self) -> int:
        """Under ``wait_on_clock``: run the binding cycle of every held pod whose wait has
        ended (allowed, rejected or expired); how many ran."""
        ran = 0
        while True:
            with self._held_lock:
                if not self._ended_waits:
                    return ran
                held = self._held_bindings.pop(self._ended_waits.pop(0), None)
            if held is None:
                continue
            with self._bindings_done:
                self._in_flight_bindings += 1
            self.watchdog.drive(self._binding_cycle(*held))
            ran += 1

    def expire_waits(self) -> int:
        """Time out the waits at Permit whose deadline the clock has reached, and run what
        ended; how many binding cycles ran."""
        self.waiting_pods.expire()
        return self.run_ended_waits()

    def next_wakeup(self) -> float | None:
        """When something is next due on the clock: a backoff ending, or a wait at Permit
        timing out; ``None`` when nothing is."""
        due = [self.queue.next_backoff_expiry()]
        if self.wait_on_clock:
            due.append(self.waiting_pods.next_deadline())
        return min((t for t in due if t is not None), default=None)

    # -- the scheduling cycle ------------------------------------------------------------------
    def schedule_one(self, timeout: float | None = None) -> bool:
        """Pop one pod and run its scheduling cycle; False when nothing was there to pop."""
        if not self.wait_on_clock:
            return self._schedule_one(timeout)
        self.run_ended_waits()
        popped = self._schedule_one(timeout)
        # Pods a Permit allowed (a gang completed) bind after the cycle that allowed them.
        self.run_ended_waits()
        return popped

    def _schedule_one(self, timeout: float | None) -> bool:
        """One pod's scheduling cycle (see :meth:`schedule_one`).

        An exception the cycle raises (a bug, or the cache refusing to assume a pod the watch
        just reported bound) is an Error for that pod, as kube-scheduler treats a failed
        assume: the pod is forgotten if assumed and goes back to the queue with backoff."""
        info = self.queue.pop(timeout=timeout)
        if info is None:
            return False
        self.watchdog.drive(self._attempt(info))
        return True

    def _attempt(self, info: QueuedPodInfo) -> Cycle:
        """The scheduling cycle of ``info``'s pod, as the watchdog drives it."""
        self._handed_over = None
        started = time.monotonic()
        try:
            yield from self._scheduling_cycle(info)
        except Exception as exc:
            if self._handed_over is info:  # its binding cycle owns the pod now
                log.exception("scheduling cycle of pod %s failed after binding began", info.pod.key)
                return
            self._cycle_failed(info, exc, started)

    def _cycle_failed(self, info: QueuedPodInfo, exc: Exception, started: float) -> None:
        pod = info.pod
        log.error("scheduling cycle of pod %s failed: %s: %s", pod.key, type(exc).__name__, exc)
        log.debug("the failure's traceback", exc_info=exc)
        try:
            if self.cache.is_assumed(pod.uid):
                self.cache.forget_pod(pod)
        except Exception:
            log.exception("forgetting pod %s after a failed cycle failed", pod.key)
        message = f"internal error in the scheduling cycle: {type(exc).__name__}: {exc}"
        try:
            # As kube's failed assume (or any error but a FitError): the nomination is cleared.
            self._fail(
                info,
                REASON_SCHEDULER_ERROR,
                message,
                set(),
                started,
                error=True,
                nominated_node_name=CLEAR_NOMINATION,
            )
        except Exception:
            log.exception("requeueing pod %s after a failed cycle failed", pod.key)
            self.queue.done(pod.uid)

    def _scheduling_cycle(self, info: QueuedPodInfo) -> Cycle:
        pod = info.pod
        framework = self.frameworks.get(pod.scheduler_name)
        if framework is None or pod.deletion_timestamp or self.cache.is_assumed(pod.uid):
            self.queue.done(pod.uid)
            return
        started = time.monotonic()
        if pod.affinity_errors:
            # kube-apiserver refuses such terms on create; a pod that has them anyway fails on
            # its own, before any plugin reads them (a cluster file is refused at loading).
            message = "parsing pod: " + "; ".join(pod.affinity_errors)
            self._fail(info, REASON_UNSCHEDULABLE, message, set(), started)
            return
        state = CycleState()
        if self.metrics is not None:  # kube's pluginMetricsSamplePercent
            state.record_plugin_metrics = (
                self._plugin_sampler.random() * 100 < PLUGIN_METRICS_SAMPLE_PERCENT
            )
        self.refresh_snapshot()
        try:
            result = yield from self._limited(
                framework, self.algorithm.schedule, framework, state, pod, self.snapshot
            )
        except FitError as fit:
            try:
                nominated = yield from self._limited(
                    framework, self._post_filter, framework, state, pod, fit
                )
            except CycleError as exc:
                self._fail(
                    info, REASON_SCHEDULER_ERROR, exc.status.message(), set(), started, error=True
                )
                return
            self._fail(
                info,
                REASON_UNSCHEDULABLE,
                str(fit),
                fit.diagnosis.unschedulable_plugins,
                started,
                nominated_node_name=nominated,
            )
            return
        except CycleError as exc:
            # kube's ErrNoNodesAvailable and every error but a FitError clear the nomination.
            if exc.status.is_rejected():  # no nodes at all: Unschedulable, retried after backoff
                self._fail(
                    info,
                    REASON_UNSCHEDULABLE,
                    exc.status.message(),
                    set(),
                    started,
                    nominated_node_name=CLEAR_NOMINATION,
                )
            else:
                self._fail(
                    info,
                    REASON_SCHEDULER_ERROR,
                    exc.status.message(),
                    set(),
                    started,
                    error=True,
                    nominated_node_name=CLEAR_NOMINATION,
                )
            return
        node = result.node_name
        self.queue.nominator.remove(pod)  # scheduled: its nomination (if any) has served
        self.cache.assume_pod(pod, node)
        point_began = time.perf_counter()
        point = "Reserve"
        try:
            status = yield from self._limited(
                framework, framework.run_reserve, state, pod, node, point="reserve"
            )
            self._observe_point(framework, point, status, point_began)
            if status.is_success():
                point, point_began = "Permit", time.perf_counter()
                status = yield from self._limited(
                    framework,
                    framework.run_permit,
                    state,
                    pod,
                    node,
                    point="permit",
                    late=lambda late: self._drop_late_wait(pod, late),
                )
                self._observe_point(framework, point, status, point_began)
        except CycleError as exc:  # a Reserve or Permit plugin overran the time limit
            status = exc.status
            self._observe_point(framework, point, status, point_began)
        if not (status.is_success() or status.is_wait()):
            self._unreserve(framework, state, pod, node)
            self.cache.forget_pod(pod)
            # kube's schedulingCycle: a failure at Reserve or Permit, rejection or Error alike,
            # clears the nomination (clearNominatedNode).
            self._fail_with_status(info, status, started, nominated_node_name=CLEAR_NOMINATION)
            return
        # The pod stays "in flight" for the queue until its binding cycle ends, so events that
        # arrive while it waits at Permit or binds still count if it comes back.
        self._handed_over = info
        yield from self._start_binding(framework, state, info, node, started)

    def _limited(
        self,
        framework: Framework,
        call: Callable[..., T],
        *args: Any,
        running: Callable[[], tuple[str, str]] | None = None,
        late: Callable[[T], None] | None = None,
        point: str | None = None,
    ) -> Generator[PluginCall, Any, T]:
        """``call(*args)`` under the plugin time limit (``yield from`` it in a cycle).

        The watchdog makes the call on the cycle's thread; when it overruns, the cycle goes on
        (on another thread) with a :class:`CycleError` raised here, naming the plugin running
        at that moment (``running()``, by default the framework's scheduling-cycle record), as
        a plugin that raises is named. A late result goes to ``late`` (or is dropped).
        ``point`` (a profile field name): a point without plugins runs unwatched.
        """
        if not self.plugin_timeout or (point is not None and not framework.plugins_at(point)):
            return call(*args)  # nothing to limit: the watch is saved
        result: T = yield PluginCall(call, args, running or framework.running, late)
        return result

    def _overrun(self, request: PluginCall) -> CycleError:
        """The Error a cycle gets in place of a call that overran the limit (watchdog)."""
        point, plugin = request.running()
        log.error(
            '%s plugin "%s" did not return within %gs; its call is abandoned',
            point,
            plugin,
            self.plugin_timeout,
        )
        return CycleError(
            Status(
                Code.ERROR,
                f'running {point} plugin "{plugin}": did not return within '
                f"{self.plugin_timeout:g}s",
                plugin=plugin,
            )
        )

    def _drop_late_wait(self, pod: Pod, late: Status) -> None:
        """A Permit call abandoned at the time limit that comes back with Wait has registered
        the pod as waiting: no binding cycle will ever wait on that, so reject and drop it
        (were it kept, the pod's next binding cycle would wait on it)."""
        waiting = self.waiting_pods.get(pod.uid)
        if late.is_wait() and waiting is not None and waiting.pod is pod:
            waiting.reject("", "abandoned: Permit overran the plugin time limit")
            self.waiting_pods.remove(pod.uid)

    def _post_filter(
        self, framework: Framework, state: CycleState, pod: Pod, fit: FitError
    ) -> str | None:
        """Run PostFilter; the pod's nomination to report: a node, ``""`` to clear it, or
        ``None`` to leave it as it is."""
        if not framework.plugins_at("postFilter"):
            return None
        began = time.perf_counter()
        result, status = framework.run_post_filter(state, pod, fit.diagnosis.node_to_status)
        self._observe_point(framework, "PostFilter", status, began)
        if status.message():
            fit.diagnosis.post_filter_msg = status.message()
        if result is None:
            return None
        if result.nominated_node_name:
            self._nominate(pod, result.nominated_node_name)
            return result.nominated_node_name
        if status.is_success():
            return None
        # A rejection that came with an empty nomination (kube's ModeOverride with ""): preemption
        # cannot help any more, so the pod no longer holds room anywhere.
        self._nominate(pod, "")
        return ""

    def _nominate(self, pod: Pod, node_name: str) -> None:
        """Record a PostFilter's nomination: the queue keeps the room, the pod tries there first,
        and the failure report writes ``status.nominatedNodeName``."""
        pod.nominated_node_name = node_name
        self.queue.nominator.add(pod, node_name)

    # -- the binding cycle ---------------------------------------------------------------------
    def _start_binding(
        self,
        framework: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        node: str,
        started: float,
    ) -> Cycle:
        held = self.waiting_pods.get(info.pod.uid)
        if held is not None and self.wait_on_clock:
            # The binding cycle begins now (its nomination is written while the pod waits);
            # its rest runs once the wait ends, or at once when PreBindPreFlight failed.
            expectation = yield from self._nominate_for_expectation(
                framework, state, info.pod, node
            )
            if not expectation[0].is_success():
                with self._bindings_done:
                    self._in_flight_bindings += 1
                yield from self._binding_cycle(framework, state, info, node, started, expectation)
                return
            with self._held_lock:
                self._held_bindings[info.pod.uid] = (
                    framework,
                    state,
                    info,
                    node,
                    started,
                    expectation,
                )
            self.longest_wait = max(self.longest_wait, held.deadline - self.waiting_pods.clock())
            held.on_done = self._wait_ended
            if held.done:  # ended before it could be told (a plugin allowed it at once)
                self._wait_ended(held)
            return
        with self._bindings_done:
            self._in_flight_bindings += 1
        waiting = held is not None
        if self.inline_binding and not waiting:
            yield from self._binding_cycle(framework, state, info, node, started)
        else:
            self._binder.submit(
                self.watchdog.drive, self._binding_cycle(framework, state, info, node, started)
            )

    def _binding_cycle(
        self,
        framework: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        node: str,
        started: float,
        expectation: tuple[Status, bool] | None = None,
    ) -> Cycle:
        """``expectation``: what :meth:`_nominate_for_expectation` returned, when it ran as the
        pod began to wait (virtual clock)."""
        pod = info.pod
        bound = False
        nominated = False
        try:
            status, nominated = (
                expectation
                if expectation is not None
                else (yield from self._nominate_for_expectation(framework, state, pod, node))
            )
            if status.is_success():
                status = framework.wait_on_permit(pod)
            elif (waiting := self.waiting_pods.get(pod.uid)) is not None:
                waiting.reject("", status.message())  # no binding cycle will wait on it now
                self.waiting_pods.remove(pod.uid)
            if status.is_success():
                status = yield from self._binding_call(
                    framework, framework.run_pre_bind, state, pod, node, "preBind"
                )
            if status.is_success() and not self.cache.has_node(node):
                # Deleted since the decision (binding cycles may queue behind each other): the
                # apiserver would accept the Binding and strand the pod on a node that is gone.
                status = Status(
                    Code.ERROR, f"node {node} was deleted before pod {pod.key} was bound"
                )
            if status.is_success():
                # Extenders bind first when one may (kube's extendersBinding); else the plugins.
                bind = (
                    functools.partial(self._bind, framework)
                    if any(e.is_binder for e in self.extenders)
                    else framework.run_bind
                )
                status = yield from self._binding_call(framework, bind, state, pod, node, "bind")
            if not status.is_success():
                self._binding_failed(framework, state, info, node, status, started, nominated)
                return
            bound = True
            self.queue.done(pod.uid)
            self._record(Attempt(pod, node), started)
            try:
                self.backend.report_scheduled(pod, node)
            except Exception:
                log.exception("recording the Scheduled event of pod %s failed", pod.key)
            # Informational: the pod is bound whatever PostBind does (an overrun is logged).
            yield from self._binding_call(
                framework, framework.run_post_bind, state, pod, node, "postBind"
            )
        except Exception:  # a bug here must not kill the binding pool or lose the pod
            log.exception("binding cycle of pod %s failed", pod.key)
            if bound:  # already bound: only what came after failed (events, PostBind)
                return
            self._binding_failed(
                framework,
                state,
                info,
                node,
                Status(Code.ERROR, "internal error in the binding cycle"),
                started,
                nominated,
            )
        finally:
            with self._bindings_done:
                self._in_flight_bindings -= 1
                self._bindings_done.notify_all()

    def _nominate_for_expectation(
        self, framework: Framework, state: CycleState, pod: Pod, node: str
    ) -> Generator[PluginCall, Any, tuple[Status, bool]]:
        """kube's ``NominatedNodeNameForExpectation`` (on by default in v1.37): run the
        PreBindPreFlights; when some PreBind plugin has work to do, or the pod waits at Permit,
        write ``node`` to the pod's ``status.nominatedNodeName`` first, so that other components
        (and this scheduler after a restart) know where the pod is going while it waits. Without
        such work the binding comes at once and nothing is written. A failed write is logged and
        binding goes on, as in kube. Returns the PreBindPreFlight outcome (an Error fails the
        binding) and whether the nomination was written."""
        status = yield from self._binding_call(
            framework, framework.run_pre_bind_pre_flights, state, pod, node, "preBindPreFlight"
        )
        if status.code is Code.ERROR:
            return status, False
        if not status.is_success() and self.waiting_pods.get(pod.uid) is None:
            return Status.success(), False
        if pod.nominated_node_name == node:  # already there: kube's updatePod writes nothing
            return Status.success(), False
        try:
            written = self.backend.patch_pod_status(pod, nominated_node_name=node)
        except Exception as exc:
            log.error(
                "updating the nominated node name of pod %s to %s failed: %s", pod.key, node, exc
            )
            return Status.success(), False
        return Status.success(), written

    def _bind(self, framework: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        """kube's ``bind``: the first interested extender with a bindVerb binds the pod (an
        ignorable one that fails is skipped); without one, the Bind plugins do."""
        for extender in self.extenders:
            if not extender.is_binder or not extender.is_interested(pod):
                continue
            try:
                extender.bind(pod, node)
            except ExtenderError as err:
                if extender.ignorable:
                    log.info(
                        "skipping extender %s in bind as it returned error and has ignorable "
                        "flag set: %s",
                        extender.name,
                        err,
                    )
                    continue
                return Status(Code.ERROR, str(err))
            self.backend.bound_by_extender(pod, node)
            return Status.success()
        return framework.run_bind(state, pod, node)

    def _binding_call(
        self,
        framework: Framework,
        call: Callable[[CycleState, Pod, str], Status | None],
        state: CycleState,
        pod: Pod,
        node: str,
        point: str,
    ) -> Generator[PluginCall, Any, Status]:
        """A binding-cycle point under the plugin time limit: an overrun is an Error naming the
        plugin, recorded in the pod's CycleState by the framework (binding cycles run in
        parallel, so the framework's scheduling-cycle record cannot tell). Its duration goes to
        ``scheduler_framework_extension_point_duration_seconds`` (and, for Bind, to
        ``scheduler_binding_duration_seconds``)."""
        began = time.perf_counter()
        try:
            status = yield from self._limited(
                framework,
                call,
                state,
                pod,
                node,
                running=lambda: state.get(RUNNING_BINDING_PLUGIN) or ("?", "?"),
                point=_POINT_NAMES[point][0],
            )
        except CycleError as exc:  # overran: observed as the Error it is
            status = exc.status
        status = status if status is not None else Status.success()
        name = _POINT_NAMES[point][1]
        self._observe_point(framework, name, status, began)
        if name == "Bind" and self.metrics is not None:
            outcome = "success" if status.is_success() else "error"
            self.metrics.binding(outcome, time.perf_counter() - began)
        return status

    def _unreserve(self, framework: Framework, state: CycleState, pod: Pod, node: str) -> None:
        """Unreserve, timed as kube-scheduler times it (status always Success)."""
        began = time.perf_counter()
        framework.run_unreserve(state, pod, node)
        self._observe_point(framework, "Unreserve", None, began)

    def _observe_point(
        self, framework: Framework, point: str, status: Status | None, began: float
    ) -> None:
        if self.metrics is None:
            return
        code = status.code if status is not None else None
        self.metrics.extension_point(
            point, status_label(code), framework.name, time.perf_counter() - began
        )

    def _binding_failed(
        self,
        framework: Framework,
        state: CycleState,
        info: QueuedPodInfo,
        node: str,
        status: Status,
        started: float,
        nominated: bool = False,
    ) -> None:
        """Unreserve, forget and requeue the pod; its nomination is cleared, as kube's
        ``handleBindingCycleError`` does (``clearNominatedNode``). ``nominated``: the binding
        cycle wrote ``node`` to its ``status.nominatedNodeName``."""
        pod = info.pod
        self._unreserve(framework, state, pod, node)
        self.cache.forget_pod(pod)
        if nominated:  # the report compares against the pod as the cluster now has it
            info.pod = _with_nomination(pod, node)
        # The room the pod held is free again: pods waiting for it may fit now. The event
        # carries the pod as it was assumed, on its node, as kube-scheduler's does (hints such
        # as NodeResourcesFit's queue only on the deletion of a pod that had a node). A pod
        # that was rejected goes back first and is not moved by its own event (kube defers the
        # move and leaves the pod out).
        freed = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
        if isinstance(status.err, BindError) and not status.err.retryable:
            self.queue.move_on_event(freed, _assumed(pod, node), None)
            log.info("dropping pod %s: %s", pod.key, status.message())
            self.queue.done(pod.uid)
            return
        if status.is_rejected():
            self._fail_with_status(info, status, started, nominated_node_name=CLEAR_NOMINATION)
            self.queue.move_on_event(freed, _assumed(pod, node), None, skip_uid=pod.uid)
            return
        self.queue.move_on_event(freed, _assumed(pod, node), None)
        self._fail_with_status(info, status, started, nominated_node_name=CLEAR_NOMINATION)

    # -- failures ------------------------------------------------------------------------------
    def _fail_with_status(
        self,
        info: QueuedPodInfo,
        status: Status,
        started: float,
        nominated_node_name: str | None = None,
    ) -> None:
        if status.is_rejected():
            self._fail(
                info,
                REASON_UNSCHEDULABLE,
                status.message(),
                {status.plugin} if status.plugin else set(),
                started,
                nominated_node_name=nominated_node_name,
            )
        else:
            self._fail(
                info,
                REASON_SCHEDULER_ERROR,
                status.message(),
                set(),
                started,
                error=True,
                nominated_node_name=nominated_node_name,
            )

    def _fail(
        self,
        info: QueuedPodInfo,
        reason: str,
        message: str,
        plugins: set[str],
        started: float,
        error: bool = False,
        nominated_node_name: str | None = None,
    ) -> None:
        """Requeue the pod and report its failure. ``nominated_node_name``: the nomination to
        report, kube's ``nominatingInfo``: a node, :data:`CLEAR_NOMINATION` (the pod's
        nomination ends, in the nominator and in its ``status.nominatedNodeName``), or ``None``
        to leave it as it is."""
        pod = info.pod
        log.debug("unable to schedule pod %s: %s", pod.key, message)
        self.queue.requeue_after_failure(info, plugins, error=error)
        if nominated_node_name == CLEAR_NOMINATION:  # kube's AddNominatedPod with ModeOverride ""
            self.queue.nominator.remove(pod)
        self._record(Attempt(pod, None, reason, message), started)
        try:
            nominated = (
                nominated_node_name
                if nominated_node_name is not None
                else (pod.nominated_node_name or None)
            )
            self.backend.report_failure(pod, reason, message, nominated)
        except Exception:
            log.exception("recording the failure of pod %s failed", pod.key)

    def _record(self, attempt: Attempt, started: float) -> None:
        if self.record_attempts:
            with self._attempts_lock:
                self.attempts[attempt.pod.uid] = attempt
        if self._attempt_observers:
            seconds = time.monotonic() - started
            for observer in self._attempt_observers:
                observer(attempt, seconds)

    def observe_attempts(self, observer: Callable[[Attempt, float], None]) -> None:
        """Call ``observer(attempt, seconds)`` after each scheduling attempt from now on
        (``run``'s metrics, ``explain``'s record, tests), in the order they were added."""
        self._attempt_observers.append(observer)


def _assumed(pod: Pod, node_name: str) -> Pod:
    """``pod`` as it was assumed: on ``node_name`` (kube sets ``spec.nodeName`` on the assumed
    copy), for the event that forgetting it sends."""
    if pod.node_name == node_name:
        return pod
    assumed = copy.copy(pod)
    assumed.node_name = node_name
    spec = pod.raw.get("spec") or {}
    assumed.raw = {**pod.raw, "spec": {**spec, "nodeName": node_name}}
    return assumed


def _with_nomination(pod: Pod, node_name: str) -> Pod:
    """``pod`` with ``status.nominatedNodeName`` set to ``node_name``, as the binding cycle
    wrote it (the pod objects themselves are shared with the informer and never changed)."""
    nominated = copy.copy(pod)
    nominated.nominated_node_name = node_name
    status = pod.raw.get("status") or {}
    nominated.raw = {**pod.raw, "status": {**status, "nominatedNodeName": node_name}}
    return nominated
