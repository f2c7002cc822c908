"""The shared plugin helpers (``kubesched.framework.helpers``): kube's
``helper.DefaultNormalizeScore`` table, the untolerated-taint check, the compiled selector, the
hint guard, and the per-node memo and tallies kept across cycles."""

from __future__ import annotations

import pytest

from kubesched import Node, NodeInfo, Pod, Taint, Toleration
from kubesched.api.selectors import LabelSelector
from kubesched.framework.helpers import (
    MAX_NODE_SCORE,
    NodeMemo,
    NodeTallies,
    NodeTally,
    TolerationIndex,
    compile_selector,
    default_normalize_score,
    find_untolerated_taint,
    unreadable,
)
from kubesched.testing.builders import make_node, make_pod


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        (False, [1, 2, 3, 4, 5], [20, 40, 60, 80, 100]),
        (True, [1, 2, 3, 4, 5], [80, 60, 40, 20, 0]),
        (False, [1000, 10, 20, 30, 40], [100, 1, 2, 3, 4]),
        (True, [1000, 10, 20, 30, 40], [0, 99, 98, 97, 96]),
        (False, [1, 1, 1, 1, 1], [100, 100, 100, 100, 100]),
        (True, [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]),
        (False, [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]),
        (True, [0, 0, 0, 0, 0], [100, 100, 100, 100, 100]),
    ],
    ids=[
        "increasing",
        "increasing, reversed",
        "one large",
        "one large, reversed",
        "all equal",
        "all equal, reversed",
        "all zero",
        "all zero, reversed",
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], want: list[int]) -> None:
    by_node = {f"n{i}": s for i, s in enumerate(scores)}
    default_normalize_score(MAX_NODE_SCORE, reverse, by_node)
    assert list(by_node.values()) == want


NO_SCHEDULE = Taint("dedicated", "gpu", "NoSchedule")
PREFER = Taint("soft", "", "PreferNoSchedule")
NO_EXECUTE = Taint("evict", "", "NoExecute")


@pytest.mark.parametrize(
    ("taints", "tolerations", "want"),
    [
        ([], [], None),
        ([PREFER], [], None),
        ([NO_SCHEDULE], [], NO_SCHEDULE),
        ([PREFER, NO_EXECUTE, NO_SCHEDULE], [], NO_EXECUTE),
        ([NO_SCHEDULE], [Toleration("dedicated", "Equal", "gpu", "NoSchedule")], None),
        ([NO_SCHEDULE], [Toleration("dedicated", "Equal", "cpu", "NoSchedule")], NO_SCHEDULE),
        ([NO_SCHEDULE, NO_EXECUTE], [Toleration("", "Exists", "", "")], None),
        ([NO_SCHEDULE, NO_EXECUTE], [Toleration("dedicated", "Exists", "", "")], NO_EXECUTE),
    ],
    ids=[
        "no taints",
        "a PreferNoSchedule taint never keeps a pod off",
        "an untolerated NoSchedule taint",
        "the first in the node's order",
        "tolerated by an Equal toleration",
        "another value is not tolerated",
        "an empty key with Exists tolerates everything",
        "Exists on one key only",
    ],
)
def test_find_untolerated_taint(
    taints: list[Taint], tolerations: list[Toleration], want: Taint | None
) -> None:
    assert find_untolerated_taint(taints, tolerations) == want
    assert find_untolerated_taint(taints, TolerationIndex(tolerations)) == want


