"""DynamicResources in ``kubesched run`` against a real kube-apiserver, as the scheduler's own
least-privilege identity (deploy/manifests/rbac.yaml): a pod whose claim asks for one device of a
class lands on the node whose ResourceSlice has it, and the claim ends allocated (with the
delete-protection finalizer) and reserved for the pod; a second pod asking for a device of the
same class waits with kube-scheduler's message until the first pod is gone and its claim
released.

No kube-controller-manager runs here, so the test does the resourceclaim controller's part
(clearing ``reservedFor`` and the allocation of a deleted pod's claim) itself."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
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

SCHEDULER = "custom-scheduler"
GROUP, VERSION = "resource.k8s.io", "v1"
DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def scheduler_kubeconfig(control_plane, admin_client):
    apply_rbac(admin_client)
    return control_plane.kubeconfig_for(SA_USER, SA_GROUPS)


@pytest.fixture
def kubesched(tmp_path, scheduler_kubeconfig) -> Iterator[KubeschedProcess]:
    path = seed_config(tmp_path / "config.yaml", backoff=(0.5, 1))
    config = yaml.safe_load(path.read_text())
    points = config["profiles"][0]["plugins"]
    points["preFilter"]["enabled"] = [{"name": "DynamicResources"}]
    points["filter"]["enabled"].append({"name": "DynamicResources"})
    path.write_text(yaml.safe_dump(config))
    proc = KubeschedProcess(path, scheduler_kubeconfig, tmp_path / "kubesched.log")
    yield proc
    if proc.proc.poll() is None:
        proc.terminate()


@pytest.fixture
def dra(admin_client) -> Iterator[client.CustomObjectsApi]:
    api = client.CustomObjectsApi(admin_client)
    created: list[tuple[str, str]] = []
    api.created = created  # type: ignore[attr-defined]
    yield api
    for plural, name in created:
        try:
            api.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except client.ApiException:
            pass


def claim(name: str, device_class: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}
        },
    }


def pod(name: str, claim_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": SCHEDULER,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}],
        },
    }


def make_devices(
    dra: Any, node: str, device_class: str, slice_name: str, suffix: str, devices: list[dict]
) -> str:
    """A DeviceClass of the test driver and a ResourceSlice of ``devices`` on ``node`` (both
    removed after the test); returns the class's name."""
    dra.create_cluster_custom_object(
        GROUP,
        VERSION,
        "deviceclasses",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "DeviceClass",
            "metadata": {"name": device_class},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
        },
    )
    dra.created.append(("deviceclasses", device_class))
    dra.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceslices",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ResourceSlice",
            "metadata": {"name": slice_name},
            "spec": {
                "driver": DRIVER,
                "nodeName": node,
                "pool": {"name": f"{node}-{suffix}", "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        },
    )
    dra.created.append(("resourceslices", slice_name))
    return device_class


def test_a_claim_for_one_device_is_allocated_where_the_device_is_and_a_second_pod_waits(
    core_v1, namespace, nodes, kubesched, dra
):
    suffix = uuid.uuid4().hex[:6]
    node = nodes(labels={LABEL: "true"}).metadata.name
    nodes(labels={LABEL: "true"})  # a node without devices
    device_class = make_devices(
        dra, node, f"it-gpu-{suffix}", f"it-{node}-{suffix}", suffix,
        [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}}}],
    )  # fmt: skip
    for name in ("first-gpu", "second-gpu"):
        dra.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "resourceclaims", claim(name, device_class)
        )
    kubesched.wait_ready()

    core_v1.create_namespaced_pod(namespace, pod("first", "first-gpu"))
    bound = wait_for(
        lambda: core_v1.read_namespaced_pod("first", namespace).spec.node_name,
        60,
        what=f"the first pod bound\n{kubesched.log.read_text()[-3000:]}",
    )
    assert bound == node
    first_uid = core_v1.read_namespaced_pod("first", namespace).metadata.uid
    stored = dra.get_namespaced_custom_object(
        GROUP, VERSION, namespace, "resourceclaims", "first-gpu"
    )
    results = stored["status"]["allocation"]["devices"]["results"]
    assert [(r["request"], r["driver"], r["device"]) for r in results] == [("gpu", DRIVER, "gpu-0")]
    assert stored["status"]["reservedFor"] == [
        {"resource": "pods", "name": "first", "uid": first_uid}
    ]
    assert "resource.kubernetes.io/delete-protection" in stored["metadata"]["finalizers"]

    core_v1.create_namespaced_pod(namespace, pod("second", "second-gpu"))

    def unschedulable_message() -> str:
        for condition in core_v1.read_namespaced_pod("second", namespace).status.conditions or ():
            if condition.type == "PodScheduled" and condition.status == "False":
                return condition.message or ""
        return ""

    message = wait_for(unschedulable_message, 60, what="the second pod unschedulable")
    assert message.startswith("0/")
    assert "2 cannot allocate all claims" in message  # both labelled nodes
    assert core_v1.read_namespaced_pod("second", namespace).spec.node_name is None

    # The first pod goes; the resourceclaim controller releases its claim.
    core_v1.delete_namespaced_pod("first", namespace, grace_period_seconds=0)
    stored = dra.get_namespaced_custom_object(
        GROUP, VERSION, namespace, "resourceclaims", "first-gpu"
    )
    stored["status"] = {}
    dra.replace_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "resourceclaims", "first-gpu", stored
    )
    assert (
        wait_for(
            lambda: core_v1.read_namespaced_pod("second", namespace).spec.node_name,
            60,
            what=f"the second pod bound\n{kubesched.log.read_text()[-3000:]}",
        )
        == node
    )
    # No controller removes the finalizers: let the namespace go.
    for name in ("first-gpu", "second-gpu"):
        dra.patch_namespaced_custom_object(
            GROUP, VERSION, namespace, "resourceclaims", name, {"metadata": {"finalizers": None}}
        )


