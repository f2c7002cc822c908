"""NodePorts: kube-scheduler's table cases (node_ports_test.go, and kube-scheduler framework's
TestHostPortInfo_Check for the conflict rules), and the plugin in a running scheduler."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_node_ports import (
    NAME,
    PRE_FILTER_STATE_KEY,
    REASON,
    NodePorts,
    check_conflict,
    fits_ports,
    host_ports,
)

from kubesched import (
    Code,
    ConfigError,
    CycleState,
    InMemoryBackend,
    NodeInfo,
    Pod,
    QueueingHint,
    Snapshot,
)
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def new_plugin() -> NodePorts:
    return NodePorts({}, Handle("test", InMemoryBackend(), Snapshot))


def _ports(specs: tuple[str, ...]) -> list[dict[str, Any]]:
    """``"UDP/127.0.0.1/8080"`` -> a container port, as kube's test helper ``newPod`` reads it."""
    out = []
    for spec in specs:
        protocol, host_ip, port = spec.split("/")
        out.append({"hostIP": host_ip, "hostPort": int(port), "protocol": protocol})
    return out


def new_pod(node: str, *specs: str, name: str = "p") -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": "container", "image": "pause"}]}
    if specs:
        spec["containers"][0]["ports"] = _ports(specs)
    if node:
        spec["nodeName"] = node
    return Pod({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def init_container_pod(sidecar: bool, *specs: str) -> Pod:
    init: dict[str, Any] = {"name": "init", "image": "pause", "ports": _ports(specs)}
    if sidecar:
        init["restartPolicy"] = "Always"
    return Pod(
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "pause"}], "initContainers": [init]},
        }
    )


def node_info(*specs: str) -> NodeInfo:
    return NodeInfo(None, [new_pod("m1", *specs, name="existing")])


# --- TestNodePorts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "info", "want_skip", "want_reason"),
    [
        pytest.param(make_pod("p").obj(), NodeInfo(), True, None, id="skip filter"),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/9090"),
            False,
            None,
            id="other port",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/8080"),
            False,
            REASON,
            id="same udp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8080"),
            False,
            REASON,
            id="same tcp port",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.2/8080"),
            False,
            None,
            id="different host ip",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8080"),
            False,
            None,
            id="different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            node_info("UDP/127.0.0.1/8080"),
            False,
            REASON,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            node_info("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
            False,
            REASON,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("m1", "TCP/0.0.0.0/8001"),
            node_info("TCP/127.0.0.1/8001"),
            False,
            REASON,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            node_info("TCP/127.0.0.1/8001"),
            False,
            REASON,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001"),
            False,
            REASON,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001"),
            False,
            None,
            id="second different protocol",
        ),
        pytest.param(
            new_pod("m1", "UDP/127.0.0.1/8001"),
            node_info("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
            False,
            REASON,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            init_container_pod(False, "TCP//8001"),
            node_info("TCP/0.0.0.0/8001"),
            True,
            None,
            id="non-sidecar initContainer using hostPort",
        ),
        pytest.param(
            init_container_pod(True, "TCP//8001"),
            node_info("TCP/0.0.0.0/8001"),
            False,
            REASON,
            id="TCP hostPort conflict from sidecar initContainer",
        ),
    ],
)
def test_node_ports(pod, info, want_skip, want_reason):
    plugin = new_plugin()
    state = CycleState()
    status = plugin.pre_filter(state, pod, [info])
    if want_skip:
        assert status.code is Code.SKIP
        return
    assert status is None
    status = plugin.filter(state, pod, info)
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE  # preemption may free the port
        assert status.reasons == (want_reason,)


def test_pre_filter_disabled():
    status = new_plugin().filter(CycleState(), make_pod("p").obj(), NodeInfo(make_node("n").obj()))
    assert status.code is Code.ERROR
    assert PRE_FILTER_STATE_KEY in status.message()


# --- Test_isSchedulableAfterAssignedPodDeleted ---------------------------------------------------


