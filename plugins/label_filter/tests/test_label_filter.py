"""LabelFilter: table cases for Filter and args, and the requeue on a label change."""

from __future__ import annotations

import pytest
from kubesched_label_filter import DEFAULT_LABELS, NAME, LabelFilter, reason_missing_label

from kubesched import Code, ConfigError, CycleState, InMemoryBackend, NodeInfo
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

SEED_KEY, SEED_VALUE = "scheduler.custom/enabled", "true"


def new_plugin(args: dict | None = None) -> LabelFilter:
    return LabelFilter(args or {}, Handle("test", InMemoryBackend(), Snapshot))


@pytest.mark.parametrize(
    ("args", "node_labels", "reason"),
    [
        ({}, {SEED_KEY: SEED_VALUE}, None),
        ({}, {}, reason_missing_label(SEED_KEY, SEED_VALUE)),
        ({}, {SEED_KEY: "false"}, reason_missing_label(SEED_KEY, SEED_VALUE)),
        ({"labels": {"zone": "a", "gpu": "yes"}}, {"zone": "a", "gpu": "yes", "x": "y"}, None),
        (
            {"labels": {"zone": "a", "gpu": "yes"}},
            {"zone": "a"},
            reason_missing_label("gpu", "yes"),
        ),
        ({"labels": {"zone": "a", "gpu": "yes"}}, {}, reason_missing_label("gpu", "yes")),
        ({"labels": {"empty": ""}}, {"empty": ""}, None),
        ({"labels": {"empty": ""}}, {}, reason_missing_label("empty", "")),
    ],
    ids=[
        "seed-label-present",
        "seed-label-absent",
        "seed-label-other-value",
        "all-of-two",
        "one-of-two-missing",
        "first-missing-in-key-order",
        "empty-value-present",
        "empty-value-absent",
    ],
)
def test_filter(args, node_labels, reason):
    plugin = new_plugin(args)
    node_info = NodeInfo(make_node("n1").labels(**{}).obj())
    node_info.node.labels.update(node_labels)
    status = plugin.filter(CycleState(), make_pod("p").obj(), node_info)
    if reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (reason,)


def test_default_is_the_seed_rule():
    assert dict(new_plugin().args.labels) == dict(DEFAULT_LABELS) == {SEED_KEY: SEED_VALUE}


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({"labels": {}}, ["args.labels: must be a non-empty mapping of label key to value"]),
        ({"labels": {"bad key!": "x"}}, ["args.labels['bad key!']: invalid label key"]),
        (
            {"labels": {"ok": True}},
            ["args.labels['ok']: value must be a string, got True (quote it)"],
        ),
        (
            {"labels": {"a": "-bad-"}, "extra": 1},
            [
                "args.extra: unknown field; allowed: labels",
                "args.labels['a']: invalid label value '-bad-'",
            ],
        ),
    ],
    ids=["empty", "bad-key", "unquoted-bool", "all-errors-at-once"],
)
def test_bad_args_are_reported_with_their_paths_at_start_up(args, errors):
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": args}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: LabelFilter}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].{e}" for e in errors
    ]


def profile() -> dict:
    return {"plugins": {"filter": {"enabled": [{"name": NAME}]}}}


def test_pods_land_only_on_labelled_nodes():
    nodes = [make_node("plain").obj(), make_node("labelled").label(SEED_KEY, SEED_VALUE).obj()]
    pods = [make_pod(f"p{i}").obj() for i in range(3)]
    scheduler, backend = make_scheduler({NAME: LabelFilter}, profile(), nodes, pods)
    run_until_idle(scheduler)
    assert {backend.pod("default", f"p{i}").node_name for i in range(3)} == {"labelled"}


def test_rejected_pod_moves_back_when_a_node_gets_the_label():
    clock = [0.0]
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    scheduler, backend = make_scheduler(
        {NAME: LabelFilter}, profile(), nodes, [make_pod("p").obj()], clock=lambda: clock[0]
    )
    run_until_idle(scheduler)
    assert backend.conditions["default/p"][1] == (
        "0/2 nodes are available: 2 node(s) didn't have label scheduler.custom/enabled=true."
    )
    assert scheduler.queue.pending()["unschedulable"] == 1

    # A label that does not help leaves the pod where it is (the hint says Skip).
    backend.update_node(make_node("n1").label("team", "a").obj())
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.update_node(make_node("n2").label(SEED_KEY, SEED_VALUE).obj())
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0  # the first backoff (1 s) passes
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n2"


def test_a_new_labelled_node_brings_the_pod_back():
    clock = [0.0]
    scheduler, backend = make_scheduler(
        {NAME: LabelFilter},
        profile(),
        [make_node("n1").obj()],
        [make_pod("p").obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    backend.add_node(make_node("n9").label(SEED_KEY, SEED_VALUE).obj())
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n9"
