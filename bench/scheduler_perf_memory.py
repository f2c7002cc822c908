"""scheduler_perf's workloads in memory: pods per CPU-second on one core.

Each workload has the shape of its namesake in kubernetes v1.37's
``test/integration/scheduler_perf`` (the templates' requests, labels, constraints and node
labels), built as a cluster and run through ``simulate``'s code path: the in-memory backend, one
thread, the default profile with every installed plugin, bindings inline; CPU time from the
first scheduling cycle to the last pod (the initial lists excluded). The pods scheduler_perf
creates before measuring (``initPods``) are bound from the start, round-robin over the nodes, as
its scheduler would have spread them; the measured pods are pending.

- *SchedulingBasic*: ``node-default`` (4 CPU, 32Gi, 110 pods), ``pod-default`` (100m, 500Mi).
- *SchedulingNodeAffinity*: nodes in ``zone1``; pods require ``zone In [zone1, zone2]``.
- *SchedulingPodAffinity*: nodes in ``zone1``; ``color=blue`` pods (``sched-0`` bound,
  ``sched-1`` pending) require a ``color=blue`` pod in their zone, across both namespaces.
- *SchedulingPodAntiAffinity*: ``color=green`` pods refuse a node holding another one.
- *TopologySpreading* / *PreferredTopologySpreading*: nodes in three zones (``moon-1..3``);
  ``color=blue`` pods spread over zones with maxSkew 5, ``DoNotSchedule`` / ``ScheduleAnyway``.
- *PreemptionBasic*: every node full of four 900m priority-0 pods; pods of priority 10 asking
  3 CPU, each of which preempts three (the in-memory backend evicts at once).
- *PreemptionAsync*: the same nodes; ``pod-default`` pods with one preemptor among every 114
  (scheduler_perf adds one every 200 ms while its floor is 570 pods/s).
- *SchedulingWithMixedChurn*: ``pod-default`` pods while, every 100 scheduling cycles, a node,
  an unschedulable pod (priority 10, 9 CPU) and a Service are created and the previous ones
  deleted (scheduler_perf's ``churn`` opcode, ``recreate`` mode).
- *SchedulingCSIPVs*: nodes whose CSINode allows 39 ``ebs.csi.aws.com`` volumes; every pod
  mounts its own claim, bound to a CSI PersistentVolume.
- *SchedulingWithResourceClaimTemplate* (DRA): nodes with a ResourceSlice of 10 devices of
  ``test-driver.cdi.k8s.io`` each; every pod has its claim for one device of the class that
  selects the driver (the claim the template would generate).

``python -m bench.scheduler_perf_memory [WORKLOAD ...] [--nodes N] [--pods N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Node, Pod
from kubesched.config import default_config
from kubesched.config.types import DEFAULT_SCHEDULER_NAME
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate
from kubesched.testing.builders import PodBuilder, make_node, make_pod

__all__ = ["WORKLOADS", "MemoryRun", "MemoryWorkload", "run_workload"]

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CSI_DRIVER = "ebs.csi.aws.com"
DRA_DRIVER = "test-driver.cdi.k8s.io"
DRA_CLASS = "test-class"


@dataclass(frozen=True)
class MemoryWorkload:
    name: str
    #: (nodes, measured pods) -> the cluster.
    build: Callable[[int, int], Cluster]
    #: scheduler_perf's performance case: nodes, measured pods, its floor (pods/s, 6 cores).
    nodes: int
    pods: int
    floor: int | None
    #: Scheduling cycles between two churn steps (0: no churn).
    churn_every: int = 0


@dataclass
class MemoryRun:
    workload: str
    nodes: int
    pods: int
    scheduled: int
    cpu_seconds: float
    wall_seconds: float

    @property
    def pods_per_cpu_second(self) -> float:
        return self.scheduled / self.cpu_seconds if self.cpu_seconds else 0.0


# -- scheduler_perf's templates --------------------------------------------------------------


def node_default(i: int, **labels: str) -> Node:
    name = f"node-{i:05d}"
    builder = make_node(name).label(HOSTNAME, name).capacity(cpu="4", memory="32Gi", pods="110")
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.obj()


def pod_default(name: str, namespace: str = "default", cpu: str = "100m") -> PodBuilder:
    return (
        make_pod(name, namespace)
        .uid(f"uid-{namespace}-{name}")
        .scheduler(DEFAULT_SCHEDULER_NAME)
        .req(cpu=cpu, memory="500Mi")
    )


def _bound(builders: list[PodBuilder], nodes: list[Node]) -> list[Pod]:
    return [b.node(nodes[i % len(nodes)].name).obj() for i, b in enumerate(builders)]


def _nodes(count: int, **labels: str) -> list[Node]:
    return [node_default(i, **labels) for i in range(count)]


def _zoned(count: int, zones: tuple[str, ...]) -> list[Node]:
    return [node_default(i, **{ZONE: zones[i % len(zones)]}) for i in range(count)]


# -- the workloads ---------------------------------------------------------------------------


def basic(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    init = _bound([pod_default(f"init-{i:05d}") for i in range(nodes)], listed)
    pending = [pod_default(f"pod-{i:05d}").obj() for i in range(pods)]
    return Cluster(nodes=listed, pods=init + pending)


def node_affinity(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes, **{ZONE: "zone1"})
    init = _bound([pod_default(f"init-{i:05d}") for i in range(nodes)], listed)
    pending = [
        pod_default(f"node-affinity-{i:05d}").node_affinity_in(ZONE, "zone1", "zone2").obj()
        for i in range(pods)
    ]
    return Cluster(nodes=listed, pods=init + pending)


def _affinity_pod(name: str, namespace: str, anti: bool = False) -> PodBuilder:
    """``pod-with-pod-affinity`` (blue, zone) or ``pod-with-pod-anti-affinity`` (green,
    hostname): a required term selecting its own colour in both namespaces."""
    color, topology_key = ("green", HOSTNAME) if anti else ("blue", ZONE)
    return (
        pod_default(name, namespace)
        .label("color", color)
        .pod_affinity(topology_key, {"color": color}, namespaces=("sched-1", "sched-0"), anti=anti)
    )


def pod_affinity(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes, **{ZONE: "zone1"})
    init = _bound([_affinity_pod(f"init-{i:05d}", "sched-0") for i in range(nodes)], listed)
    pending = [_affinity_pod(f"affinity-{i:05d}", "sched-1").obj() for i in range(pods)]
    return Cluster(nodes=listed, pods=init + pending)


def pod_anti_affinity(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    # scheduler_perf: 1,000 bound for 5,000 nodes, one in five nodes taken.
    init = [
        _affinity_pod(f"init-{i:05d}", "sched-0", anti=True).node(node.name).obj()
        for i, node in enumerate(listed[::5])
    ]
    pending = [_affinity_pod(f"anti-{i:05d}", "sched-1", anti=True).obj() for i in range(pods)]
    return Cluster(nodes=listed, pods=init + pending)


def _spreading(when: str) -> Callable[[int, int], Cluster]:
    def build(nodes: int, pods: int) -> Cluster:
        listed = _zoned(nodes, ("moon-1", "moon-2", "moon-3"))
        init = _bound([pod_default(f"init-{i:05d}") for i in range(nodes)], listed)
        pending = [
            pod_default(f"spreading-{i:05d}")
            .label("color", "blue")
            .spread_constraint(5, ZONE, when, {"color": "blue"})
            .obj()
            for i in range(pods)
        ]
        return Cluster(nodes=listed, pods=init + pending)

    return build


def _low_priority(nodes: list[Node]) -> list[Pod]:
    return [
        pod_default(f"low-{n:05d}-{k}", cpu="900m").priority(0).node(node.name).obj()
        for n, node in enumerate(nodes)
        for k in range(4)
    ]


def _preemptor(name: str) -> Pod:
    return pod_default(name, cpu="3").priority(10).obj()


def preemption_basic(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    pending = [_preemptor(f"high-{i:05d}") for i in range(pods)]
    return Cluster(nodes=listed, pods=_low_priority(listed) + pending)


#: PreemptionAsync: one preemptor per this many measured pods (570 pods/s against 5/s).
PREEMPTORS_EVERY = 114


def preemption_async(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    pending: list[Pod] = []
    for i in range(pods):
        if i % PREEMPTORS_EVERY == 0:
            pending.append(_preemptor(f"high-{i:05d}"))
        pending.append(pod_default(f"pod-{i:05d}").obj())
    return Cluster(nodes=listed, pods=_low_priority(listed) + pending)


def mixed_churn(nodes: int, pods: int) -> Cluster:
    return basic(nodes, pods)


class _Churn:
    """scheduler_perf's ``churn`` in ``recreate`` mode, every ``every`` scheduling cycles: the
    node, unschedulable pod and Service made last time are deleted and new ones made."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.step = 0

    def attach(self, scheduler: Scheduler) -> None:
        backend: Any = scheduler.backend
        schedule_one = scheduler.schedule_one
        cycles = 0
        made: list[tuple[str, Any]] = []

        def churn() -> None:
            for kind, obj in made:
                if kind == "Node":
                    backend.delete_node(obj.name)
                elif kind == "Pod":
                    backend.delete_pod(obj)
                else:
                    backend.delete_object(kind, "default", obj["metadata"]["name"])
            made.clear()
            self.step += 1
            node = node_default(90_000 + self.step)
            backend.add_node(node)
            pod = pod_default(f"churn-{self.step:05d}", cpu="9").priority(10).obj()
            backend.add_pod(pod)
            service = backend.create_object(
                "Service",
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": f"churn-{self.step:05d}", "namespace": "default"},
                    "spec": {"selector": {"app": f"churn-{self.step}"}, "ports": [{"port": 80}]},
                },
            )
            made.extend([("Node", node), ("Pod", pod), ("Service", service)])

        def schedule_one_with_churn(*args: Any, **kwargs: Any) -> bool:
            nonlocal cycles
            cycles += 1
            if cycles % self.every == 0:
                churn()
            return schedule_one(*args, **kwargs)

        scheduler.schedule_one = schedule_one_with_churn  # type: ignore[method-assign]


