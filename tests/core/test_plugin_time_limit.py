"""The plugin time limit (``Scheduler(plugin_timeout=...)``, ``kubesched run --plugin-timeout``)
at every extension point a plugin can hang in: the scheduling cycle, Reserve, Permit (the
plugin call), and the binding cycle's PreBind, Bind and PostBind on binding workers.

A plugin that overruns ends the pod's attempt with an Error naming the point and plugin: the
pod is unreserved, forgotten from the cache and retried after backoff, and the scheduler goes on
with the other pods (binding ones too: a hung Bind does not keep its worker). PostBind is
informational: a hung one leaves the pod bound and frees the worker.

Plugin calls run on the thread that needs them; a call that overruns is left on its thread and
a new one goes on with the loop or the worker's queue (engine/watchdog.py, whose own cases are
in test_watchdog.py).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched import Code, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.backends.memory import InMemoryBackend
from kubesched.engine.scheduler import REASON_SCHEDULER_ERROR, Attempt, Scheduler
from kubesched.engine.watchdog import PluginCall
from kubesched.service.simulate import VirtualClock
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import TEST_BINDER, make_config

LIMIT = 0.2
#: How long a hung plugin blocks unless released (every test releases it when it ends).
HANG_SECONDS = 30.0
HUNG = "Hanging"
RECORDER = "Recorder"

#: Set when a test ends: hung plugins then return.
RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def _release_hung_plugins() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


def _hangs(pod: Pod, seen: set[str], lock: threading.Lock) -> bool:
    """Pods named ``hung-*`` hang on their first attempt only."""
    if not pod.name.startswith("hung"):
        return False
    with lock:
        first = pod.uid not in seen
        seen.add(pod.uid)
    if first:
        RELEASE.wait(HANG_SECONDS)
    return first


class _Hanging:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.seen: set[str] = set()
        self.lock = threading.Lock()
        self.handle = handle

    def hang(self, pod: Pod) -> bool:
        return _hangs(pod, self.seen, self.lock)


class HangsAtPreFilter(_Hanging):
    @hookimpl
    def pre_filter(self, pod: Pod) -> None:
        self.hang(pod)


class HangsAtFilter(_Hanging):
    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> None:
        self.hang(pod)


class HangsAtReserve(_Hanging):
    @hookimpl
    def reserve(self, pod: Pod, node_name: str) -> None:
        self.hang(pod)

    @hookimpl
    def unreserve(self, pod: Pod, node_name: str) -> None:
        pass


class HangsAtPermit(_Hanging):
    @hookimpl
    def permit(self, pod: Pod, node_name: str) -> Status | None:
        if self.hang(pod):  # comes back late asking to wait: must not hold the pod later
            return Status(Code.WAIT, timeout=HANG_SECONDS)
        return None


class HangsAtPreBind(_Hanging):
    @hookimpl
    def pre_bind(self, pod: Pod, node_name: str) -> None:
        self.hang(pod)


class HangsAtBind(_Hanging):
    """Binds pods it hung on (late: its result is dropped); skips the others."""

    @hookimpl
    def bind(self, pod: Pod, node_name: str) -> Status:
        if self.hang(pod):
            return Status.success()
        return Status(Code.SKIP)


class HangsAtPostBind(_Hanging):
    @hookimpl
    def post_bind(self, pod: Pod, node_name: str) -> None:
        self.hang(pod)


class Recorder:
    """Reserve/Unreserve bookkeeping, to prove a failed attempt is unreserved."""

    unreserved: list[str] = []

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def reserve(self, pod: Pod, node_name: str) -> None:
        pass

    @hookimpl
    def unreserve(self, pod: Pod, node_name: str) -> None:
        Recorder.unreserved.append(pod.name)


@dataclass(frozen=True)
class Case:
    plugin: type
    point: str  # the profile's field
    name: str  # the extension point in messages
    fails: bool = True  # PostBind: the pod stays bound


CASES = {
    "PreFilter": Case(HangsAtPreFilter, "preFilter", "PreFilter"),
    "Filter": Case(HangsAtFilter, "filter", "Filter"),
    "Reserve": Case(HangsAtReserve, "reserve", "Reserve"),
    "Permit": Case(HangsAtPermit, "permit", "Permit"),
    "PreBind": Case(HangsAtPreBind, "preBind", "PreBind"),
    "Bind": Case(HangsAtBind, "bind", "Bind"),
    "PostBind": Case(HangsAtPostBind, "postBind", "PostBind", fails=False),
}


def _scheduler(case: Case, pods: list[Pod], workers: int) -> tuple[Scheduler, InMemoryBackend]:
    enabled = [{"name": HUNG}]
    if case.point == "bind":
        enabled.append({"name": TEST_BINDER})
    config, registry = make_config(
        {HUNG: case.plugin, RECORDER: Recorder},
        {
            "plugins": {
                case.point: {"enabled": enabled},
                "reserve": {"enabled": [{"name": RECORDER}] + enabled * (case.point == "reserve")},
            }
        },
    )
    backend = InMemoryBackend([make_node("n1").obj(), make_node("n2").obj()], pods)
    scheduler = Scheduler(
        config,
        backend,
        registry,
        clock=VirtualClock(),
        seed=0,
        binding_workers=workers,
        plugin_timeout=LIMIT,
    )
    scheduler.start()
    return scheduler, backend


class _Loop:
    """``scheduler.run`` on a thread of its own, as ``kubesched run`` has it: a plugin call
    that hangs holds the loop's thread until the watchdog hands the loop to a new one (a
    direct ``schedule_one`` from the test would be that thread, stuck for HANG_SECONDS)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.ended: Counter[str] = Counter()
        self._changed = threading.Condition()
        scheduler.observe_attempts(self._observe)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=scheduler.run, args=(self.stop, 0.02), daemon=True)
        self.thread.start()

    def _observe(self, attempt: Attempt, _seconds: float) -> None:
        with self._changed:
            self.ended[attempt.pod.uid] += 1
            self._changed.notify_all()

    def settle(self, pods: list[Pod], attempts: int = 1) -> None:
        """Wait until each of ``pods`` has ended ``attempts`` attempts and no binding runs."""
        with self._changed:
            assert self._changed.wait_for(
                lambda: all(self.ended[p.uid] >= attempts for p in pods), 10 * LIMIT + 5
            ), dict(self.ended)
        assert self.scheduler.wait_for_bindings(timeout=10 * LIMIT + 5)

    def retry_after_backoff(self, pods: list[Pod]) -> None:
        """Let the backoff of the pods that erred pass; wait for their second attempt."""
        self.scheduler.queue.clock.now += 1.0  # type: ignore[attr-defined]
        self.scheduler.queue.flush()
        self.settle(pods, attempts=2)


