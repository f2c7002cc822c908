"""Calling HTTP extenders as kube-scheduler v1.37 does: the JSON, the points, the failure rules."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kubesched import CycleState, Handle, NodeInfo, Pod, hookimpl
from kubesched.engine.explain_recorder import ExplainRecorder
from kubesched.engine.extender import (
    EXTENDER_NAME,
    ExtenderError,
    HTTPExtender,
    binding_args,
    extender_args,
    node_list,
)
from kubesched.errors import ConfigError
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.extender_stub import (
    ERROR_MESSAGE,
    FAIL_LABEL,
    FILTER_LABEL,
    REJECT_MESSAGE,
    SCORE_LABEL,
    UNRESOLVABLE_MESSAGE,
    StubExtender,
)
from kubesched.testing.harness import make_config, make_scheduler, run_until_idle

GPU = "example.com/gpu"


class PreferNode1:
    """Score: 100 for node-1, 0 elsewhere (a plugin for the extender's score to compete with)."""

    name = "PreferNode1"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 100 if node_info.name == "node-1" else 0


@pytest.fixture
def stub() -> Iterator[StubExtender]:
    with StubExtender() as extender:
        yield extender


def nodes(*labels: Mapping[str, str]) -> list:
    out = []
    for i, node_labels in enumerate(labels):
        builder = make_node(f"node-{i}").capacity(cpu="4", memory="8Gi", pods="10")
        for key, value in node_labels.items():
            builder = builder.label(key, value)
        out.append(builder.obj())
    return out


def schedule(extenders: list[dict[str, Any]], node_objs: list, *pods: Pod, plugins=None):
    profile = None
    if plugins:
        profile = {"plugins": {"score": {"enabled": [{"name": n} for n in plugins]}}}
    scheduler, backend = make_scheduler(
        {name: cls for name, cls in (plugins or {}).items()},
        profile,
        node_objs,
        pods,
        extenders=extenders,
    )
    run_until_idle(scheduler)
    scheduler.stop()
    return scheduler, backend


# -- the JSON, against kube's extender/v1 types ---------------------------------------------------
@pytest.mark.parametrize(
    ("node_cache_capable", "expected_keys", "nodes_null", "names_null"),
    [
        pytest.param(False, ["Pod", "Nodes", "NodeNames"], False, True, id="node-list"),
        pytest.param(True, ["Pod", "Nodes", "NodeNames"], True, False, id="node-cache-capable"),
    ],
)
def test_extender_args_use_the_go_field_names(
    node_cache_capable: bool, expected_keys: list[str], nodes_null: bool, names_null: bool
) -> None:
    pod = make_pod("p").uid("u1").obj()
    infos = [NodeInfo(node) for node in nodes({}, {})]
    args = extender_args(pod, infos, node_cache_capable)
    assert list(args) == expected_keys
    assert args["Pod"]["metadata"]["name"] == "p"
    assert (args["Nodes"] is None) is nodes_null
    assert (args["NodeNames"] is None) is names_null
    if node_cache_capable:
        assert args["NodeNames"] == ["node-0", "node-1"]
    else:  # a v1.NodeList: metadata (an empty ListMeta) and items
        assert list(args["Nodes"]) == ["metadata", "items"]
        assert [i["metadata"]["name"] for i in args["Nodes"]["items"]] == ["node-0", "node-1"]


def test_binding_args_use_the_go_field_names() -> None:
    pod = make_pod("web", "shop").uid("u-42").obj()
    assert binding_args(pod, "node-3") == {
        "PodName": "web",
        "PodNamespace": "shop",
        "PodUID": "u-42",
        "Node": "node-3",
    }


def test_node_list_is_what_go_marshals() -> None:
    (info,) = [NodeInfo(node) for node in nodes({"a": "b"})]
    assert json.loads(json.dumps(node_list([info]))) == {"metadata": {}, "items": [info.node.raw]}


# -- filter ---------------------------------------------------------------------------------------
def test_filter_rejections_join_the_failed_scheduling_message(stub: StubExtender) -> None:
    node_objs = nodes(
        {FILTER_LABEL: "reject"}, {FILTER_LABEL: "unresolvable"}, {FILTER_LABEL: "reject"}
    )
    ext = [{"urlPrefix": stub.url, "filterVerb": "filter"}]
    scheduler, _ = schedule(ext, node_objs, make_pod("p").uid("u1").obj())
    attempt = scheduler.attempts["u1"]
    assert attempt.node_name is None
    assert attempt.reason == "Unschedulable"
    assert attempt.message == (
        f"0/3 nodes are available: 1 {UNRESOLVABLE_MESSAGE}, 2 {REJECT_MESSAGE}."
    )


def test_filter_keeps_the_nodes_the_extender_keeps(stub: StubExtender) -> None:
    node_objs = nodes({FILTER_LABEL: "reject"}, {}, {FILTER_LABEL: "reject"})
    ext = [{"urlPrefix": stub.url, "filterVerb": "filter"}]
    _scheduler, backend = schedule(ext, node_objs, make_pod("p").uid("u1").obj())
    assert backend.pods["u1"].node_name == "node-1"
    (body,) = stub.verbs("filter")
    assert body["NodeNames"] is None
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["node-0", "node-1", "node-2"]


def test_node_cache_capable_extenders_get_names_only() -> None:
    with StubExtender(node_cache_capable=True) as stub:
        node_objs = nodes({}, {}, {})
        stub.nodes = {"node-0": {FILTER_LABEL: "reject"}, "node-2": {FILTER_LABEL: "reject"}}
        ext = [{"urlPrefix": stub.url, "filterVerb": "filter", "nodeCacheCapable": True}]
        _, backend = schedule(ext, node_objs, make_pod("p").uid("u1").obj())
    assert backend.pods["u1"].node_name == "node-1"
    (body,) = stub.verbs("filter")
    assert body["Nodes"] is None
    assert body["NodeNames"] == ["node-0", "node-1", "node-2"]


@pytest.mark.parametrize(
    ("fail", "message"),
    [
        pytest.param(
            "status", "failed filter with extender at URL {url}/filter, code 500", id="500"
        ),
        pytest.param("error", ERROR_MESSAGE, id="error-field"),
    ],
)
def test_a_failing_extender_fails_the_pod_unless_ignorable(
    stub: StubExtender, fail: str, message: str
) -> None:
    pod = make_pod("p").uid("u1").label(FAIL_LABEL, fail).obj()
    ext = {"urlPrefix": stub.url, "filterVerb": "filter"}
    scheduler, _ = schedule([ext], nodes({}, {}), pod)
    attempt = scheduler.attempts["u1"]
    assert (attempt.node_name, attempt.reason) == (None, "SchedulerError")
    assert attempt.message == message.format(url=stub.url)

    _, backend = schedule([{**ext, "ignorable": True}], nodes({}, {}), pod.__class__(pod.raw))
    assert backend.pods["u1"].node_name in ("node-0", "node-1")


def test_an_unreachable_extender_is_named_in_the_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens there
    ext = [{"urlPrefix": url, "filterVerb": "filter"}]
    scheduler, _ = schedule(ext, nodes({}, {}), make_pod("p").uid("u1").obj())
    assert scheduler.attempts["u1"].message == f'Post "{url}/filter": connect: connection refused'


def test_http_timeout_bounds_a_call() -> None:
    with socket.socket() as sock:  # accepts connections (backlog) and never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        ext = [{"urlPrefix": url, "filterVerb": "filter", "httpTimeout": "200ms"}]
        scheduler, _ = schedule(ext, nodes({}, {}), make_pod("p").uid("u1").obj())
    message = scheduler.attempts["u1"].message
    assert message.startswith(f'Post "{url}/filter": context deadline exceeded')


def test_a_pod_rejected_by_an_extender_records_the_extender_pseudo_plugin(
    stub: StubExtender,
) -> None:
    ext = [{"urlPrefix": stub.url, "filterVerb": "filter"}]
    scheduler, _ = schedule(ext, nodes({FILTER_LABEL: "reject"}), make_pod("p").uid("u1").obj())
    (info,) = scheduler.queue.parked()
    assert EXTENDER_NAME in info.unschedulable_plugins


# -- prioritize -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("weight", "node"),
    [
        # node-0's extender score 6 x weight x 10 against PreferNode1's 100 on node-1.
        pytest.param(1, "node-1", id="weight-1-loses"),
        pytest.param(2, "node-0", id="weight-2-wins"),
    ],
)
def test_prioritize_scores_are_scaled_and_weighted(
    stub: StubExtender, weight: int, node: str
) -> None:
    ext = [{"urlPrefix": stub.url, "prioritizeVerb": "prioritize", "weight": weight}]
    scheduler, backend = make_scheduler(
        {"PreferNode1": PreferNode1},
        {"plugins": {"score": {"enabled": [{"name": "PreferNode1"}]}}},
        nodes({SCORE_LABEL: "6"}, {}),
        [make_pod("p").uid("u1").obj()],
        extenders=ext,
    )
    recorder = ExplainRecorder().attach(scheduler)
    run_until_idle(scheduler)
    scheduler.stop()
    assert backend.pods["u1"].node_name == node
    (report,) = recorder.for_pod("default/p")
    assert report.totals() == {"node-0": 6 * weight * 10, "node-1": 100}
    detail = report.score("node-0", stub.url)
    assert (detail.raw, detail.normalized, detail.weighted) == (6, 60, 60 * weight)


