"""Light, read-only views of Pods and Nodes, parsed once from their JSON.

The official client's models cost ~100x a ``json.loads`` per object (see docs/design.md), and the
scheduler reads only a few fields, so the core parses raw manifests into these ``__slots__``
classes. The original mapping stays available as ``raw`` for plugins that need more.

A malformed object raises :class:`ObjectError` naming the object and the field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .quantity import InvalidQuantity, to_int, to_milli

__all__ = [
    "CPU",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "Container",
    "ContainerPort",
    "Node",
    "ObjectError",
    "Pod",
    "Taint",
    "Toleration",
    "parse_resource_list",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


class ObjectError(ValueError):
    """A Pod or Node that cannot be read: names its kind, namespace/name and the field path."""

    def __init__(self, kind: str, name: str, field: str, problem: str) -> None:
        self.kind, self.name, self.field, self.problem = kind, name, field, problem
        where = f"{kind} {name}" if name else kind
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")


def parse_resource_list(values: Mapping[str, Any] | None, field: str) -> dict[str, int]:
    """Requests/allocatable as integers: cpu in millicores, everything else rounded up.

    Raises ``ValueError`` with ``field.<resource>: …`` so the caller can name the object.
    """
    out: dict[str, int] = {}
    if not values:
        return out
    if not isinstance(values, Mapping):
        raise ValueError(f"{field}: expected a mapping of resource name to quantity")
    for name, quantity in values.items():
        try:
            value = to_milli(quantity) if name == CPU else to_int(quantity)
        except InvalidQuantity as exc:
            raise ValueError(f"{field}.{name}: {exc}") from None
        if value < 0:  # the apiserver's rule: a negative amount would make room that is not there
            raise ValueError(f"{field}.{name}: {quantity!r} must be greater than or equal to 0")
        out[name] = value
    return out


def _string(data: Mapping[str, Any], key: str, field: str) -> str:
    """``data[key]`` when it is a string, ``""`` when absent or null; ValueError otherwise (a
    list or a number where the API has a string would break the cache's keys later)."""
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{field}: {value!r} is not a string")
    return value


def _name(kind: str, meta: Any) -> str:
    """``metadata.name`` of a Pod or Node, checked before anything else so errors can name it."""
    if not isinstance(meta, Mapping):
        raise ObjectError(kind, "", "metadata", "expected a mapping with a name")
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        raise ObjectError(kind, "", "metadata.name", f"{name!r} is not a string")
    return name or ""


def _labels(meta: Mapping[str, Any], field: str) -> dict[str, str]:
    labels = meta.get(field) or {}
    if not isinstance(labels, Mapping):
        raise ValueError(f"metadata.{field}: expected a mapping of strings")
    for key, value in labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"metadata.{field}.{key}: value {value!r} must be a string")
    return dict(labels)


class Taint:
    """``spec.taints[]`` of a Node."""

    __slots__ = ("effect", "key", "value")

    def __init__(self, key: str, value: str = "", effect: str = "NoSchedule") -> None:
        self.key, self.value, self.effect = key, value, effect

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Taint:
        return cls(data.get("key", ""), data.get("value") or "", data.get("effect", ""))

    def __repr__(self) -> str:
        return f"Taint({self.key}={self.value}:{self.effect})"


class Toleration:
    """``spec.tolerations[]`` of a Pod, with kube's matching rules (``ToleratesTaint``)."""

    __slots__ = ("effect", "key", "operator", "value")

    def __init__(self, key: str = "", operator: str = "Equal", value: str = "", effect: str = ""):
        self.key, self.operator, self.value, self.effect = key, operator or "Equal", value, effect

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Toleration:
        return cls(
            data.get("key") or "",
            data.get("operator") or "Equal",
            data.get("value") or "",
            data.get("effect") or "",
        )

    def tolerates(self, taint: Taint) -> bool:
        """Whether this toleration tolerates ``taint`` (empty effect/key match all)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator == "Equal":
            return self.value == taint.value
        return False


def _port_number(value: Any, field: str) -> int:
    """An int (or a numeric string, as YAML may give) in 1..65535; the field path otherwise."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.isdigit():
        number = int(value)
    if number is None or not 0 < number < 65536:
        raise ValueError(f"{field}: {value!r} is not a port number (1-65535)")
    return number


