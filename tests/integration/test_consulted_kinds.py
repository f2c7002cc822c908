"""Consulted kinds through a real kube-apiserver: the Kubernetes backend lists and watches the
kinds plugins ask for, hands their changes to the scheduler's handler with the kind, and sends a
plugin's writes (update with a resourceVersion, merge patch, status) only while it leads."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from kubesched import ObjectWriteError
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.transport import Transport


class Recorder:
    """An event handler that keeps what it was told, for consulted kinds too."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self._cond = threading.Condition()

    def _note(self, what: str, kind: str, obj: Any) -> None:
        with self._cond:
            self.seen.append((what, kind, obj["metadata"]["name"]))
            self._cond.notify_all()

    def wait_for(self, entry: tuple[str, str, str], timeout: float = 30) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: entry in self.seen, timeout), (entry, self.seen)

    def on_node_add(self, node: Any) -> None: ...
    def on_node_update(self, old: Any, new: Any) -> None: ...
    def on_node_delete(self, node: Any) -> None: ...
    def on_pod_add(self, pod: Any) -> None: ...
    def on_pod_update(self, old: Any, new: Any) -> None: ...
    def on_pod_delete(self, pod: Any) -> None: ...

    def on_object_add(self, kind: str, obj: Any) -> None:
        self._note("add", kind, obj)

    def on_object_update(self, kind: str, old: Any, new: Any) -> None:
        self._note("update", kind, new)

    def on_object_delete(self, kind: str, obj: Any) -> None:
        self._note("delete", kind, obj)


def eventually(check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def backend(admin_client):
    leading = threading.Event()
    leading.set()
    backend = KubernetesBackend(Transport(admin_client), can_bind=leading.is_set)
    backend.leading = leading  # type: ignore[attr-defined]
    yield backend
    backend.stop()


def test_claims_and_volumes_are_watched_and_written(backend, core_v1, namespace):
    claims = backend.lister("PersistentVolumeClaim")
    volumes = backend.lister("PersistentVolume")
    backend.lister("StorageClass")
    handler = Recorder()
    backend.start(handler, sync_timeout=30)

    name = f"pv-{uuid.uuid4().hex[:8]}"
    core_v1.create_persistent_volume(
        {
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/tmp/x"},
                "storageClassName": "manual",
            },
        }
    )
    core_v1.create_namespaced_persistent_volume_claim(
        namespace,
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "manual",
            },
        },
    )
    handler.wait_for(("add", "PersistentVolume", name))
    handler.wait_for(("add", "PersistentVolumeClaim", "data"))
    claim = next(c for c in claims() if c["metadata"]["namespace"] == namespace)
    pv = next(v for v in volumes() if v["metadata"]["name"] == name)

    # VolumeBinding's static binding: the PV's claimRef, compare-and-swap on its version.
    bound = {
        **pv,
        "spec": {
            **pv["spec"],
            "claimRef": {
                "kind": "PersistentVolumeClaim",
                "namespace": namespace,
                "name": "data",
                "uid": claim["metadata"]["uid"],
            },
        },
    }
    stored = backend.update_object("PersistentVolume", bound)
    assert stored["spec"]["claimRef"]["name"] == "data"
    handler.wait_for(("update", "PersistentVolume", name))
    with pytest.raises(ObjectWriteError) as stale:
        backend.update_object("PersistentVolume", bound)  # the version read before
    assert stale.value.conflict

    # Provisioning's selected-node annotation, as a merge patch; then a status write.
    backend.patch_object(
        "PersistentVolumeClaim",
        namespace,
        "data",
        {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "node-a"}}},
    )
    eventually(
        lambda: any(
            (c["metadata"].get("annotations") or {}).get("volume.kubernetes.io/selected-node")
            == "node-a"
            for c in claims()
            if c["metadata"]["namespace"] == namespace
        )
    )
    backend.patch_object(
        "PersistentVolume", "", name, {"status": {"phase": "Released"}}, subresource="status"
    )
    assert core_v1.read_persistent_volume(name).status.phase == "Released"

    # A deposed leader writes nothing.
    backend.leading.clear()
    with pytest.raises(ObjectWriteError) as refused:
        backend.patch_object(
            "PersistentVolumeClaim", namespace, "data", {"metadata": {"labels": {"x": "y"}}}
        )
    assert refused.value.status == 0
    assert not core_v1.read_namespaced_persistent_volume_claim("data", namespace).metadata.labels

    # Deletions arrive too (a StorageClass: PVs and claims carry protection finalizers).
    storage = client.StorageV1Api(core_v1.api_client)
    storage.create_storage_class({"metadata": {"name": name}, "provisioner": "example.com/x"})
    handler.wait_for(("add", "StorageClass", name))
    storage.delete_storage_class(name)
    handler.wait_for(("delete", "StorageClass", name))
