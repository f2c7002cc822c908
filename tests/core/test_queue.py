"""The scheduling queue: activeQ order, backoff, the unschedulable pool and the events that empty
it, PreEnqueue gates, and pods that change or go away wherever they are.

Cases follow kube-scheduler's ``pkg/scheduler/backend/queue/scheduling_queue_test.go``. The queue
runs over a real :class:`~kubesched.engine.runtime.Framework` built from small plugins, with a fake
clock: no test sleeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    InMemoryBackend,
    Node,
    NodeInfo,
    Pod,
    QueuedPodInfo,
    QueueingHint,
    Snapshot,
    Status,
    hookimpl,
)
from kubesched.config import PluginRef, Profile
from kubesched.engine.metrics import SchedulerMetrics
from kubesched.engine.queue import DEFAULT_MAX_UNSCHEDULABLE_SECONDS, SchedulingQueue
from kubesched.engine.runtime import Framework
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod

PROFILE = "custom-scheduler"
GATE = "Gate"
NODE_FILTER = "NodeFilter"
POD_FILTER = "PodFilter"
SILENT = "Silent"

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
POD_LABEL = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)
POD_OTHER = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_OTHER)

#: Whether the Gate plugin currently gates pods labelled ``gated: "true"`` (tests flip it).
GATE_STATE = {"on": True}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# -- plugins -------------------------------------------------------------------------------------


class _Plugin:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass


class PrioritySortPlugin(_Plugin):
    """Higher priority first, then earlier timestamp (kube's PrioritySort)."""

    @hookimpl
    def queue_sort_less(self, pod_a: QueuedPodInfo, pod_b: QueuedPodInfo) -> bool:
        if pod_a.pod.priority != pod_b.pod.priority:
            return pod_a.pod.priority > pod_b.pod.priority
        return pod_a.timestamp < pod_b.timestamp


class LowestPriorityFirst(_Plugin):
    @hookimpl
    def queue_sort_less(self, pod_a: QueuedPodInfo, pod_b: QueuedPodInfo) -> bool:
        return (pod_a.pod.priority, pod_a.timestamp) < (pod_b.pod.priority, pod_b.timestamp)


def _ungated(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP if new.labels.get("gated") == "true" else QueueingHint.QUEUE


class GatePlugin(_Plugin):
    """PreEnqueue: holds pods labelled ``gated: "true"``; a label update may release them."""

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if GATE_STATE["on"] and pod.labels.get("gated") == "true":
            return Status.unresolvable("waiting for the gated label to go")
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(POD_LABEL, _ungated)]


def _node_is_ok(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE if new is not None and new.labels.get("ok") else QueueingHint.SKIP


class NodeFilterPlugin(_Plugin):
    """Registers Node/Add with a hint: only a node labelled ``ok`` helps."""

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD, _node_is_ok)]


class PodFilterPlugin(_Plugin):
    """Registers the deletion of an assigned pod, without a hint."""

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ASSIGNED_POD_DELETE)]


class SilentPlugin(_Plugin):
    """Registers nothing: the pods it rejects wait for the periodic flush."""

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None


PLUGINS: dict[str, type] = {
    "PrioritySort": PrioritySortPlugin,
    "LowestPriorityFirst": LowestPriorityFirst,
    GATE: GatePlugin,
    NODE_FILTER: NodeFilterPlugin,
    POD_FILTER: PodFilterPlugin,
    SILENT: SilentPlugin,
}


def framework(sort: str = "PrioritySort") -> Framework:
    profile = Profile(
        scheduler_name=PROFILE,
        plugins={
            "queueSort": [PluginRef(sort)],
            "preEnqueue": [PluginRef(GATE)],
            "filter": [PluginRef(NODE_FILTER), PluginRef(POD_FILTER), PluginRef(SILENT)],
        },
    )
    return Framework(profile, Registry(PLUGINS), Handle(PROFILE, InMemoryBackend(), Snapshot))


@pytest.fixture(autouse=True)
def _gate_on() -> None:
    GATE_STATE["on"] = True


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> SchedulingQueue:
    return SchedulingQueue({PROFILE: framework()}, clock=clock)


