"""The explain recorder: what every plugin decided, without changing a single decision."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from kubesched import (
    CycleState,
    Handle,
    KubeschedError,
    NodeInfo,
    NodeToStatus,
    Pod,
    PostFilterResult,
    Status,
    hookimpl,
)
from kubesched.api.manifests import Cluster
from kubesched.cli import explain as explain_cli
from kubesched.config import parse_config
from kubesched.engine.explain_recorder import (
    FEASIBLE,
    NOT_EVALUATED,
    REJECTED,
    ExplainRecorder,
    Verdict,
    verdict_of,
)
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import (
    FIFO_SORT,
    TEST_BINDER,
    FakeCluster,
    FifoSort,
    Harness,
    TestBinder,
    make_scheduler,
    run_until_idle,
)


def plugin(name: str, **hooks: Any) -> type:
    """A plugin class named ``name`` whose hooks are the given functions (``self`` first)."""

    def init(self: Any, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = args

    body: dict[str, Any] = {"__init__": init, "name": name}
    body.update({hook: hookimpl(function) for hook, function in hooks.items()})
    return type(name, (), body)


def reject(names: set[str], reason: str = "node(s) were refused") -> Any:
    def filter(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        return Status.unschedulable(reason) if node_info.name in names else None

    return filter


def fixed(scores: Mapping[str, int]) -> Any:
    def score(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return scores.get(node_info.name, 0)

    return score


def profile(**points: list[str | tuple[str, int]]) -> dict[str, Any]:
    plugins = {
        point: {
            "enabled": [
                {"name": p} if isinstance(p, str) else {"name": p[0], "weight": p[1]} for p in names
            ]
        }
        for point, names in points.items()
    }
    return {"plugins": plugins}


NODES = [make_node("n1"), make_node("n2"), make_node("n3")]


# -- what is recorded ----------------------------------------------------------------------------
def test_filter_verdicts_in_profile_order_and_what_did_not_run():
    plugins = {"A": plugin("A", filter=reject({"n1"})), "B": plugin("B", filter=reject({"n2"}))}
    with Harness(plugins, profile(filter=["A", "B"], score=[]), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.filter_plugins == ["A", "B"]
    assert report.verdict("n1", "A") == Verdict("A", "Unschedulable", ("node(s) were refused",))
    assert report.verdict("n1", "B") is None  # the first rejection ends the node's Filter
    assert report.verdict("n2", "A").passed
    assert report.verdict("n2", "B").code == "Unschedulable"
    assert [report.nodes[n].outcome for n in ("n1", "n2", "n3")] == [REJECTED, REJECTED, FEASIBLE]
    assert report.selected == report.node == "n3"
    assert report.why == "the first feasible node found (no Score plugins: the search stops there)"


def test_skips_are_recorded():
    skip_filter = plugin(
        "S",
        pre_filter=lambda self, state, pod, nodes: Status.skip(),
        filter=reject({"n1", "n2", "n3"}),
        pre_score=lambda self, state, pod, nodes: Status.skip(),
        score=fixed({"n1": 100}),
    )
    other = plugin("O", score=fixed({"n2": 10}))
    body = profile(preFilter=["S"], filter=["S"], preScore=["S"], score=["S", "O"])
    with Harness({"S": skip_filter, "O": other}, body, nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.points["PreFilter"] == [Verdict("S", "Skip")]
    assert report.points["PreScore"] == [Verdict("S", "Skip")]
    assert report.verdict("n1", "S") == Verdict("S", "Skip", ("PreFilter: Skip",))
    assert report.score("n1", "S") is None
    assert report.node == "n2"
    assert report.totals() == {"n1": 0, "n2": 10, "n3": 0}


def test_a_tie_is_named_and_the_only_feasible_node_is_not_scored():
    scored = plugin("Flat", score=fixed({}))
    with Harness({"Flat": scored}, profile(score=["Flat"]), nodes=NODES, seed=3) as harness:
        tie = harness.schedule(make_pod("p"))
    others = sorted({"n1", "n2", "n3"} - {tie.node})
    assert tie.why == f"highest total score 0, tied with {', '.join(others)}; picked at random"
    plugins = {"Flat": scored, "A": plugin("A", filter=reject({"n1", "n2"}))}
    with Harness(plugins, profile(filter=["A"], score=["Flat"]), nodes=NODES) as harness:
        only = harness.schedule(make_pod("p"))
    assert (only.node, only.why) == ("n3", "the only feasible node, so nothing was scored")
    assert only.totals() == {}


def test_the_nominated_node_is_tried_first():
    plugins = {"A": plugin("A", filter=reject(set())), "F": plugin("F", score=fixed({"n1": 9}))}
    body = profile(filter=["A"], score=["F"])
    with Harness(plugins, body, nodes=NODES) as harness:
        report = harness.schedule(make_pod("p").nominated("n2"))
    assert (report.node, report.why) == ("n2", "the pod's nominated node, which still fits")
    assert report.nominated == "n2"
    assert report.nodes["n1"].outcome == NOT_EVALUATED


def test_no_fit_records_post_filter_and_the_message():
    def post_filter(
        self: Any, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> Any:
        return Status.unschedulable("0/3 nodes are available: no victims.")

    plugins = {"A": plugin("A", filter=reject({"n1", "n2", "n3"}), post_filter=post_filter)}
    with Harness(plugins, profile(filter=["A"], postFilter=["A"]), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.result == "Unschedulable"
    assert report.selected is None and report.node is None
    assert report.why == "no node fits"
    assert report.points["PostFilter"][0].code == "Unschedulable"
    assert report.message == harness.backend.conditions["default/p"][1]
    assert report.summary() == f"Unschedulable: {report.message}"


def test_a_plugin_error_is_recorded_as_error():
    def boom(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        raise RuntimeError("boom")

    with Harness({"X": plugin("X", filter=boom)}, profile(filter=["X"]), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.verdict("n1", "X") == Verdict("X", "Error", ("RuntimeError: boom",))
    assert report.result == "SchedulerError"
    assert report.message == 'running Filter plugin "X": RuntimeError: boom'


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (Status.error("metrics unavailable"), "metrics unavailable"),
        (
            150,
            'applying score defaultWeights on Score plugins: plugin "E" returns an invalid '
            "score 150, it should in the range of [0, 100] after normalizing",
        ),
    ],
    ids=["error-status", "out-of-range"],
)
def test_a_score_error_is_recorded(returned, message):
    scored = plugin("E", score=lambda self, state, pod, node_info: returned)
    with Harness({"E": scored}, profile(score=["E"]), nodes=NODES[:2]) as harness:
        report = harness.schedule(make_pod("p"))
    assert (report.result, report.message) == ("SchedulerError", message)
    assert report.why == f"a plugin failed: {message}"
    if isinstance(returned, Status):
        assert report.points["Score"] == [Verdict("E", "Error", ("metrics unavailable",))]
    else:
        assert report.score("n1", "E").raw == 150


def test_a_reserve_rejection_after_selection():
    def reserve(self: Any, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.unschedulable("quota exhausted")

    plugins = {
        "Q": plugin("Q", reserve=reserve, unreserve=lambda self, state, pod, node_name: None)
    }
    with Harness(plugins, profile(reserve=["Q"]), nodes=NODES[:1]) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.points["Reserve"] == [Verdict("Q", "Unschedulable", ("quota exhausted",))]
    assert report.points["Unreserve"] == [Verdict("Q", "Success")]
    assert (report.selected, report.node, report.result) == ("n1", None, "Unschedulable")
    assert report.summary() == ("Unschedulable: selected n1 (the only node), then: quota exhausted")


def test_what_if_copies_of_the_state_record_nothing():
    def filter(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> None:
        copy = state.clone()
        assert copy.get("kubesched.testing/explain") is None

    with Harness({"C": plugin("C", filter=filter)}, profile(filter=["C"]), nodes=NODES) as harness:
        assert harness.schedule(make_pod("p")).result == "Scheduled"


def test_recording_changes_no_decision():
    plugins = {
        "Spread": plugin(
            "Spread", score=lambda self, state, pod, node_info: 100 - 10 * len(node_info.pods)
        ),
        "Flat": plugin("Flat", score=fixed({})),
    }
    body = profile(score=[("Spread", 2), "Flat"])
    nodes = [make_node(f"n{i}") for i in range(7)]
    pods = [make_pod(f"p{i}") for i in range(40)]

    def placements(record: bool) -> dict[str, str]:
        scheduler, backend = make_scheduler(
            plugins, body, [n.obj() for n in nodes], [p.obj() for p in pods], seed=11, start=False
        )
        if record:
            ExplainRecorder().attach(scheduler)
        scheduler.start()
        run_until_idle(scheduler)
        scheduler.stop()
        return {p.name: p.node_name for p in backend.pods.values()}

    assert placements(True) == placements(False)


def test_reports_are_json_and_render_as_tables():
    plugins = {
        "A": plugin("A", filter=reject({"n1"}, "node(s) were too hot")),
        "F": plugin("F", score=fixed({"n2": 30, "n3": 70})),
    }
    with Harness(plugins, profile(filter=["A"], score=[("F", 2)]), nodes=NODES) as harness:
        report = harness.schedule(make_pod("p"))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["node"] == "n3"
    assert data["scorePlugins"] == [{"name": "F", "weight": 2}]
    assert data["nodes"][2]["score"] == [
        {"plugin": "F", "weight": 2, "raw": 70, "normalized": 70, "weighted": 140}
    ]
    assert explain_cli.render_report(report).splitlines() == [
        "Pod default/p  profile custom-scheduler  attempt 1",
        "Scheduled on n3: highest total score 140 (next: n2 with 60)",
        "Filter:",
        "  NODE  A                     OUTCOME",
        "  n1    node(s) were too hot  rejected",
        "  n2    passed                feasible",
        "  n3    passed                feasible, selected",
        "Score (raw -> normalized = weighted):",
        "  NODE  F x2            TOTAL",
        "  n2    30 -> 30 = 60   60",
        "  n3    70 -> 70 = 140  140  <- selected",
        f"Bind: {TEST_BINDER} Success",
    ]


# -- the explain command ---------------------------------------------------------------------------
AVOID = plugin("Avoid", filter=reject({"n1"}, "node(s) were avoided"))
REGISTRY = {"Avoid": AVOID, FIFO_SORT: FifoSort, TEST_BINDER: TestBinder}
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: custom-scheduler
    plugins:
      multiPoint:
        enabled: [{name: FifoSort}, {name: TestBinder}, {name: Avoid}]
"""


