"""Extenders both ways, against the reference kube-scheduler on the real control plane.

(a) A stock kube-scheduler whose only scores come from ``kubesched extender serve`` (a profile of
    LabelFilter and NodeResourcesFit's scoring, served in-process with a node cache from a watch,
    ``nodeCacheCapable``, binding through the extender) binds each pod where ``kubesched simulate``
    of that profile would.
(b) A stub extender (``kubesched.testing.extender_stub``) configured in both schedulers, with an
    ignorable one beside it that fails on its own label and one that is down: both agree pod by
    pod on a generated set, bound, unschedulable (the same FailedScheduling message) and failed
    (the same SchedulerError message).

Pods go one at a time, each after the previous one was decided (as tests/parity does), and
kubesched simulates each over the cluster the reference scheduler saw for it.
"""

from __future__ import annotations

import random
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from kubesched.api.manifests import Cluster as Manifests
from kubesched.api.objects import Node, Pod
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.connect import api_client_for
from kubesched.backends.kube.transport import Transport
from kubesched.config import parse_config
from kubesched.engine.explain_recorder import ExplainRecorder
from kubesched.framework.registry import Registry
from kubesched.service.extender_server import ExtenderServer, ExtenderService, ServeOptions
from kubesched.service.simulate import simulate
from kubesched.testing.controlplane import Cluster, create_ready_node, ready_node
from kubesched.testing.extender_stub import (
    FAIL_LABEL,
    FILTER_LABEL,
    SCORE_LABEL,
    StubExtender,
)

SCHEDULER = "extender-scheduler"
RUN_LABEL = "extender-test.kubesched.io/run"
IGNORABLE_FAIL_LABEL = "extender.kubesched.io/fail-ignorable"
API = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
#: kube-scheduler's defaults that kubesched does not ship; both sides run without them.
DISABLED = [
    {"name": n}
    for n in (
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
        "NodeDeclaredFeatures",
    )
]


def _plain(api: client.ApiClient, obj: Any) -> dict[str, Any]:
    return api.sanitize_for_serialization(obj)


@pytest.fixture
def run_nodes(core_v1: client.CoreV1Api) -> Iterator[Callable[..., str]]:
    created: list[str] = []

    def make(cpu: str, labels: dict[str, str]) -> str:
        name = f"ext-{uuid.uuid4().hex[:6]}"
        created.append(name)
        create_ready_node(
            core_v1.api_client, ready_node(name, cpu=cpu, memory="16Gi", labels=labels)
        )
        return name

    yield make
    for name in created:
        try:
            core_v1.delete_node(name)
        except client.ApiException:
            pass


def pod_manifest(name: str, cpu: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {
            "schedulerName": SCHEDULER,
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}},
                }
            ],
        },
    }


