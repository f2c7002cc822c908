"""Which hints the scheduling queue asks, and ``activate``.

- kube-scheduler's ``Test_isPodWorthRequeuing`` table (``scheduling_queue_test.go``), through
  ``move_on_event``: the hints of the pod's rejectors that registered the event, until one says
  Queue. kube's "Pending plugin" case is left out: kubesched does not track Pending plugins.
- A gated pod (kube v1.37, ``movePodsToActiveOrBackoffQueue``): only an event its gating plugin
  registered is considered, and then the hints of the gating plugin *and* of the plugins that
  rejected the pod in its last cycle are asked; PreEnqueue decides whether it passes.
- ``activate`` (kube's ``Activate``) and ``Handle.activate``, wired by the scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    NodeInfo,
    Pod,
    QueuedPodInfo,
    QueueingHint,
    Snapshot,
    Status,
    hookimpl,
)
from kubesched.config import PluginRef, Profile
from kubesched.engine.queue import DEFAULT_MAX_UNSCHEDULABLE_SECONDS, SchedulingQueue
from kubesched.engine.runtime import Framework
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler

PROFILE = "custom-scheduler"
FOO1, FOO2, FOO3 = "fooPlugin1", "fooPlugin2", "fooPlugin3"
HOLD = "Hold"
NODE_FILTER = "NodeFilter"
POD_FILTER = "PodFilter"

NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
NODE_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE)
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
NODE_LABEL_OR_TAINT = ClusterEvent(
    EventResource.NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
)
ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
WILDCARD_ADD = ClusterEvent(EventResource.WILDCARD, ActionType.ADD)
#: kube's ``EventUnschedulableTimeout`` and ``EventForceActivate`` are both ``*/All``.
WILDCARD_ALL = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pod(name: str, uid: str = "", **labels: str) -> Pod:
    return make_pod(name).uid(uid or name).labels(**labels).obj()


def parked_after_rejection(queue: SchedulingQueue, name: str, rejected_by: set[str]) -> None:
    """Add ``name``, pop it, and put it back rejected by ``rejected_by`` (into the pool)."""
    queue.add(pod(name))
    info = queue.pop(timeout=0)
    assert info is not None and info.pod.name == name
    queue.requeue_after_failure(info, rejected_by)


def places(queue: SchedulingQueue, **expected: int) -> dict[str, int]:
    return {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 0, **expected}


# -- kube's Test_isPodWorthRequeuing -------------------------------------------------------------

#: How many hint functions ran in the current case.
CALLS = {"count": 0}


def hint_queue(pod: Any, old: Any, new: Any) -> QueueingHint:
    CALLS["count"] += 1
    return QueueingHint.QUEUE


def hint_skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    CALLS["count"] += 1
    return QueueingHint.SKIP


def hint_error(pod: Any, old: Any, new: Any) -> QueueingHint:
    CALLS["count"] += 1
    raise RuntimeError("unexpected error")


Registrations = Mapping[str, Sequence[tuple[ClusterEvent, Callable[..., QueueingHint]]]]


def registering_queue(registrations: Registrations) -> SchedulingQueue:
    """A queue over a profile whose Filter plugins register ``registrations``, in that order."""
    plugins: dict[str, type] = {}
    for name, entries in registrations.items():

        class Registering:
            registered = entries

            def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
                pass

            @hookimpl
            def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
                return None

            @hookimpl
            def events_to_register(self) -> list[ClusterEventWithHint]:
                return [ClusterEventWithHint(event, hint) for event, hint in self.registered]

        plugins[name] = Registering
    profile = Profile(
        scheduler_name=PROFILE, plugins={"filter": [PluginRef(name) for name in plugins]}
    )
    framework = Framework(profile, Registry(plugins), Handle(PROFILE, InMemoryBackend(), Snapshot))
    return SchedulingQueue({PROFILE: framework}, clock=FakeClock())


WORTH_REQUEUING = [
    pytest.param(
        {FOO1},
        NODE_ADD,
        make_node("n").obj(),
        {FOO1: [(ASSIGNED_POD_ADD, hint_queue)]},
        False,
        0,
        id="return Skip when no queueing hint function is registered for the event",
    ),
    pytest.param(
        {FOO1},
        NODE_ADD,
        make_node("n").obj(),
        {FOO1: [(NODE_ADD, hint_error)]},
        True,
        1,
        id="treat the event as Queue when the hint fails",
    ),
    pytest.param(
        {FOO1},
        WILDCARD_ALL,
        None,
        {},
        True,
        0,
        id="return Queue when the event is wildcard",
    ),
    pytest.param(
        {FOO1},
        WILDCARD_ALL,
        pod("pod1", uid="1"),
        {},
        True,
        0,
        id="return Queue when the wildcard event targets the pod",
    ),
    pytest.param(
        {FOO1},
        WILDCARD_ALL,
        pod("pod-different", uid="2"),
        {},
        False,
        0,
        id="return Skip when the wildcard event targets a different pod",
    ),
    pytest.param(
        {FOO1, FOO2},
        NODE_ADD,
        make_node("n").obj(),
        {FOO1: [(NODE_ADD, hint_skip)], FOO2: [(NODE_ADD, hint_queue)]},
        True,
        2,
        id="Queue from one unschedulable plugin is enough",
    ),
    pytest.param(
        {FOO1, FOO2},
        NODE_ADD,
        make_node("n").obj(),
        {
            FOO1: [(NODE_ADD, hint_skip)],
            FOO2: [(NODE_ADD, hint_skip)],
            FOO3: [(NODE_ADD, hint_queue)],
        },
        False,
        2,
        id="the hint of a plugin that did not reject the pod is ignored",
    ),
    pytest.param(
        {FOO1, FOO2},
        NODE_LABEL,
        make_node("n").obj(),
        {
            FOO1: [(NODE_LABEL, hint_queue), (NODE_UPDATE, hint_queue), (NODE_ADD, hint_queue)],
            FOO2: [(NODE_LABEL, hint_queue)],
        },
        True,
        1,
        id="a specific node update runs the hint registered for it",
    ),
    pytest.param(
        {FOO1},
        NODE_ADD,
        make_node("n").obj(),
        {FOO1: [(WILDCARD_ADD, hint_queue)]},
        True,
        1,
        id="a registration for resource '*' covers every resource",
    ),
    pytest.param(
        {FOO1},
        NODE_LABEL_OR_TAINT,
        make_node("n").obj(),
        {FOO1: [(WILDCARD_ALL, hint_queue)]},
        True,
        1,
        id="a registration for '*' and every action covers every event",
    ),
]


@pytest.mark.parametrize(
    ("rejected_by", "event", "new", "registrations", "moved", "hint_calls"), WORTH_REQUEUING
)
def test_is_pod_worth_requeuing(
    rejected_by: set[str],
    event: ClusterEvent,
    new: Any,
    registrations: Registrations,
    moved: bool,
    hint_calls: int,
) -> None:
    queue = registering_queue(registrations)
    queue.add(pod("pod1", uid="1"))
    info = queue.pop(timeout=0)
    assert info is not None
    queue.requeue_after_failure(info, rejected_by)
    queue.clock.now += 30  # type: ignore[attr-defined]  # backoff over: straight to activeQ
    CALLS["count"] = 0
    assert queue.move_on_event(event, None, new) == int(moved)
    assert CALLS["count"] == hint_calls
    assert queue.pending() == (places(queue, active=1) if moved else places(queue, unschedulable=1))


# -- gated pods: the gating plugin's events, every rejector's hints -------------------------------

#: Whether Hold gates pods labelled ``hold: "true"`` (tests flip it).
HOLD_STATE = {"on": True}


@pytest.fixture(autouse=True)
def _hold_on() -> None:
    HOLD_STATE["on"] = True


class _Plugin:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass


class HoldPlugin(_Plugin):
    """PreEnqueue, as DefaultPreemption's: holds pods labelled ``hold``; registers an assigned
    pod's deletion with a hint that always says Skip."""

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if HOLD_STATE["on"] and pod.labels.get("hold") == "true":
            return Status.unresolvable("held")
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ASSIGNED_POD_DELETE, lambda pod, old, new: QueueingHint.SKIP)]


