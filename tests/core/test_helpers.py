"""The shared plugin helpers (``kubesched.framework.helpers``): kube's
``helper.DefaultNormalizeScore``
table, the untolerated-taint check, the compiled selector and the hint guard."""

from __future__ import annotations

import pytest

from kubesched import Node, Pod, Taint, Toleration
from kubesched.api.selectors import LabelSelector
from kubesched.framework.helpers import (
    MAX_NODE_SCORE,
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