class ContainerPort:
    """A ``hostPort`` a container asks for (only ports with a hostPort matter to scheduling)."""

    __slots__ = ("host_ip", "host_port", "protocol")

    def __init__(self, host_port: int, protocol: str = "TCP", host_ip: str = "0.0.0.0") -> None:
        self.host_port, self.protocol, self.host_ip = host_port, protocol, host_ip


class Container:
    """The parts of a container the scheduler reads."""

    __slots__ = ("host_ports", "image", "name", "requests", "restart_policy")

    def __init__(self, data: Mapping[str, Any], field: str) -> None:
        if not isinstance(data, Mapping):
            raise ValueError(
                f"{field}: expected a container (a mapping), got {type(data).__name__}"
            )
        self.name: str = data.get("name", "")
        self.image: str = data.get("image", "")
        self.restart_policy: str | None = data.get("restartPolicy")
        resources = data.get("resources") or {}
        self.requests = parse_resource_list(
            resources.get("requests"), f"{field}.resources.requests"
        )
        ports = []
        for index, port in enumerate(data.get("ports") or ()):
            host_port = port.get("hostPort") if isinstance(port, Mapping) else None
            if not host_port:
                continue
            ports.append(
                ContainerPort(
                    _port_number(host_port, f"{field}.ports[{index}].hostPort"),
                    port.get("protocol") or "TCP",
                    port.get("hostIP") or "0.0.0.0",
                )
            )
        self.host_ports: list[ContainerPort] = ports

    @property
    def is_sidecar(self) -> bool:
        """A restartable init container (``restartPolicy: Always``)."""
        return self.restart_policy == "Always"


