"""DefaultPreemption in ``kubesched run`` against a real kube-apiserver, under the scheduler's
own least-privilege identity (deploy/manifests/rbac.yaml): a pod that fits only once a
lower-priority pod goes is bound; the victim first gets the ``DisruptionTarget`` condition, then is
deleted, and gets a ``Preempted`` event; no other pod is written to. And the Kubernetes backend's
calls behind it (status patch, deletion, event, pod look-up) one by one, as that identity."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client, watch
from kubesched_process import (
    LABEL,
    SA_GROUPS,
    SA_USER,
    KubeschedProcess,
    apply_rbac,
    seed_config,
    wait_for,
)

from kubesched import Pod
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.recorder import EventRecorder
from kubesched.backends.kube.transport import Transport

SCHEDULER = "custom-scheduler"


@pytest.fixture(scope="module")
def scheduler_kubeconfig(control_plane, admin_client):
    apply_rbac(admin_client)
    return control_plane.kubeconfig_for(SA_USER, SA_GROUPS)


@pytest.fixture
def kubesched(tmp_path, scheduler_kubeconfig) -> Iterator[KubeschedProcess]:
    # NodeResourcesFit: the pod must not fit without preemption. DefaultPreemption is a default
    # plugin (multiPoint): PostFilter and PreEnqueue.
    proc = KubeschedProcess(
        seed_config(tmp_path / "config.yaml", fit=True),
        scheduler_kubeconfig,
        tmp_path / "kubesched.log",
    )
    yield proc
    if proc.proc.poll() is None:
        proc.terminate()


@pytest.fixture
def priority_classes(admin_client) -> Iterator[dict[str, str]]:
    """``{"low": name, "high": name}``: PriorityClasses of value 100 and 1000 for one test."""
    api = client.SchedulingV1Api(admin_client)
    suffix = uuid.uuid4().hex[:6]
    classes = {"low": (f"it-low-{suffix}", 100), "high": (f"it-high-{suffix}", 1000)}
    for name, value in classes.values():
        api.create_priority_class(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        )
    yield {level: name for level, (name, _) in classes.items()}
    for name, _ in classes.values():
        try:
            api.delete_priority_class(name)
        except client.ApiException:
            pass


def manifest(
    name: str, priority_class: str, cpu: str, *, node: str = "", scheduler: str = SCHEDULER
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": scheduler,
        # No kubelet runs here: a deleted pod is gone at once instead of terminating for good.
        "terminationGracePeriodSeconds": 0,
        "containers": [
            {
                "name": "app",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu}},
            }
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_a_pod_that_fits_only_by_preemption_evicts_its_victim_and_is_bound(
    core_v1, namespace, nodes, kubesched, priority_classes
):
    low, high = priority_classes["low"], priority_classes["high"]
    target = nodes(cpu="2", labels={LABEL: "true"}).metadata.name
    full = nodes(cpu="2", labels={LABEL: "true"}).metadata.name
    for pod in (
        manifest("victim", low, "1500m", node=target),
        manifest("keeper", high, "500m", node=target),  # same priority as the preemptor
        manifest("busy", high, "2", node=full),
        manifest("theirs", low, "100m", scheduler="someone-else"),  # pending, not ours
    ):
        core_v1.create_namespaced_pod(namespace, pod)
    kubesched.wait_ready()
    before = core_v1.list_namespaced_pod(namespace)
    versions = {p.metadata.name: p.metadata.resource_version for p in before.items}

    core_v1.create_namespaced_pod(namespace, manifest("preemptor", high, "1500m"))
    bound = wait_for(
        lambda: core_v1.read_namespaced_pod("preemptor", namespace).spec.node_name,
        60,
        what=f"the preemptor bound\n{kubesched.log.read_text()[-3000:]}",
    )
    assert bound == target
    preemptor = core_v1.read_namespaced_pod("preemptor", namespace)

    # Everything that happened to the namespace's pods since, replayed from the watch cache.
    seen: list[tuple[str, str, Any]] = []
    for event in watch.Watch().stream(
        core_v1.list_namespaced_pod,
        namespace,
        resource_version=before.metadata.resource_version,
        timeout_seconds=3,
    ):
        seen.append((event["type"], event["object"].metadata.name, event["object"]))

    victim_events = [(kind, obj) for kind, name, obj in seen if name == "victim"]
    kinds = [kind for kind, _ in victim_events]
    assert kinds[-1] == "DELETED", kinds
    assert "MODIFIED" in kinds and kinds.index("MODIFIED") < kinds.index("DELETED")
    for _, obj in victim_events:
        conditions = {c.type: c for c in obj.status.conditions or ()}
        target_condition = conditions.get("DisruptionTarget")
        assert target_condition is not None, obj.status
        assert (target_condition.status, target_condition.reason, target_condition.message) == (
            "True",
            "PreemptionByScheduler",
            f"{SCHEDULER}: preempting to accommodate a higher priority pod",
        )
    with pytest.raises(client.ApiException) as gone:
        core_v1.read_namespaced_pod("victim", namespace)
    assert gone.value.status == 404

    # No other pod was written to: not one watch event, the same resourceVersion.
    touched = sorted({name for _, name, _ in seen} - {"victim", "preemptor"})
    assert touched == []
    after = {
        p.metadata.name: p.metadata.resource_version
        for p in core_v1.list_namespaced_pod(namespace).items
    }
    assert {name: after[name] for name in ("keeper", "busy", "theirs")} == {
        name: versions[name] for name in ("keeper", "busy", "theirs")
    }

    events = client.EventsV1Api(core_v1.api_client)

    def preempted() -> list[Any]:
        return [
            e
            for e in events.list_namespaced_event(namespace).items
            if e.reason == "Preempted" and e.regarding.name == "victim"
        ]

    (event,) = wait_for(preempted, 20, what="the Preempted event")
    assert (event.type, event.action, event.note, event.reporting_controller) == (
        "Normal",
        "Preempting",
        f"Preempted by pod {preemptor.metadata.uid} on node {target}",
        SCHEDULER,
    )
    assert event.regarding.uid == victim_events[0][1].metadata.uid
    # kube's Eventf(victim, preemptor, ...): the preemptor is the related object.
    assert (event.related.kind, event.related.name, event.related.uid) == (
        "Pod",
        "preemptor",
        preemptor.metadata.uid,
    )
    failed = [
        e.note
        for e in events.list_namespaced_event(namespace).items
        if e.reason == "FailedScheduling" and e.regarding.name == "preemptor"
    ]
    assert failed == [
        "0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential placement "
        f"for pod on node {target}, preempting 1 victims"
    ]
    others = [
        e.reason
        for e in events.list_namespaced_event(namespace).items
        if e.regarding.name in ("keeper", "busy", "theirs")
    ]
    assert others == []


class _Quiet:
    """An event handler that ignores everything (the backend's informers still fill)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


@pytest.mark.usefixtures("scheduler_kubeconfig")  # the RBAC it applies
def test_the_kubernetes_backends_preemption_calls(core_v1, namespace, client_for):
    """Each call preemption makes, as the scheduler's own identity (so RBAC allows them)."""
    core_v1.create_namespaced_pod(namespace, manifest("pending", "", "100m", scheduler="other"))
    core_v1.create_namespaced_pod(namespace, manifest("bound", "", "100m", node="nowhere"))
    transport = Transport(client_for(SA_USER, SA_GROUPS))
    recorder = EventRecorder(transport)
    backend = KubernetesBackend(transport, recorder=recorder)
    backend.start(_Quiet(), sync_timeout=30)
    try:
        pods = {
            p.metadata.name: Pod(core_v1.api_client.sanitize_for_serialization(p))
            for p in core_v1.list_namespaced_pod(namespace).items
        }
        pending, bound = pods["pending"], pods["bound"]
        assert backend.get_pod(bound.uid) is not None

        condition = {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": f"{SCHEDULER}: preempting to accommodate a higher priority pod",
            "lastTransitionTime": "2025-01-01T00:00:00Z",
        }
        assert backend.patch_pod_status(pending, conditions=[condition], nominated_node_name="n1")
        stored = core_v1.read_namespaced_pod("pending", namespace).status
        assert stored.nominated_node_name == "n1"
        assert {c.type: c.reason for c in stored.conditions} == {
            "DisruptionTarget": "PreemptionByScheduler"
        }
        # Merged by type: another condition joins, the same type is replaced.
        other = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
        assert backend.patch_pod_status(
            pending, conditions=[other, {**condition, "message": "again"}], nominated_node_name=""
        )
        stored = core_v1.read_namespaced_pod("pending", namespace).status
        assert stored.nominated_node_name is None
        assert {c.type: c.message for c in stored.conditions} == {
            "DisruptionTarget": "again",
            "PodScheduled": None,
        }

        assert backend.delete_pod(bound) is True
        wait_for(lambda: backend.get_pod(bound.uid) is None, 20, what="the informer's delete")
        assert backend.delete_pod(bound) is False
        assert backend.patch_pod_status(bound, conditions=[condition]) is False

        backend.record_event(
            pending,
            event_type="Normal",
            reason="Preempted",
            action="Preempting",
            note="Preempted by pod u on node n",
            reporting_controller=SCHEDULER,
            related=bound,
        )
        recorder.flush()
        events = client.EventsV1Api(core_v1.api_client).list_namespaced_event(namespace).items
        assert [(e.reason, e.action, e.note, e.reporting_controller) for e in events] == [
            ("Preempted", "Preempting", "Preempted by pod u on node n", SCHEDULER)
        ]
        assert (events[0].related.name, events[0].related.uid) == (bound.name, bound.uid)
    finally:
        backend.stop()