def _schedule_all(scheduler: Scheduler, pods: list[Pod]) -> _Loop:
    loop = _Loop(scheduler)
    loop.settle(pods)
    return loop


@pytest.mark.parametrize("point", list(CASES))
def test_a_hung_plugin_is_an_error_for_its_pod_only(point: str) -> None:
    case = CASES[point]
    Recorder.unreserved = []
    hung, others = make_pod("hung").obj(), [make_pod(f"ok-{i}").obj() for i in range(4)]
    # One binding worker: a hung binding point that kept it would hold up every later pod.
    scheduler, backend = _scheduler(case, [hung, *others], workers=1)
    try:
        loop = _schedule_all(scheduler, [hung, *others])
        for pod in others:
            assert backend.pods[pod.uid].node_name, pod.name
        attempt = scheduler.attempts[hung.uid]
        if not case.fails:
            assert attempt.node_name and backend.pods[hung.uid].node_name
            return
        assert attempt.node_name is None
        assert attempt.reason == REASON_SCHEDULER_ERROR
        assert attempt.message == (
            f'running {case.name} plugin "{HUNG}": did not return within {LIMIT:g}s'
        )
        assert backend.conditions[hung.key] == (REASON_SCHEDULER_ERROR, attempt.message)
        assert not backend.pods[hung.uid].node_name
        assert not scheduler.cache.is_assumed(hung.uid)
        if case.point in ("reserve", "permit", "preBind", "bind"):
            assert Recorder.unreserved == ["hung"]
        # Retried after backoff, like any Error: the plugin answers this time.
        assert scheduler.queue.pending()["backoff"] == 1
        loop.retry_after_backoff([hung])
        assert scheduler.attempts[hung.uid].node_name
        assert backend.pods[hung.uid].node_name
        assert scheduler.waiting_pods.get(hung.uid) is None
        assert loop.thread.is_alive() and not scheduler.loop_stalled(5)
    finally:
        RELEASE.set()
        scheduler.stop()