def test_a_prioritize_error_is_never_fatal(stub: StubExtender) -> None:
    pod = make_pod("p").uid("u1").label(FAIL_LABEL, "status").obj()
    ext = [{"urlPrefix": stub.url, "prioritizeVerb": "prioritize", "weight": 1}]
    _, backend = schedule(ext, nodes({}, {}), pod)
    assert backend.pods["u1"].node_name in ("node-0", "node-1")


# -- bind -----------------------------------------------------------------------------------------
def test_a_binder_extender_binds_instead_of_the_bind_plugins(stub: StubExtender) -> None:
    ext = [{"urlPrefix": stub.url, "bindVerb": "bind"}]
    _, backend = schedule(ext, nodes({}), make_pod("p", "shop").uid("u1").obj())
    assert stub.bindings == [("shop", "p", "node-0")]
    assert backend.pods["u1"].node_name == "node-0"


@pytest.mark.parametrize(("ignorable", "bound"), [(False, ""), (True, "node-0")])
def test_a_failing_binder(stub: StubExtender, ignorable: bool, bound: str) -> None:
    stub.fail_bind("p", "error")
    ext = [{"urlPrefix": stub.url, "bindVerb": "bind", "ignorable": ignorable}]
    scheduler, backend = schedule(ext, nodes({}), make_pod("p").uid("u1").obj())
    assert backend.pods["u1"].node_name == bound  # ignorable: the Bind plugins bound it
    if not ignorable:
        assert scheduler.attempts["u1"].message == ERROR_MESSAGE


