"""A small external provisioner for tests: what a CSI driver's external-provisioner does.

For every claim of a StorageClass whose ``provisioner`` is ours, once a scheduler annotated it
with ``volume.kubernetes.io/selected-node`` and while it has no volume, it creates a
PersistentVolume of the claim's size, access modes and class, pre-bound to the claim
(``claimRef`` with its UID) and reachable from the selected node's topology: the class's
``allowedTopologies`` keys with that node's values, else ``kubernetes.io/hostname``. The PV
controller (kube-controller-manager's persistentvolume-binder) then binds the claim to it. The
PVs are CSI volumes of a driver named as the provisioner (nothing attaches them: no kubelet).

    with TestProvisioner(admin_api_client, "provisioner.kubesched.test"):
        ...
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Self

from kubesched.api.storage import ANN_SELECTED_NODE

__all__ = ["TestProvisioner"]

log = logging.getLogger(__name__)
HOSTNAME = "kubernetes.io/hostname"


class TestProvisioner:
    """Polls claims and provisions as described above, on a thread of its own."""

    __test__ = False  # not a pytest test class

    def __init__(self, api_client: Any, name: str, interval: float = 0.2) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.storage = client.StorageV1Api(api_client)
        self.name = name
        self.interval = interval
        #: Claims provisioned so far, ``namespace/name`` -> PV name.
        self.provisioned: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="test-provisioner", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.provision_pending()
            except Exception:  # the API may be restarting; try again next round
                log.exception("test provisioner round failed")

    def provision_pending(self) -> list[str]:
        """One round: provision every claim waiting for us; returns the PVs made."""
        classes = {
            c.metadata.name: c
            for c in self.storage.list_storage_class().items
            if c.provisioner == self.name and c.metadata is not None
        }
        made = []
        for claim in self.core.list_persistent_volume_claim_for_all_namespaces().items:
            meta, spec = claim.metadata, claim.spec
            if meta is None or spec is None:
                continue
            key = f"{meta.namespace}/{meta.name}"
            node_name = (meta.annotations or {}).get(ANN_SELECTED_NODE)
            if (
                spec.storage_class_name not in classes
                or not node_name
                or spec.volume_name
                or key in self.provisioned
            ):
                continue
            node = self.core.read_node(node_name)
            pv = self._volume(claim, classes[spec.storage_class_name], node)
            self.core.create_persistent_volume(pv)  # type: ignore[arg-type]  # a raw manifest
            self.provisioned[key] = pv["metadata"]["name"]
            made.append(pv["metadata"]["name"])
        return made

    def _volume(self, claim: Any, storage_class: Any, node: Any) -> dict[str, Any]:
        labels = node.metadata.labels or {}
        keys = [
            expression.key
            for term in storage_class.allowed_topologies or ()
            for expression in term.match_label_expressions or ()
        ]
        pairs = [(k, labels[k]) for k in dict.fromkeys(keys) if k in labels]
        if not pairs:
            pairs = [(HOSTNAME, labels.get(HOSTNAME, node.metadata.name))]
        name = f"pvc-{claim.metadata.uid}"
        size = ((claim.spec.resources and claim.spec.resources.requests) or {}).get(
            "storage", "1Gi"
        )
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {
                "name": name,
                "annotations": {"pv.kubernetes.io/provisioned-by": self.name},
            },
            "spec": {
                "capacity": {"storage": size},
                "accessModes": list(claim.spec.access_modes or ["ReadWriteOnce"]),
                "storageClassName": storage_class.metadata.name,
                "persistentVolumeReclaimPolicy": storage_class.reclaim_policy or "Delete",
                "volumeMode": claim.spec.volume_mode or "Filesystem",
                "csi": {"driver": self.name, "volumeHandle": name},
                "claimRef": {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "namespace": claim.metadata.namespace,
                    "name": claim.metadata.name,
                    "uid": claim.metadata.uid,
                },
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": key, "operator": "In", "values": [value]}
                                    for key, value in pairs
                                ]
                            }
                        ]
                    }
                },
            },
        }
