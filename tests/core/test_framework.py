"""The framework runs plugins in the profile's order, with its weights, and contains failures."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import (
    ArgsError,
    ConfigError,
    CycleState,
    FieldError,
    Handle,
    NodeInfo,
    Pod,
    PostFilterResult,
    PreFilterResult,
    Status,
    hookimpl,
    pod_requests,
)
from kubesched.engine.scheduler import REASON_SCHEDULER_ERROR, REASON_UNSCHEDULABLE
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_config, make_scheduler, run_until_idle

CALLS: list[str] = []


def recording_filter(name: str, reject: frozenset[str] = frozenset()) -> type:
    """A Filter plugin class that records its calls and rejects the nodes named in ``reject``."""

    class Recording:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
            CALLS.append(name)
            if node_info.name in reject:
                return Status.unschedulable(f"node(s) rejected by {name}")
            return None

    Recording.__name__ = name
    return Recording


def fixed_score(name: str, scores: Mapping[str, int]) -> type:
    class Fixed:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
            return scores.get(node_info.name, 0)

    Fixed.__name__ = name
    return Fixed


def nodes(*names: str) -> list:
    return [make_node(n).obj() for n in names]


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    CALLS.clear()


def bound_node(backend, name: str) -> str:
    pod = backend.pod("default", name)
    assert pod is not None
    return pod.node_name


@pytest.mark.parametrize(
    "profile_order",
    [["A", "B", "C"], ["C", "B", "A"], ["B", "C", "A"]],
    ids=["abc", "cba", "bca"],
)
@pytest.mark.parametrize(
    "registration_order",
    [["A", "B", "C"], ["C", "A", "B"]],
    ids=["registered-abc", "registered-cab"],
)
def test_filter_order_follows_the_profile_not_registration(profile_order, registration_order):
    plugins = {name: recording_filter(name) for name in registration_order}
    profile = {"plugins": {"filter": {"enabled": [{"name": n} for n in profile_order]}}}
    scheduler, _ = make_scheduler(plugins, profile, nodes("n1"), [make_pod("p").obj()])
    run_until_idle(scheduler)
    assert CALLS == profile_order


@pytest.mark.parametrize(
    ("weight_a", "weight_b", "winner"),
    [(1, 2, "node-b"), (3, 2, "node-a"), (5, 4, "node-b"), (10, 1, "node-a"), (1, 0, "node-b")],
    ids=["1:2", "3:2", "5:4", "10:1", "zero-weight-means-1"],
)
def test_weights_change_the_winner(weight_a, weight_b, winner):
    plugins = {
        "PreferA": fixed_score("PreferA", {"node-a": 100, "node-b": 40}),
        "PreferB": fixed_score("PreferB", {"node-a": 10, "node-b": 90}),
    }
    profile = {
        "plugins": {
            "score": {
                "enabled": [
                    {"name": "PreferA", "weight": weight_a},
                    {"name": "PreferB", "weight": weight_b},
                ]
            }
        }
    }
    scheduler, backend = make_scheduler(
        plugins, profile, nodes("node-a", "node-b"), [make_pod("p").obj()]
    )
    run_until_idle(scheduler)
    # node-a: 100·wA + 10·wB; node-b: 40·wA + 90·wB
    assert bound_node(backend, "p") == winner


def test_failed_scheduling_message_counts_reasons_as_kube_scheduler_does():
    plugins = {
        "X": recording_filter("X", frozenset({"n1"})),
        "Y": recording_filter("Y", frozenset({"n2", "n3"})),
    }
    profile = {"plugins": {"filter": {"enabled": [{"name": "X"}, {"name": "Y"}]}}}
    scheduler, backend = make_scheduler(
        plugins, profile, nodes("n1", "n2", "n3"), [make_pod("p").obj()]
    )
    run_until_idle(scheduler)
    reason, message = backend.conditions["default/p"]
    assert reason == REASON_UNSCHEDULABLE
    assert message == ("0/3 nodes are available: 1 node(s) rejected by X, 2 node(s) rejected by Y.")
    assert backend.events[-1].reason == "FailedScheduling"
    assert backend.events[-1].message == message


class Exploding:
    """Raises for pods labelled explode=yes; otherwise lets every node pass."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if pod.labels.get("explode") == "yes":
            raise RuntimeError("boom")
        return None


