"""How much a watch event costs to read: our light types against the official client's models.

    python bench/parse_objects.py [--count N]

Parses the JSON text of a typical pod (and node) N times each way and prints microseconds per
object. The figures go in docs/benchmarks.md; they justify parsing raw JSON (docs/design.md).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-7d9f8c6b5-x2x7k",
        "namespace": "shop",
        "uid": "0c6f-4d2e-9a51",
        "resourceVersion": "812733",
        "labels": {"app": "web", "pod-template-hash": "7d9"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-30T07:00:00Z"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-7d9f8c6b5",
                "uid": "a1",
                "controller": True,
            }
        ],
    },
    "spec": {
        "schedulerName": "custom-scheduler",
        "priority": 0,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
        "containers": [
            {
                "name": "web",
                "image": "registry.example/shop/web:1.4.2",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {
                    "requests": {"cpu": "250m", "memory": "256Mi"},
                    "limits": {"cpu": "1", "memory": "512Mi"},
                },
                "env": [{"name": "MODE", "value": "prod"}],
            }
        ],
    },
    "status": {"phase": "Pending", "qosClass": "Burstable"},
}
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "node-0042",
        "uid": "n42",
        "resourceVersion": "812700",
        "labels": {"kubernetes.io/hostname": "node-0042", "topology.kubernetes.io/zone": "zone-a"},
    },
    "spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "PreferNoSchedule"}]},
    "status": {
        "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}],
        "images": [{"names": ["registry.example/shop/web:1.4.2"], "sizeBytes": 123456789}],
    },
}


def per_object(fn: Callable[[], Any], count: int) -> float:
    fn()  # warm caches (quantity parsing, model classes)
    started = time.perf_counter()
    for _ in range(count):
        fn()
    return (time.perf_counter() - started) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    args = parser.parse_args()

    from kubernetes import client

    from kubesched import Node, Pod

    api = client.ApiClient()
    rows = []
    for kind, raw, ours, model in (("Pod", POD, Pod, "V1Pod"), ("Node", NODE, Node, "V1Node")):
        text = json.dumps(raw)
        model_cls = getattr(client, model)

        class Response:  # what ApiClient.deserialize reads
            data = text

        rows.append((kind, "json.loads", per_object(lambda t=text: json.loads(t), args.count)))
        rows.append(
            (
                kind,
                "json.loads + kubesched." + kind,
                per_object(lambda t=text, o=ours: o(json.loads(t)), args.count),
            )
        )
        rows.append(
            (
                kind,
                f"json.loads + {model}.from_dict",
                per_object(lambda t=text, m=model_cls: m.from_dict(json.loads(t)), args.count // 5),
            )
        )
        rows.append(
            (
                kind,
                "ApiClient.deserialize",
                per_object(
                    lambda r=Response, m=model: api.deserialize(r.data, m, "application/json"),
                    args.count // 5,
                ),
            )
        )
    width = max(len(r[1]) for r in rows)
    print(f"{'kind':5} {'path':{width}}  µs/object")
    for kind, path, micros in rows:
        print(f"{kind:5} {path:{width}}  {micros:8.1f}")


if __name__ == "__main__":
    main()
