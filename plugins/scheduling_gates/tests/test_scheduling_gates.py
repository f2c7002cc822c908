"""SchedulingGates: kube-scheduler's table cases (scheduling_gates_test.go), the hint, and a gated
pod released through the queue when its last gate goes."""

from __future__ import annotations

import pytest
from kubesched_scheduling_gates import NAME, SchedulingGates, reason_waiting_for_gates

from kubesched import (
    ActionType,
    Code,
    ConfigError,
    EventResource,
    InMemoryBackend,
    QueueingHint,
    Snapshot,
)
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def new_plugin() -> SchedulingGates:
    return SchedulingGates({}, Handle("test", InMemoryBackend(), Snapshot))


# --- TestPreEnqueue -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "want_reason"),
    [
        pytest.param(make_pod("p").obj(), None, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar").obj(),
            "waiting for scheduling gates: [foo bar]",
            id="pod carries scheduling gates",
        ),
    ],
)
def test_pre_enqueue(pod, want_reason):
    status = new_plugin().pre_enqueue(pod)
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want_reason,)


def test_reason_lists_gates_in_order_as_go_prints_them():
    assert reason_waiting_for_gates(["b", "a"]) == "waiting for scheduling gates: [b a]"
    assert reason_waiting_for_gates(["only"]) == "waiting for scheduling gates: [only]"


# --- TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated, and the uid guard ---------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            make_pod("p").scheduling_gates("foo").obj(),
            make_pod("p").obj(),
            QueueingHint.QUEUE,
            id="target pod lost its gates",
        ),
        pytest.param(
            make_pod("other").scheduling_gates("foo").obj(),
            make_pod("other").obj(),
            QueueingHint.SKIP,
            id="another pod lost its gates",
        ),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar").obj(),
            make_pod("p").scheduling_gates("bar").obj(),
            QueueingHint.SKIP,
            id="target pod still gated",
        ),
        pytest.param(None, "not-a-pod", QueueingHint.QUEUE, id="backoff-wrong-new-object"),
    ],
)
def test_hint_gates_eliminated(old, new, want):
    pod = make_pod("p").scheduling_gates("foo").obj()
    (registered,) = new_plugin().events_to_register()
    assert registered.hint(pod, old, new) is want


def test_registers_only_the_unscheduled_pod_gate_removal():
    (registered,) = new_plugin().events_to_register()
    assert registered.event.resource is EventResource.UNSCHEDULED_POD
    assert registered.event.action is ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED


def test_args_are_refused():
    profile = {
        "plugins": {"preEnqueue": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"gates": ["x"]}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: SchedulingGates}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.gates: unknown field; {NAME} takes no args"
    ]


# --- Through the queue --------------------------------------------------------------------------


def profile() -> dict:
    return {"plugins": {"preEnqueue": {"enabled": [{"name": NAME}]}}}


def test_gated_pod_waits_until_its_last_gate_is_removed():
    gated = make_pod("p").scheduling_gates("quota", "review")
    scheduler, backend = make_scheduler(
        {NAME: SchedulingGates},
        profile(),
        [make_node("n1").obj()],
        [gated.obj(), make_pod("free").obj()],
    )
    run_until_idle(scheduler)
    assert backend.pod("default", "free").node_name == "n1"
    assert backend.pod("default", "p").node_name == ""
    assert scheduler.queue.pending()["gated"] == 1
    # Gating is not a failed attempt: no condition, no FailedScheduling event.
    assert "default/p" not in backend.conditions

    backend.add_pod(make_pod("p").scheduling_gates("review").obj())
    run_until_idle(scheduler)
    assert scheduler.queue.pending()["gated"] == 1
    assert backend.pod("default", "p").node_name == ""

    backend.add_pod(make_pod("p").obj())
    assert scheduler.queue.pending()["gated"] == 0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"


def test_other_updates_of_a_gated_pod_leave_it_gated():
    scheduler, backend = make_scheduler(
        {NAME: SchedulingGates},
        profile(),
        [make_node("n1").obj()],
        [make_pod("p").scheduling_gates("quota").obj()],
    )
    run_until_idle(scheduler)
    backend.add_pod(make_pod("p").scheduling_gates("quota").labels(team="a").obj())
    run_until_idle(scheduler)
    assert scheduler.queue.pending()["gated"] == 1
    assert backend.pod("default", "p").node_name == ""