def pod(name: str, priority: int = 0, **labels: str) -> Pod:
    return make_pod(name).priority(priority).labels(**labels).obj()


def ok_node(name: str = "n-ok") -> Node:
    return make_node(name).label("ok", "yes").obj()


def pop_now(queue: SchedulingQueue) -> QueuedPodInfo | None:
    return queue.pop(timeout=0)


def pop_name(queue: SchedulingQueue) -> str | None:
    info = pop_now(queue)
    return None if info is None else info.pod.name


def pending(queue: SchedulingQueue, **expected: int) -> dict[str, int]:
    return {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0, **expected}


def attempt_and_reject(
    queue: SchedulingQueue, name: str, rejected_by: set[str], error: bool = False
) -> QueuedPodInfo:
    """Pop ``name`` and put it back as its cycle failed."""
    info = pop_now(queue)
    assert info is not None and info.pod.name == name
    queue.requeue_after_failure(info, rejected_by, error=error)
    return info


# -- activeQ order -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("PrioritySort", ["high", "mid-first", "mid-second", "low"]),
        ("LowestPriorityFirst", ["low", "mid-first", "mid-second", "high"]),
    ],
    ids=["priority-sort", "reversed-plugin"],
)
def test_active_queue_follows_the_queue_sort_plugin(
    clock: FakeClock, sort: str, expected: list[str]
) -> None:
    queue = SchedulingQueue({PROFILE: framework(sort)}, clock=clock)
    for name, priority in [("low", 1), ("mid-first", 5), ("high", 10), ("mid-second", 5)]:
        queue.add(pod(name, priority))
        clock.advance(1)
    assert [pop_name(queue) for _ in expected] == expected
    assert pop_now(queue) is None


def test_priority_update_reorders_the_active_queue(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    for name in ("a", "b", "c"):
        queue.add(pod(name))
        clock.advance(1)
    queue.update(pod("c"), pod("c", priority=100), POD_OTHER)
    assert [pop_name(queue) for _ in range(3)] == ["c", "a", "b"]


def test_pop_counts_attempts_and_cycles(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))
    info = pop_now(queue)
    assert info is not None and (info.attempts, queue.scheduling_cycle) == (1, 1)


# -- backoff -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("initial", "maximum", "expected"),
    [
        (1.0, 10.0, [1, 2, 4, 8, 10, 10]),
        (0.5, 3.0, [0.5, 1, 2, 3, 3, 3]),
        (2.0, 2.0, [2, 2, 2, 2, 2, 2]),
    ],
    ids=["defaults", "custom", "initial-equals-max"],
)
def test_backoff_grows_then_caps(
    clock: FakeClock, initial: float, maximum: float, expected: list[float]
) -> None:
    queue = SchedulingQueue(
        {PROFILE: framework()},
        clock=clock,
        initial_backoff_seconds=initial,
        max_backoff_seconds=maximum,
    )
    queue.add(pod("a"))
    waits = []
    for _ in expected:
        attempt_and_reject(queue, "a", set(), error=True)
        assert queue.pending() == pending(queue, backoff=1)
        expiry = queue.next_backoff_expiry()
        assert expiry is not None
        waits.append(expiry - clock.now)
        clock.advance(waits[-1] - 0.001)
        assert pop_now(queue) is None, "released before its backoff ended"
        clock.advance(0.001)
        queue.flush()
        assert queue.pending() == pending(queue, active=1)
    assert waits == pytest.approx(expected)


@pytest.mark.parametrize(
    ("attempts", "seconds"),
    [(0, 1), (1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (1_000, 10), (100_000, 10)],
    ids=lambda v: str(v),
)
def test_backoff_seconds(queue: SchedulingQueue, attempts: int, seconds: float) -> None:
    info = QueuedPodInfo(pod("a"), timestamp=0.0, attempts=attempts)
    assert queue.backoff_seconds(info) == seconds


def test_a_pod_never_tried_skips_backoff(queue: SchedulingQueue) -> None:
    queue.add(pod("a", gated="true"))
    queue.update(pod("a", gated="true"), pod("a"), POD_LABEL)
    assert queue.pending() == pending(queue, active=1)


# -- the unschedulable pool ----------------------------------------------------------------------


def test_rejected_pod_waits_in_the_pool(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))
    info = attempt_and_reject(queue, "a", {NODE_FILTER})
    assert queue.pending() == pending(queue, unschedulable=1)
    assert queue.parked() == [info] and info.unschedulable_plugins == {NODE_FILTER}
    assert pop_now(queue) is None


