"""A signature's Filter and Score results by snapshot position (kubesched.engine.position_index).

For a pod whose every running Filter signed it, the Filter step takes its feasible nodes from
the index instead of visiting node after node from the rotating start index. The index must
answer as the loop does, node for node: the same feasible nodes in the same order, the same
rejections, the same next start index; and between two cycles it must look again at only the
positions the snapshot's journal lists as replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched import CycleState, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.engine import algorithm
from kubesched.engine.position_index import FilterIndex, ScoreIndex
from kubesched.engine.runtime import Framework
from kubesched.framework.snapshot import NodeListJournal
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

_FULL = Status.unschedulable("node(s) are full").with_plugin("Fake")


class _Node:
    """What the index reads of a NodeInfo through ``status_of``: here, whether it passes."""

    def __init__(self, name: str, passes: bool) -> None:
        self.name = name
        self.passes = passes


def _status_of(node: Any) -> Status | None:
    return None if node.passes else _FULL


def _loop(nodes: list[_Node], start: int, to_find: int) -> tuple[list[int], list[int], int]:
    """The Filter loop's answer: feasible positions in visiting order, rejected positions
    visited, nodes processed."""
    feasible: list[int] = []
    rejected: list[int] = []
    processed = 0
    total = len(nodes)
    for offset in range(total):
        position = (start + offset) % total
        processed += 1
        if nodes[position].passes:
            feasible.append(position)
            if len(feasible) == to_find:
                break
        else:
            rejected.append(position)
    return feasible, rejected, processed


_STEP = st.one_of(
    st.tuples(st.just("replace"), st.integers(0, 10_000), st.booleans()),
    st.tuples(st.just("relist"), st.integers(1, 30), st.booleans()),
    st.tuples(st.just("walk"), st.integers(0, 10_000), st.integers(1, 40)),
)


@settings(max_examples=300, deadline=None)
@given(
    first=st.lists(st.booleans(), min_size=1, max_size=30),
    steps=st.lists(_STEP, max_size=40),
)
def test_the_index_answers_as_the_loop_through_any_churn(
    first: list[bool], steps: list[tuple[str, int, Any]]
) -> None:
    nodes = [_Node(f"n{i}", passes) for i, passes in enumerate(first)]
    journal = NodeListJournal(nodes)
    index = FilterIndex({})
    scores = ScoreIndex({})
    evaluated: list[str] = []

    def counted(node: Any) -> Status | None:
        evaluated.append(node.name)
        return _status_of(node)

    assert index.catch_up(journal, counted)
    for kind, a, b in steps:
        if kind == "replace":  # the cache swaps in a changed node's copy
            position = a % len(nodes)
            nodes[position] = _Node(nodes[position].name, b)
            journal.replaced.append(position)
        elif kind == "relist":  # a node added or gone: a new list and journal
            nodes = [_Node(f"m{i}", (i % 3 == 0) == b) for i in range(a)]
            journal = NodeListJournal(nodes)
        else:
            replaced_since = (
                set(journal.replaced[index.read :]) if index.journal is journal else None
            )
            evaluated.clear()
            assert index.catch_up(journal, counted)
            if replaced_since is not None:
                assert sorted(evaluated) == sorted(nodes[p].name for p in replaced_since)
            else:
                assert len(evaluated) == len(nodes)
            start = a % len(nodes)
            walk = index.walk(start, b)
            feasible, rejected, processed = _loop(nodes, start, b)
            assert walk.feasible == feasible
            assert [p for p, _ in walk.rejected] == rejected
            assert all(status is _FULL for _, status in walk.rejected)
            assert walk.processed == processed
            scores.catch_up(journal)
            for p in walk.feasible:
                assert scores.entries[p] in (None, nodes[p].name)
                scores.entries[p] = nodes[p].name  # what the Score step writes back


def test_a_node_whose_filters_gave_an_error_gives_the_index_up() -> None:
    nodes = [_Node(f"n{i}", True) for i in range(5)]
    journal = NodeListJournal(nodes)
    index = FilterIndex({})
    assert not index.catch_up(journal, lambda n: False if n.name == "n3" else None)
    assert index.journal is None, "the next cycle builds it again"
    assert index.catch_up(journal, _status_of)
    assert index.walk(0, 5).feasible == [0, 1, 2, 3, 4]


# --- through the scheduler ------------------------------------------------------------------

CALLS: list[tuple[str, str]] = []


class Slots:
    """Filter: at most ``slots`` pods per node, and node ``broken`` gives an Error; Score:
    free slots. Signs every pod alike."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.slots = int(args.get("slots", 2))
        self.broken = str(args.get("broken", ""))

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        return pod.labels.get("size", "")

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        CALLS.append((pod.name, node_info.name))
        if node_info.name == self.broken:
            return Status.error("the disk is on fire")
        if len(node_info.pods) >= self.slots:
            return Status.unschedulable("node(s) are full")
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return (self.slots - len(node_info.pods)) * 10 + int(node_info.name[1:]) % 7


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


