"""The plugin time limit (``Scheduler(plugin_timeout=...)``, ``kubesched run --plugin-timeout``)
at every extension point a plugin can hang in: the scheduling cycle, Reserve, Permit (the
plugin call), and the binding cycle's PreBind, Bind and PostBind on binding workers.

A plugin that overruns ends the pod's attempt with an Error naming the point and plugin: the
pod is unreserved, forgotten from the cache and retried after backoff, and the scheduler goes on
with the other pods (binding ones too: a hung Bind does not keep its worker). PostBind is
informational: a hung one leaves the pod bound and frees the worker.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from kubesched import Code, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.backends.memory import InMemoryBackend
from kubesched.engine.scheduler import REASON_SCHEDULER_ERROR, Scheduler, _CallRunner
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


def _schedule_all(scheduler: Scheduler) -> None:
    while scheduler.schedule_one(timeout=0):
        pass
    assert scheduler.wait_for_bindings(timeout=10 * LIMIT + 5)


@pytest.mark.parametrize("point", list(CASES))
def test_a_hung_plugin_is_an_error_for_its_pod_only(point: str) -> None:
    case = CASES[point]
    Recorder.unreserved = []
    hung, others = make_pod("hung").obj(), [make_pod(f"ok-{i}").obj() for i in range(4)]
    # One binding worker: a hung binding point that kept it would hold up every later pod.
    scheduler, backend = _scheduler(case, [hung, *others], workers=1)
    try:
        _schedule_all(scheduler)
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
        scheduler.queue.clock.now += 1.0  # type: ignore[attr-defined]
        scheduler.queue.flush()
        _schedule_all(scheduler)
        assert scheduler.attempts[hung.uid].node_name
        assert backend.pods[hung.uid].node_name
        assert scheduler.waiting_pods.get(hung.uid) is None
    finally:
        RELEASE.set()
        scheduler.stop()


@pytest.mark.parametrize("point", ["PreBind", "Bind"])
def test_hung_binding_points_do_not_hold_other_bindings(point: str) -> None:
    """Several pods hang at once, more than there are workers: every other pod still binds,
    within about one limit per hung pod (each worker waits out at most one limit per pod)."""
    hung = [make_pod(f"hung-{i}").obj() for i in range(3)]
    others = [make_pod(f"ok-{i}").obj() for i in range(6)]
    scheduler, backend = _scheduler(CASES[point], [*hung, *others], workers=2)
    try:
        _schedule_all(scheduler)
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
        _schedule_all(scheduler)
        assert scheduler.attempts[hung.uid].reason == REASON_SCHEDULER_ERROR
        RELEASE.set()  # the hung call now returns Success, too late
        time.sleep(LIMIT)
        assert not backend.pods[hung.uid].node_name
        scheduler.queue.clock.now += 1.0  # type: ignore[attr-defined]
        scheduler.queue.flush()
        _schedule_all(scheduler)
        assert backend.pods[hung.uid].node_name
        scheduled = [e for e in backend.events if e.reason == "Scheduled"]
        assert len(scheduled) == 1
    finally:
        scheduler.stop()


def test_no_limit_waits_for_the_plugin() -> None:
    """``plugin_timeout=None``: calls run on the caller's thread, however long they take."""
    config, registry = make_config(
        {HUNG: HangsAtReserve}, {"plugins": {"reserve": {"enabled": [{"name": HUNG}]}}}
    )
    backend = InMemoryBackend([make_node("n1").obj()], [make_pod("hung").obj()])
    scheduler = Scheduler(config, backend, registry, clock=VirtualClock(), inline_binding=True)
    scheduler.start()
    timer = threading.Timer(LIMIT * 2, RELEASE.set)
    timer.start()
    try:
        _schedule_all(scheduler)
        assert all(p.node_name for p in backend.pods.values())
        assert not scheduler._runners
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
        _schedule_all(scheduler)
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
        _schedule_all(scheduler)
        assert scheduler.attempts[hung.uid].reason == REASON_SCHEDULER_ERROR
        RELEASE.set()  # the hung call now returns Wait, too late
        time.sleep(LIMIT)
        assert scheduler.waiting_pods.get(hung.uid) is None
        scheduler.queue.clock.now += 1.0  # type: ignore[attr-defined]
        scheduler.queue.flush()
        began = time.monotonic()
        _schedule_all(scheduler)
        assert backend.pods[hung.uid].node_name
        assert time.monotonic() - began < HANG_SECONDS / 2
    finally:
        scheduler.stop()


