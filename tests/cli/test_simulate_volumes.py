"""``kubesched simulate`` with the default profile on a cluster snapshot holding storage: a pod
follows its claim's local PV, a pod whose claim does not exist waits with kube's message, a
StatefulSet's WaitForFirstConsumer claims take one static PV each (the last one is provisioned
in its node's zone), and no "default plugins not installed" warning is printed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import yaml

from kubesched.cli import main
from kubesched.testing.builders import make_node, make_pod

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def pv(name: str, node: str, claim: str = "", sc: str = "local") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": sc,
        "local": {"path": "/mnt/disk"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": HOST, "operator": "In", "values": [node]}]}
                ]
            }
        },
    }
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    phase = "Bound" if claim else "Available"
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"phase": phase},
    }


def pvc(name: str, sc: str = "local", volume: str = "") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": sc,
            "resources": {"requests": {"storage": "5Gi"}},
        },
        "status": {"phase": "Pending"},
    }
    if volume:
        obj["spec"]["volumeName"] = volume
        obj["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        obj["status"]["phase"] = "Bound"
    return obj


def classes() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "zonal"},
            "provisioner": "zonal.csi.example.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
    ]


def node(name: str, zone: str) -> dict[str, Any]:
    return make_node(name).label(HOST, name).zone(zone).manifest()


def simulate(tmp_path: Path, objects: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", str(path), "-o", "json"], out, err) == 0, err.getvalue()
    result = json.loads(out.getvalue())
    return {p["name"]: p for p in result["pods"]}, err.getvalue()


def test_pods_follow_their_volumes_and_wait_for_missing_claims(tmp_path: Path) -> None:
    objects = [
        *classes(),
        node("node-a", "a"),
        node("node-b", "b"),
        pv("pv-data", "node-a", claim="data"),
        pvc("data", volume="pv-data"),
        make_pod("db").pvc("data").manifest(),
        make_pod("orphan").pvc("nowhere").manifest(),
    ]
    pods, err = simulate(tmp_path, objects)
    assert pods["db"]["node"] == "node-a"
    assert pods["orphan"]["node"] is None
    assert 'persistentvolumeclaim "nowhere" not found' in pods["orphan"]["message"]
    assert "not installed" not in err
    assert "skipping PersistentVolume" not in err


def test_a_statefulsets_claims_take_static_pvs_then_get_provisioned(tmp_path: Path) -> None:
    objects = [
        *classes(),
        node("node-a", "a"),
        node("node-b", "b"),
        pv("local-a", "node-a"),
        pv("local-b", "node-b"),
        *(pvc(f"data-web-{i}") for i in range(2)),
        pvc("data-web-2", sc="zonal"),
        *(make_pod(f"web-{i}").pvc(f"data-web-{i}").manifest() for i in range(3)),
    ]
    pods, _ = simulate(tmp_path, objects)
    assert {pods["web-0"]["node"], pods["web-1"]["node"]} == {"node-a", "node-b"}
    assert pods["web-2"]["node"] in ("node-a", "node-b")
