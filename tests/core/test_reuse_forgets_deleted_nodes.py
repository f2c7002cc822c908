"""The Filter/Score result tables hold only live nodes, however many nodes come and go.

Each table maps a node name to its last result (reuse.py). A node that is deleted is never
looked up again, so its entry would stay for as long as the table lives (a ReplicaSet's
signature keeps its tables for good): about 200 B per churned node per table. The scheduler drops
a node's results when the node leaves its snapshot; reuse gives the same answers as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import CycleState, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

LABEL = "example.com/rank"
PROFILE = {
    "plugins": {
        "filter": {"enabled": [{"name": "Ranked"}]},
        "score": {"enabled": [{"name": "Ranked", "weight": 1}]},
    }
}
KEPT = ["kept-0", "kept-1", "kept-2"]


class Ranked:
    """Filter: the node has the rank label; Score: the rank. Reads nothing of the pod."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.calls = 0

    @hookimpl
    def sign_pod(self, pod: Pod) -> None:
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        self.calls += 1
        assert node_info.node is not None
        if LABEL in node_info.node.labels:
            return None
        return Status.unresolvable("no rank")

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        assert node_info.node is not None
        return int(node_info.node.labels[LABEL])


def _churn(reuse: bool, rounds: int = 300) -> tuple[list[str], set[str], int]:
    """Kept nodes plus one node added and deleted per round, a pod scheduled each round; the
    pods' nodes, the node names the memo holds at the end and the plugin's Filter calls."""
    nodes = [make_node(name).label(LABEL, str(10 + i)).obj() for i, name in enumerate(KEPT)]
    nodes.append(make_node("unranked").obj())
    scheduler, backend = make_scheduler({"Ranked": Ranked}, PROFILE, nodes)
    framework = scheduler.frameworks["custom-scheduler"]
    framework.reuse_results = reuse
    try:
        for i in range(rounds):
            rank = "90" if i % 3 else "5"  # one round in three the new node ranks lowest
            backend.add_node(make_node(f"churn-{i}").label(LABEL, rank).obj())
            backend.add_pod(make_pod(f"p{i}").req(cpu="10m").obj())
            run_until_idle(scheduler)
            backend.delete_node(f"churn-{i}")
        backend.add_pod(make_pod("last").req(cpu="10m").obj())
        run_until_idle(scheduler)
    finally:
        scheduler.stop()
    placed = [backend.pod("default", f"p{i}").node_name for i in range(rounds)]
    placed.append(backend.pod("default", "last").node_name)
    return placed, framework.memo.node_names(), framework.plugins["Ranked"].calls


def test_the_tables_hold_only_live_nodes_and_reuse_gives_the_same_answers():
    placed, held, calls = _churn(reuse=True)
    fresh, nothing_held, fresh_calls = _churn(reuse=False)
    assert held == {*KEPT, "unranked"}
    assert nothing_held == set()
    assert placed == fresh
    assert placed[:3] == ["kept-2", "churn-1", "churn-2"] and placed[-1] == "kept-2"
    assert calls < fresh_calls / 2  # the kept nodes' results were reused, round after round
