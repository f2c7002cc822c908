"""Which failures of a scheduling cycle end a pod's nomination (kube-scheduler v1.37).

``schedule_one.go`` returns ``clearNominatedNode`` (``ModeOverride`` with ``""``) for every
failure of the scheduling cycle but a FitError: no nodes at all, an Error before a node is
chosen, a failed assume, and a failure at Reserve or Permit, rejection or Error alike.
``handleSchedulingFailure`` then drops the pod from the nominator (``AddNominatedPod``) and
``updatePod`` patches ``status.nominatedNodeName`` away. A FitError keeps the nomination unless
PostFilter says otherwise (without PostFilter plugins ``nominatingInfo`` is nil).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import CycleState, Handle, InMemoryBackend, NodeInfo, Pod, Status, hookimpl
from kubesched.engine.scheduler import Scheduler
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

NODE = "n1"
FAILING = "Failing"


class Failing:
    """Fails the pod at ``args["point"]`` with ``args["code"]`` (``"error"`` or
    ``"unschedulable"``); passes everywhere else."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.point = args["point"]
        self.failure = (
            Status.error("broken") if args["code"] == "error" else Status.unschedulable("no room")
        )

    def _at(self, point: str) -> Status | None:
        return self.failure if point == self.point else None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return self._at("filter")

    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._at("reserve")

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return self._at("permit")


def nominated_pod() -> Pod:
    """A pending pod nominated to ``NODE`` earlier (by preemption, say)."""
    raw = make_pod("p").obj().raw
    return Pod({**raw, "status": {**(raw.get("status") or {}), "nominatedNodeName": NODE}})


def run(point: str, code: str, nodes: int = 1) -> tuple[Scheduler, InMemoryBackend]:
    """A scheduler over one node (or none) that has tried the nominated pod once."""
    args = {"point": point, "code": code}
    profile = {
        "plugins": {
            name: {"enabled": [{"name": FAILING}]} for name in ("filter", "reserve", "permit")
        },
        "pluginConfig": [{"name": FAILING, "args": args}],
    }
    node_objs = [make_node(NODE).obj()][:nodes]
    scheduler, backend = make_scheduler({FAILING: Failing}, profile, node_objs, [nominated_pod()])
    run_until_idle(scheduler)
    return scheduler, backend


def relabelled(pod: Pod) -> Pod:
    """``pod`` as the cluster has it after an unrelated change (a label added)."""
    meta = {**pod.raw["metadata"], "labels": {"changed": "yes"}}
    return Pod({**pod.raw, "metadata": meta})


@pytest.mark.parametrize(
    ("point", "code", "nodes", "kept"),
    [
        ("reserve", "unschedulable", 1, False),
        ("reserve", "error", 1, False),
        ("permit", "unschedulable", 1, False),
        ("permit", "error", 1, False),
        ("filter", "error", 1, False),
        ("none", "error", 0, False),
        ("filter", "unschedulable", 1, True),
    ],
    ids=[
        "rejected at Reserve: cleared",
        "Error at Reserve: cleared",
        "rejected at Permit: cleared",
        "Error at Permit: cleared",
        "Error at Filter: cleared",
        "no nodes at all: cleared",
        "a FitError without PostFilter: kept",
    ],
)
def test_which_failures_clear_the_nomination(point: str, code: str, nodes: int, kept: bool) -> None:
    scheduler, backend = run(point, code, nodes)
    stored = backend.pod("default", "p")
    assert stored.node_name == ""
    want = NODE if kept else ""
    assert backend.nominations.get("default/p", NODE) == want
    assert stored.nominated_node_name == want
    # The nominator follows: now, and after the pod next changes in the cluster.
    assert scheduler.nominator.node_of(stored) == want
    backend.add_pod(relabelled(stored))
    assert scheduler.nominator.node_of(stored) == want