@pytest.mark.parametrize(
    "selector",
    [
        {},
        {"matchLabels": {"app": "web"}},
        {"matchLabels": {"app": "web", "tier": "front"}},
        {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    ],
    ids=["empty", "one label", "two labels", "In", "NotIn", "Exists"],
)
def test_a_compiled_selector_matches_as_the_selector_does(selector: dict) -> None:
    parsed = LabelSelector.parse(selector)
    compiled = compile_selector(parsed)
    for labels in (
        {},
        {"app": "web"},
        {"app": "db", "tier": "front"},
        {"app": "web", "tier": "front"},
    ):
        assert compiled(labels) == parsed.matches(labels), labels


def test_unreadable_objects_are_queued() -> None:
    node: Node = make_node("n1").obj()
    pod: Pod = make_pod("p").obj()
    assert not unreadable(None, node, Node)
    assert not unreadable(node, node, Node)
    assert unreadable(None, pod, Node)
    assert unreadable(pod, node, Node)
    assert unreadable(node, None, Node)


# -- NodeMemo, NodeTally, NodeTallies ------------------------------------------------------------


def _zone_nodes(*zones: str) -> list[NodeInfo]:
    return [NodeInfo(make_node(f"n{i}").zone(zone).obj()) for i, zone in enumerate(zones)]


def _app_pod(name: str, app: str) -> Pod:
    return make_pod(name).uid(name).label("app", app).obj()


class _Counter:
    """A contribution (pods labelled ``app=web`` per zone) that records which nodes it saw."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, info: NodeInfo) -> list[tuple[str, int]]:
        self.asked.append(info.name)
        zone = info.node.labels.get("topology.kubernetes.io/zone")
        if zone is None:
            return []
        return [(zone, sum(1 for p in info.pods.values() if p.labels.get("app") == "web"))]


def test_node_memo_keeps_values_while_the_node_info_is_unchanged() -> None:
    memo = NodeMemo()
    info = NodeInfo(make_node("n").obj())
    memo.get(info)["k"] = 1
    assert memo.get(info) == {"k": 1}
    info.add_pod(_app_pod("p", "web"))
    assert memo.get(info) == {}, "a new generation starts empty"
    memo.get(info)["k"] = 2
    assert memo.get(info.clone()) == {}, "another NodeInfo object, even at the same generation"


def test_node_memo_forget_drops_nodes_not_kept() -> None:
    memo = NodeMemo()
    a, b = NodeInfo(make_node("a").obj()), NodeInfo(make_node("b").obj())
    memo.get(a)["k"] = 1
    memo.get(b)["k"] = 1
    memo.forget(["a"])
    assert len(memo) == 1
    assert memo.get(a) == {"k": 1}
    assert memo.get(b) == {}


def test_node_tally_sums_contributions_and_asks_only_changed_nodes() -> None:
    nodes = _zone_nodes("z1", "z1", "z2")
    nodes[0].add_pod(_app_pod("a", "web"))
    nodes[2].add_pod(_app_pod("b", "web"))
    nodes[2].add_pod(_app_pod("c", "db"))
    tally: NodeTally[str] = NodeTally()
    counter = _Counter()
    assert tally.refresh(nodes, counter) == {"z1": 1, "z2": 1}
    assert tally.contributors == {"z1": 2, "z2": 1}
    assert counter.asked == ["n0", "n1", "n2"]

    counter.asked.clear()
    assert tally.refresh(nodes, counter) == {"z1": 1, "z2": 1}
    assert counter.asked == [], "nothing changed: nobody is asked"

    nodes[1].add_pod(_app_pod("d", "web"))
    assert tally.refresh(nodes, counter) == {"z1": 2, "z2": 1}
    assert counter.asked == ["n1"]

    counter.asked.clear()
    nodes[2] = NodeInfo(make_node("n2").zone("z3").obj())  # the snapshot swaps a NodeInfo in
    assert tally.refresh(nodes, counter) == {"z1": 2, "z3": 0}, "z2 went with its last node"
    assert counter.asked == ["n2"]


def test_node_tally_matches_nodes_by_name_when_the_list_changes_length() -> None:
    nodes = _zone_nodes("z1", "z2", "z3")
    nodes[0].add_pod(_app_pod("a", "web"))
    nodes[2].add_pod(_app_pod("b", "web"))
    tally: NodeTally[str] = NodeTally()
    tally.refresh([nodes[0], nodes[2]], _Counter())  # a sublist, as the snapshot's holders
    counter = _Counter()
    assert tally.refresh(nodes, counter) == {"z1": 1, "z2": 0, "z3": 1}
    assert counter.asked == ["n1"], "only the node added to the list is asked"
    nodes[2].add_pod(_app_pod("c", "web"))
    counter = _Counter()
    assert tally.refresh(nodes[1:], counter) == {"z2": 0, "z3": 2}, "z1 went with n0"
    assert counter.asked == ["n2"], "only the changed node is asked"


def test_node_tally_of_members_asks_only_new_and_changed_nodes_and_drops_gone_ones() -> None:
    """The snapshot's holders list grows and shrinks between cycles: matched by name."""
    nodes = _zone_nodes("z1", "z2", "z3", "z1")
    for i, info in enumerate(nodes):
        info.add_pod(_app_pod(f"p{i}", "web"))
    tally: NodeTally[str] = NodeTally()
    counter = _Counter()
    assert tally.refresh_members([nodes[0], nodes[2]], counter) == {"z1": 1, "z3": 1}
    assert counter.asked == ["n0", "n2"]

    counter = _Counter()
    grown = [nodes[0], nodes[1], nodes[2], nodes[3]]  # two placed in between and after
    assert tally.refresh_members(grown, counter) == {"z1": 2, "z2": 1, "z3": 1}
    assert counter.asked == ["n1", "n3"], "only the nodes that joined are asked"

    counter = _Counter()
    assert tally.refresh_members(grown, counter) == {"z1": 2, "z2": 1, "z3": 1}
    assert counter.asked == [], "nothing changed: nobody is asked"

    nodes[2].add_pod(_app_pod("q", "web"))
    counter = _Counter()
    shrunk = [nodes[0], nodes[2]]  # n1 and n3 no longer hold such pods
    assert tally.refresh_members(shrunk, counter) == {"z1": 1, "z3": 2}, "z2 went with n1"
    assert tally.contributors == {"z1": 1, "z3": 1}
    assert counter.asked == ["n2"], "the changed node is asked, the gone ones subtracted"

    replaced = NodeInfo(nodes[0].node)  # the snapshot swapped in a NodeInfo without the pod
    replaced.generation = nodes[0].generation
    assert tally.refresh_members([replaced, nodes[2]], _Counter()) == {"z1": 0, "z3": 2}
    assert tally.refresh_members([], _Counter()) == {}


def test_node_tally_skips_node_infos_without_a_node() -> None:
    nodes = [*_zone_nodes("z1"), NodeInfo(None)]
    counter = _Counter()
    assert NodeTally().refresh(nodes, counter) == {"z1": 0}
    assert counter.asked == ["n0"]


def test_node_tallies_keep_the_most_recently_used_questions() -> None:
    tallies: NodeTallies[str] = NodeTallies(maxsize=2)
    a, b = tallies.get("a"), tallies.get("b")
    assert tallies.get("a") is a
    tallies.get("c")  # evicts "b", the least recently used
    assert len(tallies) == 2
    assert tallies.get("a") is a
    assert tallies.get("b") is not b


def test_node_tallies_refuse_a_size_below_one() -> None:
    with pytest.raises(ValueError, match="NodeTallies: maxsize must be at least 1, got 0"):
        NodeTallies(maxsize=0)


def test_node_tally_asks_a_node_whose_node_info_was_replaced_even_at_the_same_generation() -> None:
    nodes = _zone_nodes("z1")
    tally: NodeTally[str] = NodeTally()
    tally.refresh(nodes, _Counter())
    replaced = NodeInfo(nodes[0].node, [_app_pod("a", "web")])
    replaced.generation = nodes[0].generation
    counter = _Counter()
    assert tally.refresh([replaced], counter) == {"z1": 1}
    assert counter.asked == ["n0"]
