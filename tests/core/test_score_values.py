"""A score is an int in [0, 100] (kube's int64 after NormalizeScore): a float, bool or string
from Score or NormalizeScore is an Error naming the plugin, never truncated into a decision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness

NODES = [make_node("n1"), make_node("n2")]


class Index:
    """An integer that is not an ``int`` (as numpy's ``int64`` is not)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


def scoring(value: Any) -> type:
    class Scored:
        name = "Scored"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

        @hookimpl
        def score(self, state, pod, node_info):
            return value

    return Scored


def normalizing(value: Any) -> type:
    class Normalized:
        name = "Normalized"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

        @hookimpl
        def score(self, state, pod, node_info):
            return 10

        @hookimpl
        def normalize_score(self, state, pod, scores):
            for node in scores:
                scores[node] = value

    return Normalized


@pytest.mark.parametrize(
    ("plugin", "point", "shown"),
    [
        pytest.param(scoring(37.9), "Score", "float 37.9", id="float"),
        pytest.param(scoring(50.0), "Score", "float 50.0", id="whole-float"),
        pytest.param(scoring(True), "Score", "bool True", id="bool"),
        pytest.param(scoring("50"), "Score", "str '50'", id="str"),
        pytest.param(scoring(None), "Score", "NoneType None", id="none"),
        pytest.param(normalizing(12.5), "NormalizeScore", "float 12.5", id="normalized-float"),
        pytest.param(normalizing(False), "NormalizeScore", "bool False", id="normalized-bool"),
    ],
)
def test_a_non_integer_score_is_an_error_naming_the_plugin(plugin, point, shown):
    with Harness.for_plugin(plugin, nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.result == "SchedulerError"
    assert report.message == (
        f'{point} plugin "{plugin.name}" returned {shown} for node "n1"; a score must be an int '
        "in [0, 100]"
    )
    assert harness.node_of("p") is None


def test_an_out_of_range_normalized_score_is_kubes_error():
    with Harness.for_plugin(normalizing(101), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.message == (
        'applying score defaultWeights on Score plugins: plugin "Normalized" returns an invalid '
        "score 101, it should in the range of [0, 100] after normalizing"
    )


@pytest.mark.parametrize("value", [Index(70), 70], ids=["index-type", "int"])
def test_any_integer_type_is_a_score(value):
    with Harness.for_plugin(scoring(value), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.result == "Scheduled"
    assert report.score("n1", "Scored").weighted == 70