_FILTER_INDEXED = algorithm.SchedulingAlgorithm._filter_indexed


def _outcome(
    monkeypatch: pytest.MonkeyPatch, indexed: bool, pods: int, nodes: int = 200, **args: Any
) -> tuple[dict[str, str | None], dict[str, str], int, int]:
    """Placements, failure messages, the next start index and the cycles the index answered,
    for ``pods`` like pods on ``nodes`` nodes (a third of them full) with every Filter result
    reusable, looking for 100 feasible nodes (120 at 400 nodes) per pod."""
    answered = {"cycles": 0}

    def counting(self: Any, *a: Any, **k: Any) -> Any:
        found = _FILTER_INDEXED(self, *a, **k) if indexed else None
        answered["cycles"] += found is not None
        return found

    monkeypatch.setattr(algorithm.SchedulingAlgorithm, "_filter_indexed", counting)
    count = nodes
    plugins = {
        "filter": {"enabled": [{"name": "Slots"}]},
        "score": {"enabled": [{"name": "Slots"}]},
    }
    scheduler, backend = make_scheduler(
        {"Slots": Slots},
        {
            "plugins": plugins,
            "percentageOfNodesToScore": 30,
            "pluginConfig": [{"name": "Slots", "args": args}],
        },
        [make_node(f"n{i}").obj() for i in range(count)],
    )
    # Every third node starts full, so the walks meet rejections.
    for i in range(0, count, 3):
        for k in range(2):
            backend.add_pod(make_pod(f"init-{i}-{k}").node(f"n{i}").obj())
    for i in range(pods):
        backend.add_pod(make_pod(f"p{i}").label("size", "s").obj())
        run_until_idle(scheduler)
    placed = {p.name: p.node_name for p in backend.pods.values() if p.name.startswith("p")}
    failed = {
        p.name: scheduler.attempts[p.uid].message
        for p in backend.pods.values()
        if p.name.startswith("p") and not p.node_name and p.uid in scheduler.attempts
    }
    start = scheduler.algorithm.next_start_node_index
    return placed, failed, start, answered["cycles"]


def test_placements_and_messages_are_the_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = _outcome(monkeypatch, False, 300)
    indexed = _outcome(monkeypatch, True, 300)
    assert indexed[:3] == loop[:3]
    assert indexed[3] == 299, "the index answered every pod after the first"
    assert sum(1 for node in loop[0].values() if node) == 266  # 133 nodes with 2 free slots
    assert loop[1]["p299"] == "0/200 nodes are available: 200 node(s) are full."


def test_the_state_a_binding_cycle_keeps_holds_none_of_the_cycles_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A binding cycle keeps its CycleState while it waits for a worker, thousands of them in
    a backlog: the Filter step's node list and positions (hundreds of entries each) must be
    gone by Reserve, or they cost tens of MB at 5,000 nodes."""
    kept: list[object] = []
    reserve = Framework.run_reserve

    def capture(self: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        kept.append(state.found)
        return reserve(self, state, pod, node)

    monkeypatch.setattr(Framework, "run_reserve", capture)
    _, _, _, answered = _outcome(monkeypatch, True, 5)
    assert answered == 4, "the index found the nodes of every pod after the first"
    assert kept == [None] * 5


def test_a_like_pod_evaluates_only_the_node_the_last_one_went_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _outcome(monkeypatch, True, 3)
    p0 = [node for pod, node in CALLS if pod == "p0"]
    p2 = [node for pod, node in CALLS if pod == "p2"]
    assert len(p0) == 150, "the loop: 100 feasible nodes found among the first 150"
    assert len(p2) == 1, "the index: the node p1 went to, and nothing else"


def test_an_error_on_a_node_the_loop_would_not_visit_fails_no_pod(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """n370 gives an Error. The loop meets it on the third pod's window (p0 visits n0-n179,
    p1 n180-n359); the index, built on p1's cycle, meets it at once and hands p1 back to the
    loop, which places it."""
    loop = _outcome(monkeypatch, False, 4, nodes=400, broken="n370")
    indexed = _outcome(monkeypatch, True, 4, nodes=400, broken="n370")
    assert indexed[:3] == loop[:3]
    assert [bool(loop[0][f"p{i}"]) for i in range(4)] == [True, True, False, False]
    assert "the disk is on fire" in loop[1]["p2"]
