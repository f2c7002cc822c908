"""Filter and Score results are reused across pods with the same signature, and only then."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import CycleState, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.engine.explain_recorder import ExplainRecorder
from kubesched.engine.reuse import PodSignature, ResultMemo, canonical
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

CALLS: list[tuple[str, str, str]] = []


class SlotFit:
    """Filter: at most ``slots`` label-matching pods per node; Score: free slots. Signs pods by
    the label it reads, unless the pod asks not to be signed."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.slots = int(args.get("slots", 2))

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        if pod.labels.get("unsignable"):
            return Status.unschedulable("this pod cannot be signed")
        return pod.labels.get("size", "")

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        CALLS.append(("filter", pod.name, node_info.name))
        if len(node_info.pods) >= self.slots:
            return Status.unschedulable("node(s) are full")
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        CALLS.append(("score", pod.name, node_info.name))
        return (self.slots - len(node_info.pods)) * 10


class Unsigned:
    """A Filter without ``sign_pod``: its results are never reused."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        CALLS.append(("unsigned", pod.name, node_info.name))
        return None


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def _calls(kind: str, pod: str) -> list[str]:
    return sorted(node for k, p, node in CALLS if k == kind and p == pod)


def _nodes(count: int) -> list:
    return [make_node(f"n{i}").obj() for i in range(count)]


def _run(pods: list[Pod], plugins: Mapping[str, type] | None = None, **profile: Any):
    plugins = dict(plugins or {"SlotFit": SlotFit})
    points = {
        "filter": {"enabled": [{"name": n} for n in plugins]},
        "score": {"enabled": [{"name": "SlotFit"}]},
    }
    scheduler, backend = make_scheduler(plugins, {"plugins": points, **profile}, _nodes(4))
    for pod in pods:
        backend.add_pod(pod)
    run_until_idle(scheduler)
    return scheduler, backend


def test_a_like_pod_reuses_every_unchanged_nodes_results() -> None:
    pods = [make_pod(f"p{i}").label("size", "s").obj() for i in range(2)]
    _run(pods)
    assert _calls("filter", "p0") == ["n0", "n1", "n2", "n3"]
    assert _calls("score", "p0") == ["n0", "n1", "n2", "n3"]
    placed = [node for kind, pod, node in CALLS if kind == "score" and pod == "p0"]
    assert placed  # p0 was scored everywhere
    # p1: only the node p0 went to changed; every other node's answers are reused.
    assert len(_calls("filter", "p1")) == 1
    assert _calls("filter", "p1") == _calls("score", "p1")


def test_reused_results_decide_as_fresh_ones_do() -> None:
    """Eight like pods on four nodes of two slots: every node ends full, none over."""
    pods = [make_pod(f"p{i}").label("size", "s").obj() for i in range(9)]
    scheduler, backend = _run(pods)
    per_node: dict[str, int] = {}
    for pod in backend.pods.values():
        if pod.node_name:
            per_node[pod.node_name] = per_node.get(pod.node_name, 0) + 1
    assert per_node == {"n0": 2, "n1": 2, "n2": 2, "n3": 2}
    failed = scheduler.attempts[backend.pod("default", "p8").uid]
    assert failed.message == "0/4 nodes are available: 4 node(s) are full."


def test_pods_with_other_signatures_do_not_share_results() -> None:
    pods = [make_pod("small").label("size", "s").obj(), make_pod("big").label("size", "l").obj()]
    _run(pods)
    assert _calls("filter", "big") == ["n0", "n1", "n2", "n3"]


def test_a_pod_a_plugin_cannot_sign_is_evaluated_in_full() -> None:
    pods = [
        make_pod("p0").label("size", "s").obj(),
        make_pod("p1").label("size", "s").label("unsignable", "yes").obj(),
    ]
    _run(pods)
    assert _calls("filter", "p1") == ["n0", "n1", "n2", "n3"]
    assert _calls("score", "p1") == ["n0", "n1", "n2", "n3"]


def test_a_filter_without_sign_pod_runs_everywhere_while_signed_ones_are_reused() -> None:
    pods = [make_pod(f"p{i}").label("size", "s").obj() for i in range(2)]
    _run(pods, {"SlotFit": SlotFit, "Unsigned": Unsigned})
    assert _calls("unsigned", "p1") == ["n0", "n1", "n2", "n3"]
    assert len(_calls("filter", "p1")) == 1  # SlotFit: only the node p0 changed
    assert len(_calls("score", "p1")) == 1


class RejectsN0:
    """An unsigned Filter that rejects node n0."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        CALLS.append(("rejects-n0", pod.name, node_info.name))
        if node_info.name == "n0":
            return Status.unschedulable("node(s) were n0")
        return None


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (
            ["RejectsN0", "SlotFit"],
            "0/4 nodes are available: 1 node(s) were n0, 3 node(s) are full.",
        ),
        (["SlotFit", "RejectsN0"], "0/4 nodes are available: 4 node(s) are full."),
    ],
)
def test_with_partial_reuse_the_first_rejection_in_profile_order_is_reported(
    order: list[str], expected: str
) -> None:
    """Every node full, n0 rejected by both: reused SlotFit rejections and fresh RejectsN0
    calls must still name the plugin that comes first in the profile, and Filter stops at
    the first rejection."""
    plugins = {"SlotFit": SlotFit, "RejectsN0": RejectsN0}
    points = {"filter": {"enabled": [{"name": n} for n in order]}}
    scheduler, backend = make_scheduler(
        plugins,
        {"plugins": points, "pluginConfig": [{"name": "SlotFit", "args": {"slots": 1}}]},
        _nodes(4),
    )
    backend.add_pod(make_pod("already-on-n0").node("n0").obj())  # n0 is full from the start
    for i in range(6):  # n1..n3 fill up; then three more pods find every node full
        backend.add_pod(make_pod(f"p{i}").label("size", "s").obj())
    run_until_idle(scheduler)
    assert scheduler.attempts[backend.pod("default", "p5").uid].message == expected
    if order[0] == "SlotFit":  # full nodes are rejected before RejectsN0 is asked
        assert ("rejects-n0", "p5", "n1") not in CALLS