def csi_pvs(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    csinodes = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "CSINode",
            "metadata": {"name": node.name},
            "spec": {
                "drivers": [{"name": CSI_DRIVER, "nodeID": node.name, "allocatable": {"count": 39}}]
            },
        }
        for node in listed
    ]
    pvs, pvcs, pending = [], [], []
    for i in range(pods):
        claim, volume = f"pvc-{i:05d}", f"pv-{i:05d}"
        pvcs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": claim,
                    "namespace": "default",
                    "uid": f"uid-{claim}",
                    "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "volumeName": volume,
                },
                "status": {"phase": "Bound"},
            }
        )
        pvs.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": volume},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "csi": {"driver": CSI_DRIVER, "volumeHandle": f"vol-{i:05d}"},
                    "claimRef": {"namespace": "default", "name": claim, "uid": f"uid-{claim}"},
                },
                "status": {"phase": "Bound"},
            }
        )
        pending.append(pod_default(f"pod-{i:05d}").pvc(claim).obj())
    objects = {"CSINode": csinodes, "PersistentVolume": pvs, "PersistentVolumeClaim": pvcs}
    return Cluster(nodes=listed, pods=pending, objects=objects)


#: DRA: devices per node (scheduler_perf's ``maxClaimsPerNode`` at 500 nodes).
DEVICES_PER_NODE = 10


