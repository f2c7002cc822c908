"""PreBindPreFlight and the nominated node written at the start of the binding cycle.

kube-scheduler v1.37 (``NominatedNodeNameForExpectation``, on by default): the binding cycle
runs every PreBind plugin's PreBindPreFlight first. When one answers Success (its PreBind has
work to do), or the pod waits at Permit, the scheduler writes the chosen node to the pod's
``status.nominatedNodeName`` before that work starts; PreBind plugins that answered Skip are
not called; an Error (or an unsupported code) fails the binding, and a failed binding clears
the nomination (``clearNominatedNode``). The apiserver clears it when the pod is bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import CycleState, Handle, Pod, Status, hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_scheduler, run_until_idle


class Preparer:
    """PreBind plugin whose PreBindPreFlight answers ``args["answer"]``; its PreBind records the
    nomination the cluster had when it ran."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.answer = args.get("answer", "success")
        self.handle = handle
        self.pre_bound: list[tuple[str, str | None]] = []

    @hookimpl
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if self.answer == "raise":
            raise RuntimeError("boom")
        return {
            "success": None,
            "skip": Status.skip(),
            "error": Status.error("no plan for this node"),
            "unschedulable": Status.unschedulable("not now"),
        }[self.answer]

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.pre_bound.append((pod.name, self.handle.backend.nominations.get(pod.key)))
        return None


class LegacyPreparer:
    """A PreBind plugin without PreBindPreFlight: it may have work for any pod."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None


class FailingPreparer(LegacyPreparer):
    """A PreBind plugin with work for every pod, whose PreBind fails."""

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.error("volume not ready")


class WaitAtPermit:
    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return Status.wait(30)


def _scheduler(plugins: dict[str, type], pre_bind: list[str], args: Mapping[str, Any] = {}):
    profile = {
        "plugins": {"preBind": {"enabled": [{"name": n} for n in pre_bind]}},
        "pluginConfig": [{"name": n, "args": dict(args)} for n in pre_bind if n == "Preparer"],
    }
    node = make_node("n1").obj()
    pod = make_pod("p").obj()
    scheduler, backend = make_scheduler(plugins, profile, [node], [pod])
    run_until_idle(scheduler)
    return scheduler, backend


def _plugin(scheduler, name: str):
    return scheduler.frameworks["custom-scheduler"].plugins[name]


def test_a_plugin_with_work_gets_the_pod_nominated_before_its_pre_bind_runs():
    scheduler, backend = _scheduler({"Preparer": Preparer}, ["Preparer"])
    assert _plugin(scheduler, "Preparer").pre_bound == [("p", "n1")]
    bound = backend.pod("default", "p")
    assert bound.node_name == "n1"
    assert "nominatedNodeName" not in (bound.raw.get("status") or {})  # cleared on binding


def test_plugins_that_skip_are_not_called_and_nothing_is_written():
    scheduler, backend = _scheduler({"Preparer": Preparer}, ["Preparer"], {"answer": "skip"})
    assert _plugin(scheduler, "Preparer").pre_bound == []
    assert backend.pod("default", "p").node_name == "n1"
    assert backend.nominations == {}


def test_a_pre_bind_plugin_without_pre_flight_counts_as_having_work():
    _, backend = _scheduler({"LegacyPreparer": LegacyPreparer}, ["LegacyPreparer"])
    assert backend.nominations == {"default/p": "n1"}


def test_one_plugin_with_work_is_enough_and_the_skipping_one_is_left_out():
    plugins = {"Preparer": Preparer, "LegacyPreparer": LegacyPreparer}
    scheduler, backend = _scheduler(plugins, ["Preparer", "LegacyPreparer"], {"answer": "skip"})
    assert _plugin(scheduler, "Preparer").pre_bound == []
    assert backend.nominations == {"default/p": "n1"}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("error", 'running PreBindPreFlight "Preparer": no plan for this node'),
        (
            "unschedulable",
            "PreBindPreFlight \"Preparer\" returned 'Unschedulable', which is unsupported. It "
            "is supposed to return Success, Skip, or Error status",
        ),
        ("raise", 'running PreBindPreFlight plugin "Preparer": RuntimeError: boom'),
    ],
)
def test_a_failing_pre_flight_fails_the_binding_before_anything_is_written(answer, message):
    scheduler, backend = _scheduler({"Preparer": Preparer}, ["Preparer"], {"answer": answer})
    assert backend.pod("default", "p").node_name == ""
    assert backend.conditions["default/p"] == ("SchedulerError", message)
    assert _plugin(scheduler, "Preparer").pre_bound == []
    assert backend.nominations == {"default/p": ""}  # kube's clearNominatedNode
    assert not scheduler.cache.is_assumed(backend.pod("default", "p").uid)


def test_a_failed_pre_bind_clears_the_nomination_it_wrote_on_the_stored_pod():
    """The nomination written before PreBind is cleared when the binding fails, in the cluster
    as in the report: the stored pod ends as the apiserver's would, without one."""
    scheduler, backend = _scheduler({"FailingPreparer": FailingPreparer}, ["FailingPreparer"])
    stored = backend.pod("default", "p")
    assert stored.node_name == ""
    assert backend.conditions["default/p"][0] == "SchedulerError"
    assert backend.nominations == {"default/p": ""}
    assert "nominatedNodeName" not in (stored.raw.get("status") or {})
    # A later change of the pod does not bring the old nomination back to the nominator.
    relabelled = Pod({**stored.raw, "metadata": {**stored.raw["metadata"], "labels": {"a": "b"}}})
    backend.add_pod(relabelled)
    assert scheduler.nominator.node_of(relabelled) == ""


def test_a_pod_waiting_at_permit_is_nominated_even_without_pre_bind_work():
    profile = {"plugins": {"permit": {"enabled": [{"name": "WaitAtPermit"}]}}}
    with Harness({"WaitAtPermit": WaitAtPermit}, profile, nodes=[make_node("n1")]) as h:
        h.add_pod(make_pod("p"))
        run_until_idle(h.scheduler)
        assert [w.pod.name for w in h.waiting()] == ["p"]
        assert h.backend.pod("default", "p").nominated_node_name == "n1"  # while it waits
        h.allow("p", "WaitAtPermit")
        assert h.node_of("p") == "n1"
        assert h.backend.nominations == {"default/p": "n1"}


def test_a_pod_already_nominated_to_the_node_is_not_written_again():
    profile = {"plugins": {"preBind": {"enabled": [{"name": "LegacyPreparer"}]}}}
    pod = make_pod("p").obj()
    pod.raw.setdefault("status", {})["nominatedNodeName"] = "n1"
    pod.nominated_node_name = "n1"
    scheduler, backend = make_scheduler(
        {"LegacyPreparer": LegacyPreparer}, profile, [make_node("n1").obj()], [pod]
    )
    writes: list[str] = []
    patch = backend.patch_pod_status

    def counting(p, **fields):
        writes.append(p.name)
        return patch(p, **fields)

    backend.patch_pod_status = counting  # type: ignore[method-assign]
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"
    assert writes == []


def test_the_nomination_written_for_a_binding_pod_does_not_count_it_twice():
    """The pod is assumed on its node; the status update the nomination brings must not also
    make it a nominated pod there (kube's queue leaves in-flight pods' nominations alone)."""

    class Checker(Preparer):
        @hookimpl
        def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
            self.pre_bound.append((pod.name, str(len(self.handle.nominator))))
            return None

    scheduler, _ = _scheduler({"Preparer": Checker}, ["Preparer"])
    assert _plugin(scheduler, "Preparer").pre_bound == [("p", "0")]