def test_a_node_replaced_under_the_same_name_is_evaluated_again() -> None:
    scheduler, backend = make_scheduler(
        {"SlotFit": SlotFit},
        {"plugins": {"filter": {"enabled": [{"name": "SlotFit"}]}}},
        [make_node("n0").obj()],
    )
    backend.add_pod(make_pod("p0").label("size", "s").obj())
    run_until_idle(scheduler)
    backend.delete_node("n0")
    backend.add_node(make_node("n0").label("fresh", "yes").obj())
    backend.add_pod(make_pod("p1").label("size", "s").obj())
    run_until_idle(scheduler)
    assert _calls("filter", "p1") == ["n0"]
    assert backend.pod("default", "p1").node_name == "n0"


def test_a_node_with_a_nominated_pod_is_never_answered_from_the_table() -> None:
    """The room a preemptor was promised is not given away on the strength of an answer
    given before the nomination."""
    scheduler, backend = make_scheduler(
        {"SlotFit": SlotFit},
        {
            "plugins": {"filter": {"enabled": [{"name": "SlotFit"}]}},
            "pluginConfig": [{"name": "SlotFit", "args": {"slots": 1}}],
        },
        _nodes(3),
    )
    backend.add_pod(make_pod("p0").label("size", "s").obj())
    run_until_idle(scheduler)
    first = backend.pod("default", "p0").node_name
    promised = min({"n0", "n1", "n2"} - {first})
    holder = make_pod("holder").priority(100).node_selector(nowhere="true").obj()
    scheduler.queue.nominator.add(holder, promised)
    backend.add_pod(make_pod("p1").label("size", "s").obj())
    run_until_idle(scheduler)
    assert backend.pod("default", "p1").node_name not in {first, promised}


def test_explain_sees_every_call() -> None:
    pods = [make_pod(f"p{i}").label("size", "s").obj() for i in range(2)]
    scheduler, backend = make_scheduler(
        {"SlotFit": SlotFit},
        {
            "plugins": {
                "filter": {"enabled": [{"name": "SlotFit"}]},
                "score": {"enabled": [{"name": "SlotFit"}]},
            }
        },
        _nodes(4),
        start=False,
    )
    recorder = ExplainRecorder().attach(scheduler)
    scheduler.start()
    for pod in pods:
        backend.add_pod(pod)
    run_until_idle(scheduler)
    assert _calls("filter", "p1") == ["n0", "n1", "n2", "n3"]
    report = recorder.for_pod("default/p1")[-1]
    assert set(report.feasible()) == {"n0", "n1", "n2", "n3"}


