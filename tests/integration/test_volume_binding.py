"""Pods with WaitForFirstConsumer claims, scheduled by ``kubesched run`` under its own
least-privilege identity (deploy/manifests/rbac.yaml) against a real kube-apiserver, with the
real PV controller (kube-controller-manager running only persistentvolume-binder) and our test
provisioner standing in for a CSI driver's external-provisioner.

- Provisioning: the class allows only zone b; the pod lands on the zone-b node, the claim gets
  the selected-node annotation from kubesched's PreBind, the provisioner makes a PV there, the
  PV controller binds them, and only then is the pod bound (PreBind waited).
- Static binding: a local PV on node a; kubesched's PreBind writes its claimRef, the PV
  controller completes the binding, the pod is bound to node a.
"""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client
from kubesched_process import SA_GROUPS, SA_USER, KubeschedProcess, apply_rbac, wait_for

from kubesched.testing.controlplane import ControlPlaneUnavailable
from kubesched.testing.provisioner import TestProvisioner

PROVISIONER = "provisioner.kubesched.test"
ZONE = "topology.kubernetes.io/zone"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
podInitialBackoffSeconds: 0.5
podMaxBackoffSeconds: 2
profiles:
- schedulerName: custom-scheduler
"""


@pytest.fixture(scope="module")
def pv_controller(control_plane):
    try:
        manager = control_plane.start_controller_manager()
    except ControlPlaneUnavailable as exc:
        from conftest import unavailable

        unavailable(str(exc))
    yield manager
    manager.stop()


def claim(name: str, storage_class: str) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


def pod(name: str, claim_name: str) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "custom-scheduler",
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }


def test_wait_for_first_consumer_claims_end_bound_where_the_pod_runs(
    control_plane, admin_client, core_v1, namespace, nodes, pv_controller, tmp_path
):
    suffix = uuid.uuid4().hex[:6]
    node_a, node_b = f"vol-a-{suffix}", f"vol-b-{suffix}"
    nodes(node_a, labels={ZONE: f"zone-a-{suffix}"})
    nodes(node_b, labels={ZONE: f"zone-b-{suffix}"})
    storage = client.StorageV1Api(admin_client)
    provisioned, local = f"provisioned-{suffix}", f"local-{suffix}"
    storage.create_storage_class(
        {
            "metadata": {"name": provisioned},
            "provisioner": PROVISIONER,
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowedTopologies": [
                {"matchLabelExpressions": [{"key": ZONE, "values": [f"zone-b-{suffix}"]}]}
            ],
        }
    )
    storage.create_storage_class(
        {
            "metadata": {"name": local},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    static_pv = f"local-pv-{suffix}"
    core_v1.create_persistent_volume(
        {
            "metadata": {"name": static_pv},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": local,
                "local": {"path": "/mnt/disks/1"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": [node_a],
                                    }
                                ]
                            }
                        ]
                    }
                },
            },
        }
    )
    core_v1.create_namespaced_persistent_volume_claim(namespace, claim("fresh", provisioned))
    core_v1.create_namespaced_persistent_volume_claim(namespace, claim("static", local))
    apply_rbac(admin_client)
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    with TestProvisioner(admin_client, PROVISIONER) as provisioner:
        proc = KubeschedProcess(
            config, control_plane.kubeconfig_for(SA_USER, SA_GROUPS), tmp_path / "kubesched.log"
        )
        try:
            proc.wait_ready()
            core_v1.create_namespaced_pod(namespace, pod("web-0", "fresh"))
            core_v1.create_namespaced_pod(namespace, pod("web-1", "static"))

            def bound(name: str) -> str:
                return core_v1.read_namespaced_pod(name, namespace).spec.node_name or ""

            assert wait_for(lambda: bound("web-0"), 90, 0.5, "web-0 bound") == node_b
            assert wait_for(lambda: bound("web-1"), 90, 0.5, "web-1 bound") == node_a
        finally:
            code = proc.terminate()
        log = proc.log.read_text()
        assert code == 0, log[-3000:]

    fresh = core_v1.read_namespaced_persistent_volume_claim("fresh", namespace)
    assert fresh.metadata.annotations["volume.kubernetes.io/selected-node"] == node_b
    assert fresh.status.phase == "Bound"
    assert fresh.spec.volume_name == provisioner.provisioned[f"{namespace}/fresh"]
    made = core_v1.read_persistent_volume(fresh.spec.volume_name)
    (term,) = made.spec.node_affinity.required.node_selector_terms
    assert [(e.key, e.values) for e in term.match_expressions] == [(ZONE, [f"zone-b-{suffix}"])]

    static = core_v1.read_namespaced_persistent_volume_claim("static", namespace)
    assert static.status.phase == "Bound"
    assert static.spec.volume_name == static_pv
    volume = core_v1.read_persistent_volume(static_pv)
    assert volume.spec.claim_ref.name == "static"
    assert volume.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
