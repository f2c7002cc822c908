"""Pods and Nodes read from their manifests: defaults, kube's toleration rules, and errors that
name the object and the field."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import Node, ObjectError, Pod, Taint, Toleration
from kubesched.api.objects import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, parse_resource_list
from kubesched.testing.builders import make_node, make_pod


def pod_manifest(**spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}, "spec": spec}


# -- Pods ----------------------------------------------------------------------------------------


def test_pod_defaults() -> None:
    pod = Pod({"metadata": {"name": "p"}})
    assert (pod.namespace, pod.key, pod.uid) == ("default", "default/p", "default/p")
    assert pod.scheduler_name == "default-scheduler"
    assert (pod.priority, pod.preemption_policy) == (0, "PreemptLowerPriority")
    assert (pod.phase, pod.node_name, pod.nominated_node_name) == ("Pending", "", "")
    assert pod.containers == [] and pod.init_containers == []
    assert pod.overhead == {} and pod.pod_level_requests == {}
    assert not pod.is_terminated
    assert repr(pod) == "Pod(default/p)"


def test_pod_fields() -> None:
    manifest = {
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "u-1",
            "resourceVersion": "42",
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "deletionTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {
            "schedulerName": "custom-scheduler",
            "priority": 1000,
            "preemptionPolicy": "Never",
            "nodeName": "n1",
            "nodeSelector": {"disk": "ssd"},
            "affinity": {"podAntiAffinity": {}},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "schedulingGates": [{"name": "example.com/gate"}],
            "overhead": {"cpu": "250m"},
            "resources": {"requests": {"memory": "1Gi"}},
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}},
                    "ports": [
                        {"containerPort": 80, "hostPort": 8080},
                        {
                            "containerPort": 53,
                            "hostPort": "53",
                            "protocol": "UDP",
                            "hostIP": "10.0.0.1",
                        },
                        {"containerPort": 9090},
                    ],
                }
            ],
            "initContainers": [{"name": "proxy", "restartPolicy": "Always"}],
        },
        "status": {"phase": "Running", "nominatedNodeName": "n2"},
    }
    pod = Pod(manifest)
    assert (pod.key, pod.uid, pod.resource_version) == ("shop/web", "u-1", "42")
    assert pod.labels == {"app": "web"} and pod.annotations == {"note": "x"}
    assert pod.deletion_timestamp == "2024-01-01T00:00:00Z"
    assert (pod.scheduler_name, pod.priority, pod.preemption_policy) == (
        "custom-scheduler",
        1000,
        "Never",
    )
    assert (pod.node_name, pod.nominated_node_name, pod.phase) == ("n1", "n2", "Running")
    assert pod.node_selector == {"disk": "ssd"}
    assert pod.affinity == {"podAntiAffinity": {}}
    assert pod.scheduling_gates == ["example.com/gate"]
    assert pod.overhead == {CPU: 250}
    assert pod.pod_level_requests == {MEMORY: 2**30}
    (app,) = pod.containers
    assert (app.name, app.image, app.requests) == ("app", "nginx", {CPU: 500, MEMORY: 128 * 2**20})
    assert [(p.host_ip, p.protocol, p.host_port) for p in app.host_ports] == [
        ("0.0.0.0", "TCP", 8080),
        ("10.0.0.1", "UDP", 53),
    ]
    assert not app.is_sidecar
    assert pod.init_containers[0].is_sidecar
    assert pod.raw is manifest


@pytest.mark.parametrize(
    ("phase", "terminated"),
    [("Pending", False), ("Running", False), ("Succeeded", True), ("Failed", True)],
    ids=lambda v: str(v),
)
def test_pod_terminated_phases(phase: str, terminated: bool) -> None:
    assert Pod({"metadata": {"name": "p"}, "status": {"phase": phase}}).is_terminated is terminated


POD_ERRORS = [
    ("no-name", {"metadata": {"namespace": "shop"}}, "", "metadata.name", "required"),
    ("metadata-not-a-mapping", {"metadata": ["web"]}, "", "metadata", "expected a mapping"),
    (
        "bad-cpu",
        pod_manifest(containers=[{"name": "a", "resources": {"requests": {"cpu": "two"}}}]),
        "shop/web",
        "spec.containers[0].resources.requests.cpu",
        "invalid quantity 'two'",
    ),
    (
        "bad-init-memory",
        pod_manifest(initContainers=[{"resources": {"requests": {"memory": "1GB"}}}]),
        "shop/web",
        "spec.initContainers[0].resources.requests.memory",
        "invalid quantity '1GB'",
    ),
    (
        "negative-request",
        pod_manifest(containers=[{"name": "a", "resources": {"requests": {"cpu": "-1"}}}]),
        "shop/web",
        "spec.containers[0].resources.requests.cpu",
        "must be greater than or equal to 0",
    ),
    (
        "bad-overhead",
        pod_manifest(overhead={"memory": "lots"}),
        "shop/web",
        "spec.overhead.memory",
        "invalid quantity 'lots'",
    ),
    (
        "bad-pod-level-requests",
        pod_manifest(resources={"requests": {"cpu": "x"}}),
        "shop/web",
        "spec.resources.requests.cpu",
        "invalid quantity 'x'",
    ),
    (
        "requests-not-a-mapping",
        pod_manifest(containers=[{"name": "a", "resources": {"requests": ["cpu"]}}]),
        "shop/web",
        "spec.containers[0].resources.requests",
        "expected a mapping",
    ),
    (
        "container-not-a-mapping",
        pod_manifest(containers=["nginx"]),
        "shop/web",
        "spec.containers[0]",
        "expected a container",
    ),
    (
        "host-port-not-a-number",
        pod_manifest(containers=[{"name": "a", "ports": [{"hostPort": "http"}]}]),
        "shop/web",
        "spec.containers[0].ports[0].hostPort",
        "'http' is not a port number",
    ),
    (
        "host-port-out-of-range",
        pod_manifest(containers=[{"name": "a", "ports": [{}, {"hostPort": 70000}]}]),
        "shop/web",
        "spec.containers[0].ports[1].hostPort",
        "70000 is not a port number",
    ),
    (
        "priority-not-an-integer",
        pod_manifest(priority="high"),
        "shop/web",
        "spec.priority",
        "'high' is not an integer",
    ),
    (
        "label-not-a-string",
        {"metadata": {"name": "web", "namespace": "shop", "labels": {"tier": 1}}},
        "shop/web",
        "metadata.labels.tier",
        "must be a string",
    ),
    (
        "node-selector-not-a-mapping",
        pod_manifest(nodeSelector=["disk=ssd"]),
        "shop/web",
        "spec.nodeSelector",
        "expected a mapping",
    ),
]


@pytest.mark.parametrize(
    ("manifest", "name", "field", "problem"),
    [case[1:] for case in POD_ERRORS],
    ids=[case[0] for case in POD_ERRORS],
)
def test_pod_errors_name_the_pod_and_the_field(
    manifest: dict[str, Any], name: str, field: str, problem: str
) -> None:
    with pytest.raises(ObjectError) as caught:
        Pod(manifest)
    error = caught.value
    assert (error.kind, error.name, error.field) == ("Pod", name, field)
    assert problem in error.problem
    assert str(error).startswith(f"Pod {name}: {field}: " if name else f"Pod: {field}: ")


# -- Nodes ---------------------------------------------------------------------------------------


def test_node_fields() -> None:
    node = (
        make_node("n1")
        .capacity(cpu="2", memory="4Gi", ephemeral_storage="10Gi", pods="30")
        .taint("dedicated", "gpu", "NoExecute")
        .unschedulable()
        .images("nginx:1.27", size=100)
        .obj()
    )
    assert node.name == "n1" and node.uid == "n1"
    assert node.allocatable == {
        CPU: 2000,
        MEMORY: 4 * 2**30,
        PODS: 30,
        EPHEMERAL_STORAGE: 10 * 2**30,
    }
    assert node.unschedulable
    assert [(t.key, t.value, t.effect) for t in node.taints] == [("dedicated", "gpu", "NoExecute")]
    assert node.images == [(("nginx:1.27",), 100)]
    assert node.labels["kubernetes.io/hostname"] == "n1"
    assert repr(node) == "Node(n1)"


@pytest.mark.parametrize(
    ("status", "allocatable"),
    [
        ({"allocatable": {"cpu": "3"}, "capacity": {"cpu": "4"}}, {CPU: 3000}),
        ({"capacity": {"cpu": "4"}}, {CPU: 4000}),
        ({"allocatable": {}, "capacity": {"cpu": "4"}}, {}),
        ({}, {}),
    ],
    ids=["allocatable-wins", "capacity-when-no-allocatable", "empty-allocatable", "neither"],
)
def test_node_allocatable(status: dict[str, Any], allocatable: dict[str, int]) -> None:
    assert Node({"metadata": {"name": "n"}, "status": status}).allocatable == allocatable


NODE_ERRORS = [
    ("no-name", {"metadata": {}}, "", "metadata.name", "required"),
    ("metadata-not-a-mapping", {"metadata": "n1"}, "", "metadata", "expected a mapping"),
    (
        "bad-allocatable",
        {"metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "4 Gi"}}},
        "n1",
        "status.allocatable.memory",
        "invalid quantity '4 Gi'",
    ),
    (
        "bad-capacity-used-as-allocatable",
        {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "four"}}},
        "n1",
        "status.capacity.cpu",
        "invalid quantity 'four'",
    ),
    (
        "negative-allocatable",
        {"metadata": {"name": "n1"}, "status": {"allocatable": {"pods": -1}}},
        "n1",
        "status.allocatable.pods",
        "must be greater than or equal to 0",
    ),
    (
        "annotation-not-a-string",
        {"metadata": {"name": "n1", "annotations": {"a": ["b"]}}},
        "n1",
        "metadata.annotations.a",
        "must be a string",
    ),
]


@pytest.mark.parametrize(
    ("manifest", "name", "field", "problem"),
    [case[1:] for case in NODE_ERRORS],
    ids=[case[0] for case in NODE_ERRORS],
)
def test_node_errors_name_the_node_and_the_field(
    manifest: dict[str, Any], name: str, field: str, problem: str
) -> None:
    with pytest.raises(ObjectError) as caught:
        Node(manifest)
    assert (caught.value.kind, caught.value.name, caught.value.field) == ("Node", name, field)
    assert problem in caught.value.problem


# -- resource lists ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (None, {}),
        ({}, {}),
        ({"cpu": "1"}, {CPU: 1000}),
        ({"cpu": "0.5", "memory": "1Mi"}, {CPU: 500, MEMORY: 2**20}),
        ({"cpu": 2, "memory": 1000}, {CPU: 2000, MEMORY: 1000}),
        ({"ephemeral-storage": "1G"}, {EPHEMERAL_STORAGE: 10**9}),
        ({"example.com/gpu": "2"}, {"example.com/gpu": 2}),
        ({"memory": "1.5"}, {MEMORY: 2}),
        ({"cpu": "1u"}, {CPU: 1}),
        ({"cpu": "0"}, {CPU: 0}),
    ],
    ids=[
        "none",
        "empty",
        "cpu-in-millicores",
        "fractions",
        "yaml-numbers",
        "ephemeral-storage",
        "extended-resource",
        "memory-rounds-up",
        "cpu-rounds-up",
        "explicit-zero",
    ],
)
def test_parse_resource_list(values: dict[str, Any] | None, expected: dict[str, int]) -> None:
    assert parse_resource_list(values, "spec.overhead") == expected


# -- tolerations (cases of k8s.io/api/core/v1 toleration_test.go) --------------------------------

TOLERATIONS = [
    ("empty-toleration-tolerates-empty-taint", Toleration(), Taint(""), True),
    (
        "exists-same-key-effect-no-value",
        Toleration("foo", "Exists", effect="NoExecute"),
        Taint("foo", "", "NoExecute"),
        True,
    ),
    (
        "exists-same-key-effect-with-value",
        Toleration("foo", "Exists", effect="NoExecute"),
        Taint("foo", "bar", "NoExecute"),
        True,
    ),
    (
        "exists-empty-key-matches-every-key",
        Toleration("", "Exists", effect="NoExecute"),
        Taint("foo", "bar", "NoExecute"),
        True,
    ),
    (
        "equal-same-key-value-effect",
        Toleration("foo", "Equal", "bar", "NoExecute"),
        Taint("foo", "bar", "NoExecute"),
        True,
    ),
    (
        "equal-different-value",
        Toleration("foo", "Equal", "value1", "NoExecute"),
        Taint("foo", "value2", "NoExecute"),
        False,
    ),
    (
        "equal-different-effect",
        Toleration("foo", "Equal", "bar", "NoExecute"),
        Taint("foo", "bar", "NoSchedule"),
        False,
    ),
    (
        "empty-effect-matches-every-effect",
        Toleration("foo", "Equal", "bar"),
        Taint("foo", "bar", "PreferNoSchedule"),
        True,
    ),
    (
        "different-key",
        Toleration("foo", "Exists"),
        Taint("other", "", "NoSchedule"),
        False,
    ),
    (
        "empty-operator-means-equal",
        Toleration.from_dict({"key": "foo", "value": "bar"}),
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        "unknown-operator-tolerates-nothing",
        Toleration("foo", "Gt", "1"),
        Taint("foo", "2", "NoSchedule"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [case[1:] for case in TOLERATIONS],
    ids=[case[0] for case in TOLERATIONS],
)
def test_toleration_tolerates(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated


def test_tolerations_and_taints_from_manifests() -> None:
    pod = make_pod("p").toleration("dedicated", "gpu", "NoSchedule").obj()
    node = make_node("n").taint("dedicated", "gpu").obj()
    assert pod.tolerations[0].tolerates(node.taints[0])
    assert repr(node.taints[0]) == "Taint(dedicated=gpu:NoSchedule)"
