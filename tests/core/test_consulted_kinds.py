"""Objects plugins consult besides nodes and pods: read from manifests, written by plugins, and
their events moving the pods a plugin rejected.

- ``simulate``'s manifests keep every consulted kind (PersistentVolumes, claims, storage classes,
  CSINodes, CSIDrivers, CSIStorageCapacities, VolumeAttachments) instead of skipping them.
- The in-memory backend's writes take effect at once, with kube-apiserver's rules: a stale
  ``resourceVersion`` is a conflict, a status subresource keeps the object and the object keeps
  its status, a merge patch removes keys set to ``null``.
- A pod rejected for a missing claim is retried when the claim appears, whether a test adds it
  or a plugin writes it during the simulation; an unrelated kind's event leaves it waiting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    InMemoryBackend,
    ManifestError,
    ObjectWriteError,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.manifests import CONSULTED_KINDS, parse_cluster
from kubesched.backends.kube.backend import KIND_PATHS, object_path
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness

VOLUME_KINDS = (
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
)


def pvc(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": dict(spec),
    }


def pv(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": dict(spec),
        "status": {"phase": "Available"},
    }


def test_every_volume_kind_is_read_and_watched():
    for kind in VOLUME_KINDS:
        assert kind in CONSULTED_KINDS
        assert kind in KIND_PATHS
        assert EventResource.of_kind(kind) is EventResource(kind)
    # Kinds read but never waited for raise no events.
    assert EventResource.of_kind("Namespace") is None
    assert EventResource.of_kind("Node") is None


@pytest.mark.parametrize(
    ("kind", "namespace", "name", "sub", "path"),
    [
        ("PersistentVolume", "", "pv-1", "", "/api/v1/persistentvolumes/pv-1"),
        (
            "PersistentVolumeClaim",
            "ns",
            "data",
            "",
            "/api/v1/namespaces/ns/persistentvolumeclaims/data",
        ),
        (
            "PersistentVolumeClaim",
            "ns",
            "data",
            "status",
            "/api/v1/namespaces/ns/persistentvolumeclaims/data/status",
        ),
        (
            "CSIStorageCapacity",
            "kube-system",
            "",
            "",
            "/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities",
        ),
        ("CSINode", "", "node-a", "", "/apis/storage.k8s.io/v1/csinodes/node-a"),
    ],
)
def test_object_paths(kind, namespace, name, sub, path):
    assert object_path(kind, namespace, name, sub) == path


def test_manifests_keep_volume_objects_without_warnings():
    text = "\n---\n".join(
        f"apiVersion: v1\nkind: {kind}\nmetadata: {{name: x-{i}}}"
        for i, kind in enumerate(VOLUME_KINDS)
    )
    cluster = parse_cluster(text)
    assert cluster.warnings == []
    assert sorted(cluster.objects) == sorted(VOLUME_KINDS)


def test_in_memory_writes_follow_the_apiservers_rules():
    backend = InMemoryBackend(objects={"PersistentVolume": [pv("pv-1")]})
    listed = backend.lister("PersistentVolume")
    first = listed()[0]
    rv = first["metadata"].get("resourceVersion")

    bound = {**first, "spec": {"claimRef": {"namespace": "default", "name": "data"}}}
    bound["status"] = {"phase": "Bound"}  # ignored: status is a subresource
    stored = backend.update_object("PersistentVolume", bound)
    assert listed()[0]["spec"]["claimRef"]["name"] == "data"
    assert listed()[0]["status"] == {"phase": "Available"}
    assert stored["metadata"]["resourceVersion"] != rv

    # The version read before the update is stale now.
    with pytest.raises(ObjectWriteError) as conflict:
        backend.update_object(
            "PersistentVolume",
            {**first, "metadata": {**first["metadata"], "resourceVersion": "0"}},
        )
    assert conflict.value.conflict

    backend.update_object(
        "PersistentVolume", {**stored, "status": {"phase": "Bound"}}, subresource="status"
    )
    assert listed()[0]["status"] == {"phase": "Bound"}
    assert listed()[0]["spec"]["claimRef"]["name"] == "data"

    patched = backend.patch_object(
        "PersistentVolume",
        "",
        "pv-1",
        {"metadata": {"annotations": {"a": "1"}}, "spec": {"claimRef": None}},
    )
    assert patched["metadata"]["annotations"] == {"a": "1"}
    assert "claimRef" not in patched["spec"]

    with pytest.raises(ObjectWriteError) as missing:
        backend.patch_object("PersistentVolume", "", "pv-2", {"spec": {}})
    assert missing.value.not_found
    backend.create_object("PersistentVolume", pv("pv-2"))
    with pytest.raises(ObjectWriteError) as exists:
        backend.create_object("PersistentVolume", pv("pv-2"))
    assert exists.value.conflict
    assert [o["metadata"]["name"] for o in listed()] == ["pv-1", "pv-2"]
    assert backend.delete_object("PersistentVolume", "", "pv-2")
    assert not backend.delete_object("PersistentVolume", "", "pv-2")


def test_in_memory_writes_find_each_object_after_creates_deletes_and_lists_set_from_outside():
    """Writes find an object by key through an index: it must follow creates, deletes (which
    move later objects up), and a list assigned or grown by a test behind the backend."""
    backend = InMemoryBackend(objects={"PersistentVolume": [pv(f"pv-{i}") for i in range(5)]})

    def labels(name: str) -> dict:
        return backend.patch_object(
            "PersistentVolume", "", name, {"metadata": {"labels": {"at": name}}}
        )["metadata"]["labels"]

    assert labels("pv-3") == {"at": "pv-3"}
    assert backend.delete_object("PersistentVolume", "", "pv-1")
    assert labels("pv-4") == {"at": "pv-4"}  # moved up one place by the deletion
    backend.create_object("PersistentVolume", pv("pv-9"))
    assert labels("pv-9") == {"at": "pv-9"}
    backend.objects["PersistentVolume"].append(pv("pv-7"))  # grown behind the backend
    assert labels("pv-7") == {"at": "pv-7"}
    backend.objects["PersistentVolume"] = [pv("pv-8")]  # replaced behind the backend
    assert labels("pv-8") == {"at": "pv-8"}
    with pytest.raises(ObjectWriteError) as missing:
        labels("pv-3")
    assert missing.value.not_found
    names = [o["metadata"]["name"] for o in backend.lister("PersistentVolume")()]
    assert names == ["pv-8"]


CLAIM_NOT_FOUND = 'persistentvolumeclaim "{}" not found'


class NeedsClaims:
    """Rejects a pod until every claim it names exists (VolumeBinding's first check)."""

    name = "NeedsClaims"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.claims = handle.lister("PersistentVolumeClaim")

    def _missing(self, pod: Pod) -> list[str]:
        have = {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in self.claims()}
        wanted = [
            v["persistentVolumeClaim"]["claimName"]
            for v in pod.raw["spec"].get("volumes") or ()
            if "persistentVolumeClaim" in v
        ]
        return [name for name in wanted if (pod.namespace, name) not in have]

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        missing = self._missing(pod)
        if missing:
            return Status.unresolvable(CLAIM_NOT_FOUND.format(missing[0]))
        return None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        def claim_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
            if new["metadata"]["namespace"] == pod.namespace:
                return QueueingHint.QUEUE
            return QueueingHint.SKIP

        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), claim_added
            )
        ]


