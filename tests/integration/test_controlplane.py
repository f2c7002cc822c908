"""The control plane the integration tests run against behaves like a real cluster.

Everything goes through the official Python client, as kubesched's own API backend does.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from kubernetes import client

from kubesched.testing.controlplane import Cluster, ControlPlane, ready_node

T = TypeVar("T")
ClientFor = Callable[..., client.ApiClient]

REFERENCE_SCHEDULER = "reference-scheduler"
RBAC_GROUP = "rbac.authorization.k8s.io"


def make_pod(
    name: str, *, scheduler_name: str | None = None, node_selector: dict[str, str] | None = None
) -> dict[str, Any]:
    """A pending Pod with one container requesting 100m CPU and 128Mi."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
            }
        ],
    }
    if scheduler_name:
        spec["schedulerName"] = scheduler_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 30.0) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := probe():
            return result
        time.sleep(0.1)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")


def condition(pod: client.V1Pod, type_: str) -> client.V1PodCondition | None:
    return next((c for c in pod.status.conditions or [] if c.type == type_), None)


def bind(core_v1: client.CoreV1Api, namespace: str, pod: str, node: str) -> Any:
    """POST pods/{pod}/binding. The client cannot read the Status the apiserver answers with as
    the Binding it expects (kubernetes-client/python#547), hence ``_preload_content=False``."""
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    return core_v1.create_namespaced_binding(namespace, body, _preload_content=False)


def test_apiserver_is_ready_with_rbac(control_plane: Cluster, admin_client: client.ApiClient):
    readyz = admin_client.call_api("GET", f"{admin_client.configuration.host}/readyz")
    assert readyz.status == 200
    if isinstance(control_plane, ControlPlane):
        version = client.VersionApi(admin_client).get_code()
        assert version.git_version.startswith("v1.37.")
        assert control_plane.startup_seconds > 0
    # RBAC, not AlwaysAllow: the bootstrap roles exist.
    rbac = client.RbacAuthorizationV1Api(admin_client)
    role = rbac.read_cluster_role("system:kube-scheduler")
    assert any("bindings" in (rule.resources or []) for rule in role.rules)


def test_node_without_kubelet_is_ready_with_capacity(
    core_v1: client.CoreV1Api, nodes: Callable[..., client.V1Node]
):
    name = f"node-{uuid.uuid4().hex[:8]}"
    nodes(name, cpu="4", memory="32Gi", pods="110")

    node = core_v1.read_node(name)
    assert node.status.capacity == {"cpu": "4", "memory": "32Gi", "pods": "110"}
    assert node.status.allocatable == node.status.capacity
    ready = next(c for c in node.status.conditions if c.type == "Ready")
    assert ready.status == "True"


def test_status_sent_with_a_node_on_create_is_kept(core_v1: client.CoreV1Api):
    """Nodes differ from most kinds here: a status given on create is stored, so a single
    create makes a schedulable node (create_ready_node only patches if that ever changes)."""
    name = f"node-{uuid.uuid4().hex[:8]}"
    created = core_v1.create_node(ready_node(name, cpu="8"))
    try:
        assert created.status.allocatable["cpu"] == "8"
        assert [(c.type, c.status) for c in created.status.conditions] == [("Ready", "True")]
    finally:
        core_v1.delete_node(name)


def test_pod_bound_through_binding_subresource(
    core_v1: client.CoreV1Api, namespace: str, nodes: Callable[..., client.V1Node]
):
    node = nodes().metadata.name
    core_v1.create_namespaced_pod(namespace, make_pod("bound"))

    response = bind(core_v1, namespace, "bound", node)

    assert response.status == 201
    answer = json.loads(response.data)
    assert (answer["kind"], answer["status"]) == ("Status", "Success")
    pod = core_v1.read_namespaced_pod("bound", namespace)
    assert pod.spec.node_name == node
    scheduled = condition(pod, "PodScheduled")
    assert scheduled is not None and scheduled.status == "True"


def test_binding_an_assigned_pod_is_refused(
    core_v1: client.CoreV1Api, namespace: str, nodes: Callable[..., client.V1Node]
):
    first, second = nodes().metadata.name, nodes().metadata.name
    core_v1.create_namespaced_pod(namespace, make_pod("once"))
    bind(core_v1, namespace, "once", first)

    with pytest.raises(client.ApiException) as refused:
        bind(core_v1, namespace, "once", second)

    assert refused.value.status == 409
    assert core_v1.read_namespaced_pod("once", namespace).spec.node_name == first