class NodeFilterPlugin(_Plugin):
    """Registers Node/Add (every one helps)."""

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD)]


class PodFilterPlugin(NodeFilterPlugin):
    """Registers an assigned pod's deletion (every one helps)."""

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ASSIGNED_POD_DELETE)]


PLUGINS: dict[str, type] = {
    HOLD: HoldPlugin,
    NODE_FILTER: NodeFilterPlugin,
    POD_FILTER: PodFilterPlugin,
}


@pytest.fixture
def queue() -> SchedulingQueue:
    profile = Profile(
        scheduler_name=PROFILE,
        plugins={
            "preEnqueue": [PluginRef(HOLD)],
            "filter": [PluginRef(NODE_FILTER), PluginRef(POD_FILTER)],
        },
    )
    framework = Framework(profile, Registry(PLUGINS), Handle(PROFILE, InMemoryBackend(), Snapshot))
    return SchedulingQueue({PROFILE: framework}, clock=FakeClock())


def gated_after_rejection(queue: SchedulingQueue, rejected_by: set[str]) -> QueuedPodInfo:
    """A pod rejected in its cycle by ``rejected_by`` and held by Hold when it comes back (as a
    preemptor is): it leaves the pool at the time limit and meets PreEnqueue."""
    HOLD_STATE["on"] = False
    queue.add(pod("a", hold="true"))
    info = queue.pop(timeout=0)
    assert info is not None
    queue.requeue_after_failure(info, rejected_by)
    HOLD_STATE["on"] = True
    queue.clock.now += DEFAULT_MAX_UNSCHEDULABLE_SECONDS  # type: ignore[attr-defined]
    queue.flush()
    (parked,) = queue.parked()
    assert parked.gating_plugin == HOLD
    return parked