MOVES = [
    # (rejected by, event, new object, moved)
    ({NODE_FILTER}, NODE_ADD, "ok-node", True),
    ({NODE_FILTER}, NODE_ADD, "plain-node", False),  # the hint says Skip
    ({NODE_FILTER}, NODE_LABEL, "ok-node", False),  # not an event it registered
    ({NODE_FILTER}, ASSIGNED_POD_DELETE, None, False),  # registered by another plugin
    ({POD_FILTER}, ASSIGNED_POD_DELETE, None, True),  # no hint: every such event
    ({POD_FILTER}, ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD), None, False),
    ({NODE_FILTER, POD_FILTER}, ASSIGNED_POD_DELETE, None, True),  # any rejector will do
    ({SILENT}, NODE_ADD, "ok-node", False),
    ({"NotInProfile"}, NODE_ADD, "ok-node", False),
]


@pytest.mark.parametrize(
    ("rejected_by", "event", "new", "moved"),
    MOVES,
    ids=[
        "registered-event-hint-queue",
        "registered-event-hint-skip",
        "unregistered-action",
        "other-plugins-event",
        "event-without-hint",
        "other-action-of-resource",
        "one-of-two-rejectors",
        "plugin-registering-nothing",
        "unknown-plugin",
    ],
)
def test_only_a_registered_event_moves_a_pod_out_of_the_pool(
    queue: SchedulingQueue,
    clock: FakeClock,
    rejected_by: set[str],
    event: ClusterEvent,
    new: str | None,
    moved: bool,
) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", rejected_by)
    new_object = {"ok-node": ok_node(), "plain-node": make_node("plain").obj(), None: None}[new]
    clock.advance(30)  # backoff (1s) long over: a moved pod goes straight to activeQ
    assert queue.move_on_event(event, None, new_object) == int(moved)
    expected = pending(queue, active=1) if moved else pending(queue, unschedulable=1)
    assert queue.pending() == expected