def dra(nodes: int, pods: int) -> Cluster:
    listed = _nodes(nodes)
    device_class = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRA_CLASS},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]},
    }
    slices = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{node.name}-{DRA_DRIVER}"},
            "spec": {
                "driver": DRA_DRIVER,
                "nodeName": node.name,
                "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"dra-{d}"} for d in range(DEVICES_PER_NODE)],
            },
        }
        for node in listed
    ]
    claims, pending = [], []
    for i in range(pods):
        name = f"pod-{i:05d}"
        claims.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": f"{name}-gpu", "namespace": "test", "uid": f"uid-{name}-gpu"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "req-0", "exactly": {"deviceClassName": DRA_CLASS}}]
                    }
                },
            }
        )
        pending.append(
            pod_default(name, "test")
            .spec(resourceClaims=[{"name": "gpu", "resourceClaimName": f"{name}-gpu"}])
            .obj()
        )
    objects = {"DeviceClass": [device_class], "ResourceSlice": slices, "ResourceClaim": claims}
    return Cluster(nodes=listed, pods=pending, objects=objects)


#: Name -> workload, with scheduler_perf's performance case (v1.37 floors; None: none set).
WORKLOADS: dict[str, MemoryWorkload] = {
    w.name: w
    for w in [
        MemoryWorkload("SchedulingBasic", basic, 5000, 10000, 680),
        MemoryWorkload("SchedulingNodeAffinity", node_affinity, 5000, 10000, 540),
        MemoryWorkload("SchedulingPodAffinity", pod_affinity, 5000, 5000, 70),
        MemoryWorkload("SchedulingPodAntiAffinity", pod_anti_affinity, 5000, 2000, 180),
        MemoryWorkload("TopologySpreading", _spreading("DoNotSchedule"), 5000, 5000, 460),
        MemoryWorkload("PreferredTopologySpreading", _spreading("ScheduleAnyway"), 5000, 5000, 340),
        MemoryWorkload("PreemptionBasic", preemption_basic, 1000, 1000, None),
        MemoryWorkload("PreemptionAsync", preemption_async, 5000, 5000, 570),
        MemoryWorkload("SchedulingWithMixedChurn", mixed_churn, 5000, 10000, 710, 100),
        MemoryWorkload("SchedulingCSIPVs", csi_pvs, 5000, 5000, 100),
        MemoryWorkload("SchedulingWithResourceClaimTemplate", dra, 500, 2500, 56),
    ]
}


