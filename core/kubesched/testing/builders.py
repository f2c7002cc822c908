"""Concise builders for Pods and Nodes, in the spirit of kube-scheduler's ``MakePod()``.

``make_pod("web").req(cpu="500m").labels(app="web").obj()`` returns a :class:`kubesched.Pod`;
``.manifest()`` returns the plain mapping (for a cluster file or the API). Every method returns
the builder, so calls chain; ``clone()`` copies a builder to vary it in a table of cases.

Resource names are keyword arguments with ``_`` for ``-`` (``ephemeral_storage="1Gi"``); names
that are not identifiers go through ``**{"nvidia.com/gpu": "1"}``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Self

from kubesched.api.objects import Node, Pod

__all__ = [
    "HOSTNAME_LABEL",
    "REGION_LABEL",
    "ZONE_LABEL",
    "NodeBuilder",
    "PodBuilder",
    "make_node",
    "make_pod",
]

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _resources(values: Mapping[str, str]) -> dict[str, str]:
    return {name.replace("_", "-"): value for name, value in values.items()}


def _expression(key: str, operator: str, values: Iterable[str]) -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if operator not in ("Exists", "DoesNotExist"):
        expression["values"] = list(values)
    return expression


class _Builder:
    """What pod and node builders share: metadata, escape hatches, output."""

    _m: dict[str, Any]

    @property
    def _meta(self) -> dict[str, Any]:
        return self._m["metadata"]

    def uid(self, uid: str) -> Self:
        self._meta["uid"] = uid
        return self

    def labels(self, **labels: str) -> Self:
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> Self:
        """One label whose key is not an identifier (``example.com/tier``)."""
        self._meta.setdefault("labels", {})[key] = value
        return self

    def annotations(self, **annotations: str) -> Self:
        self._meta.setdefault("annotations", {}).update(annotations)
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def spec(self, **fields: Any) -> Self:
        """Set ``spec`` fields as written in a manifest (``.spec(hostNetwork=True)``)."""
        self._m.setdefault("spec", {}).update(fields)
        return self

    def clone(self) -> Self:
        """An independent copy, to vary one case of a table."""
        return copy.deepcopy(self)

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self._m)


class PodBuilder(_Builder):
    """Builds a pending Pod manifest step by step (one ``app`` container, pause image)."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}-uid"},
            "spec": {
                "schedulerName": "custom-scheduler",
                "containers": [{"name": "app", "image": PAUSE_IMAGE}],
            },
        }

    @property
    def _spec(self) -> dict[str, Any]:
        return self._m["spec"]

    @property
    def _first(self) -> dict[str, Any]:
        return self._spec["containers"][0]

    def scheduler(self, name: str) -> PodBuilder:
        self._spec["schedulerName"] = name
        return self

    # -- containers and resources --------------------------------------------------------------
    def req(self, **requests: str) -> PodBuilder:
        """Requests of the first container (``ephemeral_storage`` for ``ephemeral-storage``)."""
        reqs = self._first.setdefault("resources", {}).setdefault("requests", {})
        reqs.update(_resources(requests))
        return self

    def limits(self, **limits: str) -> PodBuilder:
        """Limits of the first container."""
        self._first.setdefault("resources", {}).setdefault("limits", {}).update(_resources(limits))
        return self

    def image(self, image: str) -> PodBuilder:
        """The first container's image."""
        self._first["image"] = image
        return self

    def container(self, name: str, image: str = "", **requests: str) -> PodBuilder:
        """Another app container, with its own requests."""
        entry: dict[str, Any] = {"name": name, "image": image or PAUSE_IMAGE}
        if requests:
            entry["resources"] = {"requests": _resources(requests)}
        self._spec["containers"].append(entry)
        return self

    def init_container(
        self, name: str, sidecar: bool = False, image: str = "", **requests: str
    ) -> PodBuilder:
        """An init container; ``sidecar=True`` makes it restartable (``restartPolicy: Always``)."""
        entry: dict[str, Any] = {
            "name": name,
            "image": image or PAUSE_IMAGE,
            "resources": {"requests": _resources(requests)},
        }
        if sidecar:
            entry["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(entry)
        return self

    def overhead(self, **resources: str) -> PodBuilder:
        """``spec.overhead`` (what the RuntimeClass adds to every pod)."""
        self._spec.setdefault("overhead", {}).update(_resources(resources))
        return self

    def pod_requests(self, **requests: str) -> PodBuilder:
        """Pod-level requests, ``spec.resources.requests``."""
        resources = self._spec.setdefault("resources", {})
        resources.setdefault("requests", {}).update(_resources(requests))
        return self

    def host_port(
        self,
        port: int,
        protocol: str = "TCP",
        host_ip: str = "",
        container_port: int | None = None,
    ) -> PodBuilder:
        """A host port of the first container (``containerPort`` defaults to the same number)."""
        entry: dict[str, Any] = {
            "containerPort": container_port or port,
            "hostPort": port,
            "protocol": protocol,
        }
        if host_ip:
            entry["hostIP"] = host_ip
        self._first.setdefault("ports", []).append(entry)
        return self

    def volume(self, name: str, **source: Any) -> PodBuilder:
        """A volume as written in a manifest: ``.volume("cache", emptyDir={})``."""
        self._spec.setdefault("volumes", []).append({"name": name, **source})
        return self

    def pvc(self, claim_name: str, name: str = "", read_only: bool = False) -> PodBuilder:
        """A PersistentVolumeClaim volume."""
        claim: dict[str, Any] = {"claimName": claim_name}
        if read_only:
            claim["readOnly"] = True
        return self.volume(name or claim_name, persistentVolumeClaim=claim)

    def image_volume(
        self, name: str, reference: str, pull_policy: str = "IfNotPresent"
    ) -> PodBuilder:
        """An image volume (an OCI image mounted read-only, ``volumes[].image``)."""
        return self.volume(name, image={"reference": reference, "pullPolicy": pull_policy})

    # -- placement -----------------------------------------------------------------------------
    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        """``PreemptLowerPriority`` (the default) or ``Never``."""
        self._spec["preemptionPolicy"] = policy
        return self

    def node_selector(self, **selector: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(selector)
        return self

    def toleration(
        self,
        key: str = "",
        value: str = "",
        effect: str = "",
        operator: str = "Equal",
        seconds: int | None = None,
    ) -> PodBuilder:
        entry: dict[str, Any] = {"key": key, "operator": operator, "value": value, "effect": effect}
        if seconds is not None:
            entry["tolerationSeconds"] = seconds
        self._spec.setdefault("tolerations", []).append(entry)
        return self

    def toleration_exists(self, key: str = "", effect: str = "") -> PodBuilder:
        """Tolerate every value of ``key`` (every taint when ``key`` is empty)."""
        return self.toleration(key, "", effect, operator="Exists")

    def node_affinity(
        self, key: str, operator: str, *values: str, term: int = 0, fields: bool = False
    ) -> PodBuilder:
        """A required node-affinity requirement, ANDed into ``nodeSelectorTerms[term]``.

        Requirements in different terms are ORed. ``fields=True`` writes ``matchFields``
        (only ``metadata.name`` is allowed there).
        """
        node = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        terms = node.setdefault(_REQUIRED, {}).setdefault("nodeSelectorTerms", [])
        while len(terms) <= term:
            terms.append({})
        part = "matchFields" if fields else "matchExpressions"
        terms[term].setdefault(part, []).append(_expression(key, operator, values))
        return self

    def node_affinity_in(self, key: str, *values: str) -> PodBuilder:
        return self.node_affinity(key, "In", *values)

    def node_affinity_not_in(self, key: str, *values: str) -> PodBuilder:
        return self.node_affinity(key, "NotIn", *values)

    def preferred_node_affinity(
        self, weight: int, key: str, operator: str, *values: str
    ) -> PodBuilder:
        """A preferred node-affinity term of one requirement, with its weight (1-100)."""
        node = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        node.setdefault(_PREFERRED, []).append(
            {
                "weight": weight,
                "preference": {"matchExpressions": [_expression(key, operator, values)]},
            }
        )
        return self

    def pod_affinity(
        self,
        topology_key: str,
        match_labels: Mapping[str, str] | None = None,
        *,
        expressions: Iterable[Mapping[str, Any]] = (),
        namespaces: Iterable[str] = (),
        weight: int | None = None,
        anti: bool = False,
    ) -> PodBuilder:
        """A pod-affinity term (anti-affinity with ``anti=True``): required, or preferred with
        ``weight``. The label selector is ``match_labels`` and ``expressions``."""
        selector: dict[str, Any] = {}
        if match_labels:
            selector["matchLabels"] = dict(match_labels)
        if expressions:
            selector["matchExpressions"] = [dict(e) for e in expressions]
        term: dict[str, Any] = {"labelSelector": selector, "topologyKey": topology_key}
        if namespaces:
            term["namespaces"] = list(namespaces)
        kind = "podAntiAffinity" if anti else "podAffinity"
        affinity = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if weight is None:
            affinity.setdefault(_REQUIRED, []).append(term)
        else:
            affinity.setdefault(_PREFERRED, []).append({"weight": weight, "podAffinityTerm": term})
        return self

    def pod_anti_affinity(
        self, topology_key: str, match_labels: Mapping[str, str] | None = None, **options: Any
    ) -> PodBuilder:
        """:meth:`pod_affinity` with ``anti=True``."""
        return self.pod_affinity(topology_key, match_labels, anti=True, **options)

    def pod_affinity_in(
        self, key: str, topology_key: str, *values: str, weight: int | None = None
    ) -> PodBuilder:
        """Near pods whose label ``key`` is one of ``values`` (kube's ``PodAffinityIn``)."""
        terms = [_expression(key, "In", values)]
        return self.pod_affinity(topology_key, expressions=terms, weight=weight)

    def pod_affinity_exists(
        self, key: str, topology_key: str, weight: int | None = None
    ) -> PodBuilder:
        terms = [_expression(key, "Exists", ())]
        return self.pod_affinity(topology_key, expressions=terms, weight=weight)

    def pod_anti_affinity_in(
        self, key: str, topology_key: str, *values: str, weight: int | None = None
    ) -> PodBuilder:
        """Away from pods whose label ``key`` is one of ``values``."""
        terms = [_expression(key, "In", values)]
        return self.pod_affinity(topology_key, expressions=terms, weight=weight, anti=True)

    def pod_anti_affinity_exists(
        self, key: str, topology_key: str, weight: int | None = None
    ) -> PodBuilder:
        terms = [_expression(key, "Exists", ())]
        return self.pod_affinity(topology_key, expressions=terms, weight=weight, anti=True)

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when_unsatisfiable: str = "DoNotSchedule",
        match_labels: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> PodBuilder:
        """A topology spread constraint; ``extra`` fields as written (``minDomains=2``)."""
        constraint: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when_unsatisfiable,
            **extra,
        }
        if match_labels is not None:
            constraint["labelSelector"] = {"matchLabels": dict(match_labels)}
        self._spec.setdefault("topologySpreadConstraints", []).append(constraint)
        return self

    def scheduling_gates(self, *names: str) -> PodBuilder:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def owner(self, kind: str, name: str, controller: bool = True) -> PodBuilder:
        """An owner reference (``ReplicaSet``, ``StatefulSet``, …)."""
        self._meta.setdefault("ownerReferences", []).append(
            {"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": controller}
        )
        return self

    # -- state ---------------------------------------------------------------------------------
    def node(self, name: str) -> PodBuilder:
        """Already bound to ``name`` (it counts as load there)."""
        self._spec["nodeName"] = name
        return self

    def nominated(self, name: str) -> PodBuilder:
        self._m.setdefault("status", {})["nominatedNodeName"] = name
        return self

    def phase(self, phase: str) -> PodBuilder:
        """``Pending`` (the default), ``Running``, ``Succeeded`` or ``Failed``."""
        self._m.setdefault("status", {})["phase"] = phase
        return self

    def terminating(self, since: str = "2025-01-01T00:00:00Z") -> PodBuilder:
        """Being deleted (``metadata.deletionTimestamp`` set)."""
        self._meta["deletionTimestamp"] = since
        return self

    def obj(self) -> Pod:
        return Pod(self.manifest())


class NodeBuilder(_Builder):
    """Builds a Ready Node manifest (4 CPU, 32Gi, 110 pods unless told otherwise)."""

    def __init__(self, name: str) -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {HOSTNAME_LABEL: name}},
            "spec": {},
            "status": {
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    @property
    def _status(self) -> dict[str, Any]:
        return self._m["status"]

    def zone(self, zone: str) -> NodeBuilder:
        """The ``topology.kubernetes.io/zone`` label."""
        return self.label(ZONE_LABEL, zone)

    def region(self, region: str) -> NodeBuilder:
        """The ``topology.kubernetes.io/region`` label."""
        return self.label(REGION_LABEL, region)

    def capacity(self, **resources: str) -> NodeBuilder:
        """Capacity and allocatable alike."""
        values = _resources(resources)
        self._status["capacity"].update(values)
        self._status["allocatable"].update(values)
        return self

    def allocatable(self, **resources: str) -> NodeBuilder:
        """Allocatable only (capacity minus what the system reserves)."""
        self._status["allocatable"].update(_resources(resources))
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._m["spec"].setdefault("taints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        """Cordoned (``spec.unschedulable``)."""
        self._m["spec"]["unschedulable"] = value
        return self

    def condition(self, type_: str, status: str = "True") -> NodeBuilder:
        """Set one ``status.conditions`` entry (``condition("Ready", "False")``)."""
        conditions = [c for c in self._status["conditions"] if c["type"] != type_]
        self._status["conditions"] = [*conditions, {"type": type_, "status": status}]
        return self

    def images(self, *names: str, size: int = 500 * 1024 * 1024) -> NodeBuilder:
        """Replace ``status.images`` with one entry per name, each of ``size`` bytes."""
        self._status["images"] = [{"names": [n], "sizeBytes": size} for n in names]
        return self

    def image(self, *names: str, size: int = 500 * 1024 * 1024) -> NodeBuilder:
        """Add one image known by every name in ``names`` (tag and digest)."""
        self._status.setdefault("images", []).append({"names": list(names), "sizeBytes": size})
        return self

    def obj(self) -> Node:
        return Node(self.manifest())


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    """A pending pod for ``custom-scheduler``: ``make_pod("web").req(cpu="1").obj()``."""
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    """A Ready node with 4 CPU, 32Gi and room for 110 pods: ``make_node("n1").zone("a").obj()``."""
    return NodeBuilder(name)
