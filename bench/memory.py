"""In-memory throughput: ``kubesched simulate``'s code path, no API, one core.

The same :class:`~kubesched.engine.scheduler.Scheduler` as ``kubesched run``, over the in-memory
backend with inline bindings (what ``simulate`` does), on SchedulingBasic nodes and pods with the
default profile. Two passes per size:

- plain (repeated, median): wall and CPU seconds, and the time of each scheduling-cycle extension
  point as the scheduler's own metrics hook sees it (PreFilter, Filter, PreScore, Score);
- profiled (once, at the largest size): ``cProfile`` from the standard library, read back per
  extension point (the framework's ``run_*`` calls), per plugin and point (each plugin's hook
  functions), the core's own steps, and the functions with the most time of their own.
  Profiling slows Python code several times over; its figures are shares, not speeds.
"""

from __future__ import annotations

import cProfile
import pstats
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Node, Pod
from kubesched.config import default_config
from kubesched.config.types import DEFAULT_SCHEDULER_NAME
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.hookspecs import COMPANION_HOOKS, EXTENSION_POINTS
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate

from .workloads import BASIC

__all__ = ["MemoryResult", "ProfileResult", "profile_run", "run_sizes"]

ROOT = Path(__file__).resolve().parents[1]
#: Framework method -> the extension point it runs, in cycle order.
FRAMEWORK_POINTS = {
    "run_pre_enqueue": "PreEnqueue",
    "less": "QueueSort",
    "run_pre_filter": "PreFilter",
    "run_filter": "Filter",
    "run_post_filter": "PostFilter",
    "run_pre_score": "PreScore",
    "run_score": "Score (+NormalizeScore)",
    "run_reserve": "Reserve",
    "run_permit": "Permit",
    "run_pre_bind": "PreBind",
    "run_bind": "Bind",
    "run_post_bind": "PostBind",
}
HOOK_POINTS = {hook: point for point, hook in EXTENSION_POINTS.items()} | {
    hook: f"{point} ({hook})" for hook, point in COMPANION_HOOKS.items() if point
}


def cluster(nodes: int, pods: int) -> Cluster:
    """SchedulingBasic nodes and pending pods for the default profile's ``schedulerName``."""
    pending = []
    for manifest in BASIC.pods(pods, DEFAULT_SCHEDULER_NAME, "memory"):
        manifest["metadata"].update(namespace="bench", uid=f"uid-{manifest['metadata']['name']}")
        pending.append(Pod(manifest))
    return Cluster(nodes=[Node(n) for n in BASIC.nodes(nodes)], pods=pending)


@dataclass
class MemoryResult:
    nodes: int
    pods: int
    scheduled: int
    #: Per repeat.
    wall_seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    #: Extension point -> seconds per pod (median over repeats), from the metrics hook.
    points_us_per_pod: dict[str, float] = field(default_factory=dict)

    @property
    def pods_per_second(self) -> float:
        return self.pods / statistics.median(self.wall_seconds)

    @property
    def pods_per_cpu_second(self) -> float:
        return self.pods / statistics.median(self.cpu_seconds)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "pods": self.pods,
            "scheduled": self.scheduled,
            "wall_seconds": self.wall_seconds,
            "cpu_seconds": self.cpu_seconds,
            "pods_per_second": self.pods_per_second,
            "pods_per_cpu_second": self.pods_per_cpu_second,
            "points_us_per_pod": self.points_us_per_pod,
        }


def _simulate(
    nodes: int, pods: int, on_scheduler: Callable[[Scheduler], object] | None = None
) -> tuple[int, float, float]:
    registry = Registry.installed()
    config = default_config(registry)
    data = cluster(nodes, pods)
    wall, cpu = time.perf_counter(), time.process_time()
    result = simulate(data, config, registry, seed=0, on_scheduler=on_scheduler, tune_gc=True)
    return result.scheduled, time.perf_counter() - wall, time.process_time() - cpu


