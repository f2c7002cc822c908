"""Reading a cluster from ordinary Kubernetes manifests (``kubectl get nodes,pods -A -o yaml``).

Multi-document YAML, ``List``/``NodeList``/``PodList`` wrappers and JSON are accepted. Objects
that are neither Node nor Pod are skipped with a warning. Any unreadable object fails the whole
file with every problem listed (nothing is half-applied), and so does a Pod or Node that
kube-apiserver would refuse on create (:mod:`kubesched.api.validation`, in its wording; with
``validate=False``, for snapshots of objects an apiserver already stored, only a Pod whose inter-pod
(anti-)affinity the plugins cannot read, ``Pod.affinity_errors``).

A Pod is read as kube-apiserver would store it: a container (or the pod, for pod-level
resources) that sets a limit but no request for a resource requests its limit (the API's
defaulting, ``SetDefaults_Pod``), so a manifest written by hand is scheduled as the same manifest
applied to a cluster would be.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubesched.api.objects import Node, ObjectError, Pod
from kubesched.api.storage import manifest_errors
from kubesched.api.validation import node_errors, pod_errors
from kubesched.errors import ManifestError

__all__ = ["CONSULTED_KINDS", "Cluster", "load_cluster", "parse_cluster", "with_api_defaults"]

#: Kinds kept for plugins that consult them (through ``Handle.lister``), besides Nodes and Pods.
CONSULTED_KINDS = frozenset(
    {
        "PodDisruptionBudget",
        "Namespace",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "ReplicationController",
        "PodGroup",
        # Volumes (VolumeBinding, VolumeZone, VolumeRestrictions, NodeVolumeLimits).
        "PersistentVolume",
        "PersistentVolumeClaim",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "CSIStorageCapacity",
        "VolumeAttachment",
        # Dynamic resource allocation (DynamicResources).
        "ResourceClaim",
        "DeviceClass",
        "ResourceSlice",
    }
)


@dataclass
class Cluster:
    """The nodes and pods of a cluster file, and what was skipped."""

    nodes: list[Node] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    #: Objects plugins may consult (PodDisruptionBudgets, Namespaces, Services, …), by kind.
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _objects(documents: list[Any]) -> Iterator[tuple[str, Any]]:
    """Every object with where it sits (``document 2``, ``document 1 items[3]``)."""
    for index, doc in enumerate(documents, start=1):
        if doc is None:
            continue
        where = f"document {index}"
        if (
            isinstance(doc, Mapping)
            and isinstance(doc.get("items"), list)
            and str(doc.get("kind", "")).endswith("List")
        ):
            # The API leaves out the kind of a typed list's items (``GET /api/v1/nodes``).
            item_kind = str(doc["kind"])[: -len("List")]
            for item_index, item in enumerate(doc["items"]):
                if isinstance(item, Mapping) and "kind" not in item and item_kind:
                    item = {"kind": item_kind, **item}
                yield f"{where} items[{item_index}]", item
        else:
            yield where, doc


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        meta = {}
    name = meta.get("name", "?")
    namespace = meta.get("namespace")
    return f"{obj.get('kind', '?')} {f'{namespace}/' if namespace else ''}{name}"


def _api_errors(kind: str, obj: Mapping[str, Any]) -> list[str]:
    """kube-apiserver's refusals of a Node or Pod, once its name can be shown (else the parser
    reports the name first)."""
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
        return []
    if not isinstance(meta.get("namespace"), str | None):
        return []
    return node_errors(obj) if kind == "Node" else pod_errors(obj)


def _describe_key(obj: Mapping[str, Any]) -> str:
    """``Pod namespace/name`` (namespace defaulted) or ``Node name``, as the parser names them."""
    meta = obj["metadata"]
    if obj.get("kind") == "Node":
        return f"Node {meta['name']}"
    return f"Pod {meta.get('namespace') or 'default'}/{meta['name']}"


def _documents(text: str, source: str) -> list[Any]:
    """The documents of YAML or JSON text (JSON directly: YAML refuses tab indentation)."""
    json_error: json.JSONDecodeError | None = None
    if text.lstrip()[:1] in ("{", "["):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:  # maybe YAML flow style; YAML decides
            json_error = exc
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        if json_error is not None:
            raise ManifestError(
                f"{source}:{json_error.lineno}:{json_error.colno}: not valid JSON: {json_error.msg}"
            ) from None
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(f"{source}{where}: not valid YAML: {problem}") from None


def parse_cluster(text: str, source: str = "<cluster>", *, validate: bool = True) -> Cluster:
    """Parse manifest text; raises :class:`ManifestError` naming ``source`` and each object.

    ``validate``: refuse what kube-apiserver refuses (:mod:`kubesched.api.validation`); off for
    objects an apiserver already stored (a snapshot), which only the parser then checks."""
    documents = _documents(text, source)
    cluster = Cluster()
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()
    for where, obj in _objects(documents):
        if not isinstance(obj, Mapping):
            errors.append(
                f"{source}: {where}: expected a Kubernetes object (a mapping), "
                f"got {type(obj).__name__}"
            )
            continue
        kind = obj.get("kind")
        if kind is not None and not isinstance(kind, str):
            errors.append(f"{source}: {where}: kind: {kind!r} is not a string")
            continue
        if kind in CONSULTED_KINDS:
            problems = manifest_errors(str(kind), obj)
            errors.extend(f"{source}: {where}: {_describe(obj)}: {p}" for p in problems)
            if not problems:
                cluster.objects.setdefault(str(kind), []).append(dict(obj))
            continue
        if kind not in ("Node", "Pod"):
            cluster.warnings.append(
                f"{source}: {where}: skipping {_describe(obj)} (not a kind the scheduler reads)"
            )
            continue
        defaulted = obj if kind == "Node" else with_api_defaults(obj)
        if validate and (refused := _api_errors(kind, defaulted)):
            errors.extend(f"{source}: {where}: {_describe_key(defaulted)}: {p}" for p in refused)
            continue
        try:
            parsed: Node | Pod = Node(defaulted) if kind == "Node" else Pod(defaulted)
        except ObjectError as exc:
            errors.append(f"{source}: {where}: {exc}")
            continue
        if not validate and isinstance(parsed, Pod) and parsed.affinity_errors:
            # kube-apiserver refuses these on create; say so here rather than in a plugin.
            errors.extend(
                f"{source}: {where}: Pod {parsed.key}: {problem}"
                for problem in parsed.affinity_errors
            )
            continue
        key = (kind, parsed.name if isinstance(parsed, Node) else parsed.key)
        if key in seen:
            errors.append(f"{source}: {where}: duplicate {kind} {key[1]}")
            continue
        seen.add(key)
        (cluster.nodes if isinstance(parsed, Node) else cluster.pods).append(parsed)  # type: ignore[arg-type]
    if errors:
        raise ManifestError("\n".join(errors))
    return cluster


#: Pod-level resources the API defaults requests from limits for (PodLevelResources).
_POD_LEVEL_DEFAULTED = ("cpu", "memory")


def _requests_from_limits(resources: Any, only: tuple[str, ...] | None = None) -> Any:
    """``resources`` with each limit that has no request copied into the requests; anything
    that is not shaped as the API says is returned as it is (the parser reports it)."""
    if not isinstance(resources, Mapping):
        return resources
    limits, requests = resources.get("limits"), resources.get("requests")
    if not isinstance(limits, Mapping) or not (requests is None or isinstance(requests, Mapping)):
        return resources
    missing = {
        name: value
        for name, value in limits.items()
        if name not in (requests or {})
        and (only is None or name in only or str(name).startswith("hugepages-"))
    }
    if not missing:
        return resources
    return {**resources, "requests": {**(requests or {}), **missing}}


def with_api_defaults(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    """``pod`` as kube-apiserver would store it, as far as scheduling reads it: requests
    defaulted from limits for every container, init container and the pod-level resources.
    The input is not changed."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return pod
    changed = dict(spec)
    for field_name in ("containers", "initContainers"):
        containers = spec.get(field_name)
        if isinstance(containers, list):
            changed[field_name] = [
                {**c, "resources": _requests_from_limits(c["resources"])}
                if isinstance(c, Mapping) and "resources" in c
                else c
                for c in containers
            ]
    if "resources" in spec:
        changed["resources"] = _requests_from_limits(spec["resources"], _POD_LEVEL_DEFAULTED)
    return {**pod, "spec": changed}


def load_cluster(path: str | os.PathLike[str], *, validate: bool = True) -> Cluster:
    """Read and parse a cluster file; a missing or unreadable file is a :class:`ManifestError`."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise ManifestError(
            f"{os.fspath(path)}: cannot read cluster file: {exc.strerror}"
        ) from None
    except UnicodeDecodeError:
        raise ManifestError(f"{os.fspath(path)}: not a text file (expected YAML or JSON)") from None
    return parse_cluster(text, os.fspath(path), validate=validate)