REFERENCE = "it-kube-reference"


def _history(list_call, namespace: str, name: str, since: str) -> list[dict[str, Any]]:
    """Every version of object ``name`` the apiserver stored after resourceVersion ``since``
    (a watch replayed from there), oldest first, as plain dicts."""
    seen = []
    for event in watch.Watch().stream(
        list_call,
        namespace,
        field_selector=f"metadata.name={name}",
        resource_version=since,
        timeout_seconds=2,
    ):
        obj = event["raw_object"]
        seen.append(obj)
    return seen


def _custom_list(dra):
    def list_claims(namespace, **kwargs):
        return dra.list_namespaced_custom_object(
            GROUP, VERSION, namespace, "resourceclaims", **kwargs
        )

    return list_claims


def test_a_dra_pod_is_nominated_before_its_claim_is_allocated_and_ends_as_kube_leaves_it(
    core_v1, namespace, nodes, kubesched, dra, control_plane
):
    """kube-scheduler v1.37 (NominatedNodeNameForExpectation) writes the chosen node to the
    pod's status.nominatedNodeName before DynamicResources' PreBind writes the claim; the
    apiserver clears it on binding. kubesched does the same: the same pod versions, in the same
    order, from both schedulers."""
    suffix = uuid.uuid4().hex[:6]
    node = nodes(labels={LABEL: "true"}).metadata.name
    device_class = make_devices(
        dra, node, f"it-gpu-nnn-{suffix}", f"it-nnn-{node}-{suffix}", suffix,
        [{"name": "gpu-0"}, {"name": "gpu-1"}],
    )  # fmt: skip
    for name in ("ours-gpu", "theirs-gpu"):
        dra.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "resourceclaims", claim(name, device_class)
        )
    kubesched.wait_ready()
    profile = {"profiles": [{"schedulerName": REFERENCE}]}

    def nominations_then_binding(
        manifest: dict[str, Any], claim_name: str
    ) -> list[tuple[str, str]]:
        pod_name = manifest["metadata"]["name"]
        created = core_v1.list_namespaced_pod(namespace).metadata.resource_version
        core_v1.create_namespaced_pod(namespace, manifest)
        wait_for(
            lambda: core_v1.read_namespaced_pod(pod_name, namespace).spec.node_name,
            60,
            what=f"pod {pod_name} bound\n{kubesched.log.read_text()[-3000:]}",
        )
        pods = _history(core_v1.list_namespaced_pod, namespace, pod_name, created)
        claims = _history(_custom_list(dra), namespace, claim_name, created)
        allocated = min(
            int(c["metadata"]["resourceVersion"])
            for c in claims
            if (c.get("status") or {}).get("allocation")
        )
        nominated = [
            int(p["metadata"]["resourceVersion"])
            for p in pods
            if (p.get("status") or {}).get("nominatedNodeName") == node
        ]
        assert nominated and min(nominated) < allocated, (pods, claims)
        # (nominatedNodeName, nodeName) of each version of the pod, repeats folded.
        steps: list[tuple[str, str]] = []
        for p in pods:
            step = (
                (p.get("status") or {}).get("nominatedNodeName") or "",
                p["spec"].get("nodeName") or "",
            )
            if not steps or steps[-1] != step:
                steps.append(step)
        return steps

    kubesched_steps = nominations_then_binding(pod("ours", "ours-gpu"), "ours-gpu")
    with control_plane.start_reference_scheduler(profile):
        theirs = pod("theirs", "theirs-gpu")
        theirs["spec"]["schedulerName"] = REFERENCE
        reference_steps = nominations_then_binding(theirs, "theirs-gpu")

    assert reference_steps == [("", ""), (node, ""), ("", node)]
    assert kubesched_steps == reference_steps
    for name in ("ours", "theirs"):
        status = core_v1.read_namespaced_pod(name, namespace).status
        assert status.nominated_node_name is None
        scheduled = [c for c in status.conditions or () if c.type == "PodScheduled"]
        assert [(c.status, c.reason) for c in scheduled] == [("True", None)]
    for name in ("ours-gpu", "theirs-gpu"):
        dra.patch_namespaced_custom_object(
            GROUP, VERSION, namespace, "resourceclaims", name, {"metadata": {"finalizers": None}}
        )