@pytest.mark.parametrize("point", ["PreFilter", "Permit"])
def test_the_loop_goes_on_on_a_new_thread_and_the_stuck_one_ends(point: str) -> None:
    """A scheduling-cycle plugin that hangs holds the loop's thread: a new thread goes on with
    the loop at once, and the stuck one, when its call returns, ends without touching the
    cycle it was in (one loop runs, never two)."""
    hung, other = make_pod("hung").obj(), make_pod("ok").obj()
    scheduler, backend = _scheduler(CASES[point], [hung, other], workers=1)
    try:
        loop = _schedule_all(scheduler, [hung, other])
        stuck = [t for t in threading.enumerate() if t.name == "scheduling-loop"]
        assert len(stuck) == 2, "the stuck thread and the one that went on"
        assert scheduler.loop_thread in stuck
        stuck.remove(scheduler.loop_thread)
        RELEASE.set()
        stuck[0].join(5)
        assert not stuck[0].is_alive()
        assert scheduler.loop_thread.is_alive() and loop.thread.is_alive()
        assert scheduler.attempts[hung.uid].reason == REASON_SCHEDULER_ERROR
        assert loop.ended[hung.uid] == 1, "the late return ended no second attempt"
        loop.retry_after_backoff([hung])
        assert backend.pods[hung.uid].node_name
    finally:
        RELEASE.set()
        scheduler.stop()
    loop.thread.join(5)
    assert not loop.thread.is_alive(), "run() returns once the loop's latest thread ends"
    assert scheduler.loop_ended


@pytest.mark.parametrize("point", ["PreBind", "Bind"])
def test_hung_binding_points_do_not_hold_other_bindings(point: str) -> None:
    """Several pods hang at once, more than there are workers: every other pod still binds,
    within about one limit per hung pod (each stuck worker is replaced at the limit)."""
    hung = [make_pod(f"hung-{i}").obj() for i in range(3)]
    others = [make_pod(f"ok-{i}").obj() for i in range(6)]
    scheduler, backend = _scheduler(CASES[point], [*hung, *others], workers=2)
    try:
        _schedule_all(scheduler, [*hung, *others])
        assert all(backend.pods[p.uid].node_name for p in others)
        assert {scheduler.attempts[p.uid].reason for p in hung} == {REASON_SCHEDULER_ERROR}
    finally:
        RELEASE.set()
        scheduler.stop()


def test_a_late_bind_result_is_dropped_and_the_pod_is_bound_once() -> None:
    """A Bind that returns after the limit has been given up on: its result is ignored, and
    the pod's retry binds it exactly once."""
    hung = make_pod("hung").obj()
    scheduler, backend = _scheduler(CASES["Bind"], [hung], workers=1)
    try:
        loop = _schedule_all(scheduler, [hung])
        assert scheduler.attempts[hung.uid].reason == REASON_SCHEDULER_ERROR
        RELEASE.set()  # the hung call now returns Success, too late
        time.sleep(LIMIT)
        assert not backend.pods[hung.uid].node_name
        loop.retry_after_backoff([hung])
        assert backend.pods[hung.uid].node_name
        scheduled = [e for e in backend.events if e.reason == "Scheduled"]
        assert len(scheduled) == 1
    finally:
        scheduler.stop()


def test_no_limit_waits_for_the_plugin() -> None:
    """``plugin_timeout=None``: calls run on the caller's thread, however long they take, and
    nothing watches them."""
    config, registry = make_config(
        {HUNG: HangsAtReserve}, {"plugins": {"reserve": {"enabled": [{"name": HUNG}]}}}
    )
    pod = make_pod("hung").obj()
    backend = InMemoryBackend([make_node("n1").obj()], [pod])
    scheduler = Scheduler(config, backend, registry, clock=VirtualClock(), inline_binding=True)
    scheduler.start()
    timer = threading.Timer(LIMIT * 2, RELEASE.set)
    began = time.monotonic()
    timer.start()
    try:
        assert scheduler.schedule_one(timeout=0)
        assert time.monotonic() - began >= LIMIT * 2
        assert backend.pods[pod.uid].node_name == "n1"
        assert scheduler.watchdog._thread is None, "never started"
    finally:
        timer.cancel()
        scheduler.stop()