def test_pod_moved_while_backing_off_goes_to_backoff(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", {POD_FILTER})
    clock.advance(0.5)  # the first backoff is 1s
    queue.move_on_event(ASSIGNED_POD_DELETE)
    assert queue.pending() == pending(queue, backoff=1)
    assert pop_now(queue) is None
    clock.advance(0.5)
    assert pop_name(queue) == "a"


def test_a_broken_hint_does_not_strand_the_pod(clock: FakeClock) -> None:
    def broken(pod: Any, old: Any, new: Any) -> QueueingHint:
        raise RuntimeError("boom")

    class Breaking(NodeFilterPlugin):
        @hookimpl
        def events_to_register(self) -> list[ClusterEventWithHint]:
            return [ClusterEventWithHint(NODE_ADD, broken)]

    profile = Profile(
        scheduler_name=PROFILE,
        plugins={"queueSort": [PluginRef("PrioritySort")], "filter": [PluginRef("Breaking")]},
    )
    registry = Registry({"PrioritySort": PrioritySortPlugin, "Breaking": Breaking})
    fw = Framework(profile, registry, Handle(PROFILE, InMemoryBackend(), Snapshot))
    queue = SchedulingQueue({PROFILE: fw}, clock=clock)
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", {"Breaking"})
    assert queue.move_on_event(NODE_ADD, None, ok_node()) == 1


@pytest.mark.parametrize(
    ("waited", "moved"),
    [
        (60, False),
        (DEFAULT_MAX_UNSCHEDULABLE_SECONDS - 1, False),
        (DEFAULT_MAX_UNSCHEDULABLE_SECONDS, True),
    ],
    ids=["1-minute", "just-under-5-minutes", "5-minutes"],
)
def test_pool_is_flushed_after_five_minutes(
    queue: SchedulingQueue, clock: FakeClock, waited: float, moved: bool
) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", {SILENT})
    clock.advance(waited)
    queue.flush()
    expected = pending(queue, active=1) if moved else pending(queue, unschedulable=1)
    assert queue.pending() == expected


def test_failure_without_a_rejecting_plugin_is_retried_after_backoff(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", set())
    assert queue.pending() == pending(queue, backoff=1)
    clock.advance(1)
    assert pop_name(queue) == "a"


@pytest.mark.parametrize(
    "rejected_by", [{NODE_FILTER}, {SILENT}, set()], ids=["plugin", "silent", "none"]
)
def test_error_skips_the_pool(queue: SchedulingQueue, rejected_by: set[str]) -> None:
    queue.add(pod("a"))
    info = attempt_and_reject(queue, "a", rejected_by, error=True)
    assert queue.pending() == pending(queue, backoff=1) and info.last_failure_was_error


# -- events during the scheduling cycle ----------------------------------------------------------


IN_FLIGHT = [
    # (rejected by, events while in flight, goes to)
    ({NODE_FILTER}, [(NODE_ADD, "ok-node")], "backoff"),
    ({NODE_FILTER}, [(NODE_ADD, "plain-node")], "unschedulable"),
    ({NODE_FILTER}, [(ASSIGNED_POD_DELETE, None)], "unschedulable"),
    ({NODE_FILTER}, [(ASSIGNED_POD_DELETE, None), (NODE_ADD, "ok-node")], "backoff"),
    ({POD_FILTER}, [(ASSIGNED_POD_DELETE, None)], "backoff"),
    ({SILENT}, [(NODE_ADD, "ok-node"), (ASSIGNED_POD_DELETE, None)], "unschedulable"),
    ({NODE_FILTER}, [], "unschedulable"),
]


@pytest.mark.parametrize(
    ("rejected_by", "events", "place"),
    IN_FLIGHT,
    ids=[
        "helpful-event",
        "hint-says-skip",
        "other-plugins-event",
        "helpful-among-others",
        "event-without-hint",
        "nothing-registered",
        "no-event",
    ],
)
def test_event_during_the_cycle_is_not_lost(
    queue: SchedulingQueue,
    rejected_by: set[str],
    events: list[tuple[ClusterEvent, str | None]],
    place: str,
) -> None:
    objects = {"ok-node": ok_node(), "plain-node": make_node("plain").obj(), None: None}
    queue.add(pod("a"))
    info = pop_now(queue)
    assert info is not None
    for event, new in events:
        queue.move_on_event(event, None, objects[new])
    queue.requeue_after_failure(info, rejected_by)
    assert queue.pending() == pending(queue, **{place: 1})


def test_event_before_the_pop_does_not_count(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))
    queue.move_on_event(NODE_ADD, None, ok_node())
    attempt_and_reject(queue, "a", {NODE_FILTER})
    assert queue.pending() == pending(queue, unschedulable=1)


def test_events_are_kept_for_every_pod_in_flight(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a", priority=2))
    queue.add(pod("b", priority=1))
    a = pop_now(queue)
    queue.move_on_event(ASSIGNED_POD_DELETE)  # during a's cycle only
    b = pop_now(queue)
    queue.move_on_event(NODE_ADD, None, ok_node())  # during both cycles
    assert a is not None and b is not None
    queue.requeue_after_failure(a, {POD_FILTER})
    queue.requeue_after_failure(b, {POD_FILTER})
    # a saw the pod deletion; b popped after it and saw only the node.
    assert queue.pending() == pending(queue, backoff=1, unschedulable=1)
    assert [p.pod.name for p in queue.parked()] == ["b"]


def test_a_later_pod_done_first_keeps_the_events_of_an_earlier_one(queue: SchedulingQueue) -> None:
    # Cycles end out of order (a binding waits for a worker while later pods are done): the log
    # is kept back to the oldest pod still in flight, not to the one popped last.
    for name, priority in (("a", 3), ("b", 2), ("c", 1)):
        queue.add(pod(name, priority=priority))
    a = pop_now(queue)
    queue.move_on_event(ASSIGNED_POD_DELETE)  # during a's cycle only
    b, c = pop_now(queue), pop_now(queue)
    assert a is not None and b is not None and c is not None
    queue.done(c.pod.uid)
    queue.requeue_after_failure(a, {POD_FILTER})
    queue.requeue_after_failure(b, {POD_FILTER})
    # a still saw the deletion; b, popped after it, did not.
    assert queue.pending() == pending(queue, backoff=1, unschedulable=1)
    assert [p.pod.name for p in queue.parked()] == ["b"]


def test_events_after_the_cycle_ended_are_not_replayed(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))
    queue.add(pod("b"))
    a = pop_now(queue)
    assert a is not None
    queue.done(a.pod.uid)  # a was assumed
    queue.move_on_event(NODE_ADD, None, ok_node())  # nobody in flight
    b = pop_now(queue)
    assert b is not None
    queue.requeue_after_failure(b, {NODE_FILTER})
    assert queue.pending() == pending(queue, unschedulable=1)


def test_update_during_the_cycle_is_kept(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))
    info = pop_now(queue)
    assert info is not None
    queue.update(pod("a"), pod("a", priority=7, tier="gold"), POD_LABEL)
    queue.requeue_after_failure(info, {NODE_FILTER})
    assert info.pod.labels == {"tier": "gold"} and info.pod.priority == 7


