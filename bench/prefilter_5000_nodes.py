"""PreFilter cost of PodTopologySpread and InterPodAffinity on a 5,000-node, 100,000-pod snapshot.

    python bench/prefilter_5000_nodes.py [--nodes N] [--pods-per-node M] [--repeat R]

Nodes have a hostname and one of 50 zones; every node holds M pods of 20 workloads (``app``
labels), one pod in 25 with required anti-affinity on the hostname. Each plugin's PreFilter
runs for a pod of one workload: cold (first cycle: every node's pods are matched), warm (the
next cycles: nodes unchanged since are answered from the per-node counts) and after one node
changed (as after binding the previous pod); then PreScore for a pod with soft constraints or
preferred terms. Prints milliseconds per call and the Filter time per node; the figures go in
the plugins' READMEs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from kubesched_inter_pod_affinity import InterPodAffinity
from kubesched_pod_topology_spread import PodTopologySpread

from kubesched import CycleState, Handle, InMemoryBackend, Node, NodeInfo, Pod, Snapshot

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def pod(name: str, app: str, node: str = "", anti: bool = False, **spec: Any) -> Pod:
    spec = dict(spec)
    if node:
        spec["nodeName"] = node
    if anti:
        term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}
        spec.setdefault("affinity", {})["podAntiAffinity"] = {REQUIRED: [term]}
    return Pod({"metadata": {"name": name, "labels": {"app": app}}, "spec": spec})


def build(nodes: int, pods_per_node: int) -> Snapshot:
    infos = []
    count = 0
    for n in range(nodes):
        name = f"node-{n}"
        node = Node(
            {
                "metadata": {"name": name, "labels": {HOSTNAME: name, ZONE: f"zone-{n % 50}"}},
                "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
            }
        )
        info = NodeInfo(node)
        for _ in range(pods_per_node):
            info.add_pod(pod(f"p-{count}", f"app-{count % 20}", name, anti=count % 25 == 0))
            count += 1
        infos.append(info)
    return Snapshot(infos)


def timed(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def run_pre_score(name: str, plugin: Any, incoming: Pod, snapshot: Snapshot, repeat: int) -> None:
    nodes = snapshot.node_infos

    def pre_score() -> None:
        assert plugin.pre_score(CycleState(), incoming, nodes) is None

    cold = timed(pre_score, 1)
    warm = timed(pre_score, repeat)
    print(f"{name:18} PreScore  cold {cold:7.1f} ms | warm {warm:6.1f} ms")


def run(name: str, plugin: Any, incoming: Pod, snapshot: Snapshot, repeat: int) -> None:
    nodes = snapshot.node_infos
    state = CycleState()

    def pre_filter() -> None:
        assert plugin.pre_filter(state, incoming, nodes) is None

    cold = timed(pre_filter, 1)
    warm = timed(pre_filter, repeat)

    def one_node_changed() -> None:
        changed = nodes[0].clone()
        changed.add_pod(pod(f"new-{time.perf_counter_ns()}", "app-0", nodes[0].name))
        snapshot._replace(changed)
        pre_filter()

    changed = timed(one_node_changed, repeat)
    pre_filter()
    start = time.perf_counter()
    for info in nodes:
        plugin.filter(state, incoming, info)
    per_node = (time.perf_counter() - start) / len(nodes) * 1e6
    print(
        f"{name:18} PreFilter cold {cold:7.1f} ms | warm {warm:6.1f} ms | "
        f"one node changed {changed:6.1f} ms | Filter {per_node:4.1f} µs/node"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=20)
    opts = parser.parse_args()
    snapshot = build(opts.nodes, opts.pods_per_node)
    handle = Handle("bench", InMemoryBackend(), lambda: snapshot)
    print(f"{opts.nodes} nodes x {opts.pods_per_node} pods")

    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "app-0"}},
            }
            for key in (ZONE, HOSTNAME)
        ]
    }
    run(
        "PodTopologySpread",
        PodTopologySpread({}, handle),
        pod("incoming", "app-0", **spread),
        snapshot,
        opts.repeat,
    )
    soft = {
        "topologySpreadConstraints": [
            {**c, "whenUnsatisfiable": "ScheduleAnyway"}
            for c in spread["topologySpreadConstraints"]
        ]
    }
    run_pre_score(
        "PodTopologySpread",
        PodTopologySpread({}, handle),
        pod("soft", "app-0", **soft),
        snapshot,
        opts.repeat,
    )
    affinity = {
        "affinity": {
            "podAffinity": {
                REQUIRED: [
                    {"labelSelector": {"matchLabels": {"app": "app-1"}}, "topologyKey": ZONE}
                ]
            }
        }
    }
    run(
        "InterPodAffinity",
        InterPodAffinity({}, handle),
        pod("incoming", "app-0", anti=True, **affinity),
        snapshot,
        opts.repeat,
    )
    preferred = [
        {
            "weight": 10,
            "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "app-1"}},
                "topologyKey": ZONE,
            },
        },
    ]
    run_pre_score(
        "InterPodAffinity",
        InterPodAffinity({}, handle),
        pod("soft", "app-0", affinity={"podAffinity": {PREFERRED: preferred}}),
        snapshot,
        opts.repeat,
    )


if __name__ == "__main__":
    main()