def run_workload(name: str, nodes: int | None = None, pods: int | None = None) -> MemoryRun:
    """One run: CPU seconds (this process) from the first scheduling cycle to the last pod."""
    workload = WORKLOADS[name]
    nodes, pods = nodes or workload.nodes, pods or workload.pods
    registry = Registry.installed()
    cluster = workload.build(nodes, pods)
    pending = sum(1 for p in cluster.pods if not p.node_name)
    started: dict[str, float] = {}
    churn = _Churn(workload.churn_every) if workload.churn_every else None

    def on_scheduler(scheduler: Scheduler) -> None:
        if churn is not None:
            churn.attach(scheduler)
        schedule_one = scheduler.schedule_one

        def timed_from_the_first_cycle(*args: Any, **kwargs: Any) -> bool:
            # The initial lists (every node and bound pod through the event handlers) are
            # not scheduling: the clock starts at the first cycle, as scheduler_perf's does
            # at its measured pods.
            if not started:
                started["cpu"], started["wall"] = time.process_time(), time.perf_counter()
            return schedule_one(*args, **kwargs)

        scheduler.schedule_one = timed_from_the_first_cycle  # type: ignore[method-assign]

    result = simulate(
        cluster, default_config(registry), registry, seed=0, on_scheduler=on_scheduler, tune_gc=True
    )
    cpu, wall = time.process_time() - started["cpu"], time.perf_counter() - started["wall"]
    return MemoryRun(name, nodes, pending, result.scheduled, cpu, wall)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), metavar="WORKLOAD")
    parser.add_argument("--nodes", type=int, help="nodes (default: scheduler_perf's)")
    parser.add_argument("--pods", type=int, help="measured pods (default: scheduler_perf's)")
    parser.add_argument("--runs", type=int, default=1, help="runs per workload (median shown)")
    args = parser.parse_args(argv)
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)}; known: {', '.join(WORKLOADS)}")
    print("| workload | nodes | pods scheduled | pods per CPU-second | runs | floor (6 cores) |")
    print("|---|---|---|---|---|---|")
    for name in args.workloads:
        runs = [run_workload(name, args.nodes, args.pods) for _ in range(args.runs)]
        rates = [r.pods_per_cpu_second for r in runs]
        first = runs[0]
        floor = WORKLOADS[name].floor
        print(
            f"| {name} | {first.nodes:,} | {first.scheduled:,} / {first.pods:,} "
            f"| {statistics.median(rates):,.0f} ({', '.join(f'{r:,.0f}' for r in rates)}) "
            f"| {len(runs)} | {floor if floor is not None else '—'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