class WritesClaim:
    """PreBind creates the claim ``data`` in the pod's namespace (as a plugin's write would)."""

    name = "WritesClaim"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.backend = handle.backend

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if pod.name == "writer":
            self.backend.create_object("PersistentVolumeClaim", pvc("data", pod.namespace))
        return None


def claim_pod(name: str, claim: str = "data") -> Pod:
    return make_pod(name).pvc(claim).obj()


def test_a_claim_added_later_wakes_the_pod_waiting_for_it():
    with Harness.for_plugin(NeedsClaims, nodes=[make_node("n1")]) as h:
        report = h.schedule(claim_pod("p"))
        assert CLAIM_NOT_FOUND.format("data") in report.message
        # An unrelated kind, and a claim in another namespace, leave it waiting.
        h.add_object("StorageClass", {"kind": "StorageClass", "metadata": {"name": "sc"}})
        h.add_object("PersistentVolumeClaim", pvc("data", "other"))
        h.run()
        assert h.node_of("p") is None
        assert len(h.reports("default/p")) == 1
        h.add_object("PersistentVolumeClaim", pvc("data"))
        h.run()
        assert h.node_of("p") == "n1"


def test_a_plugins_write_during_a_simulation_is_seen_by_the_next_pod():
    profile = {
        "plugins": {
            "preFilter": {"enabled": [{"name": "NeedsClaims"}]},
            "preBind": {"enabled": [{"name": "WritesClaim"}]},
        }
    }
    plugins = {"NeedsClaims": NeedsClaims, "WritesClaim": WritesClaim}
    with Harness(plugins, profile, nodes=[make_node("n1")]) as h:
        h.schedule(claim_pod("reader"))
        assert h.node_of("reader") is None
        writer = make_pod("writer").obj()
        h.schedule(writer)
        h.run()
        assert h.node_of("writer") == "n1"
        assert h.node_of("reader") == "n1"
        assert h.backend.object_writes == 1


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            "kind: PersistentVolumeClaim\nmetadata: {name: bad, namespace: ns}\n"
            "spec: {resources: {requests: {storage: lots}}}",
            "document 1: PersistentVolumeClaim ns/bad: spec.resources.requests.storage: "
            "invalid quantity 'lots'",
            id="claim request",
        ),
        pytest.param(
            "kind: PersistentVolume\nmetadata: {name: pv}\nspec: {capacity: {storage: 1Qi}}",
            "document 1: PersistentVolume pv: spec.capacity.storage: invalid quantity '1Qi'",
            id="volume capacity",
        ),
        pytest.param(
            "kind: StorageClass\nmetadata: {}\nprovisioner: x",
            "document 1: StorageClass ?: metadata.name: Required value",
            id="nameless class",
        ),
    ],
)
def test_volume_objects_the_apiserver_would_refuse_fail_the_file(document, message):
    with pytest.raises(ManifestError) as caught:
        parse_cluster(document, "cluster.yaml")
    assert str(caught.value).startswith(f"cluster.yaml: {message}")