def test_a_plugin_that_raises_fails_only_its_pod_with_an_error_naming_it():
    profile = {"plugins": {"filter": {"enabled": [{"name": "Exploding"}]}}}
    pods = [make_pod("bad").labels(explode="yes").obj(), make_pod("good").obj()]
    scheduler, backend = make_scheduler({"Exploding": Exploding}, profile, nodes("n1"), pods)
    run_until_idle(scheduler)
    assert bound_node(backend, "good") == "n1"
    assert bound_node(backend, "bad") == ""
    reason, message = backend.conditions["default/bad"]
    assert reason == REASON_SCHEDULER_ERROR
    assert message == 'running Filter plugin "Exploding": RuntimeError: boom'
    # An Error goes through backoff, not the unschedulable pool.
    assert scheduler.queue.pending()["backoff"] == 1


RESERVE_LOG: list[str] = []


def reserve_plugin(name: str, fail: bool) -> type:
    class Reserving:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            RESERVE_LOG.append(f"reserve {name}")
            return Status.unschedulable(f"{name} has no room") if fail else None

        @hookimpl
        def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
            RESERVE_LOG.append(f"unreserve {name}")

    return Reserving


def test_reserve_failure_unreserves_every_plugin_in_reverse_and_forgets_the_pod():
    RESERVE_LOG.clear()
    plugins = {
        "R1": reserve_plugin("R1", False),
        "R2": reserve_plugin("R2", False),
        "R3": reserve_plugin("R3", True),
    }
    profile = {
        "plugins": {"reserve": {"enabled": [{"name": "R1"}, {"name": "R2"}, {"name": "R3"}]}}
    }
    scheduler, backend = make_scheduler(
        plugins, profile, nodes("n1"), [make_pod("p").req(cpu="1").obj()]
    )
    run_until_idle(scheduler)
    assert RESERVE_LOG == [
        "reserve R1",
        "reserve R2",
        "reserve R3",
        "unreserve R3",
        "unreserve R2",
        "unreserve R1",
    ]
    assert bound_node(backend, "p") == ""
    assert backend.conditions["default/p"] == (REASON_UNSCHEDULABLE, "R3 has no room")
    scheduler.cache.update_snapshot(scheduler.snapshot)
    assert scheduler.snapshot.get("n1").requested.get("cpu", 0) == 0


class Gatekeeper:
    """Permit: every pod waits up to ``args['timeout']`` seconds."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.timeout = float(args.get("timeout", 5))

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.wait(self.timeout)


def _permit_scheduler(timeout: float):
    profile = {
        "plugins": {"permit": {"enabled": [{"name": "Gatekeeper"}]}},
        "pluginConfig": [{"name": "Gatekeeper", "args": {"timeout": timeout}}],
    }
    return make_scheduler(
        {"Gatekeeper": Gatekeeper}, profile, nodes("n1"), [make_pod("p").req(cpu="1").obj()]
    )


def _wait_for_waiting_pod(scheduler, seconds: float = 5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        waiting = list(scheduler.waiting_pods)
        if waiting:
            return waiting[0]
        time.sleep(0.01)
    raise AssertionError("no pod is waiting at permit")


def test_permit_wait_then_allow_binds_the_pod():
    scheduler, backend = _permit_scheduler(timeout=30)
    scheduler.schedule_one(timeout=0)
    waiting = _wait_for_waiting_pod(scheduler)
    assert waiting.node_name == "n1"
    assert waiting.pending_plugins() == ["Gatekeeper"]
    assert bound_node(backend, "p") == ""  # held, not bound
    threading.Thread(target=waiting.allow, args=("Gatekeeper",)).start()
    assert scheduler.wait_for_bindings(timeout=5)
    assert bound_node(backend, "p") == "n1"


def test_permit_wait_then_reject_forgets_the_pod():
    scheduler, backend = _permit_scheduler(timeout=30)
    scheduler.schedule_one(timeout=0)
    waiting = _wait_for_waiting_pod(scheduler)
    waiting.reject("Gatekeeper", "quota exhausted")
    assert scheduler.wait_for_bindings(timeout=5)
    assert bound_node(backend, "p") == ""
    assert backend.conditions["default/p"] == (REASON_UNSCHEDULABLE, "quota exhausted")
    scheduler.cache.update_snapshot(scheduler.snapshot)
    assert scheduler.snapshot.get("n1").requested.get("cpu", 0) == 0


def test_permit_wait_times_out_with_kube_schedulers_message():
    scheduler, backend = _permit_scheduler(timeout=0.05)
    scheduler.schedule_one(timeout=0)
    assert scheduler.wait_for_bindings(timeout=5)
    assert bound_node(backend, "p") == ""
    assert backend.conditions["default/p"][1] == (
        "rejected due to timeout after waiting 50ms at plugin Gatekeeper"
    )


class NarrowTo:
    """PreFilter that allows only node n2."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
        return PreFilterResult({"n2"})


