"""Concise builders for Pods and Nodes, in the spirit of kube-scheduler's ``MakePod()``.

``make_pod("web").req(cpu="500m").labels(app="web").obj()`` returns a :class:`kubesched.Pod`;
``.manifest()`` returns the plain mapping (for a cluster file or the API).
"""

from __future__ import annotations

import copy
from typing import Any

from ..objects import Node, Pod

__all__ = ["NodeBuilder", "PodBuilder", "make_node", "make_pod"]


class PodBuilder:
    """Builds a pending Pod manifest step by step."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}-uid"},
            "spec": {
                "schedulerName": "custom-scheduler",
                "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            },
        }

    @property
    def _spec(self) -> dict[str, Any]:
        return self._m["spec"]

    def uid(self, uid: str) -> PodBuilder:
        self._m["metadata"]["uid"] = uid
        return self

    def scheduler(self, name: str) -> PodBuilder:
        self._spec["schedulerName"] = name
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._m["metadata"].setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._m["metadata"].setdefault("labels", {})[key] = value
        return self

    def req(self, **requests: str) -> PodBuilder:
        """Requests of the first container (``ephemeral_storage`` for ``ephemeral-storage``)."""
        container = self._spec["containers"][0]
        reqs = container.setdefault("resources", {}).setdefault("requests", {})
        reqs.update({k.replace("_", "-"): v for k, v in requests.items()})
        return self

    def container(self, name: str, image: str = "", **requests: str) -> PodBuilder:
        entry: dict[str, Any] = {"name": name, "image": image or "registry.k8s.io/pause:3.10"}
        if requests:
            entry["resources"] = {"requests": {k.replace("_", "-"): v for k, v in requests.items()}}
        self._spec["containers"].append(entry)
        return self

    def init_container(self, name: str, sidecar: bool = False, **requests: str) -> PodBuilder:
        entry: dict[str, Any] = {
            "name": name,
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {k.replace("_", "-"): v for k, v in requests.items()}},
        }
        if sidecar:
            entry["restartPolicy"] = "Always"
        self._spec.setdefault("initContainers", []).append(entry)
        return self

    def host_port(self, port: int, protocol: str = "TCP") -> PodBuilder:
        self._spec["containers"][0].setdefault("ports", []).append(
            {"containerPort": port, "hostPort": port, "protocol": protocol}
        )
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def node_selector(self, **selector: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {}).update(selector)
        return self

    def toleration(
        self, key: str = "", value: str = "", effect: str = "", operator: str = "Equal"
    ) -> PodBuilder:
        self._spec.setdefault("tolerations", []).append(
            {"key": key, "operator": operator, "value": value, "effect": effect}
        )
        return self

    def scheduling_gates(self, *names: str) -> PodBuilder:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def node(self, name: str) -> PodBuilder:
        """Already bound to ``name``."""
        self._spec["nodeName"] = name
        return self

    def nominated(self, name: str) -> PodBuilder:
        self._m.setdefault("status", {})["nominatedNodeName"] = name
        return self

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self._m)

    def obj(self) -> Pod:
        return Pod(self.manifest())


class NodeBuilder:
    """Builds a Ready Node manifest (4 CPU, 32Gi, 110 pods unless told otherwise)."""

    def __init__(self, name: str) -> None:
        self._m: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {
                "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }

    def labels(self, **labels: str) -> NodeBuilder:
        self._m["metadata"]["labels"].update(labels)
        return self

    def label(self, key: str, value: str) -> NodeBuilder:
        self._m["metadata"]["labels"][key] = value
        return self

    def capacity(self, **resources: str) -> NodeBuilder:
        values = {k.replace("_", "-"): v for k, v in resources.items()}
        self._m["status"]["capacity"].update(values)
        self._m["status"]["allocatable"].update(values)
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._m["spec"].setdefault("taints", []).append(
            {"key": key, "value": value, "effect": effect}
        )
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._m["spec"]["unschedulable"] = value
        return self

    def images(self, *names: str, size: int = 500 * 1024 * 1024) -> NodeBuilder:
        self._m["status"]["images"] = [{"names": [n], "sizeBytes": size} for n in names]
        return self

    def manifest(self) -> dict[str, Any]:
        return copy.deepcopy(self._m)

    def obj(self) -> Node:
        return Node(self.manifest())


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)
