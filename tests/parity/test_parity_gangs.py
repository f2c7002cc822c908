"""GangScheduling against the reference kube-scheduler v1.37.2 with the GenericWorkload gate on.

A control plane of its own (the session's runs without the gate): kube-apiserver serves
``scheduling.k8s.io/v1beta1`` PodGroups and keeps ``spec.schedulingGroup``, and the reference
kube-scheduler runs its default profile, to which the gate adds GangScheduling. Each scenario's
objects are created in a namespace of their own for the reference, and simulated by kubesched
(default plugins plus GangScheduling); which pods end up bound must be the same.

Only scenarios that settle without a wait at Permit running out are compared: the reference
waits kube's 5 minutes on the real clock.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.manifests import Cluster, with_api_defaults
from kubesched.api.objects import Node, Pod
from kubesched.backends.kube.transport import Transport
from kubesched.config import parse_config
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate
from kubesched.testing.controlplane import (
    Binaries,
    ControlPlane,
    create_ready_node,
    new_api_client,
    ready_node,
)

GATE_ARGS = ["--feature-gates=GenericWorkload=true"]
APISERVER_ARGS = [*GATE_ARGS, "--runtime-config=scheduling.k8s.io/v1beta1=true"]
SCHEDULER = "gang-reference"
REFERENCE_PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": SCHEDULER}],
}
KUBESCHED_PROFILE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": SCHEDULER,
            "plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
        }
    ],
}
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}/podgroups"
SETTLE_SECONDS = 20.0


@dataclass(frozen=True)
class Scenario:
    name: str
    nodes: tuple[str, ...]  # cpu of each node
    groups: tuple[tuple[str, int], ...]  # (name, minCount)
    pods: tuple[tuple[str, str, str], ...]  # (name, group, cpu), in creation order


SCENARIOS = [
    Scenario(
        "a gang that fits",
        ("2", "2"),
        (("g", 3),),
        (("g1", "g", "1"), ("g2", "g", "1"), ("g3", "g", "1")),
    ),
    Scenario("short of minCount", ("4",), (("g", 3),), (("g1", "g", "1"), ("g2", "g", "1"))),
    Scenario(
        "two gangs, room for one",
        ("4",),
        (("a", 3), ("b", 3)),
        tuple((f"{g}{i}", g, "1") for i in (1, 2, 3) for g in "ab"),
    ),
    Scenario(
        "a basic group and a gang",
        ("4",),
        (("basic", 0), ("g", 2)),
        (("x1", "basic", "1"), ("g1", "g", "1"), ("x2", "basic", "1"), ("g2", "g", "1")),
    ),
]


def pod_group(name: str, namespace: str, min_count: int) -> dict[str, Any]:
    policy: dict[str, Any] = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulingPolicy": policy},
    }


def pod(name: str, namespace: str, group: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": SCHEDULER,
            "schedulingGroup": {"podGroupName": group},
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu}},
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def gated_cluster(binaries: Binaries) -> Iterator[tuple[ControlPlane, Transport, Any]]:
    cluster = ControlPlane(binaries, extra_apiserver_args=APISERVER_ARGS)
    cluster.start()
    api_client = new_api_client(cluster.admin_kubeconfig)
    reference = cluster.start_reference_scheduler(REFERENCE_PROFILE, extra_args=GATE_ARGS)
    try:
        yield cluster, Transport(api_client, qps=0), api_client
    finally:
        reference.stop()
        api_client.close()
        cluster.stop()


_runs = itertools.count(1)


def reference_outcome(
    api: Transport, api_client: Any, scenario: Scenario, expected: set[str]
) -> set[str]:
    """The pods the reference binds, once they match ``expected`` or after the settle time."""
    run = next(_runs)
    namespace = f"gangs-{run}"
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    nodes = [f"gang-{run}-n{i}" for i in range(len(scenario.nodes))]
    try:
        for name, cpu in zip(nodes, scenario.nodes, strict=True):
            create_ready_node(api_client, ready_node(name, cpu=cpu))
        for name, min_count in scenario.groups:
            api.request(
                "POST", PODGROUPS.format(ns=namespace), body=pod_group(name, namespace, min_count)
            )
        for name, group, cpu in scenario.pods:
            api.request(
                "POST",
                f"/api/v1/namespaces/{namespace}/pods",
                body=pod(name, namespace, group, cpu),
            )
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            listed = api.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
            bound = {p["metadata"]["name"] for p in listed if p["spec"].get("nodeName")}
            if bound == expected and time.monotonic() > deadline - SETTLE_SECONDS + 3:
                return bound  # held a few seconds: not a passing state
            if time.monotonic() > deadline:
                return bound
            time.sleep(0.2)
    finally:
        api.request(
            "DELETE", f"/api/v1/namespaces/{namespace}/pods", query=[("gracePeriodSeconds", 0)]
        )
        for name in nodes:
            api.request("DELETE", f"/api/v1/nodes/{name}")


def kubesched_outcome(scenario: Scenario) -> set[str]:
    nodes = [Node(ready_node(f"n{i}", cpu=cpu)) for i, cpu in enumerate(scenario.nodes)]
    pods = [Pod(with_api_defaults(pod(n, "default", g, cpu))) for n, g, cpu in scenario.pods]
    groups = [pod_group(n, "default", m) for n, m in scenario.groups]
    registry = Registry.installed()
    result = simulate(
        Cluster(nodes=nodes, pods=pods, objects={"PodGroup": groups}),
        parse_config(KUBESCHED_PROFILE, registry),
        registry,
    )
    return {p.name for p in result.pods if p.node}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_gang_parity(
    gated_cluster: tuple[ControlPlane, Transport, Any], scenario: Scenario
) -> None:
    _, api, api_client = gated_cluster
    ours = kubesched_outcome(scenario)
    theirs = reference_outcome(api, api_client, scenario, ours)
    assert ours == theirs, f"kubesched bound {sorted(ours)}, kube-scheduler {sorted(theirs)}"


def test_kubesched_run_binds_a_gang_read_from_the_apiserver(
    gated_cluster: tuple[ControlPlane, Transport, Any], tmp_path: Path
) -> None:
    """``kubesched run`` lists and watches PodGroups: a member waits until its gang is complete,
    then both bind."""
    cluster, api, api_client = gated_cluster
    config = {**KUBESCHED_PROFILE, "leaderElection": {"leaderElect": False}}
    config["profiles"] = [{**config["profiles"][0], "schedulerName": "kubesched-gang"}]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    namespace = f"gangs-run-{next(_runs)}"
    api.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
    create_ready_node(api_client, ready_node(f"{namespace}-n1"))
    api.request("POST", PODGROUPS.format(ns=namespace), body=pod_group("g", namespace, 2))
    log = (tmp_path / "kubesched.log").open("w")
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "kubesched", "run", "--config", str(tmp_path / "config.yaml")),
            *("--kubeconfig", str(cluster.admin_kubeconfig), "--port", "0"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def bound() -> set[str]:
            listed = api.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
            return {p["metadata"]["name"] for p in listed if p["spec"].get("nodeName")}

        for name in ("m1", "m2"):
            body = pod(name, namespace, "g", "1")
            body["spec"]["schedulerName"] = "kubesched-gang"
            api.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=body)
            if name == "m1":
                time.sleep(3)
                assert bound() == set()  # alone, short of minCount
        deadline = time.monotonic() + 30
        while bound() != {"m1", "m2"} and time.monotonic() < deadline:
            time.sleep(0.2)
        assert bound() == {"m1", "m2"}, (tmp_path / "kubesched.log").read_text()[-3000:]
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
        api.request("DELETE", f"/api/v1/nodes/{namespace}-n1")
