"""The Handle a plugin gets is complete when its factory runs: the profile's plugins runner (for
preemption's what-ifs), the scheduler's nominator and activator — never the runtime class."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import CycleState, Handle, InMemoryBackend, NodeInfo, Pod, Snapshot, Status, hookimpl
from kubesched.config import PluginRef, Profile, SchedulerConfiguration
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod

SEEN: list[Handle] = []


class Watcher:
    """Keeps the handle its factory got; rejects nodes labelled ``full``."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        SEEN.append(handle)
        self.handle = handle

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable("full") if "full" in node_info.node.labels else None


def _scheduler() -> Scheduler:
    SEEN.clear()
    profile = Profile(scheduler_name="p", plugins={"filter": [PluginRef("Watcher")]})
    config = SchedulerConfiguration(profiles=[profile])
    return Scheduler(config, InMemoryBackend(), Registry({"Watcher": Watcher}))


def test_the_factory_gets_a_handle_with_runner_nominator_and_activator() -> None:
    scheduler = _scheduler()
    (handle,) = SEEN
    assert handle is scheduler.frameworks["p"].handle
    assert handle.nominator is scheduler.queue.nominator
    assert handle.activator is not None
    assert not hasattr(handle, "framework")  # the runtime class is not reachable from a plugin


def test_the_handle_runs_the_profiles_filters_for_a_what_if() -> None:
    _scheduler()
    (handle,) = SEEN
    full = NodeInfo(make_node("n1").label("full", "yes").obj())
    free = NodeInfo(make_node("n2").obj())
    pod = make_pod("p").obj()
    rejected = handle.run_filter_with_nominated_pods(CycleState(), pod, full)
    assert rejected is not None and rejected.message() == "full"
    assert rejected.plugin == "Watcher"
    assert handle.run_filter(CycleState(), pod, free) is None


def test_a_bare_handle_says_how_to_get_a_runner() -> None:
    handle = Handle("t", InMemoryBackend(), Snapshot)
    with pytest.raises(RuntimeError, match="no plugins runner"):
        handle.run_filter(CycleState(), make_pod("p").obj(), NodeInfo(make_node("n").obj()))
    # Nominations and activation answer as a cluster with none would.
    assert handle.nominated_pods_for_node("n") == []
    assert not handle.has_nominated_pods()
    handle.activate([make_pod("p").obj()])