def test_points_without_plugins_run_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only points that have plugins are handed to a runner thread: a profile with a Filter
    and a Bind plugin hands over the scheduling cycle and Bind, not Reserve, Permit, PreBind
    or PostBind (two thread switches saved for each)."""
    from kubesched.engine import scheduler as scheduler_module

    handed_over: list[str] = []
    run = scheduler_module._CallRunner.run

    def counting(self: Any, timeout: float, call: Any, *args: Any) -> Any:
        handed_over.append(getattr(call, "__name__", "?"))
        return run(self, timeout, call, *args)

    monkeypatch.setattr(scheduler_module._CallRunner, "run", counting)
    config, registry = make_config({RECORDER: Recorder}, {"plugins": {}})
    backend = InMemoryBackend([make_node("n1").obj()], [make_pod("p").obj()])
    scheduler = Scheduler(
        config, backend, registry, clock=VirtualClock(), seed=0, plugin_timeout=LIMIT
    )
    scheduler.start()
    _schedule_all(scheduler)
    scheduler.stop()
    assert backend.pod("default", "p").node_name == "n1"
    assert handed_over == ["schedule", "run_bind"]


# -- the runner thread itself ------------------------------------------------------------------
def test_runner_close_when_idle_ends_its_thread() -> None:
    from kubesched.engine.scheduler import _CallRunner

    runner = _CallRunner("idle")
    assert runner.run(1.0, lambda x: x + 1, (1,)) == 2
    runner.close()
    runner.close()  # twice: still no error
    runner.thread.join(2)
    assert not runner.thread.is_alive()


def test_runner_closed_during_a_call_still_answers_it() -> None:
    """Shutdown closes every runner while binding cycles may be mid-call (the deposed leader
    of the failover test): the call's outcome reaches its caller and the thread ends after."""
    from kubesched.engine.scheduler import _CallRunner

    runner = _CallRunner("busy")
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(5)
        return "bound"

    results: list[str] = []
    caller = threading.Thread(target=lambda: results.append(runner.run(5.0, slow, ())))
    caller.start()
    assert started.wait(2)
    runner.close()
    release.set()
    caller.join(5)
    assert results == ["bound"]
    runner.thread.join(2)
    assert not runner.thread.is_alive()


def test_runner_closed_between_hand_over_and_take_runs_the_call() -> None:
    """close() in the instant after a call is handed over and before the runner takes it:
    no error (the hand-over already released the lock), the call runs, the thread ends."""
    import sys

    from kubesched.engine.scheduler import _CallRunner

    runner = _CallRunner("handed-over")
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1.0)  # the runner cannot take the call before close() has run
    try:
        runner._job = (lambda: "ran", ())
        runner._go.release()
        runner.close()
    finally:
        sys.setswitchinterval(interval)
    assert runner._done.acquire(timeout=2)
    assert runner._outcome == (True, "ran")
    runner.thread.join(2)
    assert not runner.thread.is_alive()


class _Unfit(Exception):
    """What a scheduling cycle's call raises for an unschedulable pod (a FitError)."""


def _unfit() -> None:
    raise _Unfit("0/1000 nodes are available")


def test_an_exception_a_runner_passes_back_is_freed_without_the_collector() -> None:
    """Under SchedulingWithMixedChurn every attempt of the unschedulable pod raises a FitError
    through the runner; each used to be a reference cycle (exception, traceback, the runner's
    frame), collected only when the tuned GC got to it: RSS grew ~0.2 MB/s over the churn."""
    runner = _CallRunner("test-runner")
    gc.disable()
    try:
        caught: weakref.ref[BaseException] | None = None
        try:
            runner.run(5.0, _unfit, ())
        except _Unfit as exc:
            caught = weakref.ref(exc)
        assert caught is not None
        runner.run(5.0, int, ())  # the runner thread holds its last outcome until the next
        assert caught() is None, "freed by its reference count alone"
    finally:
        gc.enable()
        runner.close()