def reference_outcome(
    core_v1: client.CoreV1Api, namespace: str, name: str, timeout: float = 30.0
) -> tuple[str | None, str, str]:
    """(node, reason, message) of the reference scheduler's first decision on the pod."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pod = core_v1.read_namespaced_pod(name, namespace)
        if pod.spec.node_name:
            return pod.spec.node_name, "", ""
        for c in pod.status.conditions or ():
            if c.type == "PodScheduled" and c.status == "False" and c.reason != "SchedulingGated":
                return None, c.reason or "", c.message or ""
        time.sleep(0.05)
    pytest.fail(f"the reference kube-scheduler did not decide pod {name} in {timeout:.0f}s")


def kubesched_outcome(
    core_v1: client.CoreV1Api, namespace: str, created: dict[str, Any], document: dict[str, Any]
) -> tuple[set[str], str, str]:
    """kubesched's best nodes for the pod (as the apiserver stored it on creation) over the
    cluster as it is now (the other pods where the reference scheduler put them), or its
    (reason, message) when it binds none."""
    api = core_v1.api_client
    name = created["metadata"]["name"]
    nodes = [Node(_plain(api, n)) for n in core_v1.list_node().items]
    stored = [_plain(api, p) for p in core_v1.list_namespaced_pod(namespace).items]
    bound = [
        Pod(p)
        for p in stored
        if (p.get("spec") or {}).get("nodeName") and p["metadata"]["name"] != name
    ]
    pending = Pod(created)
    registry = Registry.installed()
    config = parse_config(document, registry)
    recorder = ExplainRecorder()
    result = simulate(
        Manifests(nodes=nodes, pods=[*bound, pending]),
        config,
        registry,
        on_scheduler=recorder.attach,
    )
    (outcome,) = [p for p in result.pods if p.name == name]
    report = recorder.for_pod(f"{namespace}/{name}")[0]
    if report.result != "Scheduled":
        return set(), report.result, report.message
    totals = report.totals()
    if not totals:
        return {report.selected or ""}, "", ""
    best = max(totals.values())
    assert outcome.node in {n for n, t in totals.items() if t == best}
    scores = {n: {p: d.weighted for p, d in report.nodes[n].scores.items()} for n in totals}
    return {n for n, t in totals.items() if t == best}, "", f"totals {totals}, scores {scores}"


def agree(
    core_v1: client.CoreV1Api,
    namespace: str,
    pods: list[dict[str, Any]],
    kubesched_document: dict[str, Any],
    settle: Callable[[str, str], None] = lambda name, node: None,
) -> dict[str, int]:
    """Create the pods one at a time; compare each decision; a count per kind of outcome."""
    counts = {"bound": 0, "unschedulable": 0, "error": 0}
    mismatches = []
    for manifest in pods:
        name = manifest["metadata"]["name"]
        created = _plain(core_v1.api_client, core_v1.create_namespaced_pod(namespace, manifest))
        node, reason, message = reference_outcome(core_v1, namespace, name)
        best, our_reason, our_message = kubesched_outcome(
            core_v1, namespace, created, kubesched_document
        )
        if node is not None:
            counts["bound"] += 1
            settle(name, node)
            if node not in best:
                mismatches.append(
                    f"{name} {manifest['metadata']['labels']}: reference bound it to {node}, "
                    f"kubesched's best {best}; {our_message}"
                )
        else:
            counts["error" if reason == "SchedulerError" else "unschedulable"] += 1
            if (reason, message) != (our_reason, our_message):
                mismatches.append(
                    f"{name}: reference {reason}: {message!r}; kubesched {our_reason}: "
                    f"{our_message!r}"
                )
            core_v1.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    assert not mismatches, "\n".join(mismatches)
    return counts


# -- (a) kubesched extender serve inside a stock kube-scheduler ----------------------------------
@pytest.mark.usefixtures("binaries")
def test_stock_scheduler_with_kubesched_extender_binds_where_simulate_would(
    control_plane: Cluster,
    core_v1: client.CoreV1Api,
    namespace: str,
    run_nodes: Callable[..., str],
) -> None:
    run = uuid.uuid4().hex[:8]
    for cpu, labelled in (("2", True), ("4", True), ("8", False), ("6", True), ("3", True)):
        run_nodes(cpu, {RUN_LABEL: run} if labelled else {})
    profile = {
        "schedulerName": SCHEDULER,
        "plugins": {
            "multiPoint": {"disabled": DISABLED},
            "filter": {"enabled": [{"name": "LabelFilter"}]},
            "score": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]},
        },
        "pluginConfig": [{"name": "LabelFilter", "args": {"labels": {RUN_LABEL: run}}}],
    }
    served = {"apiVersion": API, "kind": KIND, "profiles": [profile]}
    registry = Registry.installed()
    transport = Transport(api_client_for(str(control_plane.admin_kubeconfig)), 50, 100)
    service = ExtenderService(
        ServeOptions(parse_config(served, registry), registry, backend=KubernetesBackend(transport))
    )
    service.start(sync_timeout=30)
    server = ExtenderServer(service).start()
    stock = {
        "apiVersion": API,
        "kind": KIND,
        "profiles": [
            {
                "schedulerName": SCHEDULER,
                "plugins": {
                    "multiPoint": {"disabled": DISABLED},
                    "score": {"disabled": [{"name": "*"}]},
                },
            }
        ],
        "extenders": [
            {
                "urlPrefix": server.url,
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "bindVerb": "bind",
                "weight": 1,
                "nodeCacheCapable": True,
            }
        ],
    }

    def settle(name: str, node: str) -> None:
        # The next pod is sent only once the extender's cache holds this one on its node.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with service._lock:
                service.scheduler.cache.update_snapshot(service.scheduler.snapshot)
                info = service.scheduler.snapshot.get(node)
                if info is not None and any(p.name == name for p in info.pods.values()):
                    return
            time.sleep(0.05)
        pytest.fail(f"the extender's cache never saw pod {name} on {node}")

    rng = random.Random(19)
    pods = [
        pod_manifest(f"p{i}", rng.choice(["100m", "300m", "500m", "900m", "1200m"]))
        for i in range(10)
    ]
    pods.append(pod_manifest("too-big", "7"))  # only the unlabelled node could hold it
    try:
        with control_plane.start_reference_scheduler(stock) as scheduler:
            counts = agree(core_v1, namespace, pods, served, settle)
            assert scheduler.alive()
    finally:
        server.stop()
        service.stop()
    assert counts == {"bound": 10, "unschedulable": 1, "error": 0}
    # The extender bound them (bindVerb): through the profile's DefaultBinder.
    assert all(p.spec.node_name for p in core_v1.list_namespaced_pod(namespace).items)


# -- (b) one stub extender in both schedulers ------------------------------------------------------
@pytest.mark.usefixtures("binaries")
@pytest.mark.parametrize(
    "node_cache_capable",
    # A NodeList answer is scored as nodes without pods, NodeNames keep them (kube v1.37).
    [pytest.param(False, id="node-list"), pytest.param(True, id="node-names")],
)
def test_both_schedulers_agree_pod_by_pod_with_the_same_extenders(
    control_plane: Cluster,
    core_v1: client.CoreV1Api,
    namespace: str,
    run_nodes: Callable[..., str],
    node_cache_capable: bool,
) -> None:
    rng = random.Random(7)
    node_labels = {}
    for i in range(6):
        labels = {SCORE_LABEL: str(rng.randint(0, 10))}
        if i in (1, 4):
            labels[FILTER_LABEL] = "reject" if i == 1 else "unresolvable"
        node_labels[run_nodes(rng.choice(["2", "4"]), labels)] = labels
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}/down"  # nothing listens there
    with StubExtender() as main, StubExtender(fail_label=IGNORABLE_FAIL_LABEL) as side:
        main.nodes = dict(node_labels)  # what a nodeCacheCapable extender keeps itself
        extenders = [
            {"urlPrefix": down, "filterVerb": "filter", "ignorable": True},
            {
                "urlPrefix": side.url + "/side",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 1,
                "ignorable": True,
            },
            {
                "urlPrefix": main.url + "/main",
                "filterVerb": "filter",
                "prioritizeVerb": "prioritize",
                "weight": 2,
                "httpTimeout": "3s",
                "nodeCacheCapable": node_cache_capable,
            },
        ]
        document = {
            "apiVersion": API,
            "kind": KIND,
            "profiles": [
                {
                    "schedulerName": SCHEDULER,
                    "plugins": {"multiPoint": {"disabled": DISABLED}},
                }
            ],
            "extenders": extenders,
        }
        pods = []
        for i in range(14):
            labels: dict[str, str] = {}
            draw = rng.random()
            if draw < 0.15:
                labels[FAIL_LABEL] = rng.choice(["status", "error"])  # the main one fails
            elif draw < 0.35:
                labels[IGNORABLE_FAIL_LABEL] = rng.choice(["status", "error"])  # skipped
            cpu = rng.choice(["200m", "500m", "1", "1500m", "5"])  # 5 cpu fits nowhere
            pods.append(pod_manifest(f"q{i}", cpu, labels))
        with control_plane.start_reference_scheduler(document) as scheduler:
            counts = agree(core_v1, namespace, pods, document)
            assert scheduler.alive()
    assert counts["bound"] and counts["unschedulable"] and counts["error"], counts
