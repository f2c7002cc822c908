"""``score_nodes``, the whole-column form of a plugin's Score: called once per cycle instead of
``score`` once per node, held to the same rules as ``score`` (one int per node, a failure aborts
the cycle naming the plugin), refused without a ``score``, and bypassed where every node's own
Score call is recorded (``kubesched explain``, the testing Harness)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import Status, hookimpl
from kubesched.config import parse_config
from kubesched.errors import ConfigError
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_scheduler, run_until_idle

NODES = [make_node(f"n{i}").obj() for i in range(1, 5)]
# n3 scores highest: the pod goes there when either form of the Score runs.
SCORES = {"n1": 10, "n2": 40, "n3": 90, "n4": 20}


def column_plugin(column: Any = None) -> type:
    """A Score plugin with both forms; its ``score_nodes`` returns ``column`` when given."""

    class Column:
        name = "Column"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
            self.per_node: list[str] = []
            self.batches: list[list[str]] = []

        @hookimpl
        def score(self, state, pod, node_info):
            self.per_node.append(node_info.name)
            return SCORES[node_info.name]

        @hookimpl
        def score_nodes(self, state, pod, nodes):
            self.batches.append([n.name for n in nodes])
            if column is not None:
                return column(nodes) if callable(column) else column
            return [SCORES[n.name] for n in nodes]

    return Column


def _schedule(plugin: type, pods: int = 1):
    profile = {"plugins": {"score": {"enabled": [{"name": plugin.name}]}}}
    scheduler, backend = make_scheduler(
        {plugin.name: plugin},
        profile,
        NODES,
        [make_pod(f"p{i}").obj() for i in range(pods)],
        percentageOfNodesToScore=100,
    )
    run_until_idle(scheduler)
    return scheduler.frameworks["custom-scheduler"].plugins[plugin.name], backend


def test_the_scheduler_calls_score_nodes_once_per_cycle_and_never_score():
    plugin, backend = _schedule(column_plugin(), pods=3)
    assert [backend.pod("default", f"p{i}").node_name for i in range(3)] == ["n3"] * 3
    assert plugin.per_node == []
    assert len(plugin.batches) == 3
    assert sorted(plugin.batches[0]) == ["n1", "n2", "n3", "n4"]


def test_its_scores_are_placed_by_the_nodes_order_not_by_value():
    """The column is matched to ``nodes`` position by position: a plugin that reverses it moves
    the pod to whichever node came first."""
    plugin, backend = _schedule(column_plugin(lambda nodes: [90] + [0] * (len(nodes) - 1)))
    assert backend.pod("default", "p0").node_name == plugin.batches[0][0]


@pytest.mark.parametrize(
    ("column", "what"),
    [
        pytest.param([90, 10], "2 scores", id="too-short"),
        pytest.param([90] * 5, "5 scores", id="too-long"),
        pytest.param(lambda nodes: 7, "int", id="not-a-list"),
    ],
)
def test_a_column_of_the_wrong_length_is_an_error_naming_the_plugin(column, what):
    plugin, backend = _schedule(column_plugin(column))
    assert backend.pod("default", "p0").node_name == ""
    assert plugin.per_node == []  # no per-node fallback hides the plugin's fault
    assert backend.conditions["default/p0"][1] == (
        f'score_nodes of plugin "Column" returned {what} for 4 nodes; it must return one int per '
        "node, in the nodes' order"
    )


def test_a_non_integer_in_the_column_is_the_same_error_as_from_score():
    plugin, backend = _schedule(column_plugin(lambda nodes: [37.5] * len(nodes)))
    assert backend.pod("default", "p0").node_name == ""
    assert plugin.per_node == []  # no per-node fallback hides the plugin's fault
    message = backend.conditions["default/p0"][1]
    assert message.startswith('Score plugin "Column" returned float 37.5 for node "n')
    assert message.endswith('"; a score must be an int in [0, 100]')


def test_a_failed_status_aborts_the_cycle_with_the_plugins_message():
    plugin, backend = _schedule(column_plugin(Status.error("column unavailable")))
    assert backend.pod("default", "p0").node_name == ""
    assert plugin.per_node == []  # no per-node fallback hides the plugin's fault
    assert "column unavailable" in backend.conditions["default/p0"][1]


def test_a_success_status_scores_every_node_zero():
    plugin, backend = _schedule(column_plugin(Status()))
    assert backend.pod("default", "p0").node_name in SCORES  # scheduled, on any node
    assert plugin.per_node == []


@pytest.mark.parametrize("point", ["multiPoint", "filter"])
def test_score_nodes_without_score_is_refused_where_the_profile_names_the_plugin(point):
    """Without ``score`` the plugin is at no Score point: its ``score_nodes`` would never run."""

    class OnlyColumn:
        name = "OnlyColumn"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

        @hookimpl
        def filter(self, state, pod, node_info):
            return None

        @hookimpl
        def score_nodes(self, state, pod, nodes):
            return [0] * len(nodes)

    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"plugins": {point: {"enabled": [{"name": "OnlyColumn"}]}}}],
    }
    with pytest.raises(ConfigError) as caught:
        parse_config(data, Registry({"OnlyColumn": OnlyColumn}))
    origin = f"{OnlyColumn.__module__}:{OnlyColumn.__qualname__}"
    assert str(caught.value.errors[0]) == (
        f'profiles[0].plugins.{point}.enabled[0]: plugin "OnlyColumn" from {origin}: '
        '@kubesched.hookimpl method "score_nodes" has no "score" beside it: score_nodes is '
        "only the whole-column form of a plugin's Score"
    )


def test_recorded_cycles_see_every_nodes_own_score_call():
    """Where each node's Score is recorded (explain, the Harness), ``score`` is called per node
    and its values are the report's, so a column that disagrees with ``score`` shows there."""
    plugin_type = column_plugin()
    with Harness.for_plugin(plugin_type, nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
        plugin = harness.scheduler.frameworks["custom-scheduler"].plugins["Column"]
    assert report.result == "Scheduled"
    assert plugin.batches == []
    assert sorted(plugin.per_node) == sorted(SCORES)
    assert {n: report.score(n, "Column").raw for n in SCORES} == SCORES
