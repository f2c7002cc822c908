"""The watchdog that enforces the plugin time limit, and the binding workers it keeps at size
(engine/watchdog.py, engine/binding_workers.py), on their own: a cycle is a generator that
yields the calls it wants made, the watchdog makes them on the driving thread and, when one
overruns, finishes the cycle with an error on a new thread that then does the stuck thread's
work."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.engine.binding_workers import BindingWorkers
from kubesched.engine.watchdog import Abandoned, Cycle, PluginCall, Watchdog

LIMIT = 0.1


class Overran(Exception):
    pass


def _overrun(request: PluginCall) -> Overran:
    point, plugin = request.running()
    return Overran(f"{point} {plugin}")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _named(point: str = "Filter", plugin: str = "P") -> Any:
    return lambda: (point, plugin)


def _cycle(calls: list[Any], outcomes: list[Any]) -> Cycle:
    """Yields each call; records what came back (a value, or the exception thrown in) and the
    thread it came back on."""
    for call in calls:
        try:
            value = yield PluginCall(call, (), _named(), None)
            outcomes.append(("value", value, threading.current_thread().name))
        except Exception as exc:
            outcomes.append(("error", str(exc), threading.current_thread().name))


def test_calls_run_on_the_driving_thread_and_their_results_come_back() -> None:
    watchdog = Watchdog(LIMIT, _overrun)
    outcomes: list[Any] = []
    ran_on: list[str] = []

    def call() -> int:
        ran_on.append(threading.current_thread().name)
        return 7

    def fails() -> None:
        raise ValueError("no fit")

    watchdog.drive(_cycle([call, fails], outcomes))
    here = threading.current_thread().name
    assert ran_on == [here]
    assert outcomes == [("value", 7, here), ("error", "no fit", here)]
    assert watchdog.watching() == 0
    watchdog.close()


def test_an_overrun_is_thrown_into_the_cycle_on_a_new_thread_which_then_resumes(
    release: threading.Event,
) -> None:
    """The cycle goes on at the limit with the overrun; the new thread carries the stuck
    thread's name and does its ``resume``; the stuck thread, when its call returns, hands the
    result to ``late`` and unwinds with Abandoned, never resuming the cycle."""
    watchdog = Watchdog(LIMIT, _overrun)
    outcomes: list[Any] = []
    late: list[Any] = []
    resumed = threading.Event()
    resumed_on: list[str] = []
    unwound: list[str] = []

    def cycle() -> Cycle:
        try:
            yield PluginCall(lambda: release.wait(10) and "late value", (), _named(), late.append)
        except Overran as exc:
            outcomes.append((str(exc), threading.current_thread()))

    def stuck_thread() -> None:
        watchdog.serve_as(
            lambda: (resumed_on.append(threading.current_thread().name), resumed.set())
        )
        try:
            watchdog.drive(cycle())
        except Abandoned:
            unwound.append("abandoned")

    stuck = threading.Thread(target=stuck_thread, name="worker_0")
    began = time.monotonic()
    stuck.start()
    assert resumed.wait(5)
    assert time.monotonic() - began < LIMIT + 1.0
    [(message, thread)] = outcomes
    assert message == "Filter P"
    assert thread is not stuck and thread.name == "worker_0"
    assert resumed_on == ["worker_0"]
    assert stuck.is_alive() and not unwound
    release.set()
    stuck.join(5)
    assert unwound == ["abandoned"]
    assert late == ["late value"]
    assert len(outcomes) == 1, "the cycle was not resumed a second time"
    watchdog.close()


def test_a_caller_with_no_role_gets_its_call_back_late_and_returns(
    release: threading.Event,
) -> None:
    watchdog = Watchdog(LIMIT, _overrun)
    outcomes: list[Any] = []
    threading.Timer(LIMIT * 4, release.set).start()
    watchdog.drive(_cycle([lambda: release.wait(10)], outcomes))
    [(kind, message, _thread)] = outcomes
    assert (kind, message) == ("error", "Filter P")
    watchdog.close()


def test_a_late_exception_is_dropped(release: threading.Event) -> None:
    watchdog = Watchdog(LIMIT, _overrun)
    late: list[Any] = []

    def raises_late() -> None:
        release.wait(10)
        raise RuntimeError("late failure")

    def cycle() -> Cycle:
        try:
            yield PluginCall(raises_late, (), _named(), late.append)
        except Overran:
            pass

    threading.Timer(LIMIT * 4, release.set).start()
    watchdog.drive(cycle())
    assert late == []
    watchdog.close()


def test_no_limit_runs_unwatched() -> None:
    watchdog = Watchdog(None, _overrun)
    outcomes: list[Any] = []
    watchdog.drive(_cycle([lambda: time.sleep(LIMIT * 2) or "slow"], outcomes))
    assert [o[1] for o in outcomes] == ["slow"]
    assert watchdog._thread is None


class _Unfit(Exception):
    """What a scheduling cycle's call raises for an unschedulable pod (a FitError)."""