def test_prefilter_result_limits_nodes_and_names_itself_in_the_message():
    plugins = {"NarrowTo": NarrowTo, "X": recording_filter("X", frozenset({"n2"}))}
    profile = {
        "plugins": {
            "preFilter": {"enabled": [{"name": "NarrowTo"}]},
            "filter": {"enabled": [{"name": "X"}]},
        }
    }
    scheduler, backend = make_scheduler(
        plugins, profile, nodes("n1", "n2", "n3"), [make_pod("p").obj()]
    )
    run_until_idle(scheduler)
    assert CALLS == ["X"]  # Filter ran on n2 only
    assert backend.conditions["default/p"][1] == (
        "0/3 nodes are available: 1 node(s) rejected by X, "
        "2 node(s) didn't satisfy plugin(s) [NarrowTo]."
    )


class SkipsOwnFilter:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        return Status.skip()

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable("should have been skipped")


def test_prefilter_skip_skips_that_plugins_filter():
    profile = {
        "plugins": {
            "preFilter": {"enabled": [{"name": "SkipsOwnFilter"}]},
            "filter": {"enabled": [{"name": "SkipsOwnFilter"}]},
        }
    }
    scheduler, backend = make_scheduler(
        {"SkipsOwnFilter": SkipsOwnFilter}, profile, nodes("n1"), [make_pod("p").obj()]
    )
    run_until_idle(scheduler)
    assert bound_node(backend, "p") == "n1"


def binder(name: str, skip: bool) -> type:
    class Binder:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            self.handle = handle

        @hookimpl
        def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            CALLS.append(name)
            if skip:
                return Status.skip()
            self.handle.backend.bind(pod, node_name)
            return None

    return Binder


def test_bind_skip_hands_the_pod_to_the_next_binder():
    plugins = {
        "First": binder("First", True),
        "Second": binder("Second", False),
        "Third": binder("Third", False),
    }
    profile = {
        "plugins": {"bind": {"enabled": [{"name": "First"}, {"name": "Second"}, {"name": "Third"}]}}
    }
    scheduler, backend = make_scheduler(plugins, profile, nodes("n1"), [make_pod("p").obj()])
    run_until_idle(scheduler)
    assert CALLS == ["First", "Second"]
    assert bound_node(backend, "p") == "n1"


class StrictArgs:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        errors = []
        if not isinstance(args.get("threshold"), int):
            errors.append(FieldError("threshold", "must be an integer"))
        if args.get("mode") not in ("fast", "safe"):
            errors.append(FieldError("mode", "must be one of: fast, safe"))
        if errors:
            raise ArgsError(errors)

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        return None


class BadSignature:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> None:
        return None


class BrokenFactory:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        raise RuntimeError("cannot reach the license server")

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        return None