# -- interest -------------------------------------------------------------------------------------
def test_an_extender_with_managed_resources_sees_only_pods_that_use_them(
    stub: StubExtender,
) -> None:
    ext = [
        {
            "urlPrefix": stub.url,
            "filterVerb": "filter",
            "managedResources": [{"name": GPU}],
        }
    ]
    plain = make_pod("plain").uid("u1").obj()
    gpu = make_pod("gpu").uid("u2").limits(**{GPU: "1"}).obj()
    schedule(ext, nodes({}), plain, gpu)
    assert [b["Pod"]["metadata"]["name"] for b in stub.verbs("filter")] == ["gpu"]


def test_ignorable_extenders_are_called_last(stub: StubExtender) -> None:
    with StubExtender() as first:
        ext = [
            {"urlPrefix": stub.url + "/ignorable", "filterVerb": "filter", "ignorable": True},
            {"urlPrefix": first.url, "filterVerb": "filter"},
        ]
        config, _ = make_config({}, None, extenders=ext)
        assert [e.url_prefix for e in config.extenders] == [first.url, stub.url + "/ignorable"]


# -- configuration --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("extenders", "error"),
    [
        pytest.param(
            [{"urlPrefix": "http://a", "managedResources": [{"name": GPU}, {"name": GPU}]}],
            "extenders[0].managedResources[1].name: Invalid value: 'example.com/gpu': duplicate "
            "extender managed resource name",
            id="duplicate-resource",
        ),
        pytest.param(
            [{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}],
            "extenders[0].managedResources[0].name: Invalid value: 'cpu': must be an extended "
            "resource name",
            id="not-extended",
        ),
        pytest.param(
            [{"filterVerb": "filter"}], "extenders[0].urlPrefix: Required value", id="url"
        ),
    ],
)
def test_invalid_extenders_are_refused(extenders: list[dict[str, Any]], error: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_config({}, None, extenders=extenders)
    assert error in str(caught.value)


def test_http_extender_raises_extender_error_with_kubes_message(stub: StubExtender) -> None:
    config, _ = make_config({}, None, extenders=[{"urlPrefix": stub.url, "filterVerb": "nope"}])
    extender = HTTPExtender(config.extenders[0])
    with pytest.raises(ExtenderError, match=r"failed nope with extender at URL .*/nope, code 404"):
        extender.filter(make_pod("p").obj(), [NodeInfo(n) for n in nodes({})])


class CountPods:
    """Score: 10 per pod on the node (shows which NodeInfo the Score point was given)."""

    name = "CountPods"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 10 * len(node_info.pods)


@pytest.mark.parametrize(
    ("node_cache_capable", "scored"),
    [
        # kube-scheduler v1.37 scores the Node objects a NodeList answer carries, without pods.
        pytest.param(False, {"node-0": 0, "node-1": 0}, id="node-list-answer-scores-empty-nodes"),
        pytest.param(True, {"node-0": 20, "node-1": 0}, id="node-names-keep-the-nodes-pods"),
    ],
)
def test_which_node_infos_the_score_point_sees_after_an_extender_filter(
    node_cache_capable: bool, scored: dict[str, int]
) -> None:
    with StubExtender() as stub:
        node_objs = nodes({}, {})
        bound = [make_pod(f"b{i}").uid(f"b{i}").node("node-0").obj() for i in range(2)]
        ext = [
            {"urlPrefix": stub.url, "filterVerb": "filter", "nodeCacheCapable": node_cache_capable}
        ]
        scheduler, _ = make_scheduler(
            {"CountPods": CountPods},
            {"plugins": {"score": {"enabled": [{"name": "CountPods"}]}}},
            node_objs,
            [*bound, make_pod("p").uid("u1").obj()],
            extenders=ext,
        )
        recorder = ExplainRecorder().attach(scheduler)
        run_until_idle(scheduler)
        scheduler.stop()
    (report,) = recorder.for_pod("default/p")
    assert {n: report.score(n, "CountPods").raw for n in scored} == scored
