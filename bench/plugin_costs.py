"""What PodTopologySpread, InterPodAffinity and DefaultPreemption cost, at 1,000 and 5,000 nodes.

The plugins that look at other pods are the ones whose cost grows with the cluster. Each runs
here on a workload that exercises it, through ``simulate``'s code path (in-memory backend, one
thread, the default profile with every plugin, results reused across like pods as in
production), with every plugin call timed:

- *PodTopologySpread*: nodes in 10 zones; pods of 10 workloads, each spread over zones
  (``DoNotSchedule``, maxSkew 1) and hostnames (``ScheduleAnyway``).
- *InterPodAffinity*: 100 ``db`` pods already bound; pods in groups of 10 with required
  anti-affinity on the hostname within the group and a preferred zone affinity to ``db``.
- *DefaultPreemption*: every node full of priority-0 pods (4 × 1 CPU on 4 CPU); pods of
  priority 1,000 asking 1 CPU, each of which preempts one victim (the in-memory backend evicts
  it at once, as ``simulate`` does).

Per case: pods per second (wall, scheduling only), and for the plugin under test the time per
scheduled pod at each of its extension points (all of its calls for that pod added up: Filter is
called once per node evaluated, fewer where results are reused).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Node
from kubesched.config import default_config
from kubesched.config.types import DEFAULT_SCHEDULER_NAME
from kubesched.engine.runtime import PluginCall
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate
from kubesched.testing.builders import make_node, make_pod

__all__ = ["PLUGIN_WORKLOADS", "PluginCost", "run_plugin_costs"]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
#: Hooks timed, in cycle order, with the point name shown.
HOOKS = {
    "pre_filter": "PreFilter",
    "filter": "Filter",
    "post_filter": "PostFilter",
    "pre_score": "PreScore",
    "score": "Score",
    # A plugin's whole-column Score (one call per cycle for all nodes) counts as its Score.
    "score_nodes": "Score",
    "normalize_score": "NormalizeScore",
}


@dataclass
class PluginCost:
    plugin: str
    nodes: int
    pods: int
    scheduled: int = 0
    seconds: float = 0.0
    #: Point -> microseconds per scheduled pod (the plugin's own calls).
    us_per_pod: dict[str, float] = field(default_factory=dict)
    #: Point -> calls per scheduled pod.
    calls_per_pod: dict[str, float] = field(default_factory=dict)

    @property
    def pods_per_second(self) -> float:
        return self.scheduled / self.seconds if self.seconds else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "pods_per_second": self.pods_per_second}


def _node(i: int, zones: int = 10) -> Node:
    return (
        make_node(f"node-{i:05d}")
        .label(HOSTNAME, f"node-{i:05d}")
        .zone(f"zone-{i % zones}")
        .capacity(cpu="4", memory="32Gi", pods="110")
        .obj()
    )


def _pending(name: str) -> Any:
    return make_pod(name).uid(f"uid-{name}").scheduler(DEFAULT_SCHEDULER_NAME)


def spread_cluster(nodes: int, pods: int) -> Cluster:
    pending = []
    for i in range(pods):
        app = f"app-{i % 10}"
        pending.append(
            _pending(f"spread-{i:05d}")
            .req(cpu="100m", memory="500Mi")
            .label("app", app)
            .spread_constraint(1, ZONE, "DoNotSchedule", {"app": app})
            .spread_constraint(1, HOSTNAME, "ScheduleAnyway", {"app": app})
            .obj()
        )
    return Cluster(nodes=[_node(i) for i in range(nodes)], pods=pending)


def affinity_cluster(nodes: int, pods: int) -> Cluster:
    existing = [
        _pending(f"db-{i:03d}")
        .req(cpu="100m", memory="500Mi")
        .label("app", "db")
        .node(f"node-{i * (nodes // 100):05d}")
        .obj()
        for i in range(100)
    ]
    pending = []
    for i in range(pods):
        group = f"group-{i // 10}"
        pending.append(
            _pending(f"affinity-{i:05d}")
            .req(cpu="100m", memory="500Mi")
            .label("group", group)
            .pod_anti_affinity_in("group", HOSTNAME, group)
            .pod_affinity_in("app", ZONE, "db", weight=50)
            .obj()
        )
    return Cluster(nodes=[_node(i) for i in range(nodes)], pods=existing + pending)


def preemption_cluster(nodes: int, pods: int) -> Cluster:
    existing = [
        _pending(f"low-{n:05d}-{k}").req(cpu="1").priority(0).node(f"node-{n:05d}").obj()
        for n in range(nodes)
        for k in range(4)
    ]
    pending = [_pending(f"high-{i:05d}").req(cpu="1").priority(1000).obj() for i in range(pods)]
    return Cluster(nodes=[_node(i) for i in range(nodes)], pods=existing + pending)


#: Plugin under test -> (cluster builder, pods per case).
PLUGIN_WORKLOADS: dict[str, tuple[Callable[[int, int], Cluster], int]] = {
    "PodTopologySpread": (spread_cluster, 1000),
    "InterPodAffinity": (affinity_cluster, 1000),
    "DefaultPreemption": (preemption_cluster, 100),
}


class _Timer:
    """Wraps every plugin call of a scheduler's frameworks with a clock."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = {}
        self.calls: dict[tuple[str, str], int] = {}
        self.started = 0.0

    def attach(self, scheduler: Scheduler) -> None:
        for framework in scheduler.frameworks.values():
            calls: dict[str, list[PluginCall]] = framework._calls
            for hook in HOOKS:
                calls[hook] = [
                    PluginCall(c.plugin, self._timed(c.plugin, hook, c.call), c.weight)
                    for c in calls[hook]
                ]
        self.started = time.perf_counter()

    def _timed(self, plugin: str, hook: str, call: Callable[..., Any]) -> Callable[..., Any]:
        key = (plugin, hook)
        seconds, calls = self.seconds, self.calls
        clock = time.perf_counter

        def timed(*args: Any) -> Any:
            started = clock()
            try:
                return call(*args)
            finally:
                seconds[key] = seconds.get(key, 0.0) + clock() - started
                calls[key] = calls.get(key, 0) + 1

        return timed


