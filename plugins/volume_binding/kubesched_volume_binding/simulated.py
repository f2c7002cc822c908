"""What the PV controller and an external provisioner do after VolumeBinding's PreBind, for a
cluster that has neither: the in-memory one ``kubesched simulate`` runs.

Against a real cluster kube-controller-manager binds a claim to the PV whose ``claimRef`` the
scheduler set, and a provisioner creates a PV for a claim annotated with the selected node. In
memory nobody would, and PreBind would wait for ever; so on a ``synchronous`` backend the plugin
does their part itself, through the same backend writes, right after its own: the claim ends
``Bound`` to the PV (``pv.kubernetes.io/bind-completed``), a provisioned PV carries node affinity
for the chosen node's topology, and the next pod's cycle sees both.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched import Node
from kubesched.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    claim_class,
    meta,
    storage_request,
)

from .binder import LABEL_HOSTNAME

Obj = Mapping[str, Any]
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def _bind_claim(backend: Any, pvc: Obj, pv: Obj) -> None:
    """The PV controller's ``bind``: claim and volume point at each other, both ``Bound``."""
    current = _current(backend, "PersistentVolumeClaim", pvc)
    claim = copy.deepcopy(dict(current))
    claim_meta = claim.setdefault("metadata", {})
    annotations = claim_meta.setdefault("annotations", {})
    annotations[ANN_BIND_COMPLETED] = "yes"
    annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
    claim.setdefault("spec", {})["volumeName"] = meta(pv).get("name")
    stored = backend.update_object("PersistentVolumeClaim", claim)
    pv_spec = pv.get("spec") or {}
    stored = {
        **stored,
        "status": {
            "phase": "Bound",
            "accessModes": list(pv_spec.get("accessModes") or ()),
            "capacity": dict(pv_spec.get("capacity") or {}),
        },
    }
    backend.update_object("PersistentVolumeClaim", stored, subresource="status")
    volume = _current(backend, "PersistentVolume", pv)
    backend.update_object(
        "PersistentVolume", {**volume, "status": {"phase": "Bound"}}, subresource="status"
    )


def _current(backend: Any, kind: str, obj: Obj) -> Obj:
    key = (meta(obj).get("namespace"), meta(obj).get("name"))
    for item in backend.lister(kind)():
        if (meta(item).get("namespace"), meta(item).get("name")) == key:
            return item
    return obj


def complete_static_binding(backend: Any, pv: Obj, pvc: Obj) -> None:
    """After the scheduler wrote ``pv``'s claimRef: bind the claim to it."""
    _bind_claim(backend, pvc, pv)


def _topology(
    backend: Any, storage_class: Obj, provisioner: str, node: Node
) -> list[tuple[str, str]]:
    keys: list[str] = []
    for term in storage_class.get("allowedTopologies") or ():
        for expression in (term or {}).get("matchLabelExpressions") or ():
            if expression.get("key") not in keys:
                keys.append(expression["key"])
    for csi_node in backend.lister("CSINode")():
        if meta(csi_node).get("name") != node.name:
            continue
        for driver in (csi_node.get("spec") or {}).get("drivers") or ():
            if driver.get("name") == provisioner:
                keys.extend(k for k in driver.get("topologyKeys") or () if k not in keys)
    pairs = [(key, node.labels[key]) for key in keys if key in node.labels]
    return pairs or [(LABEL_HOSTNAME, node.labels.get(LABEL_HOSTNAME) or node.name)]


def provision(backend: Any, pvc: Obj, storage_class: Obj, node: Node) -> None:
    """An external provisioner's answer to a claim with a selected node: a PV of the claim's
    size, class and modes, reachable from that node's topology, bound to the claim."""
    m = meta(pvc)
    provisioner = str(storage_class.get("provisioner") or "")
    name = f"pvc-{m.get('uid') or (str(m.get('namespace')) + '-' + str(m.get('name')))}"
    spec = pvc.get("spec") or {}
    size = (((spec.get("resources") or {}).get("requests")) or {}).get("storage")
    if size is None and storage_request(pvc) is None:
        size = "1Gi"
    pv_spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "storageClassName": claim_class(pvc),
        "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "claimRef": {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid") or "",
        },
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": key, "operator": "In", "values": [value]}
                            for key, value in _topology(backend, storage_class, provisioner, node)
                        ]
                    }
                ]
            }
        },
    }
    if not provisioner.startswith("kubernetes.io/"):
        pv_spec["csi"] = {"driver": provisioner, "volumeHandle": name}
    pv = backend.create_object(
        "PersistentVolume",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_PROVISIONED_BY: provisioner}},
            "spec": pv_spec,
            "status": {"phase": "Bound"},
        },
    )
    _bind_claim(backend, pvc, pv)