def explain(tmp_path: Any, *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    explain_cli.register_commands(parser.add_subparsers())
    cluster = FakeCluster(
        [make_node("n1"), make_node("n2")],
        [make_pod("web"), make_pod("web", "team"), make_pod("db"), make_pod("old").node("n2")],
    )
    cluster.write(tmp_path / "cluster.yaml")
    (tmp_path / "config.yaml").write_text(CONFIG)
    files = ["--cluster", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "config.yaml")]
    args = parser.parse_args(["explain", *argv, *files])
    out, err = io.StringIO(), io.StringIO()
    code = explain_cli.cmd_explain(args, out, err, Registry(REGISTRY))
    return code, out.getvalue(), err.getvalue()


def test_explain_one_pod_as_json(tmp_path):
    code, out, _ = explain(tmp_path, "db", "-o", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["pod"], data["node"]) == ("default/db", "n2")
    [attempt] = data["attempts"]
    assert attempt["nodes"][0]["filter"] == [
        {"plugin": "Avoid", "code": "Unschedulable", "reasons": ["node(s) were avoided"]}
    ]


def test_explain_one_pod_as_a_table(tmp_path):
    code, out, _ = explain(tmp_path, "team/web")
    assert code == 0
    assert out.splitlines()[:2] == [
        "Pod team/web  profile custom-scheduler  attempt 1",
        "Scheduled on n2: the first feasible node found (no Score plugins: the search stops there)",
    ]