# -- PreEnqueue ----------------------------------------------------------------------------------


def test_gated_pod_waits_without_an_attempt(queue: SchedulingQueue) -> None:
    queue.add(pod("a", gated="true"))
    assert queue.pending() == pending(queue, gated=1)
    assert pop_now(queue) is None
    (info,) = queue.parked()
    assert (info.gating_plugin, info.gating_message, info.attempts) == (
        GATE,
        "waiting for the gated label to go",
        0,
    )


@pytest.mark.parametrize(
    ("event", "new_labels", "released"),
    [
        (POD_LABEL, {}, True),
        (POD_LABEL, {"gated": "true", "other": "x"}, False),  # hint: still gated
        (POD_OTHER, {}, False),  # not an event the gate registered
    ],
    ids=["label-removed", "label-kept", "unregistered-update"],
)
def test_gated_pod_is_released_by_an_update(
    queue: SchedulingQueue, event: ClusterEvent, new_labels: dict[str, str], released: bool
) -> None:
    queue.add(pod("a", gated="true"))
    queue.update(pod("a", gated="true"), pod("a", **new_labels), event)
    if released:
        assert queue.pending() == pending(queue, active=1)
        info = pop_now(queue)
        assert info is not None and info.attempts == 1 and info.gating_plugin == ""
    else:
        assert queue.pending() == pending(queue, gated=1)


