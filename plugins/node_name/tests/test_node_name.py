"""NodeName: kube-scheduler's table cases (node_name_test.go) and the plugin in a profile."""

from __future__ import annotations

import pytest
from kubesched_node_name import NAME, REASON, NodeName

from kubesched import (
    ActionType,
    Code,
    ConfigError,
    CycleState,
    EventResource,
    InMemoryBackend,
    Node,
    NodeInfo,
    Snapshot,
)
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def new_plugin() -> NodeName:
    return NodeName({}, Handle("test", InMemoryBackend(), Snapshot))


# --- TestNodeName -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "node", "want_reason"),
    [
        pytest.param(
            make_pod("p").obj(), Node({"metadata": {"name": "n"}}), None, id="no host specified"
        ),
        pytest.param(
            make_pod("p").node("foo").obj(), make_node("foo").obj(), None, id="host matches"
        ),
        pytest.param(
            make_pod("p").node("bar").obj(),
            make_node("foo").obj(),
            REASON,
            id="host doesn't match",
        ),
    ],
)
def test_filter(pod, node, want_reason):
    status = new_plugin().filter(CycleState(), pod, NodeInfo(node))
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want_reason,)


# --- TestNodeName_PreFilter ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "want_nodes"),
    [
        pytest.param(
            make_pod("p").node("foo").obj(),
            frozenset({"foo"}),
            id="assigned pod with nodeName set, prefilter restricts to assigned node",
        ),
        pytest.param(
            make_pod("p").obj(),
            None,
            id="unassigned pod without nodeName set, prefilter returns nil",
        ),
    ],
)
def test_pre_filter(pod, want_nodes):
    nodes = [NodeInfo(make_node("foo").obj()), NodeInfo(make_node("bar").obj())]
    result = new_plugin().pre_filter(CycleState(), pod, nodes)
    if want_nodes is None:
        assert result is None
    else:
        assert result.node_names == want_nodes


def test_registers_node_add_without_hint():
    (registered,) = new_plugin().events_to_register()
    assert registered.event.resource is EventResource.NODE
    assert registered.event.action is ActionType.ADD
    assert registered.hint is None


def test_args_are_refused():
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"node": "x"}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeName}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.node: unknown field; {NAME} takes no args"
    ]


def test_pods_without_node_name_schedule_as_usual():
    profile = {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    scheduler, backend = make_scheduler({NAME: NodeName}, profile, nodes, pods)
    run_until_idle(scheduler)
    assert all(backend.pod("default", f"p{i}").node_name in {"n1", "n2"} for i in range(4))