@pytest.mark.parametrize(
    ("old", "want"),
    [
        pytest.param("not-a-pod", QueueingHint.QUEUE, id="backoff-wrong-old-object"),
        pytest.param(make_pod("gone").obj(), QueueingHint.SKIP, id="skip-queue-on-unscheduled"),
        pytest.param(
            make_pod("gone").node("fake-node").obj(),
            QueueingHint.SKIP,
            id="skip-queue-on-non-hostport",
        ),
        pytest.param(
            make_pod("gone").node("fake-node").host_port(8081).obj(),
            QueueingHint.SKIP,
            id="skip-queue-on-unrelated-hostport",
        ),
        pytest.param(
            make_pod("gone").node("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="queue-on-released-hostport",
        ),
        pytest.param(
            make_pod("gone").nominated("fake-node").host_port(8080).obj(),
            QueueingHint.QUEUE,
            id="queue-on-released-hostport-of-a-nominated-pod",
        ),
    ],
)
def test_hint_assigned_pod_deleted(old, want):
    pod_event, _ = new_plugin().events_to_register()
    assert pod_event.hint(make_pod("p").host_port(8080).obj(), old, None) is want


# --- TestFits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "existing", "expect"),
    [
        pytest.param(
            new_pod("p", "TCP/127.0.0.1/80"),
            node_info("TCP/127.0.0.1/9090"),
            True,
            id="non-conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
            True,
            id="multiple non-conflicting ports",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info("UDP/127.0.0.1/80"),
            True,
            id="same ports on different protocols",
        ),
        pytest.param(
            new_pod("m1", "TCP/127.0.0.1/80"),
            node_info("TCP/127.0.0.1/80"),
            False,
            id="conflicting ports",
        ),
        pytest.param(
            new_pod(
                "p", "TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"
            ),
            node_info("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
            False,
            id="multiple ports, some conflicting",
        ),
    ],
)
def test_fits(pod, existing, expect):
    assert fits_ports(host_ports(pod), existing.used_ports) is expect


# --- kube-scheduler framework: TestHostPortInfo_Check ---------------------------------------------


@pytest.mark.parametrize(
    ("added", "check", "expect"),
    [
        pytest.param(
            [("TCP", "127.0.0.1", 80)],
            ("", "", 81),
            False,
            id="empty check should check 0.0.0.0 and TCP",
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 80)],
            ("", "", 80),
            True,
            id="empty check should check 0.0.0.0 and TCP (conflicted)",
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 80)], ("", "", 0), False, id="empty port check should pass"
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 80)],
            ("TCP", "0.0.0.0", 80),
            True,
            id="0.0.0.0 should check all registered IPs",
        ),
        pytest.param(
            [("UDP", "127.0.0.1", 80)],
            ("TCP", "0.0.0.0", 80),
            False,
            id="0.0.0.0 with different protocol should be allowed",
        ),
        pytest.param(
            [("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
            ("TCP", "0.0.0.0", 80),
            False,
            id="0.0.0.0 with different port should be allowed",
        ),
        pytest.param(
            [("TCP", "0.0.0.0", 80)],
            ("TCP", "127.0.0.1", 80),
            True,
            id="normal ip should check all registered 0.0.0.0",
        ),
        pytest.param(
            [
                ("TCP", "0.0.0.0", 79),
                ("UDP", "0.0.0.0", 80),
                ("TCP", "0.0.0.0", 81),
                ("TCP", "0.0.0.0", 82),
            ],
            ("TCP", "127.0.0.1", 80),
            False,
            id="normal ip with different port/protocol should be allowed (0.0.0.0)",
        ),
        pytest.param(
            [
                ("TCP", "127.0.0.1", 79),
                ("UDP", "127.0.0.1", 80),
                ("TCP", "127.0.0.1", 81),
                ("TCP", "127.0.0.1", 82),
            ],
            ("TCP", "127.0.0.1", 80),
            False,
            id="normal ip with different port/protocol should be allowed",
        ),
    ],
)
def test_check_conflict(added, check, expect):
    used = NodeInfo(None, [new_pod("m1", *(f"{proto}/{ip}/{port}" for proto, ip, port in added))])
    protocol, host_ip, port = check
    assert check_conflict(used.used_ports, host_ip, protocol, port) is expect


def test_host_ports_default_ip_and_protocol():
    pod = make_pod("p").host_port(80).obj()
    assert host_ports(pod) == [("0.0.0.0", "TCP", 80)]


def test_args_are_refused():
    profile = {
        "plugins": {"filter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"range": "1-2"}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodePorts}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.range: unknown field; {NAME} takes no args"
    ]


# --- Through the scheduler ----------------------------------------------------------------------


def profile() -> dict:
    return {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}


def test_one_pod_per_node_for_a_host_port():
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    pods = [make_pod(f"web{i}").host_port(8080).obj() for i in range(3)]
    scheduler, backend = make_scheduler({NAME: NodePorts}, profile(), nodes, pods)
    run_until_idle(scheduler)
    placed = sorted(backend.pod("default", f"web{i}").node_name for i in range(3))
    assert placed == ["", "n1", "n2"]
    (waiting,) = [i for i in range(3) if not backend.pod("default", f"web{i}").node_name]
    assert backend.conditions[f"default/web{waiting}"][1] == (
        "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."
    )


def test_rejected_pod_moves_back_when_the_port_holder_is_deleted():
    clock = [0.0]
    holder = make_pod("holder").node("n1").host_port(8080).obj()
    other = make_pod("other").node("n1").host_port(9090).obj()
    scheduler, backend = make_scheduler(
        {NAME: NodePorts},
        profile(),
        [make_node("n1").obj()],
        [holder, other, make_pod("p").host_port(8080).obj()],
        clock=lambda: clock[0],
    )
    run_until_idle(scheduler)
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.delete_pod(other)  # held another port: the hint says Skip
    assert scheduler.queue.pending()["unschedulable"] == 1

    backend.delete_pod(holder)
    assert scheduler.queue.pending()["unschedulable"] == 0
    clock[0] += 1.0
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"