class Pod:
    """A Pod as the scheduler sees it. ``raw`` is the full object."""

    __slots__ = (
        "_footprint",
        "_requests_memo",
        "affinity",
        "annotations",
        "containers",
        "deletion_timestamp",
        "init_containers",
        "labels",
        "name",
        "namespace",
        "node_name",
        "node_selector",
        "nominated_node_name",
        "overhead",
        "phase",
        "pod_level_requests",
        "preemption_policy",
        "priority",
        "raw",
        "resource_version",
        "scheduler_name",
        "scheduling_gates",
        "tolerations",
        "uid",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise ObjectError("Pod", "", "", f"expected a mapping, got {type(raw).__name__}")
        #: ``kubesched.nodeinfo.pod_requests``' results for this object (see there).
        self._requests_memo: tuple[int, dict[str, int] | None, dict[str, int] | None] | None = None
        #: What the pod adds to a node's aggregates (``kubesched.nodeinfo``), once computed.
        self._footprint: Any = None
        meta = raw.get("metadata") or {}
        self.name: str = _name("Pod", meta)
        namespace = meta.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise ObjectError(
                "Pod", self.name, "metadata.namespace", f"{namespace!r} is not a string"
            )
        self.namespace: str = namespace or "default"
        try:
            self._parse(raw, meta)
        except ObjectError:
            raise
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            field, _, problem = str(exc).partition(": ")
            raise ObjectError(
                "Pod", self.key if self.name else "", field if problem else "", problem or str(exc)
            ) from None

    def _parse(self, raw: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        if not self.name:
            raise ValueError("metadata.name: required")
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        self.raw = raw
        self.uid: str = _string(meta, "uid", "metadata.uid") or f"{self.namespace}/{self.name}"
        self.resource_version: str = _string(meta, "resourceVersion", "metadata.resourceVersion")
        self.labels = _labels(meta, "labels")
        self.annotations = _labels(meta, "annotations")
        self.deletion_timestamp: str | None = (
            _string(meta, "deletionTimestamp", "metadata.deletionTimestamp") or None
        )
        self.node_name: str = _string(spec, "nodeName", "spec.nodeName")
        self.scheduler_name: str = (
            _string(spec, "schedulerName", "spec.schedulerName") or "default-scheduler"
        )
        priority = spec.get("priority") or 0
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise ValueError(f"spec.priority: {priority!r} is not an integer")
        self.priority: int = priority
        self.preemption_policy: str = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        selector = spec.get("nodeSelector") or {}
        if not isinstance(selector, Mapping):
            raise ValueError("spec.nodeSelector: expected a mapping of strings")
        self.node_selector: dict[str, str] = {str(k): str(v) for k, v in selector.items()}
        self.affinity: Mapping[str, Any] = spec.get("affinity") or {}
        self.tolerations = [Toleration.from_dict(t) for t in spec.get("tolerations") or ()]
        self.scheduling_gates: list[str] = [
            g.get("name", "") for g in spec.get("schedulingGates") or ()
        ]
        containers = spec.get("containers") or ()
        self.containers = [Container(c, f"spec.containers[{i}]") for i, c in enumerate(containers)]
        self.init_containers = [
            Container(c, f"spec.initContainers[{i}]")
            for i, c in enumerate(spec.get("initContainers") or ())
        ]
        self.overhead = parse_resource_list(spec.get("overhead"), "spec.overhead")
        pod_resources = spec.get("resources") or {}
        if not isinstance(pod_resources, Mapping):
            raise ValueError("spec.resources: expected a mapping with requests and limits")
        #: Pod-level requests (``spec.resources.requests``, the PodLevelResources feature).
        self.pod_level_requests = parse_resource_list(
            pod_resources.get("requests"), "spec.resources.requests"
        )
        self.phase: str = _string(status, "phase", "status.phase") or "Pending"
        self.nominated_node_name: str = _string(
            status, "nominatedNodeName", "status.nominatedNodeName"
        )

    @property
    def key(self) -> str:
        """``namespace/name``, how kube-scheduler names a pod in messages."""
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminated(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def __repr__(self) -> str:
        return f"Pod({self.key})"


class Node:
    """A Node as the scheduler sees it. ``raw`` is the full object."""

    __slots__ = (
        "allocatable",
        "annotations",
        "images",
        "labels",
        "name",
        "raw",
        "resource_version",
        "taints",
        "uid",
        "unschedulable",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not isinstance(raw, Mapping):
            raise ObjectError("Node", "", "", f"expected a mapping, got {type(raw).__name__}")
        meta = raw.get("metadata") or {}
        self.name: str = _name("Node", meta)
        try:
            if not self.name:
                raise ValueError("metadata.name: required")
            spec = raw.get("spec") or {}
            status = raw.get("status") or {}
            self.raw = raw
            self.uid: str = _string(meta, "uid", "metadata.uid") or self.name
            self.resource_version: str = _string(
                meta, "resourceVersion", "metadata.resourceVersion"
            )
            self.labels = _labels(meta, "labels")
            self.annotations = _labels(meta, "annotations")
            self.unschedulable: bool = bool(spec.get("unschedulable"))
            self.taints = [Taint.from_dict(t) for t in spec.get("taints") or ()]
            allocatable, where = status.get("allocatable"), "status.allocatable"
            if allocatable is None:
                allocatable, where = status.get("capacity"), "status.capacity"
            self.allocatable = parse_resource_list(allocatable, where)
            self.images: list[tuple[tuple[str, ...], int]] = [
                (tuple(image.get("names") or ()), int(image.get("sizeBytes") or 0))
                for image in status.get("images") or ()
            ]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            field, _, problem = str(exc).partition(": ")
            raise ObjectError(
                "Node", self.name, field if problem else "", problem or str(exc)
            ) from None

    def __repr__(self) -> str:
        return f"Node({self.name})"