@pytest.mark.parametrize(
    ("rejected_by", "event", "gate_open", "want"),
    [
        ({POD_FILTER}, ASSIGNED_POD_DELETE, True, "active"),
        ({POD_FILTER}, ASSIGNED_POD_DELETE, False, "gated"),
        ({NODE_FILTER}, ASSIGNED_POD_DELETE, True, "gated"),
        (set(), ASSIGNED_POD_DELETE, True, "gated"),
        ({NODE_FILTER}, NODE_ADD, True, "gated"),
    ],
    ids=[
        "the gate's event, a rejector's hint says Queue, the gate is open: activeQ",
        "the gate's event, a rejector's hint says Queue, the gate still holds: gated",
        "the gate's event, no rejector registered it, the gate's hint says Skip: gated",
        "no rejection in a cycle, the gate's hint says Skip: gated",
        "an event the gate did not register, though a rejector's hint says Queue: gated",
    ],
)
def test_a_gated_pod_asks_the_gate_and_its_rejectors(
    queue: SchedulingQueue,
    rejected_by: set[str],
    event: ClusterEvent,
    gate_open: bool,
    want: str,
) -> None:
    info = gated_after_rejection(queue, rejected_by)
    assert info.unschedulable_plugins == {*rejected_by, HOLD}
    HOLD_STATE["on"] = not gate_open
    queue.move_on_event(event, None, make_node("n").obj())
    assert queue.pending() == places(queue, **{want: 1})


def test_a_gated_pod_never_tried_asks_only_its_gate(queue: SchedulingQueue) -> None:
    queue.add(pod("a", hold="true"))
    (info,) = queue.parked()
    assert info.unschedulable_plugins == {HOLD}
    HOLD_STATE["on"] = False
    assert queue.move_on_event(ASSIGNED_POD_DELETE) == 0
    assert queue.pending() == places(queue, gated=1)