def test_gated_pod_released_by_an_update_while_backing_off_goes_to_backoff(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    """Released by its own update, a pod gated after an attempt waits out that attempt's
    backoff (kube's ``Update`` asks ``requeuePodWithQueueingStrategy`` too)."""
    GATE_STATE["on"] = False
    queue.add(pod("a", gated="true"))
    attempt_and_reject(queue, "a", {NODE_FILTER})
    GATE_STATE["on"] = True
    queue.activate([pod("a", gated="true")])
    assert queue.pending() == pending(queue, gated=1)
    queue.update(pod("a", gated="true"), pod("a"), POD_LABEL)
    assert queue.pending() == pending(queue, backoff=1)
    assert pop_now(queue) is None
    clock.advance(1)
    assert pop_name(queue) == "a"


def test_gate_is_checked_again_on_every_entry_to_the_active_queue(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    GATE_STATE["on"] = False
    queue.add(pod("a", gated="true"))
    attempt_and_reject(queue, "a", set(), error=True)
    GATE_STATE["on"] = True
    clock.advance(1)
    assert pop_now(queue) is None
    assert queue.pending() == pending(queue, gated=1)


def test_gated_pods_are_not_moved_by_other_plugins_events(queue: SchedulingQueue) -> None:
    queue.add(pod("a", gated="true"))
    assert queue.move_on_event(NODE_ADD, None, ok_node()) == 0
    assert queue.move_on_event(ASSIGNED_POD_DELETE) == 0
    assert queue.pending() == pending(queue, gated=1)


# -- pods that change or go away -----------------------------------------------------------------


def _to_active(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))


def _to_backoff(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", set(), error=True)


def _to_pool(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", {NODE_FILTER})


def _to_gated(queue: SchedulingQueue, clock: FakeClock) -> None:
    queue.add(pod("a", gated="true"))


PLACES: list[tuple[str, Callable[[SchedulingQueue, FakeClock], None], str]] = [
    ("active", _to_active, "active"),
    ("backoff", _to_backoff, "backoff"),
    ("unschedulable", _to_pool, "unschedulable"),
    ("gated", _to_gated, "gated"),
]


@pytest.mark.parametrize(("setup", "place"), [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_delete_wherever_the_pod_is(
    queue: SchedulingQueue, clock: FakeClock, setup: Callable[..., None], place: str
) -> None:
    setup(queue, clock)
    assert queue.pending() == pending(queue, **{place: 1})
    queue.delete(pod("a"))
    assert queue.pending() == pending(queue)
    clock.advance(DEFAULT_MAX_UNSCHEDULABLE_SECONDS)
    queue.flush()
    queue.move_on_event(NODE_ADD, None, ok_node())
    assert pop_now(queue) is None and queue.parked() == []


@pytest.mark.parametrize("error", [False, True], ids=["rejected", "error"])
def test_delete_while_in_flight(queue: SchedulingQueue, error: bool) -> None:
    queue.add(pod("a"))
    info = pop_now(queue)
    assert info is not None
    queue.delete(info.pod)
    queue.requeue_after_failure(info, {NODE_FILTER}, error=error)
    assert queue.pending() == pending(queue)
    queue.add(pod("a"))  # the same pod created again is a new pending pod
    assert queue.pending() == pending(queue, active=1)


@pytest.mark.parametrize(("setup", "place"), [p[1:] for p in PLACES], ids=[p[0] for p in PLACES])
def test_adding_a_known_pod_replaces_it(
    queue: SchedulingQueue, clock: FakeClock, setup: Callable[..., None], place: str
) -> None:
    setup(queue, clock)
    replacement = make_pod("a").priority(3).labels(gated="true").obj()
    queue.add(replacement)
    assert queue.pending() == pending(queue, **{place: 1})
    parked = queue.parked()
    if parked:
        assert parked[0].pod is replacement


def test_update_of_an_unknown_pod_adds_it(queue: SchedulingQueue) -> None:
    queue.update(pod("a"), pod("a"), POD_OTHER)
    assert queue.pending() == pending(queue, active=1)


def test_update_a_rejector_registered_moves_the_pod(clock: FakeClock) -> None:
    class LabelFilter(SilentPlugin):
        @hookimpl
        def events_to_register(self) -> list[ClusterEventWithHint]:
            return [ClusterEventWithHint(POD_LABEL)]

    profile = Profile(
        scheduler_name=PROFILE,
        plugins={"queueSort": [PluginRef("PrioritySort")], "filter": [PluginRef("LabelFilter")]},
    )
    registry = Registry({"PrioritySort": PrioritySortPlugin, "LabelFilter": LabelFilter})
    fw = Framework(profile, registry, Handle(PROFILE, InMemoryBackend(), Snapshot))
    queue = SchedulingQueue({PROFILE: fw}, clock=clock)
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", {"LabelFilter"})
    queue.update(pod("a"), pod("a", zone="b"), POD_OTHER)
    assert queue.pending() == pending(queue, unschedulable=1)
    clock.advance(5)
    queue.update(pod("a"), pod("a", zone="b"), POD_LABEL)
    assert queue.pending() == pending(queue, active=1)
    info = pop_now(queue)
    assert info is not None and info.pod.labels == {"zone": "b"}


def test_pod_deleted_and_added_again_is_not_released_early(
    queue: SchedulingQueue, clock: FakeClock
) -> None:
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", set(), error=True)  # backing off until +1s
    queue.delete(pod("a"))
    clock.advance(0.5)
    queue.add(pod("a"))
    attempt_and_reject(queue, "a", set(), error=True)  # backing off until +1.5s
    clock.advance(0.5)  # the first stay would have ended now
    assert pop_now(queue) is None
    clock.advance(0.5)
    assert pop_name(queue) == "a"


# -- pending counts and blocking pop -------------------------------------------------------------


def test_pending_counts_each_place(queue: SchedulingQueue, clock: FakeClock) -> None:
    for name in ("backoff", "pool", "active"):
        queue.add(pod(name))
        clock.advance(1)
    queue.add(pod("gated", gated="true"))
    attempt_and_reject(queue, "backoff", set(), error=True)
    attempt_and_reject(queue, "pool", {NODE_FILTER})
    assert queue.pending() == {"active": 1, "backoff": 1, "unschedulable": 1, "gated": 1}
    in_flight = pop_now(queue)
    assert in_flight is not None and in_flight.pod.name == "active"
    assert queue.pending() == {"active": 0, "backoff": 1, "unschedulable": 1, "gated": 1}


def test_pod_of_another_scheduler_name_is_queued_ungated(queue: SchedulingQueue) -> None:
    queue.add(make_pod("x").scheduler("someone-else").labels(gated="true").obj())
    assert queue.pending() == pending(queue, active=1)


def test_pop_times_out_when_empty(queue: SchedulingQueue) -> None:
    started = time.monotonic()
    assert queue.pop(timeout=0.05) is None
    assert time.monotonic() - started < 1


def test_blocked_pop_wakes_on_add_and_on_close(queue: SchedulingQueue) -> None:
    got: list[QueuedPodInfo | None] = []
    waiter = threading.Thread(target=lambda: got.append(queue.pop(timeout=5)))
    waiter.start()
    time.sleep(0.02)
    queue.add(pod("a"))
    waiter.join(2)
    assert got and got[0] is not None and got[0].pod.name == "a"

    closer = threading.Thread(target=lambda: got.append(queue.pop(timeout=5)))
    closer.start()
    time.sleep(0.02)
    queue.close()
    closer.join(2)
    assert got[1] is None and not closer.is_alive()


def test_an_update_of_one_pod_during_cycles_does_not_move_another_in_flight_pod(queue):
    """Two pods in flight; the first is updated with a label. Only it may be requeued by its own
    update; the second, rejected by the same plugin, stays in the pool."""
    from kubesched import ActionType, ClusterEvent, EventResource

    queue.add(pod("first"))
    queue.add(pod("second"))
    info_first, info_second = pop_now(queue), pop_now(queue)
    relabelled = pod("first", ready="yes")
    queue.update(
        info_first.pod,
        relabelled,
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
    )
    queue.requeue_after_failure(info_second, {GATE})
    queue.requeue_after_failure(info_first, {GATE})
    assert [i.pod.name for i in queue.parked()] == ["second"]


def test_pods_entering_each_queue_are_counted_with_kubes_labels(clock: FakeClock) -> None:
    """``scheduler_queue_incoming_pods_total{queue, event}``, as kube-scheduler counts it."""
    metrics = SchedulerMetrics()
    queue = SchedulingQueue({PROFILE: framework()}, clock=clock, metrics=metrics)

    def incoming() -> dict[tuple[str, str], float]:
        return {
            (s.labels["queue"], s.labels["event"]): s.value
            for family in metrics.registry.collect()
            if family.name == "scheduler_queue_incoming_pods"
            for s in family.samples
            if s.name.endswith("_total")
        }

    queue.add(pod("p"))
    attempt_and_reject(queue, "p", {NODE_FILTER})
    queue.move_on_event(NODE_ADD, None, ok_node())  # backoff of 1 s still running
    clock.advance(2)
    queue.flush()
    attempt_and_reject(queue, "p", {NODE_FILTER})
    clock.advance(DEFAULT_MAX_UNSCHEDULABLE_SECONDS)
    queue.flush()
    attempt_and_reject(queue, "p", {NODE_FILTER})
    queue.activate([pod("p")])
    assert incoming() == {
        ("active", "PodAdd"): 1,
        ("unschedulable", "ScheduleAttemptFailure"): 3,
        ("backoff", "NodeAdd"): 1,
        ("active", "BackoffComplete"): 1,
        ("active", "UnschedulableTimeout"): 1,
        ("active", "ForceActivate"): 1,
    }