def test_binding_plugin_is_named_per_pod_under_concurrency() -> None:
    """Binding cycles run in parallel: the Error names the plugin of that pod's cycle, not
    whatever another worker runs at that moment."""
    hung = make_pod("hung").obj()
    others = [make_pod(f"ok-{i}").obj() for i in range(8)]
    scheduler, _ = _scheduler(CASES["PreBind"], [hung, *others], workers=4)
    try:
        _schedule_all(scheduler, [hung, *others])
        assert scheduler.attempts[hung.uid].message == (
            f'running PreBind plugin "{HUNG}": did not return within {LIMIT:g}s'
        )
    finally:
        RELEASE.set()
        scheduler.stop()


def test_a_late_permit_wait_does_not_hold_the_pod() -> None:
    """A Permit call given up on that comes back asking to wait registers nothing lasting: the
    pod's next binding cycle does not wait on it."""
    hung = make_pod("hung").obj()
    scheduler, backend = _scheduler(CASES["Permit"], [hung], workers=1)
    try:
        loop = _schedule_all(scheduler, [hung])
        assert scheduler.attempts[hung.uid].reason == REASON_SCHEDULER_ERROR
        RELEASE.set()  # the hung call now returns Wait, too late
        time.sleep(LIMIT)
        assert scheduler.waiting_pods.get(hung.uid) is None
        began = time.monotonic()
        loop.retry_after_backoff([hung])
        assert backend.pods[hung.uid].node_name
        assert time.monotonic() - began < HANG_SECONDS / 2
    finally:
        scheduler.stop()


def test_a_direct_caller_gets_its_call_back_late_and_the_attempt_was_already_ended() -> None:
    """``schedule_one`` called directly (tests, ``simulate``'s driver) has no loop for a new
    thread to go on with: the caller waits out its plugin, but the pod's attempt ended at the
    limit, and the late result changes nothing."""
    hung = make_pod("hung").obj()
    scheduler, backend = _scheduler(CASES["Filter"], [hung], workers=1)
    ended: list[Attempt] = []
    scheduler.observe_attempts(lambda attempt, _seconds: ended.append(attempt))
    timer = threading.Timer(LIMIT * 5, RELEASE.set)
    timer.start()
    try:
        assert scheduler.schedule_one(timeout=0)
        assert [a.reason for a in ended] == [REASON_SCHEDULER_ERROR]
        assert not backend.pods[hung.uid].node_name
        assert scheduler.queue.pending()["backoff"] == 1
    finally:
        timer.cancel()
        scheduler.stop()


def test_points_without_plugins_are_not_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only points that have plugins are made under the watch: a profile with a Filter and a
    Bind plugin watches the scheduling cycle and Bind, not Reserve, Permit, PreBind or PostBind
    (each watch is a lock taken twice)."""
    from kubesched.engine import scheduler as scheduler_module

    watched: list[str] = []

    def counting(call: Any, *args: Any) -> PluginCall:
        watched.append(getattr(call, "__name__", "?"))
        return PluginCall(call, *args)

    monkeypatch.setattr(scheduler_module, "PluginCall", counting)
    config, registry = make_config({RECORDER: Recorder}, {"plugins": {}})
    pod = make_pod("p").obj()
    backend = InMemoryBackend([make_node("n1").obj()], [pod])
    scheduler = Scheduler(
        config, backend, registry, clock=VirtualClock(), seed=0, plugin_timeout=LIMIT
    )
    scheduler.start()
    try:
        _schedule_all(scheduler, [pod])
    finally:
        scheduler.stop()
    assert backend.pod("default", "p").node_name == "n1"
    assert watched == ["schedule", "run_bind"]
    assert scheduler.watchdog.watching() == 0