def test_a_pod_its_gate_still_holds_asks_no_hint_and_keeps_its_time_in_the_pool(
    queue: SchedulingQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Preemptors waiting for their victims all registered an assigned pod's deletion: each
    deletion asks each one's gate once, and no hint of a pod the gate still holds."""
    gated_after_rejection(queue, {POD_FILTER})
    hints: list[str] = []
    real = SchedulingQueue._worth_requeuing

    def counting(self, info, event, old, new):  # type: ignore[no-untyped-def]
        hints.append(info.pod.name)
        return real(self, info, event, old, new)

    monkeypatch.setattr(SchedulingQueue, "_worth_requeuing", counting)
    queue.clock.now += DEFAULT_MAX_UNSCHEDULABLE_SECONDS - 1  # type: ignore[attr-defined]
    for _ in range(3):
        assert queue.move_on_event(ASSIGNED_POD_DELETE, None, None) == 0
    assert hints == []
    queue.clock.now += 1  # type: ignore[attr-defined]  # its time in the pool ran on
    HOLD_STATE["on"] = False
    queue.flush()
    assert queue.pending() == places(queue, active=1)


def gated_while_backing_off(queue: SchedulingQueue) -> None:
    """A pod rejected by PodFilter in its cycle (backoff: 1 s from then) and activated while
    Hold holds it: it is gated with its backoff still running."""
    HOLD_STATE["on"] = False
    queue.add(pod("a", hold="true"))
    info = queue.pop(timeout=0)
    assert info is not None
    queue.requeue_after_failure(info, {POD_FILTER})
    HOLD_STATE["on"] = True
    queue.activate([pod("a", hold="true")])
    assert queue.pending() == places(queue, gated=1)


@pytest.mark.parametrize(
    ("seconds", "want"),
    [(0.5, "backoff"), (1.0, "active")],
    ids=[
        "released while its backoff runs: backoffQ",
        "released once its backoff has ended: activeQ",
    ],
)
def test_a_released_gated_pod_waits_out_its_backoff(
    queue: SchedulingQueue, seconds: float, want: str
) -> None:
    """kube's ``requeuePodWithQueueingStrategy``: Queue from a rejector means after backoff,
    for a gated pod as for any other (``isPodBackingoff``)."""
    gated_while_backing_off(queue)
    queue.clock.now += seconds  # type: ignore[attr-defined]
    HOLD_STATE["on"] = False
    assert queue.move_on_event(ASSIGNED_POD_DELETE, None, None) == 1
    assert queue.pending() == places(queue, **{want: 1})
    queue.clock.now += 1  # type: ignore[attr-defined]
    info = queue.pop(timeout=0)
    assert info is not None and info.pod.name == "a" and info.gating_plugin == ""


def test_a_pod_another_pre_enqueue_gates_on_its_way_to_backoff_stays_in_the_pool() -> None:
    """kube's ``moveToBackoffQ`` runs PreEnqueue (``SchedulerPopFromBackoffQ``): a pod its gate
    lets go but another PreEnqueue plugin holds stays gated, by that plugin."""

    fence = {"on": False}

    class Fence(_Plugin):
        @hookimpl
        def pre_enqueue(self, pod: Pod) -> Status | None:
            return Status.unresolvable("fenced") if fence["on"] else None

    profile = Profile(
        scheduler_name=PROFILE,
        plugins={
            "preEnqueue": [PluginRef(HOLD), PluginRef("Fence")],
            "filter": [PluginRef(POD_FILTER)],
        },
    )
    registry = Registry({**PLUGINS, "Fence": Fence})
    framework = Framework(profile, registry, Handle(PROFILE, InMemoryBackend(), Snapshot))
    queue = SchedulingQueue({PROFILE: framework}, clock=FakeClock())
    gated_while_backing_off(queue)
    HOLD_STATE["on"], fence["on"] = False, True  # Hold lets go, Fence holds
    assert queue.move_on_event(ASSIGNED_POD_DELETE, None, None) == 1
    assert queue.pending() == places(queue, gated=1)
    (info,) = queue.parked()
    assert (info.gating_plugin, info.gating_message) == ("Fence", "fenced")


# -- activate ------------------------------------------------------------------------------------


def _in_pool(queue: SchedulingQueue) -> None:
    parked_after_rejection(queue, "a", {NODE_FILTER})


def _in_backoff(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))
    info = queue.pop(timeout=0)
    assert info is not None
    queue.requeue_after_failure(info, set(), error=True)


