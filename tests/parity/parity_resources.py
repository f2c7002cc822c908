"""Storage and devices for the generated scenarios: what VolumeBinding, VolumeZone,
VolumeRestrictions, NodeVolumeLimits and DynamicResources read.

:func:`add_storage` and :func:`add_devices` take a generated :class:`~parity_scenarios.Scenario`
and return it with objects of their own (created before the nodes) and pods that use them. Each
draws from a random generator of its own, so the rest of a scenario is what it was before
storage and devices existed.

Storage: StorageClasses (``Immediate``; ``WaitForFirstConsumer`` with static volumes only, with
provisioning, with provisioning limited by ``allowedTopologies`` and by ``CSIStorageCapacity``),
static PersistentVolumes (hostname or zone node affinity, zone labels, access modes including
``ReadWriteOncePod``), claims bound to a volume (pre-bound: the PV controller completes them),
unbound claims of every class, claims no one created, CSINodes with attach limits, and pods
(bound or to schedule) mounting them; generic ephemeral volumes now and then, whose claim no
controller creates. Devices: ResourceSlices of two drivers, one pool per driver and node, with
attributes and capacities; ResourceClaims (counts, ``All``, CEL selectors, ``matchAttribute``
across drivers, ``firstAvailable``, an unknown class) named by the pods, sometimes shared.

Cluster-scoped objects of a scenario (classes, volumes, slices) have logical names that
:func:`parity_scenarios.renamed` prefixes like node names; :data:`CLUSTER_OBJECTS` (the CSI
drivers and device classes) are created once per cluster.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from parity_scenarios import HOSTNAME_LABEL, OWN_NAMESPACE, ZONE, Scenario

__all__ = [
    "CAPACITY_DRIVER",
    "CLUSTER_OBJECTS",
    "CLUSTER_SCOPED_KINDS",
    "GPU_DRIVER",
    "LOCAL_DRIVER",
    "NIC_DRIVER",
    "PROVISIONERS",
    "add_devices",
    "add_storage",
    "pod_claims",
]

#: CSI drivers: volumes of the first are provisioned anywhere (within a class's allowed
#: topologies); the second publishes CSIStorageCapacity (its CSIDriver says so).
LOCAL_DRIVER = "local.csi.parity.test"
CAPACITY_DRIVER = "capacity.csi.parity.test"
#: The drivers the test provisioner serves (one provisioner each).
PROVISIONERS = (LOCAL_DRIVER, CAPACITY_DRIVER)
NO_PROVISIONER = "kubernetes.io/no-provisioner"
#: DRA drivers; ``NUMA`` is an attribute both publish under one qualified name.
GPU_DRIVER = "gpu.parity.test"
NIC_DRIVER = "nic.parity.test"
NUMA = "parity.test/numa"
CLASS_GPU, CLASS_BIG_GPU, CLASS_NIC = "parity-gpu", "parity-gpu-big", "parity-nic"
_RESOURCE = "resource.k8s.io/v1"


def _device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": _RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


#: Created once per cluster (they hold no state of a run): the CSIDriver of the capacity
#: driver and the device classes.
CLUSTER_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": CAPACITY_DRIVER},
        "spec": {"attachRequired": True, "storageCapacity": True},
    },
    _device_class(CLASS_GPU, f'device.driver == "{GPU_DRIVER}"'),
    _device_class(
        CLASS_BIG_GPU,
        f'device.driver == "{GPU_DRIVER}"',
        f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("16Gi")) >= 0',
    ),
    _device_class(CLASS_NIC, f'device.driver == "{NIC_DRIVER}"'),
]
#: Kinds of a scenario's objects that are cluster-scoped: named per run, labelled with the
#: run, deleted by label after it.
CLUSTER_SCOPED_KINDS = ("StorageClass", "PersistentVolume", "CSINode", "ResourceSlice")

# -- storage --------------------------------------------------------------------------------------

SC_IMMEDIATE = "sc-immediate"
SC_STATIC = "sc-static"  # WaitForFirstConsumer, static volumes only
SC_WFFC = "sc-wffc"  # WaitForFirstConsumer, provisioned anywhere, or a static volume
SC_ZONAL = "sc-zonal"  # WaitForFirstConsumer, provisioned in some zones only
SC_CAPACITY = "sc-capacity"  # WaitForFirstConsumer, provisioned where capacity is published
ZONES = ["zone-a", "zone-b", "zone-c"]
PV_SIZES = ["1Gi", "2Gi", "5Gi", "10Gi"]
CLAIM_SIZES = ["1Gi", "1Gi", "2Gi", "5Gi", "20Gi"]
CAPACITIES = ["1Gi", "4Gi", "50Gi"]
RWO, RWOP, RWX = "ReadWriteOnce", "ReadWriteOncePod", "ReadWriteMany"


def _storage_class(name: str, rng: random.Random) -> dict[str, Any]:
    sc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": LOCAL_DRIVER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Retain",
    }
    if name == SC_IMMEDIATE:
        sc["volumeBindingMode"] = "Immediate"
    elif name == SC_STATIC:
        sc["provisioner"] = NO_PROVISIONER
    elif name == SC_ZONAL:
        zones = sorted(rng.sample(ZONES, rng.choice([1, 2])))
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": ZONE, "values": zones}]}]
    elif name == SC_CAPACITY:
        sc["provisioner"] = CAPACITY_DRIVER
    return sc


def _affinity(key: str, value: str) -> dict[str, Any]:
    return {
        "required": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
            ]
        }
    }


def _volume(
    rng: random.Random, name: str, class_name: str, nodes: list[dict[str, Any]]
) -> dict[str, Any]:
    """A static CSI volume reachable from one node, or from one zone (labelled with it)."""
    node = rng.choice(nodes)
    labels = node["metadata"].get("labels") or {}
    spec: dict[str, Any] = {
        "capacity": {"storage": rng.choice(PV_SIZES)},
        "accessModes": [rng.choice([RWO, RWO, RWO, RWOP, RWX])],
        "storageClassName": class_name,
        "persistentVolumeReclaimPolicy": "Retain",
        "csi": {"driver": LOCAL_DRIVER, "volumeHandle": name},
    }
    metadata: dict[str, Any] = {"name": name}
    zone = labels.get(ZONE) if rng.random() < 0.8 else None
    if rng.random() < 0.4:
        zone = zone or rng.choice(ZONES)
        spec["nodeAffinity"] = _affinity(ZONE, zone)
    elif rng.random() < 0.9:
        spec["nodeAffinity"] = _affinity(HOSTNAME_LABEL, node["metadata"]["name"])
    if zone and rng.random() < 0.7:
        # VolumeZone reads these; now and then a zone other than the affinity's.
        metadata["labels"] = {ZONE: zone if rng.random() < 0.8 else rng.choice(ZONES)}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": metadata, "spec": spec}


def _claim(name: str, class_name: str, size: str, mode: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": [mode],
            "storageClassName": class_name,
            "resources": {"requests": {"storage": size}},
        },
    }


def _csi_node(rng: random.Random, node: str) -> dict[str, Any]:
    drivers: list[dict[str, Any]] = [{"name": LOCAL_DRIVER, "nodeID": node}]
    if rng.random() < 0.7:
        drivers[0]["allocatable"] = {"count": rng.choice([1, 1, 2, 3])}
    if rng.random() < 0.5:
        driver: dict[str, Any] = {"name": CAPACITY_DRIVER, "nodeID": node}
        if rng.random() < 0.5:
            driver["allocatable"] = {"count": rng.choice([1, 2])}
        drivers.append(driver)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": node},
        "spec": {"drivers": drivers},
    }


def _capacity(rng: random.Random, index: int, zone: str) -> dict[str, Any]:
    capacity: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": f"capacity-{index}"},
        "storageClassName": SC_CAPACITY,
        "nodeTopology": {"matchLabels": {ZONE: zone}},
        "capacity": rng.choice(CAPACITIES),
    }
    if rng.random() < 0.3:
        capacity["maximumVolumeSize"] = rng.choice(["2Gi", "10Gi"])
    return capacity


def _mount(pod: dict[str, Any], volume: dict[str, Any]) -> None:
    spec = pod["spec"]
    volumes = spec.setdefault("volumes", [])
    volume = {"name": f"vol-{len(volumes)}", **volume}
    volumes.append(volume)
    spec["containers"][0].setdefault("volumeMounts", []).append(
        {"name": volume["name"], "mountPath": f"/data/{volume['name']}"}
    )


def add_storage(scenario: Scenario, seed: int, index: int) -> Scenario:
    """``scenario`` with storage in a third of the scenarios (see the module docstring)."""
    rng = random.Random(f"kubesched-parity-storage:{seed}:{index}")
    if rng.random() >= 0.35:
        return scenario
    nodes = scenario.nodes
    classes = [SC_IMMEDIATE, SC_STATIC, SC_WFFC, SC_ZONAL, SC_CAPACITY]
    objects: list[dict[str, Any]] = [_storage_class(name, rng) for name in classes]
    volumes = [
        _volume(rng, f"pv-{i}", rng.choice([SC_STATIC, SC_STATIC, SC_WFFC]), nodes)
        for i in range(rng.choice([0, 1, 2, 3, 4]))
    ]
    claims: list[dict[str, Any]] = []
    bound_pods = [_copy(p) for p in scenario.bound_pods]
    # Claims bound to a volume of their own (pre-bound: the PV controller completes the bind),
    # mounted by a bound pod now and then (then the volume is where that pod runs).
    for i in range(rng.choice([0, 1, 1, 2])):
        name = f"bound-claim-{i}"
        mode = rng.choice([RWO, RWO, RWOP])
        volume = _volume(rng, f"pv-bound-{i}", SC_IMMEDIATE, nodes)
        volume["spec"]["accessModes"] = [mode]
        volume["spec"]["claimRef"] = {"namespace": OWN_NAMESPACE, "name": name}
        users = [p for p in bound_pods if not p["metadata"].get("namespace")]
        if users and rng.random() < 0.5:
            user = rng.choice(users)
            volume["spec"]["nodeAffinity"] = _affinity(HOSTNAME_LABEL, user["spec"]["nodeName"])
            _mount(user, {"persistentVolumeClaim": {"claimName": name}})
        claim = _claim(name, SC_IMMEDIATE, volume["spec"]["capacity"]["storage"], mode)
        claim["spec"]["volumeName"] = volume["metadata"]["name"]
        volumes.append(volume)
        claims.append(claim)
    for i in range(rng.choice([1, 2, 3, 4])):
        class_name = rng.choice([SC_STATIC, SC_WFFC, SC_WFFC, SC_ZONAL, SC_CAPACITY])
        mode = rng.choice([RWO, RWO, RWO, RWOP, RWX])
        claims.append(_claim(f"claim-{i}", class_name, rng.choice(CLAIM_SIZES), mode))
    if rng.random() < 0.15:
        claims.append(_claim("immediate-claim", SC_IMMEDIATE, "1Gi", RWO))  # never bound
    names = [c["metadata"]["name"] for c in claims]
    if rng.random() < 0.08:
        names.append("missing-claim")  # no such claim
    objects += volumes + claims
    objects += [_csi_node(rng, n["metadata"]["name"]) for n in nodes if rng.random() < 0.6]
    zones = sorted({n["metadata"].get("labels", {}).get(ZONE) for n in nodes} - {None})
    objects += [_capacity(rng, i, z) for i, z in enumerate(zones) if rng.random() < 0.7]
    pods = [_copy(p) for p in scenario.pods]
    for pod in pods:
        if rng.random() < 0.6:
            for name in rng.sample(names, min(len(names), rng.choice([1, 1, 2]))):
                _mount(pod, {"persistentVolumeClaim": {"claimName": name}})
        if rng.random() < 0.05:
            template = {"spec": _claim("", SC_WFFC, "1Gi", RWO)["spec"]}
            _mount(pod, {"ephemeral": {"volumeClaimTemplate": template}})
    return replace(
        scenario, objects=[*scenario.objects, *objects], bound_pods=bound_pods, pods=pods
    )


# -- devices --------------------------------------------------------------------------------------


def _slice(rng: random.Random, node: str, driver: str) -> dict[str, Any]:
    """One pool per driver and node (named after the node), in one slice."""
    devices = []
    for i in range(rng.choice([1, 1, 2, 3, 4]) if driver == GPU_DRIVER else rng.choice([1, 2])):
        attributes: dict[str, Any] = {NUMA: {"int": rng.choice([0, 1])}}
        capacity: dict[str, Any] = {}
        if driver == GPU_DRIVER:
            attributes["model"] = {"string": rng.choice(["small", "big"])}
            capacity["memory"] = {"value": rng.choice(["8Gi", "16Gi", "40Gi"])}
        else:
            attributes["speed"] = {"int": rng.choice([10, 100])}
        device: dict[str, Any] = {"name": f"{driver.split('.')[0]}-{i}", "attributes": attributes}
        if capacity:
            device["capacity"] = capacity
        devices.append(device)
    return {
        "apiVersion": _RESOURCE,
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver.split('.')[0]}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def _request(rng: random.Random, name: str) -> dict[str, Any]:
    shape = rng.random()
    if shape < 0.15:
        return {
            "name": name,
            "firstAvailable": [
                {
                    "name": "big",
                    "deviceClassName": CLASS_GPU,
                    "selectors": [
                        {"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "big"'}}
                    ],
                },
                {"name": "any", "deviceClassName": CLASS_GPU, "count": rng.choice([1, 2])},
            ],
        }
    exactly: dict[str, Any] = {"deviceClassName": CLASS_GPU}
    if shape < 0.25:
        exactly["deviceClassName"] = CLASS_BIG_GPU
    elif shape < 0.33:
        exactly["allocationMode"] = "All"
    elif shape < 0.36:
        exactly["deviceClassName"] = "parity-absent"
    else:
        exactly["count"] = rng.choice([1, 1, 2, 3])
        if rng.random() < 0.3:
            model = rng.choice(["small", "big"])
            expression = f'device.attributes["{GPU_DRIVER}"].model == "{model}"'
            exactly["selectors"] = [{"cel": {"expression": expression}}]
    return {"name": name, "exactly": exactly}


def _resource_claim(rng: random.Random, name: str) -> dict[str, Any]:
    requests = [_request(rng, "gpu")]
    devices: dict[str, Any] = {"requests": requests}
    if rng.random() < 0.3:
        requests.append({"name": "nic", "exactly": {"deviceClassName": CLASS_NIC}})
        if rng.random() < 0.6 and "exactly" in requests[0]:
            devices["constraints"] = [{"requests": ["gpu", "nic"], "matchAttribute": NUMA}]
    return {
        "apiVersion": _RESOURCE,
        "kind": "ResourceClaim",
        "metadata": {"name": name},
        "spec": {"devices": devices},
    }


def add_devices(scenario: Scenario, seed: int, index: int) -> Scenario:
    """``scenario`` with devices in a quarter of the scenarios (see the module docstring)."""
    rng = random.Random(f"kubesched-parity-devices:{seed}:{index}")
    if rng.random() >= 0.25:
        return scenario
    objects: list[dict[str, Any]] = []
    for node in scenario.node_names:
        if rng.random() < 0.7:
            objects.append(_slice(rng, node, GPU_DRIVER))
        if rng.random() < 0.4:
            objects.append(_slice(rng, node, NIC_DRIVER))
    shared = [_resource_claim(rng, f"shared-claim-{i}") for i in range(rng.choice([0, 0, 1]))]
    objects += shared
    pods = [_copy(p) for p in scenario.pods]
    for pod in pods:
        if rng.random() >= 0.6:
            continue
        if shared and rng.random() < 0.3:
            entry = {"resourceClaimName": shared[0]["metadata"]["name"]}
        elif rng.random() < 0.35:
            # The resourceclaim controller makes the pod's claim from the template.
            template = _resource_claim(rng, f"{pod['metadata']['name']}-template")
            template["kind"] = "ResourceClaimTemplate"
            template["spec"] = {"spec": template["spec"]}
            objects.append(template)
            entry = {"resourceClaimTemplateName": template["metadata"]["name"]}
        else:
            claim = _resource_claim(rng, f"{pod['metadata']['name']}-claim")
            objects.append(claim)
            entry = {"resourceClaimName": claim["metadata"]["name"]}
        pod["spec"]["resourceClaims"] = [{"name": "devices", **entry}]
        resources = pod["spec"]["containers"][0].setdefault("resources", {})
        resources["claims"] = [{"name": "devices"}]
    return replace(scenario, objects=[*scenario.objects, *objects], pods=pods)


def pod_claims(pod: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The claims a pod names: PersistentVolumeClaims (with generic ephemeral volumes' generated
    names) and ResourceClaims (those made from a template as its status names them, once the
    resourceclaim controller wrote it)."""
    spec = pod.get("spec") or {}
    volumes = []
    for volume in spec.get("volumes") or ():
        if "persistentVolumeClaim" in volume:
            volumes.append(volume["persistentVolumeClaim"]["claimName"])
        elif "ephemeral" in volume:
            volumes.append(f"{pod['metadata']['name']}-{volume['name']}")
    generated = {
        s["name"]: s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    devices = [
        name
        for c in spec.get("resourceClaims") or ()
        if (name := c.get("resourceClaimName") or generated.get(c["name"]))
    ]
    return volumes, devices


def _copy(manifest: dict[str, Any]) -> dict[str, Any]:
    import copy

    return copy.deepcopy(manifest)
