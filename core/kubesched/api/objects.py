"""Light, read-only views of Pods and Nodes, parsed once from their JSON.

The official client's models cost ~100x a ``json.loads`` per object (see docs/design.md), and the
scheduler reads only a few fields, so the core parses raw manifests into these ``__slots__``
classes. The original mapping stays available as ``raw`` for plugins that need more.

A malformed object raises :class:`ObjectError` naming the object and the field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kubesched.api.quantity import InvalidQuantity, to_int, to_milli
from kubesched.api.selectors import LabelSelector, SelectorError, label_key_errors

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
    "pod_affinity_errors",
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


def _entries(data: Mapping[str, Any], key: str, field: str, what: str) -> list[Mapping[str, Any]]:
    """``data[key]`` as a list of objects (``[]`` when absent), each checked to be a mapping
    whose string fields are strings; ValueError naming ``field[i]`` otherwise."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{field}: expected a list of {what}s, got {type(value).__name__}")
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            article = "an" if what[0] in "aeiou" else "a"
            raise ValueError(
                f"{field}[{index}]: expected {article} {what} (an object), "
                f"got {type(entry).__name__}"
            )
        for name in ("key", "value", "effect", "operator", "name"):
            _string(entry, name, f"{field}[{index}].{name}")
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


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_AFFINITY_KINDS = ("nodeAffinity", "podAffinity", "podAntiAffinity")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _affinity(value: Any) -> Mapping[str, Any]:
    """``spec.affinity`` with its three parts checked to be objects: the cache and plugins read
    them with ``.get``, and no apiserver holds anything else there (its schema refuses it)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"spec.affinity: expected an object, got {type(value).__name__}")
    for kind in _AFFINITY_KINDS:
        part = value.get(kind)
        if part is not None and not isinstance(part, Mapping):
            raise ValueError(f"spec.affinity.{kind}: expected an object, got {type(part).__name__}")
    return value


def pod_affinity_errors(affinity: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver's ``ValidateAffinity`` refuses in ``spec.affinity.podAffinity`` and
    ``podAntiAffinity``, as ``spec.affinity.…: problem`` lines with kube's wording: label and
    namespace selectors (operators, values), ``topologyKey`` (required, a label key),
    ``namespaces`` (DNS-1123 labels) and preferred terms' ``weight`` (1-100).

    The apiserver refuses such pods on create; a cluster file can still hold them, and
    InterPodAffinity reads the terms without these checks.
    """
    errors: list[str] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) or {}
        path = f"spec.affinity.{kind}"
        for key, weighted in ((_REQUIRED, False), (_PREFERRED, True)):
            terms = section.get(key)
            if terms is None:
                continue
            where = f"{path}.{key}"
            if not isinstance(terms, list):
                errors.append(f"{where}: expected a list, got {type(terms).__name__}")
                continue
            for index, term in enumerate(terms):
                if weighted:
                    _weighted_term_errors(term, f"{where}[{index}]", errors)
                else:
                    _term_errors(term, f"{where}[{index}]", errors)
    return errors


def _weighted_term_errors(term: Any, path: str, errors: list[str]) -> None:
    if not isinstance(term, Mapping):
        errors.append(f"{path}: expected a weighted pod affinity term (an object)")
        return
    weight = term.get("weight")
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
        errors.append(f"{path}.weight: Invalid value: {weight!r}: must be in the range 1-100")
    _term_errors(term.get("podAffinityTerm"), f"{path}.podAffinityTerm", errors)