def test_every_plugin_problem_is_reported_at_once_with_field_paths():
    plugins = {
        "StrictArgs": StrictArgs,
        "BadSignature": BadSignature,
        "BrokenFactory": BrokenFactory,
    }
    profile = {
        "plugins": {"filter": {"enabled": [{"name": n} for n in plugins]}},
        "pluginConfig": [{"name": "StrictArgs", "args": {"threshold": "x"}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler(plugins, profile)
    errors = [str(e) for e in caught.value.errors]
    assert "profiles[0].pluginConfig[0].args.threshold: must be an integer" in errors
    assert "profiles[0].pluginConfig[0].args.mode: must be one of: fast, safe" in errors
    assert any("BadSignature" in e and "node" in e for e in errors), errors
    assert any(
        'plugin "BrokenFactory"' in e and "cannot reach the license server" in e for e in errors
    ), errors
    assert len(errors) == 4


def test_seeded_tie_breaking_is_repeatable_and_spreads_across_seeds():
    names = [f"n{i}" for i in range(8)]
    plugins = {"Flat": fixed_score("Flat", {})}
    profile = {"plugins": {"score": {"enabled": [{"name": "Flat"}]}}}

    def winner(seed: int) -> str:
        scheduler, backend = make_scheduler(
            plugins, profile, nodes(*names), [make_pod("p").obj()], seed=seed
        )
        run_until_idle(scheduler)
        return bound_node(backend, "p")

    assert winner(7) == winner(7)
    assert len({winner(seed) for seed in range(20)}) > 1


def test_without_score_plugins_the_first_fit_wins_from_a_rotating_start():
    scheduler, backend = make_scheduler(
        {}, None, nodes("n1", "n2", "n3"), [make_pod(f"p{i}").obj() for i in range(4)]
    )
    run_until_idle(scheduler)
    assert [bound_node(backend, f"p{i}") for i in range(4)] == ["n1", "n2", "n3", "n1"]


def test_config_of_profile_keeps_plugins_in_profile_order():
    config, _ = make_config(
        {n: recording_filter(n) for n in "ABC"},
        {"plugins": {"filter": {"enabled": [{"name": "C"}, {"name": "A"}]}}},
    )
    assert [r.name for r in config.profiles[0].plugins["filter"]] == ["C", "A"]


class CpuFit:
    """Filter: the pod's cpu must fit beside what the node already runs (a tiny NodeResourcesFit);
    its PreFilter extension records what-if pods so the test sees them."""

    added: list[str] = []

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        want = pod_requests(pod).get("cpu", 0)
        if node_info.requested.get("cpu", 0) + want > node_info.allocatable.get("cpu", 0):
            return Status.unschedulable("Insufficient cpu")
        return None

    @hookimpl
    def pre_filter(self, state, pod, nodes) -> None:
        return None

    @hookimpl
    def pre_filter_add_pod(self, state, pod_to_schedule, pod_to_add, node_info) -> None:
        CpuFit.added.append(pod_to_add.name)


class NominateFirstNode:
    """PostFilter: nominates n1 (as preemption would after choosing victims there)."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status):
        return PostFilterResult("n1")


def test_a_nominated_pod_keeps_its_room_from_lower_priority_pods():
    CpuFit.added.clear()
    profile = {
        "plugins": {
            "preFilter": {"enabled": [{"name": "CpuFit"}]},
            "filter": {"enabled": [{"name": "CpuFit"}]},
        }
    }
    node = make_node("n1").capacity(cpu="2").obj()
    high = make_pod("high").priority(100).req(cpu="2").nominated("n1").obj()
    low = make_pod("low").priority(1).req(cpu="1").obj()
    scheduler, backend = make_scheduler(
        {"CpuFit": CpuFit}, profile, [node], [high, low], start=False
    )
    # Only the low pod is queued now; the high one waits for its victims elsewhere.
    backend.pods.pop(high.uid)
    scheduler.start()
    scheduler.queue.nominator.add(high, "n1")
    run_until_idle(scheduler)
    assert bound_node(backend, "low") == ""
    assert backend.conditions["default/low"][1] == "0/1 nodes are available: 1 Insufficient cpu."
    assert CpuFit.added == ["high"]


def test_an_equal_or_lower_priority_nomination_does_not_block():
    profile = {"plugins": {"filter": {"enabled": [{"name": "CpuFit"}]}}}
    node = make_node("n1").capacity(cpu="2").obj()
    nominated = make_pod("other").priority(1).req(cpu="2").obj()
    pod = make_pod("urgent").priority(50).req(cpu="1").obj()
    scheduler, backend = make_scheduler({"CpuFit": CpuFit}, profile, [node], [pod])
    scheduler.queue.nominator.add(nominated, "n1")
    run_until_idle(scheduler)
    assert bound_node(backend, "urgent") == "n1"


def test_postfilter_nomination_is_recorded_and_reported():
    profile = {
        "plugins": {
            "filter": {"enabled": [{"name": "CpuFit"}]},
            "postFilter": {"enabled": [{"name": "NominateFirstNode"}]},
        }
    }
    node = make_node("n1").capacity(cpu="1").obj()
    pod = make_pod("big").req(cpu="2").obj()
    scheduler, backend = make_scheduler(
        {"CpuFit": CpuFit, "NominateFirstNode": NominateFirstNode}, profile, [node], [pod]
    )
    run_until_idle(scheduler)
    assert [p.name for p in scheduler.queue.nominator.nominated_pods_for_node("n1")] == ["big"]
    assert backend.nominations["default/big"] == "n1"