def test_fragments_are_canonical_and_refuse_non_json() -> None:
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})
    assert canonical(object()) is None
    signature = PodSignature("k", frozenset(), {"A": canonical(1) or "", "B": canonical(2) or ""})
    assert signature.key_for(["A"]) != signature.key_for(["A", "B"])
    assert signature.key_for(["A", "Quiet"]) == signature.key_for(["A"])  # signed with None


class PrefersTier:
    """A Score plugin that signs pods by their ``tier`` label; it has no Filter."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        return pod.labels.get("tier", "")

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        CALLS.append(("tier", pod.name, node_info.name))
        return 100 if node_info.name.endswith(pod.labels.get("tier", "")) else 0


def test_a_filter_table_is_not_split_by_what_only_a_score_plugin_signed() -> None:
    """p1 differs from p0 only in what PrefersTier reads: SlotFit's Filter answers are reused
    for it, its Scores are not (PrefersTier's part of its key differs)."""
    pods = [
        make_pod("p0").label("size", "s").label("tier", "1").obj(),
        make_pod("p1").label("size", "s").label("tier", "2").obj(),
    ]
    points = {
        "filter": {"enabled": [{"name": "SlotFit"}]},
        "score": {"enabled": [{"name": "SlotFit"}, {"name": "PrefersTier"}]},
    }
    plugins = {"SlotFit": SlotFit, "PrefersTier": PrefersTier}
    scheduler, backend = make_scheduler(plugins, {"plugins": points}, _nodes(4))
    for pod in pods:
        backend.add_pod(pod)
        run_until_idle(scheduler)
    assert backend.pod("default", "p0").node_name == "n1"
    assert _calls("filter", "p1") == ["n1"]  # only the node p0 went to is new
    assert _calls("tier", "p1") == ["n0", "n1", "n2", "n3"]
    assert _calls("score", "p1") == ["n0", "n1", "n2", "n3"]
    assert backend.pod("default", "p1").node_name == "n2"


def test_the_memo_keeps_the_most_recently_used_tables() -> None:
    memo = ResultMemo(max_tables=2)
    memo.table(("a",))["n"] = (1, None)
    memo.table(("b",))
    memo.table(("a",))  # used again: "b" is now the oldest
    memo.table(("c",))
    assert len(memo) == 2
    assert memo.table(("a",)) == {"n": (1, None)}
    assert memo.table(("b",)) == {}


class FavoursN3:
    """A Score plugin without ``sign_pod``: called on every node for every pod."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        CALLS.append(("favours", pod.name, node_info.name))
        return 100 if node_info.name == "n3" else 0


def test_an_unsigned_score_runs_everywhere_while_signed_scores_are_reused() -> None:
    """Both count in every cycle: the reused SlotFit scores and the fresh FavoursN3 ones."""
    pods = [make_pod(f"p{i}").label("size", "s").obj() for i in range(3)]
    points = {
        "filter": {"enabled": [{"name": "SlotFit"}]},
        "score": {"enabled": [{"name": "FavoursN3"}, {"name": "SlotFit"}]},
    }
    plugins = {"SlotFit": SlotFit, "FavoursN3": FavoursN3}
    scheduler, backend = make_scheduler(plugins, {"plugins": points}, _nodes(4))
    for pod in pods:
        backend.add_pod(pod)
        run_until_idle(scheduler)
    assert _calls("favours", "p1") == ["n0", "n1", "n2", "n3"]
    assert _calls("score", "p1") == ["n3"]  # SlotFit: only the node p0 went to is new
    placed = {name: backend.pod("default", name).node_name for name in ("p0", "p1", "p2")}
    # n3 (100 + SlotFit's 20, then 10) takes two; full, the third goes elsewhere.
    assert placed["p0"] == placed["p1"] == "n3"
    assert placed["p2"] in {"n0", "n1", "n2"}