def _unfit() -> None:
    raise _Unfit("0/1000 nodes are available")


@pytest.mark.parametrize("limit", [5.0, None], ids=["limit", "no-limit"])
@pytest.mark.parametrize("handed_on", [False, True], ids=["caught", "handed-to-the-next-call"])
def test_an_exception_thrown_into_a_cycle_is_freed_without_the_collector(
    limit: float | None, handed_on: bool
) -> None:
    """Under SchedulingWithMixedChurn every attempt of the unschedulable pod raises a FitError
    through the watchdog, and the cycle hands it to PostFilter (the next call's arguments hold
    it). One kept in a reference cycle (exception, traceback, the call's frames and, through
    their callers, the driver's frame and its last request) is freed only when the tuned GC
    gets to it: RSS grew ~0.2, then ~0.4 MB/s over the churn."""
    watchdog = Watchdog(limit, _overrun)
    caught: list[weakref.ref[BaseException]] = []

    def cycle() -> Cycle:
        try:
            yield PluginCall(_unfit, (), _named(), None)
        except _Unfit as exc:
            caught.append(weakref.ref(exc))
            if handed_on:
                yield PluginCall(lambda error: None, (exc,), _named("PostFilter"), None)

    gc.disable()
    try:
        watchdog.drive(cycle())
        assert caught and caught[0]() is None, "freed by its reference count alone"
    finally:
        gc.enable()
        watchdog.close()


# -- the binding workers -----------------------------------------------------------------------
def test_workers_start_as_jobs_arrive_up_to_their_count() -> None:
    watchdog = Watchdog(None, _overrun)
    workers = BindingWorkers(2, "bw", serving=watchdog.serve_as)
    gate = threading.Event()
    running: list[str] = []
    lock = threading.Lock()
    most = [0]
    active = [0]

    def job() -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
            running.append(threading.current_thread().name)
        gate.wait(5)
        with lock:
            active[0] -= 1

    for _ in range(5):
        workers.submit(job)
    time.sleep(0.1)
    assert most[0] == 2
    gate.set()
    workers.shutdown(wait=True, timeout=5)
    assert len(running) == 5
    assert set(running) == {"bw_0", "bw_1"}
    with pytest.raises(RuntimeError, match="after shutdown"):
        workers.submit(job)


def test_a_stuck_worker_is_replaced_and_shutdown_does_not_wait_for_it(
    release: threading.Event,
) -> None:
    """One worker, one job stuck in its plugin call: the jobs queued behind it run on the
    thread that took over, and shutdown returns once they have, the stuck call still out."""
    watchdog = Watchdog(LIMIT, _overrun)
    workers = BindingWorkers(1, "bw", serving=watchdog.serve_as)
    outcomes: list[Any] = []
    workers.submit(watchdog.drive, _cycle([lambda: release.wait(10)], outcomes))
    for i in range(3):
        workers.submit(watchdog.drive, _cycle([lambda i=i: i], outcomes))
    began = time.monotonic()
    workers.shutdown(wait=True, timeout=5)
    assert time.monotonic() - began < 2
    assert [o[:2] for o in outcomes] == [
        ("error", "Filter P"),
        ("value", 0),
        ("value", 1),
        ("value", 2),
    ]
    assert {o[2] for o in outcomes} == {"bw_0"}
    watchdog.close()


def test_a_job_that_raises_does_not_end_its_worker(caplog: pytest.LogCaptureFixture) -> None:
    watchdog = Watchdog(None, _overrun)
    workers = BindingWorkers(1, "bw", serving=watchdog.serve_as)
    done: list[int] = []

    def bug() -> None:
        raise KeyError("bug")

    workers.submit(bug)
    workers.submit(done.append, 1)
    workers.shutdown(wait=True, timeout=5)
    assert done == [1]
    assert "binding job failed" in caplog.text


class _Fatal(BaseException):
    pass


def test_a_base_exception_ends_the_driving_thread_and_nothing_takes_over() -> None:
    """A plugin's BaseException ends the caller as it would with no limit: the call is not
    left watched, so the cycle is not finished and resumed on a new thread after the limit."""
    watchdog = Watchdog(LIMIT, _overrun)
    resumed = threading.Event()
    outcomes: list[Any] = []

    def fatal() -> None:
        raise _Fatal("loop breaks")

    def drive() -> None:
        watchdog.serve_as(resumed.set)
        with pytest.raises(_Fatal):
            watchdog.drive(_cycle([fatal], outcomes))

    thread = threading.Thread(target=drive)
    thread.start()
    thread.join(5)
    try:
        assert watchdog.watching() == 0
        assert not resumed.wait(LIMIT * 5), "a new thread took over the dead caller's work"
        assert outcomes == []
    finally:
        watchdog.close()