def _term_errors(term: Any, path: str, errors: list[str]) -> None:
    if not isinstance(term, Mapping):
        errors.append(f"{path}: expected a pod affinity term (an object)")
        return
    for field in ("labelSelector", "namespaceSelector"):
        try:
            LabelSelector.parse(term.get(field), f"{path}.{field}")
        except SelectorError as exc:
            errors.extend(str(error) for error in exc.errors)
    namespaces = term.get("namespaces")
    if namespaces is not None and not isinstance(namespaces, list):
        errors.append(f"{path}.namespaces: expected a list of namespace names")
    for index, namespace in enumerate(namespaces if isinstance(namespaces, list) else ()):
        if not isinstance(namespace, str) or not (
            len(namespace) <= 63 and _DNS1123_LABEL.fullmatch(namespace)
        ):
            errors.append(
                f"{path}.namespaces[{index}]: Invalid value: {namespace!r}: a lowercase RFC 1123 "
                "label must consist of lower case alphanumeric characters or '-', and must start "
                "and end with an alphanumeric character"
            )
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        keys = term.get(field)
        if keys is not None and not (
            isinstance(keys, list) and all(isinstance(k, str) for k in keys)
        ):
            errors.append(f"{path}.{field}: expected a list of label keys")
    topology_key = term.get("topologyKey")
    if topology_key is None or topology_key == "":
        errors.append(f"{path}.topologyKey: Required value: can not be empty")
    elif not isinstance(topology_key, str):
        errors.append(f"{path}.topologyKey: Invalid value: {topology_key!r}: must be a string")
    elif problems := label_key_errors(topology_key):
        errors.append(f'{path}.topologyKey: Invalid value: "{topology_key}": {"; ".join(problems)}')


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
        "_affinity_errors",
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
        #: ``kubesched.framework.nodeinfo.pod_requests``' results for this object (see there).
        self._requests_memo: tuple[int, dict[str, int] | None, dict[str, int] | None] | None = None
        #: What the pod adds to a node's aggregates (``kubesched.framework.nodeinfo``), once
        #: computed.
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
        self.affinity: Mapping[str, Any] = _affinity(spec.get("affinity"))
        self._affinity_errors: tuple[str, ...] | None = None
        self.tolerations = [
            Toleration.from_dict(t)
            for t in _entries(spec, "tolerations", "spec.tolerations", "toleration")
        ]
        self.scheduling_gates: list[str] = [
            g.get("name") or ""
            for g in _entries(spec, "schedulingGates", "spec.schedulingGates", "scheduling gate")
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
    def affinity_errors(self) -> tuple[str, ...]:
        """Why kube-apiserver would refuse the pod's inter-pod (anti-)affinity, each as
        ``field.path: problem`` (empty when it would not); checked on first use."""
        if self._affinity_errors is None:
            self._affinity_errors = tuple(pod_affinity_errors(self.affinity))
        return self._affinity_errors

    @property
    def is_terminated(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    def __repr__(self) -> str:
        return f"Pod({self.key})"


def _size(value: Any, index: int) -> int:
    """``status.images[i].sizeBytes``: a whole number of bytes (0 when absent)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"status.images[{index}].sizeBytes: {value!r} is not an integer")
    return value


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
            unschedulable = spec.get("unschedulable")
            if unschedulable is not None and not isinstance(unschedulable, bool):
                # bool("false") is True: a string here would cordon the node by surprise.
                raise ValueError(f"spec.unschedulable: {unschedulable!r} is not a boolean")
            self.unschedulable: bool = bool(unschedulable)
            self.taints = [
                Taint.from_dict(t) for t in _entries(spec, "taints", "spec.taints", "taint")
            ]
            allocatable, where = status.get("allocatable"), "status.allocatable"
            if allocatable is None:
                allocatable, where = status.get("capacity"), "status.capacity"
            self.allocatable = parse_resource_list(allocatable, where)
            self.images: list[tuple[tuple[str, ...], int]] = [
                (tuple(image.get("names") or ()), _size(image.get("sizeBytes"), i))
                for i, image in enumerate(_entries(status, "images", "status.images", "image"))
            ]
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            field, _, problem = str(exc).partition(": ")
            raise ObjectError(
                "Node", self.name, field if problem else "", problem or str(exc)
            ) from None

    def __repr__(self) -> str:
        return f"Node({self.name})"