def run_plugin_cost(plugin: str, nodes: int, pods: int | None = None) -> PluginCost:
    build, default_pods = PLUGIN_WORKLOADS[plugin]
    pods = pods or default_pods
    registry = Registry.installed()
    cluster = build(nodes, pods)
    pending = sum(1 for p in cluster.pods if not p.node_name)
    timer = _Timer()
    result = simulate(
        cluster,
        default_config(registry),
        registry,
        seed=0,
        on_scheduler=timer.attach,
        tune_gc=True,
    )
    cost = PluginCost(plugin, nodes, pending, result.scheduled)
    cost.seconds = time.perf_counter() - timer.started
    scheduled = max(result.scheduled, 1)
    for hook, point in HOOKS.items():
        key = (plugin, hook)
        if key in timer.calls:
            us = timer.seconds[key] / scheduled * 1e6
            cost.us_per_pod[point] = cost.us_per_pod.get(point, 0.0) + us
            calls = timer.calls[key] / scheduled
            cost.calls_per_pod[point] = cost.calls_per_pod.get(point, 0.0) + calls
    return cost


def run_plugin_costs(
    sizes: list[int], pods: int | None = None, progress: Callable[[str], object] = print
) -> list[PluginCost]:
    costs = []
    for plugin in PLUGIN_WORKLOADS:
        for nodes in sizes:
            cost = run_plugin_cost(plugin, nodes, pods)
            progress(
                f"  {plugin} at {nodes} nodes: {cost.scheduled}/{cost.pods} scheduled, "
                f"{cost.pods_per_second:.0f} pods/s, "
                + ", ".join(f"{p} {us:.0f} µs/pod" for p, us in cost.us_per_pod.items())
            )
            costs.append(cost)
    return costs


if __name__ == "__main__":
    import sys

    run_plugin_costs([int(n) for n in (sys.argv[1:] or ["1000", "5000"])])
