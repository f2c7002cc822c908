"""Pod, node and selector builders shaped like kube-scheduler's test wrappers (``st.MakePod()``),
so that test tables ported from kube-scheduler read the same here (shared by every plugin that
ports them). Pods without a name get a unique one; the empty
namespace is ``default``, as kubesched reads it.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched import Node, NodeInfo, Pod, Snapshot

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

# st.PodAffinityKind
NIL_POD_AFFINITY = 0
REQUIRED = 1
PREFERRED = 2
REQUIRED_PREFERRED = 3
ANTI_REQUIRED = 4
ANTI_PREFERRED = 5
ANTI_REQUIRED_PREFERRED = 6
# st.NodeSelectorType
MATCH_EXPRESSIONS = 0
MATCH_FIELDS = 1

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_names = itertools.count()


def gvk(group_version: str, kind: str) -> tuple[str, str]:
    return (group_version, kind)


class LabelSelectorWrapper:
    def __init__(self) -> None:
        self._s: dict[str, Any] = {}

    def label(self, key: str, value: str) -> LabelSelectorWrapper:
        self._s.setdefault("matchLabels", {})[key] = value
        return self

    def _expr(
        self, key: str, operator: str, values: list[str] | None = None
    ) -> LabelSelectorWrapper:
        expression: dict[str, Any] = {"key": key, "operator": operator}
        if values is not None:
            expression["values"] = list(values)
        self._s.setdefault("matchExpressions", []).append(expression)
        return self

    def in_(self, key: str, values: list[str]) -> LabelSelectorWrapper:
        return self._expr(key, "In", values)

    def not_in(self, key: str, values: list[str]) -> LabelSelectorWrapper:
        return self._expr(key, "NotIn", values)

    def exists(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "Exists")

    def not_exist(self, key: str) -> LabelSelectorWrapper:
        return self._expr(key, "DoesNotExist")

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._s)


def make_label_selector() -> LabelSelectorWrapper:
    return LabelSelectorWrapper()


def _meta_defaults(raw: dict[str, Any], prefix: str) -> dict[str, Any]:
    meta = raw.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = f"{prefix}-{next(_names)}"
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    return raw


def k8s_pod(raw: Mapping[str, Any]) -> Pod:
    """A Pod from a manifest (``v1.Pod{...}``): a name is made up if it has none."""
    return Pod(_meta_defaults(copy.deepcopy(dict(raw)), "unnamed"))


def k8s_node(raw: Mapping[str, Any]) -> Node:
    data = copy.deepcopy(dict(raw))
    data.setdefault("metadata", {}).setdefault("name", f"node-{next(_names)}")
    return Node(data)


class PodWrapper:
    def __init__(self) -> None:
        self._m: dict[str, Any] = {"metadata": {}, "spec": {}}

    @property
    def _spec(self) -> dict[str, Any]:
        return self._m["spec"]

    @property
    def _meta(self) -> dict[str, Any]:
        return self._m["metadata"]

    def name(self, name: str) -> PodWrapper:
        self._meta["name"] = name
        return self

    def namespace(self, namespace: str) -> PodWrapper:
        self._meta["namespace"] = namespace
        return self

    def uid(self, uid: str) -> PodWrapper:
        self._meta["uid"] = uid
        return self

    def label(self, key: str, value: str) -> PodWrapper:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, labels: Mapping[str, str]) -> PodWrapper:
        for key, value in labels.items():
            self.label(key, value)
        return self

    def node(self, name: str) -> PodWrapper:
        self._spec["nodeName"] = name
        return self

    def nominated_node_name(self, name: str) -> PodWrapper:
        self._m.setdefault("status", {})["nominatedNodeName"] = name
        return self

    def terminating(self) -> PodWrapper:
        self._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def owner_reference(self, name: str, kind: tuple[str, str]) -> PodWrapper:
        self._meta["ownerReferences"] = [
            {"apiVersion": kind[0], "kind": kind[1], "name": name, "controller": True}
        ]
        return self

    def toleration(self, key: str) -> PodWrapper:
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def tolerations(self, tolerations: list[dict[str, Any]]) -> PodWrapper:
        self._spec["tolerations"] = list(tolerations)
        return self

    def node_selector(self, selector: Mapping[str, str]) -> PodWrapper:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def _node_affinity(self, term: dict[str, Any]) -> PodWrapper:
        affinity = self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        affinity[_REQUIRED] = {"nodeSelectorTerms": [term]}
        return self

    def node_affinity_in(
        self, key: str, values: list[str], kind: int = MATCH_EXPRESSIONS
    ) -> PodWrapper:
        field = "matchExpressions" if kind == MATCH_EXPRESSIONS else "matchFields"
        return self._node_affinity({field: [{"key": key, "operator": "In", "values": values}]})

    def node_affinity_not_in(self, key: str, values: list[str]) -> PodWrapper:
        expression = {"key": key, "operator": "NotIn", "values": values}
        return self._node_affinity({"matchExpressions": [expression]})

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        mode: str,
        selector: Mapping[str, Any] | None,
        min_domains: int | None,
        node_affinity_policy: str | None,
        node_taints_policy: str | None,
        match_label_keys: list[str] | None,
    ) -> PodWrapper:
        constraint: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": mode,
        }
        optional = {
            "labelSelector": copy.deepcopy(selector) if selector is not None else None,
            "minDomains": min_domains,
            "nodeAffinityPolicy": node_affinity_policy,
            "nodeTaintsPolicy": node_taints_policy,
            "matchLabelKeys": match_label_keys,
        }
        constraint.update({k: v for k, v in optional.items() if v is not None})
        self._spec.setdefault("topologySpreadConstraints", []).append(constraint)
        return self

    def _affinity(
        self, kind_name: str, topology_key: str, selector: Mapping[str, Any] | None, kind: int
    ) -> PodWrapper:
        if kind == NIL_POD_AFFINITY:
            return self
        affinity = self._spec.setdefault("affinity", {}).setdefault(kind_name, {})
        term: dict[str, Any] = {"topologyKey": topology_key}
        if selector is not None:
            term["labelSelector"] = copy.deepcopy(selector)
        if kind in (REQUIRED, REQUIRED_PREFERRED, ANTI_REQUIRED, ANTI_REQUIRED_PREFERRED):
            affinity.setdefault(_REQUIRED, []).append(term)
        if kind in (PREFERRED, REQUIRED_PREFERRED, ANTI_PREFERRED, ANTI_REQUIRED_PREFERRED):
            affinity.setdefault(_PREFERRED, []).append(
                {"weight": 1, "podAffinityTerm": copy.deepcopy(term)}
            )
        return self

    def pod_affinity(
        self, topology_key: str, selector: Mapping[str, Any] | None, kind: int
    ) -> PodWrapper:
        if kind not in (REQUIRED, PREFERRED, REQUIRED_PREFERRED):
            return self
        return self._affinity("podAffinity", topology_key, selector, kind)

    def pod_anti_affinity(
        self, topology_key: str, selector: Mapping[str, Any] | None, kind: int
    ) -> PodWrapper:
        if kind not in (ANTI_REQUIRED, ANTI_PREFERRED, ANTI_REQUIRED_PREFERRED):
            return self
        return self._affinity("podAntiAffinity", topology_key, selector, kind)

    def pod_affinity_exists(self, key: str, topology_key: str, kind: int) -> PodWrapper:
        return self.pod_affinity(topology_key, make_label_selector().exists(key).obj(), kind)

    def pod_anti_affinity_exists(self, key: str, topology_key: str, kind: int) -> PodWrapper:
        return self.pod_anti_affinity(topology_key, make_label_selector().exists(key).obj(), kind)

    def pod_affinity_not_exists(self, key: str, topology_key: str, kind: int) -> PodWrapper:
        return self.pod_affinity(topology_key, make_label_selector().not_exist(key).obj(), kind)

    def pod_anti_affinity_not_exists(self, key: str, topology_key: str, kind: int) -> PodWrapper:
        selector = make_label_selector().not_exist(key).obj()
        return self.pod_anti_affinity(topology_key, selector, kind)

    def pod_affinity_in(
        self, key: str, topology_key: str, values: list[str], kind: int
    ) -> PodWrapper:
        return self.pod_affinity(topology_key, make_label_selector().in_(key, values).obj(), kind)

    def pod_anti_affinity_in(
        self, key: str, topology_key: str, values: list[str], kind: int
    ) -> PodWrapper:
        selector = make_label_selector().in_(key, values).obj()
        return self.pod_anti_affinity(topology_key, selector, kind)

    def pod_affinity_not_in(
        self, key: str, topology_key: str, values: list[str], kind: int
    ) -> PodWrapper:
        selector = make_label_selector().not_in(key, values).obj()
        return self.pod_affinity(topology_key, selector, kind)

    def pod_anti_affinity_not_in(
        self, key: str, topology_key: str, values: list[str], kind: int
    ) -> PodWrapper:
        selector = make_label_selector().not_in(key, values).obj()
        return self.pod_anti_affinity(topology_key, selector, kind)

    def manifest(self) -> dict[str, Any]:
        return _meta_defaults(copy.deepcopy(self._m), "pod")

    def obj(self) -> Pod:
        return Pod(self.manifest())


def make_pod() -> PodWrapper:
    return PodWrapper()


class NodeWrapper:
    def __init__(self) -> None:
        self._m: dict[str, Any] = {
            "metadata": {},
            "spec": {},
            "status": {"capacity": {"pods": "32"}, "allocatable": {"pods": "32"}},
        }

    def name(self, name: str) -> NodeWrapper:
        self._m["metadata"]["name"] = name
        return self

    def label(self, key: str, value: str) -> NodeWrapper:
        self._m["metadata"].setdefault("labels", {})[key] = value
        return self

    def taints(self, taints: list[dict[str, Any]]) -> NodeWrapper:
        self._m["spec"]["taints"] = copy.deepcopy(list(taints))
        return self

    def obj(self) -> Node:
        return k8s_node(self._m)


def make_node() -> NodeWrapper:
    return NodeWrapper()


def new_snapshot(pods: Iterable[Pod] | None, nodes: Iterable[Node] | None) -> Snapshot:
    """kube-scheduler's ``cache.NewSnapshot``: the nodes, each with its pods. Pods bound to a
    node not in the list are left out (kube keeps a node-less NodeInfo that its plugins skip)."""
    infos = {node.name: NodeInfo(node) for node in nodes or ()}
    for pod in pods or ():
        if pod.node_name in infos:
            infos[pod.node_name].add_pod(pod)
    return Snapshot(list(infos.values()))
