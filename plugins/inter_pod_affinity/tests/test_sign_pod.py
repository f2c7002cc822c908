"""InterPodAffinity's ``sign_pod``: a pod is signed only while every answer on a node depends on
that node alone (hostname-keyed terms everywhere, hostname values unique), so that the
framework may reuse a node's answer while the node is unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_inter_pod_affinity import NOT_NODE_LOCAL, InterPodAffinity

from kubesched import Code, Handle, InMemoryBackend, Node, Pod, Snapshot, Status
from kubesched.testing.st import (
    ANTI_PREFERRED,
    ANTI_REQUIRED,
    HOSTNAME,
    PREFERRED,
    REQUIRED,
    make_node,
    make_pod,
    new_snapshot,
)

ZONE = "topology.kubernetes.io/zone"


def _plugin(
    snapshot: Snapshot | list[Snapshot], namespaces: list[dict[str, Any]] | None = None
) -> InterPodAffinity:
    """The plugin over ``snapshot`` (or the last of a list the test appends to)."""
    current = snapshot if isinstance(snapshot, list) else [snapshot]
    objects = {"Namespace": [{"kind": "Namespace", "metadata": {"name": "default"}}]}
    objects["Namespace"].extend(namespaces or [])
    return InterPodAffinity(
        {}, Handle("test", InMemoryBackend(objects=objects), lambda: current[-1])
    )


def _nodes(*hostnames: str) -> list[Node]:
    return [
        make_node().name(f"node-{i}").label(HOSTNAME, h).label(ZONE, "z1").obj()
        for i, h in enumerate(hostnames)
    ]


def _green(
    name: str = "p", topology: str = HOSTNAME, kind: int = ANTI_REQUIRED, node: str = ""
) -> Pod:
    """A green pod keeping other green pods away by ``topology`` (bound to ``node`` if given)."""
    pod = make_pod().name(name).label("color", "green")
    if node:
        pod = pod.node(node)
    return pod.pod_anti_affinity_in("color", topology, ["green"], kind).obj()


def _unsigned(fragment: object) -> bool:
    return isinstance(fragment, Status) and fragment.code is Code.UNSCHEDULABLE


def test_hostname_anti_affinity_on_distinct_hosts_is_signed() -> None:
    snapshot = new_snapshot([_green("placed", node="node-1")], _nodes("a", "b", "c"))
    fragment = _plugin(snapshot).sign_pod(_green())
    assert fragment is not None and not isinstance(fragment, Status)


def test_a_pod_without_terms_in_a_cluster_without_terms_reads_nothing() -> None:
    snapshot = new_snapshot([make_pod().name("x").node("node-0").obj()], _nodes("a", "b"))
    assert _plugin(snapshot).sign_pod(make_pod().name("p").obj()) is None


#: Why the pod is not signed, the pod, the pods already placed, the nodes' hostname values.
FAR_REACHING_CASES: list[tuple[str, Pod, list[Pod], tuple[str, ...]]] = [
    ("a zone-keyed term of its own", _green(topology=ZONE), [], ("a", "b")),
    (
        "required affinity (whether a match exists anywhere decides)",
        make_pod().name("p").pod_affinity_in("color", HOSTNAME, ["green"], REQUIRED).obj(),
        [],
        ("a", "b"),
    ),
    ("a zone-keyed preferred term", _green(topology=ZONE, kind=ANTI_PREFERRED), [], ("a",)),
    (
        "two nodes share a hostname value",
        _green(),
        [],
        ("a", "a", "b"),
    ),
    (
        "a placed pod with a zone-keyed anti-affinity term",
        _green(),
        [_green("placed", topology=ZONE, node="node-1")],
        ("a", "b"),
    ),
    (
        "a placed pod with a zone-keyed preferred affinity term",
        make_pod().name("p").label("color", "green").obj(),
        [
            make_pod()
            .name("placed")
            .node("node-0")
            .pod_affinity_in("color", ZONE, ["green"], PREFERRED)
            .obj()
        ],
        ("a", "b"),
    ),
]


@pytest.mark.parametrize(
    ("why", "pod", "placed", "hostnames"),
    [pytest.param(*case, id=case[0]) for case in FAR_REACHING_CASES],
)
def test_pods_whose_answers_reach_other_nodes_are_not_signed(
    why: str, pod: Pod, placed: list[Pod], hostnames: tuple[str, ...]
) -> None:
    snapshot = new_snapshot(placed, _nodes(*hostnames))
    fragment = _plugin(snapshot).sign_pod(pod)
    assert _unsigned(fragment), why
    assert isinstance(fragment, Status) and fragment.message() == NOT_NODE_LOCAL


def test_a_namespace_selector_is_not_signed() -> None:
    pod = _green()
    term = pod.raw["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ][0]
    term["namespaceSelector"] = {"matchLabels": {"team": "a"}}
    snapshot = new_snapshot([], _nodes("a", "b"))
    assert _unsigned(_plugin(snapshot).sign_pod(Pod(pod.raw)))


def test_the_signature_follows_what_matching_reads() -> None:
    snapshot = new_snapshot([], _nodes("a", "b"))
    namespaces = [{"kind": "Namespace", "metadata": {"name": "team", "labels": {"env": "prod"}}}]
    plugin = _plugin(snapshot, namespaces)
    base = plugin.sign_pod(_green())
    assert plugin.sign_pod(_green("another-name")) == base  # the name is not read
    relabelled = make_pod().name("p").label("color", "blue")
    relabelled = relabelled.pod_anti_affinity_in("color", HOSTNAME, ["green"], ANTI_REQUIRED)
    assert plugin.sign_pod(relabelled.obj()) != base
    moved = make_pod().name("p").namespace("team").label("color", "green")
    moved = moved.pod_anti_affinity_in("color", HOSTNAME, ["green"], ANTI_REQUIRED)
    assert plugin.sign_pod(moved.obj()) != base


def test_the_cluster_is_looked_at_again_for_each_pod() -> None:
    nodes = _nodes("a", "b")
    snapshots = [new_snapshot([], nodes)]
    plugin = _plugin(snapshots)
    assert not _unsigned(plugin.sign_pod(_green()))
    snapshots.append(new_snapshot([_green("far", topology=ZONE, node="node-0")], nodes))
    assert _unsigned(plugin.sign_pod(_green()))  # a zone-keyed pod was placed meanwhile
    snapshots.append(new_snapshot([], nodes))
    assert not _unsigned(plugin.sign_pod(_green()))  # and it left again
