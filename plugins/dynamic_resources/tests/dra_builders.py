"""Builders for DRA objects as the API serves them (kube's allocator_testing.go helpers)."""

from __future__ import annotations

from typing import Any

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL_1, POOL_2 = "pool-1", "pool-2"
NODE_1, NODE_2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
REQ_0, REQ_1 = "req-0", "req-1"
DEVICE_1, DEVICE_2, DEVICE_3 = "device-1", "device-2", "device-3"


def device_class(name: str, driver: str, config: str = "") -> dict[str, Any]:
    """A class selecting the devices of ``driver`` (kube's ``class``/``classWithConfig``)."""
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = [device_config(driver, config)]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def device_config(driver: str, attribute: str) -> dict[str, Any]:
    return {"opaque": {"driver": driver, "parameters": {"kind": attribute}}}


def request(
    name: str, class_name: str, count: int = 1, *selectors: str, **fields: Any
) -> dict[str, Any]:
    exactly: dict[str, Any] = {
        "deviceClassName": class_name,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    exactly.update(fields)
    return {"name": name, "exactly": exactly}


def all_devices(name: str, class_name: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "exactly": {"deviceClassName": class_name, "allocationMode": "All", **fields},
    }


def sub_request(name: str, class_name: str, count: int = 1, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "deviceClassName": class_name,
        "allocationMode": "ExactCount",
        "count": count,
        **fields,
    }


def first_available(name: str, *subrequests: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subrequests)}


def claim(
    name: str,
    *requests: dict[str, Any],
    constraints: list[dict[str, Any]] | None = None,
    config: list[dict[str, Any]] | None = None,
    namespace: str = "default",
) -> dict[str, Any]:
    """A claim; with no requests, one for a device of class A (``claimWithRequest``)."""
    devices: dict[str, Any] = {"requests": list(requests) or [request(REQ_0, CLASS_A)]}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"devices": devices},
    }


def device(
    name: str,
    attributes: dict[str, Any] | None = None,
    capacity: dict[str, str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if attributes:
        out["attributes"] = attributes
    if capacity:
        out["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    out.update(fields)
    return out


def consumes(counter_set: str, **counters: str) -> list[dict[str, Any]]:
    return [{"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}]


def resource_slice(
    name: str,
    *devices: dict[str, Any],
    driver: str = DRIVER_A,
    pool: str = POOL_1,
    node: str | None = NODE_1,
    generation: int = 1,
    count: int = 1,
    **fields: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": list(devices),
    }
    if node is not None:
        spec["nodeName"] = node
    spec.update(fields)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def counter_slice(name: str, counter_set: str, node: str = NODE_1, **counters: str) -> dict:
    """A slice publishing one shared counter set (kube's ``sliceWithCounterSets``)."""
    out = resource_slice(name, node=node, count=2)
    out["spec"]["sharedCounters"] = [
        {"name": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}
    ]
    out["spec"].pop("devices")
    return out


def local_selector(node: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
        ]
    }


def result(
    request_name: str, driver: str, pool: str, device_name: str, admin: bool = False, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "request": request_name,
        "driver": driver,
        "pool": pool,
        "device": device_name,
    }
    if admin:
        out["adminAccess"] = True
    out.update(extra)
    return out


def allocation(selector: dict[str, Any] | None, *results: dict[str, Any], **devices: Any):
    out: dict[str, Any] = {"devices": {"results": list(results), **devices}}
    if selector is not None:
        out["nodeSelector"] = selector
    return out