def _in_active(queue: SchedulingQueue) -> None:
    queue.add(pod("a"))


def _gated(queue: SchedulingQueue) -> None:
    queue.add(pod("a", hold="true"))


def _unknown(queue: SchedulingQueue) -> None:
    pass


@pytest.mark.parametrize(
    ("setup", "before", "activated", "after"),
    [
        (_in_pool, "unschedulable", 1, "active"),
        (_in_backoff, "backoff", 1, "active"),
        (_in_active, "active", 0, "active"),
        (_gated, "gated", 0, "gated"),
        (_unknown, None, 0, None),
    ],
    ids=[
        "in the pool: to activeQ",
        "backing off: to activeQ at once",
        "in activeQ: left there",
        "gated: PreEnqueue still holds it",
        "unknown: ignored",
    ],
)
def test_activate(
    queue: SchedulingQueue,
    setup: Callable[[SchedulingQueue], None],
    before: str | None,
    activated: int,
    after: str | None,
) -> None:
    setup(queue)
    assert queue.pending() == (places(queue, **{before: 1}) if before else places(queue))
    assert queue.activate([pod("a")]) == activated
    assert queue.pending() == (places(queue, **{after: 1}) if after else places(queue))


def test_an_activated_pod_is_popped_once(queue: SchedulingQueue) -> None:
    _in_backoff(queue)
    queue.activate([pod("a")])
    info = queue.pop(timeout=0)
    assert info is not None and info.pod.name == "a"
    queue.clock.now += 60  # type: ignore[attr-defined]  # its old backoff entry expires
    assert queue.pop(timeout=0) is None


def test_a_gated_pod_keeps_its_time_in_the_pool(queue: SchedulingQueue) -> None:
    _gated(queue)
    queue.clock.now += DEFAULT_MAX_UNSCHEDULABLE_SECONDS - 1  # type: ignore[attr-defined]
    queue.activate([pod("a")])
    queue.clock.now += 1  # type: ignore[attr-defined]
    HOLD_STATE["on"] = False
    queue.flush()
    assert queue.pending() == places(queue, active=1)


@pytest.mark.parametrize(
    ("activated", "want", "parked"),
    [(["a"], {"backoff": 1, "unschedulable": 1}, ["b"]), ([], {"unschedulable": 2}, ["a", "b"])],
    ids=["activated: retried after backoff, the other pod not", "not activated: the pool"],
)
def test_a_pod_activated_in_its_cycle_is_retried_when_it_comes_back(
    queue: SchedulingQueue, activated: list[str], want: dict[str, int], parked: list[str]
) -> None:
    """kube records ``EventForceActivate`` for a pod in flight, naming that pod."""
    for name in ("a", "b"):
        queue.add(pod(name))
    first, second = queue.pop(timeout=0), queue.pop(timeout=0)
    assert first is not None and second is not None
    assert queue.activate([pod(name) for name in activated]) == 0
    queue.requeue_after_failure(first, {NODE_FILTER})
    queue.requeue_after_failure(second, {NODE_FILTER})
    assert queue.pending() == places(queue, **want)
    assert sorted(info.pod.name for info in queue.parked()) == parked


def test_the_handle_activates_through_the_scheduler_queue() -> None:
    body = {"plugins": {"filter": {"enabled": [{"name": NODE_FILTER}]}}}
    scheduler, _ = make_scheduler(PLUGINS, body, start=False)
    handle = next(iter(scheduler.frameworks.values())).handle
    parked_after_rejection(scheduler.queue, "a", {NODE_FILTER})
    handle.activate([pod("a")])
    assert scheduler.queue.pending() == places(scheduler.queue, active=1)


def test_a_handle_without_a_queue_activates_nothing() -> None:
    handle = Handle(PROFILE, InMemoryBackend(), Snapshot)
    handle.activate([pod("a")])  # no scheduler yet: nothing to do, no error