def test_identity_without_rbac_permissions_is_forbidden(
    client_for: ClientFor, namespace: str, core_v1: client.CoreV1Api
):
    core_v1.create_namespaced_pod(namespace, make_pod("guarded"))
    nobody = client.CoreV1Api(client_for("kubesched-test-nobody"))

    with pytest.raises(client.ApiException) as listing:
        nobody.list_namespaced_pod(namespace)
    with pytest.raises(client.ApiException) as binding:
        bind(nobody, namespace, "guarded", "any-node")

    assert listing.value.status == 403
    message = json.loads(listing.value.body)["message"]
    assert 'User "kubesched-test-nobody" cannot list resource "pods"' in message
    assert binding.value.status == 403
    assert core_v1.read_namespaced_pod("guarded", namespace).spec.node_name is None


def test_role_granted_to_a_group_applies_to_its_members(
    client_for: ClientFor, namespace: str, admin_client: client.ApiClient
):
    group = f"kubesched-testers-{uuid.uuid4().hex[:6]}"
    rbac = client.RbacAuthorizationV1Api(admin_client)
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "pod-readers"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "pod-reader",
            },
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
        },
    )
    member = client.CoreV1Api(client_for("alice", [group]))
    outsider = client.CoreV1Api(client_for("bob"))

    # RBAC caches are filled from watches: the grant takes effect within moments.
    wait_for("the role binding to apply", lambda: _can_list_pods(member, namespace), timeout=10)
    with pytest.raises(client.ApiException) as refused:
        outsider.list_namespaced_pod(namespace)
    assert refused.value.status == 403
    with pytest.raises(client.ApiException) as cluster_scoped:
        member.list_node()
    assert cluster_scoped.value.status == 403


def _can_list_pods(api: client.CoreV1Api, namespace: str) -> bool:
    try:
        api.list_namespaced_pod(namespace)
    except client.ApiException as e:
        if e.status == 403:
            return False
        raise
    return True


@pytest.mark.usefixtures("binaries")  # the kube-scheduler binary, also for an existing cluster
def test_reference_scheduler_binds_pod_that_names_it(
    control_plane: Cluster,
    core_v1: client.CoreV1Api,
    namespace: str,
    nodes: Callable[..., client.V1Node],
):
    node = nodes(cpu="2").metadata.name
    on_node = {"kubernetes.io/hostname": node}
    config = {"profiles": [{"schedulerName": REFERENCE_SCHEDULER}]}
    with control_plane.start_reference_scheduler(config) as scheduler:
        for name, scheduler_name in (("mine", REFERENCE_SCHEDULER), ("theirs", "someone-else")):
            core_v1.create_namespaced_pod(
                namespace, make_pod(name, scheduler_name=scheduler_name, node_selector=on_node)
            )

        pod = wait_for(
            "the reference scheduler to bind pod 'mine'",
            lambda: _bound(core_v1.read_namespaced_pod("mine", namespace)),
        )
        assert scheduler.alive()
        insecure = ssl._create_unverified_context()  # its serving certificate is self-signed
        with urllib.request.urlopen(scheduler.metrics_url, context=insecure) as response:
            metrics = response.read().decode()
        attempts = f'scheduler_schedule_attempts_total{{profile="{REFERENCE_SCHEDULER}",'
        assert f'{attempts}result="scheduled"}} 1' in metrics

    assert pod.spec.node_name == node
    scheduled = condition(pod, "PodScheduled")
    assert scheduled is not None and scheduled.status == "True"
    events = client.EventsV1Api(core_v1.api_client).list_namespaced_event(
        namespace, field_selector="regarding.name=mine"
    )
    assert any(
        e.reason == "Scheduled" and e.reporting_controller == REFERENCE_SCHEDULER
        for e in events.items
    ), [(e.reason, e.reporting_controller, e.note) for e in events.items]
    # A pod that names another scheduler is not the reference scheduler's to bind.
    assert core_v1.read_namespaced_pod("theirs", namespace).spec.node_name is None


def _bound(pod: client.V1Pod) -> client.V1Pod | None:
    return pod if pod.spec.node_name else None
