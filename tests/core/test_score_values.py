"""A score is an int in [0, 100] (kube's int64 after NormalizeScore): a float, bool or string
from Score or NormalizeScore is an Error naming the plugin, never truncated into a decision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import Status, hookimpl
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


def test_an_out_of_range_score_of_a_plugin_without_normalize_score_is_kubes_error():
    with Harness.for_plugin(scoring(150), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.result == "SchedulerError"
    assert report.message == (
        'applying score defaultWeights on Score plugins: plugin "Scored" returns an invalid '
        "score 150, it should in the range of [0, 100] after normalizing"
    )
    assert harness.node_of("p") is None


def _named(name: str, plugin: type) -> type:
    return type(name, (plugin,), {"name": name})


def _profile(*names: str) -> dict[str, Any]:
    return {"plugins": {"score": {"enabled": [{"name": name} for name in names]}}}


class FailsOnN2:
    name = "FailsOnN2"

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

    @hookimpl
    def score(self, state, pod, node_info):
        if node_info.name == "n2":
            return Status.error("cannot score n2")
        return 0


class NormalizeFails:
    name = "NormalizeFails"

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

    @hookimpl
    def score(self, state, pod, node_info):
        return 0

    @hookimpl
    def normalize_score(self, state, pod, scores):
        return Status.error("cannot normalize")


def test_kubes_order_every_score_then_every_normalize_then_the_range_check():
    """kube's RunScorePlugins scores every node with every plugin first, then normalizes, then
    checks ranges: an earlier plugin's out-of-range score loses to a later plugin's failure."""
    out_of_range = _named("OutOfRange", scoring(150))
    for later, message in [
        (FailsOnN2, "cannot score n2"),
        (NormalizeFails, "cannot normalize"),
    ]:
        plugins = {"OutOfRange": out_of_range, later.name: later}
        with Harness(plugins, _profile(*plugins), nodes=NODES) as harness:
            report = harness.schedule(make_pod("p"))
        assert report.result == "SchedulerError"
        assert message in report.message, report.message


def test_the_total_is_every_plugins_weighted_score_normalized_or_not():
    """A plugin with NormalizeScore and one without, weights 3 and 2: the report's weighted
    scores and the choice follow from both."""

    class Reverses:
        name = "Reverses"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

        @hookimpl
        def score(self, state, pod, node_info):
            return 10 if node_info.name == "n1" else 40

        @hookimpl
        def normalize_score(self, state, pod, scores):
            for node in scores:
                scores[node] = 100 - scores[node]  # n1: 90, n2: 60

    class Fixed:
        name = "Fixed"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

        @hookimpl
        def score(self, state, pod, node_info):
            return 50 if node_info.name == "n2" else 0  # n1: 0, n2: 50

    profile = {
        "plugins": {
            "score": {
                "enabled": [{"name": "Reverses", "weight": 3}, {"name": "Fixed", "weight": 2}]
            }
        }
    }
    with Harness({"Reverses": Reverses, "Fixed": Fixed}, profile, nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.score("n1", "Reverses").weighted == 270
    assert report.score("n2", "Reverses").weighted == 180
    assert report.score("n1", "Fixed").weighted == 0
    assert report.score("n2", "Fixed").weighted == 100
    # n1: 270 + 0 = 270 against n2: 180 + 100 = 280.
    assert harness.node_of("p") == "n2"