@pytest.mark.parametrize(
    ("pod", "message"),
    [
        ("web", "pod name 'web' is ambiguous (default/web, team/web); use NAMESPACE/NAME"),
        ("nope", "no pod 'nope'; pending pods: default/web, team/web, default/db"),
        ("old", "pod default/old is already bound to node n2"),
    ],
    ids=["ambiguous", "unknown", "bound"],
)
def test_explain_names_the_pod_it_cannot_explain(tmp_path, pod, message):
    with pytest.raises(KubeschedError, match=message.replace("(", r"\(").replace(")", r"\)")):
        explain(tmp_path, pod)


def test_find_pod_in_a_namespace():
    cluster = Cluster(pods=[make_pod("a", "x").obj(), make_pod("a", "y").obj()])
    assert explain_cli.find_pod(cluster, "y/a", "f").key == "y/a"


def test_simulate_explained_writes_every_pod():
    registry = Registry(REGISTRY)
    config = parse_config(yaml.safe_load(CONFIG), registry)
    cluster = Cluster([make_node("n1").obj(), make_node("n2").obj()], [make_pod("a").obj()])
    cluster.pods.append(make_pod("b").obj())
    result, recorder = explain_cli.simulate_explained(cluster, config, registry)
    out = io.StringIO()
    explain_cli.write_simulation(result, recorder, "json", out)
    data = json.loads(out.getvalue())
    assert [(p["name"], p["node"], len(p["attempts"])) for p in data["pods"]] == [
        ("a", "n2", 1),
        ("b", "n2", 1),
    ]
    table = io.StringIO()
    explain_cli.write_simulation(result, recorder, "table", table)
    assert "Pod default/b  profile custom-scheduler  attempt 1" in table.getvalue()
    assert table.getvalue().rstrip().endswith("2 scheduled, 0 unschedulable")


def test_a_post_filter_result_reads_as_a_nomination():
    assert verdict_of("P", PostFilterResult("n9")) == Verdict(
        "P", "Success", ("nominated node n9",)
    )
