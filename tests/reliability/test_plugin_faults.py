"""Plugins that misbehave while several hundred pods are scheduled against the real control
plane: one that raises, one that hangs (at Filter, Reserve, Permit, PreBind or Bind, under the
plugin time limit), ones that return garbage (a wrong type, a score out of range). A tenth of
the pods meet the fault on their first attempt only, a few on every attempt.
The first must end bound exactly once; the others unbound with a ``SchedulerError`` condition
naming the plugin; the scheduler must keep scheduling everyone else.

The scheduler runs in this process (the one ``kubesched run`` builds: Kubernetes backend,
events, the same Scheduler) so the test can register its faulty plugins; it reaches the
apiserver through the fault proxy, under its own least-privilege identity.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest
from reliability_support import PODS, check_exactly_once, pod_condition, seed_profile, wait_for

from kubesched import Code, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.framework.registry import Registry

#: Released when a test ends: a hung plugin then returns (every wait is bounded anyway).
RELEASE = threading.Event()
HANG_SECONDS = 120.0


def _transient(pod: Pod) -> bool:
    return pod.name.endswith("1")


def _poison(pod: Pod) -> bool:
    return pod.name.endswith("99")


class _Fault:
    """Misbehaves for transient pods on their first attempt and for poison pods always."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def strikes(self, pod: Pod) -> bool:
        if _poison(pod):
            return True
        if not _transient(pod):
            return False
        with self.lock:
            first = pod.uid not in self.seen
            self.seen.add(pod.uid)
        return first


class RaisingFilter(_Fault):
    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.strikes(pod):
            raise RuntimeError(f"boom on {pod.name}")
        return None


class HangingFilter(_Fault):
    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.strikes(pod):
            RELEASE.wait(HANG_SECONDS)
        return None


class HangingReserve(_Fault):
    @hookimpl
    def reserve(self, pod: Pod, node_name: str) -> None:
        if self.strikes(pod):
            RELEASE.wait(HANG_SECONDS)

    @hookimpl
    def unreserve(self, pod: Pod, node_name: str) -> None:
        pass


class HangingPermit(_Fault):
    @hookimpl
    def permit(self, pod: Pod, node_name: str) -> None:
        if self.strikes(pod):
            RELEASE.wait(HANG_SECONDS)


class HangingPreBind(_Fault):
    @hookimpl
    def pre_bind(self, pod: Pod, node_name: str) -> None:
        if self.strikes(pod):
            RELEASE.wait(HANG_SECONDS)


class HangingBind(_Fault):
    """Runs before DefaultBinder: hangs on its pods, leaves the others to DefaultBinder."""

    @hookimpl
    def bind(self, pod: Pod, node_name: str) -> Status:
        if self.strikes(pod):
            RELEASE.wait(HANG_SECONDS)
        return Status(Code.SKIP)


class WrongTypeFilter(_Fault):
    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> Any:
        return "yes" if self.strikes(pod) else None


class OutOfRangeScore(_Fault):
    @hookimpl
    def score(self, pod: Pod, node_info: NodeInfo) -> Any:
        return 1000 if self.strikes(pod) else 50


class WrongTypeScore(_Fault):
    @hookimpl
    def score(self, pod: Pod, node_info: NodeInfo) -> Any:
        return "high" if self.strikes(pod) else 50


CASES = {
    "raises": (RaisingFilter, "filter", 'running Filter plugin "Faulty": RuntimeError: boom'),
    "hangs": (HangingFilter, "filter", 'running Filter plugin "Faulty": did not return within'),
    "hangs-reserve": (
        HangingReserve,
        "reserve",
        'running Reserve plugin "Faulty": did not return within',
    ),
    "hangs-permit": (HangingPermit, "permit", 'running Permit plugin "Faulty": did not return'),
    "hangs-prebind": (
        HangingPreBind,
        "preBind",
        'running PreBind plugin "Faulty": did not return within',
    ),
    "hangs-bind": (HangingBind, "bind", 'running Bind plugin "Faulty": did not return within'),
    "wrong-type": (WrongTypeFilter, "filter", 'Filter plugin "Faulty" returned str'),
    "score-out-of-range": (OutOfRangeScore, "score", 'plugin "Faulty" returns an invalid score'),
    "score-wrong-type": (WrongTypeScore, "score", 'Score plugin "Faulty" returned str'),
}
HANG_LIMIT = 1.0


@pytest.fixture(autouse=True)
def _release_hung_plugins():
    RELEASE.clear()
    yield
    RELEASE.set()


def _points(point: str) -> dict[str, Any]:
    """Where the faulty plugin goes, beyond Filter and Score."""
    if point == "bind":  # first, so DefaultBinder only binds what it skips
        return {
            "bind": {
                "enabled": [{"name": "Faulty"}, {"name": "DefaultBinder"}],
                "disabled": [{"name": "*"}],
            }
        }
    if point in ("filter", "score"):
        return {}
    return {point: {"enabled": [{"name": "Faulty"}]}}


@pytest.mark.parametrize("case", list(CASES))
def test_misbehaving_plugin(scenario, proxy, figure, case):
    cls, point, message = CASES[case]
    hangs = case.startswith("hangs")
    registry = Registry.installed()
    registry.register("Faulty", cls)
    config = seed_profile(
        extra_filters=["Faulty"] if point == "filter" else [],
        extra_scores=["Faulty"] if point == "score" else [],
        points=_points(point),
    )
    options = {"plugin_timeout": HANG_LIMIT} if hangs else {}
    scenario.add_nodes(3)
    scheduler = scenario.start_in_process(
        proxy.kubeconfig(scenario.tmp_path / "proxy.kubeconfig"), config, registry, **options
    )
    names = [f"p{i}" for i in range(PODS)]
    poison = [n for n in names if n.endswith("99")]
    schedulable = [n for n in names if n not in poison]
    began = time.monotonic()
    scenario.create_pods(names)
    scenario.wait_bound(schedulable, 60)
    conditions = {
        n: wait_for(
            lambda n=n: (
                (c := pod_condition(scenario.core, scenario.namespace, n))
                and c["reason"] == "SchedulerError"
                and c
            ),
            20,
            what=f"the SchedulerError condition of {n}",
        )
        for n in poison
    }
    for name, condition in conditions.items():
        assert condition["status"] == "False"
        assert message in condition["message"], (name, condition)
    assert not any(scenario.pod_nodes()[n] for n in poison)
    errors = sum(1 for a in scheduler.scheduler.attempts.values() if a.reason == "SchedulerError")
    figure.scenario = f"plugin {case}"
    what = case.split("-")[0] if hangs else case.replace("-", " ")
    figure.injected = (
        f"a {point[0].upper() + point[1:]} plugin that {what}: first attempt of 10% of the "
        f"pods, every attempt of {len(poison)}" + (f"; limit {HANG_LIMIT:g} s" if hangs else "")
    )
    figure.checked = "others bound exactly once; the rest SchedulerError naming the plugin"
    figure.notes["poison_pods"] = len(poison)
    figure.notes["errors_at_end"] = errors
    check_exactly_once(scenario, proxy, schedulable, figure, fault_ended=began)
