"""NodeMetricScore: args, each hook as a table of cases, and the plugin in a scheduler.

The fixtures (make_pod, make_node, fake_cluster, new_plugin, cycle_state, scheduler_harness)
come from kubesched's pytest plugin.
"""

from __future__ import annotations

import pytest
from kubesched import ArgsError, Code, NodeInfo

from kubesched_node_metric_score import (
    HIGHER,
    LABEL,
    MAX_SCORE,
    NAME,
    NodeMetricScore,
    NodeMetricScoreArgs,
    reason_above,
)

TEMP = "example.com/gpu-temperature"


def test_defaults():
    args = NodeMetricScoreArgs.parse({"key": TEMP})
    assert args == NodeMetricScoreArgs(TEMP, "annotation", "lower", 0, None)


def test_every_bad_field_is_reported_at_once():
    with pytest.raises(ArgsError) as caught:
        NodeMetricScoreArgs.parse(
            {"source": "env", "prefer": "cooler", "missingScore": 101, "rejectAbove": "hot", "x": 1}
        )
    assert [str(e) for e in caught.value.errors] == [
        "x: unknown field; allowed: key, source, prefer, missingScore, rejectAbove",
        "key: required: the annotation or label holding a number",
        "source: must be annotation or label, got 'env'",
        "prefer: must be lower or higher, got 'cooler'",
        "missingScore: must be an integer in [0, 100], got 101",
        "rejectAbove: must be a number, got 'hot'",
    ]


@pytest.mark.parametrize(
    ("args", "annotations", "labels", "expected"),
    [
        ({}, {TEMP: "63.5"}, {}, 63.5),
        ({}, {}, {TEMP: "63"}, None),
        ({"source": LABEL}, {}, {TEMP: "63"}, 63.0),
        ({}, {TEMP: "warm"}, {}, None),
        ({}, {TEMP: "nan"}, {}, None),
        ({}, {TEMP: "-4"}, {}, -4.0),
    ],
    ids=["annotation", "label-not-read", "label", "not-a-number", "nan", "negative"],
)
def test_value(new_plugin, make_node, args, annotations, labels, expected):
    node = make_node("n1")
    for key, value in annotations.items():
        node.annotation(key, value)
    for key, value in labels.items():
        node.label(key, value)
    assert new_plugin(NodeMetricScore, {"key": TEMP, **args}).value(node.obj()) == expected


@pytest.mark.parametrize(
    ("limit", "value", "rejected"),
    [
        (None, "99", False),
        (80, "79.9", False),
        (80, "80", False),
        (80, "80.1", True),
        (80, None, False),
    ],
    ids=["no-limit", "under", "at-limit", "over", "no-value"],
)
def test_filter(new_plugin, cycle_state, make_pod, make_node, limit, value, rejected):
    plugin = new_plugin(NodeMetricScore, {"key": TEMP, "rejectAbove": limit})
    node = make_node("n1")
    if value is not None:
        node.annotation(TEMP, value)
    status = plugin.filter(cycle_state, make_pod("p").obj(), NodeInfo(node.obj()))
    if rejected:
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == (reason_above(TEMP, 80),)
    else:
        assert status is None


def nodes(make_node, **values):
    infos = []
    for name, value in values.items():
        node = make_node(name)
        if value is not None:
            node.annotation(TEMP, value)
        infos.append(NodeInfo(node.obj()))
    return infos


def test_pre_score_skips_when_no_node_has_a_number(new_plugin, cycle_state, make_pod, make_node):
    plugin = new_plugin(NodeMetricScore, {"key": TEMP})
    status = plugin.pre_score(cycle_state, make_pod("p").obj(), nodes(make_node, a=None, b=None))
    assert status.is_skip()


@pytest.mark.parametrize(
    ("args", "values", "expected"),
    [
        ({}, {"cool": "40", "mild": "60", "hot": "80"}, {"cool": 100, "mild": 50, "hot": 0}),
        ({"prefer": HIGHER}, {"a": "1", "b": "3"}, {"a": 0, "b": MAX_SCORE}),
        ({}, {"a": "70", "b": "70"}, {"a": MAX_SCORE, "b": MAX_SCORE}),
        ({}, {"a": "70", "b": None}, {"a": MAX_SCORE, "b": 0}),
        ({"missingScore": 50}, {"a": "70", "b": None}, {"a": MAX_SCORE, "b": 50}),
    ],
    ids=["lower-is-better", "higher-is-better", "all-equal", "missing", "missing-score"],
)
def test_score(new_plugin, cycle_state, make_pod, make_node, args, values, expected):
    plugin = new_plugin(NodeMetricScore, {"key": TEMP, **args})
    pod = make_pod("p").obj()
    infos = nodes(make_node, **values)
    assert plugin.pre_score(cycle_state, pod, infos) is None
    assert {info.name: plugin.score(cycle_state, pod, info) for info in infos} == expected


def test_the_coolest_node_wins(scheduler_harness, fake_cluster, make_pod, make_node):
    fake_cluster.add(
        make_node("hot").annotation(TEMP, "81"),
        make_node("cool").annotation(TEMP, "45"),
        make_node("mild").annotation(TEMP, "63"),
    )
    harness = scheduler_harness(NodeMetricScore, {"key": TEMP}, weight=2)
    report = harness.schedule(make_pod("p"))
    assert report.node == "cool"
    assert report.score("cool", NAME).weighted == 2 * MAX_SCORE
    assert report.totals() == {"hot": 0, "cool": 200, "mild": 100}


def test_a_rejected_pod_comes_back_when_a_node_cools_down(
    scheduler_harness, fake_cluster, make_pod, make_node
):
    fake_cluster.add(make_node("n1").annotation(TEMP, "95"))
    harness = scheduler_harness(NodeMetricScore, {"key": TEMP, "rejectAbove": 85})
    report = harness.schedule(make_pod("p"))
    assert (
        report.message
        == "0/1 nodes are available: 1 node(s) had example.com/gpu-temperature above 85."
    )
    harness.add_node(make_node("n1").annotation(TEMP, "70"))
    retried = harness.run()
    assert [r.node for r in retried] == ["n1"]