class _PointTimes:
    """Seconds per extension point, from the scheduler's metrics hook."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def attach(self, scheduler: Scheduler) -> None:
        scheduler.algorithm.observe = self.observe

    def observe(self, point: str, _code: str, _profile: str, seconds: float) -> None:
        self.seconds[point] = self.seconds.get(point, 0.0) + seconds


def run_size(nodes: int, pods: int, repeats: int) -> MemoryResult:
    result = MemoryResult(nodes, pods, 0)
    per_repeat: list[dict[str, float]] = []
    for _ in range(repeats):
        recorder = _PointTimes()
        scheduled, wall, cpu = _simulate(nodes, pods, recorder.attach)
        points = recorder.seconds
        result.scheduled = scheduled
        result.wall_seconds.append(wall)
        result.cpu_seconds.append(cpu)
        per_repeat.append(points)
    for point in per_repeat[0]:
        seconds = statistics.median(p.get(point, 0.0) for p in per_repeat)
        result.points_us_per_pod[point] = seconds / pods * 1e6
    return result


def run_sizes(sizes: list[int], pods: int, repeats: int, progress=print) -> list[MemoryResult]:
    results = []
    for nodes in sizes:
        result = run_size(nodes, pods, repeats)
        progress(
            f"  in memory {nodes:>5} nodes / {pods} pods: {result.scheduled} scheduled, "
            f"{result.pods_per_second:.0f} pods/s (wall), {result.pods_per_cpu_second:.0f} "
            "pods/CPU-s"
        )
        results.append(result)
    return results


# -- the profiled pass ----------------------------------------------------------------------------


@dataclass
class ProfileResult:
    nodes: int
    pods: int
    profiled_seconds: float
    #: (extension point, seconds, calls)
    points: list[tuple[str, float, int]]
    #: (plugin, extension point, seconds, calls)
    plugins: list[tuple[str, str, float, int]]
    #: (core step, seconds, calls)
    core: list[tuple[str, float, int]]
    #: (function, own seconds, cumulative seconds, calls)
    top: list[tuple[str, float, float, int]]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _key(function: Any) -> tuple[str, int, str]:
    code = function.__code__
    return code.co_filename, code.co_firstlineno, code.co_name


def _where(key: tuple[str, int, str]) -> str:
    filename, line, name = key
    path = Path(filename)
    try:
        shown = str(path.resolve().relative_to(ROOT))
    except ValueError:
        shown = filename if filename.startswith("~") or filename == "" else path.name
    return f"{shown}:{line}({name})" if line else f"{name}"


def profile_run(nodes: int, pods: int, top: int = 20) -> ProfileResult:
    """One simulate run under cProfile, read back per point, per plugin and per function."""
    schedulers: list[Scheduler] = []
    profiler = cProfile.Profile()
    profiler.enable()
    _simulate(nodes, pods, schedulers.append)
    profiler.disable()
    stats = pstats.Stats(profiler)
    table: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]

    def cumulative(function: Any) -> tuple[float, int]:
        entry = table.get(_key(function))
        return (entry[3], entry[1]) if entry else (0.0, 0)

    (scheduler,) = schedulers
    framework = next(iter(scheduler.frameworks.values()))
    points = []
    for method, point in FRAMEWORK_POINTS.items():
        seconds, calls = cumulative(getattr(type(framework), method))
        if calls:
            points.append((point, seconds, calls))
    plugins = []
    for name, plugin in framework.plugins.items():
        for hook, point in HOOK_POINTS.items():
            function = getattr(type(plugin), hook, None)
            if function is None or not hasattr(function, "__code__"):
                continue
            seconds, calls = cumulative(function)
            if calls:
                plugins.append((name, point, seconds, calls))
    plugins.sort(key=lambda row: -row[2])
    core_steps = {
        "queue: pop": type(scheduler.queue).pop,
        "queue: add (PreEnqueue, QueueSort)": type(scheduler.queue).add,
        "cache: update_snapshot": type(scheduler.cache).update_snapshot,
        "cache: assume_pod": type(scheduler.cache).assume_pod,
        "algorithm: schedule (PreFilter → pick)": type(scheduler.algorithm).schedule,
        "algorithm: _filter (the Filter loop)": type(scheduler.algorithm)._filter,
        "algorithm: select_host": type(scheduler.algorithm).select_host,
        "scheduler: binding cycle": type(scheduler)._binding_cycle,
        "backend: bind (in-memory)": type(scheduler.backend).bind,
        "events: on_pod_update (binding confirmed)": type(scheduler.handler).on_pod_update,
    }
    core = []
    for step, function in core_steps.items():
        seconds, calls = cumulative(function)
        core.append((step, seconds, calls))
    own = sorted(table.items(), key=lambda item: -item[1][2])[:top]
    return ProfileResult(
        nodes,
        pods,
        stats.total_tt,  # type: ignore[attr-defined]
        points,
        plugins,
        core,
        [(_where(key), entry[2], entry[3], entry[1]) for key, entry in own],
    )
