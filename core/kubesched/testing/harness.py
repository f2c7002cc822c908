"""Run one plugin, or a whole profile, over a fake cluster without installing anything.

- :class:`FakeCluster` holds nodes and pods; its :meth:`~FakeCluster.snapshot` and
  :meth:`~FakeCluster.handle` let a test build a plugin (:func:`new_plugin`) and call its hooks
  directly.
- :class:`Harness` runs the real scheduler (queue, cache, framework, binding) over such a
  cluster and returns, for each pod, a :class:`~kubesched.engine.explain_recorder.CycleReport`:
  every
  plugin's verdict per node, raw/normalized/weighted scores, the chosen node and the message.
  ``Harness.for_plugin(MyPlugin)`` enables one plugin alone at every point it implements.
- ``make_scheduler({"MyFilter": MyFilter}, {"filter": {"enabled": [{"name": "MyFilter"}]}},
  nodes=[...], pods=[...])`` is the lower level: a ready
  :class:`~kubesched.engine.scheduler.Scheduler`.

The registry always holds exactly the plugins passed (plus a first-in-first-out QueueSort and a
binder from this module, unless the profile configures those points), so a test never depends on
what happens to be installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.objects import Node, Pod
from kubesched.backends.memory import InMemoryBackend
from kubesched.config import SchedulerConfiguration, parse_config
from kubesched.engine.explain_recorder import CycleReport, ExplainRecorder
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.backend import BindError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.hookspecs import hookimpl
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.registry import Registry, check_hook_names, extension_points_of
from kubesched.framework.results import QueuedPodInfo
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status
from kubesched.framework.waiting_pods import WaitingPod
from kubesched.service.simulate import VirtualClock
from kubesched.testing.builders import NodeBuilder, PodBuilder

__all__ = [
    "FIFO_SORT",
    "TEST_BINDER",
    "FakeCluster",
    "FifoSort",
    "Harness",
    "TestBinder",
    "make_config",
    "make_scheduler",
    "make_snapshot",
    "new_plugin",
    "plugin_profile",
    "run_until_idle",
]

FIFO_SORT = "FifoSort"
TEST_BINDER = "TestBinder"


class FifoSort:
    """QueueSort: first queued, first scheduled."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def queue_sort_less(self, pod_a: QueuedPodInfo, pod_b: QueuedPodInfo) -> bool:
        return pod_a.timestamp < pod_b.timestamp


class TestBinder:
    """Bind: through the backend, as DefaultBinder does."""

    __test__ = False  # not a pytest test class

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            self.handle.backend.bind(pod, node_name)
        except BindError as exc:
            return Status.from_error(exc)
        return None


def make_config(
    plugins: Mapping[str, type],
    profile: Mapping[str, Any] | None = None,
    scheduler_name: str = "custom-scheduler",
    **top_level: Any,
) -> tuple[SchedulerConfiguration, Registry]:
    """A validated configuration with one profile, over a registry of exactly ``plugins``.

    ``profile`` is the profile's body (``plugins``, ``pluginConfig``, …). FifoSort and TestBinder
    are enabled at queueSort and bind unless the profile configures those points.
    """
    for name, plugin in plugins.items():  # even those the profile leaves out
        check_hook_names(plugin, name, f"{plugin.__module__}:{plugin.__qualname__}")
    registry = Registry({FIFO_SORT: FifoSort, TEST_BINDER: TestBinder, **plugins})
    body = dict(profile or {})
    points = dict(body.get("plugins") or {})
    points.setdefault("queueSort", {"enabled": [{"name": FIFO_SORT}]})
    points.setdefault("bind", {"enabled": [{"name": TEST_BINDER}]})
    body["plugins"] = points
    data = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": scheduler_name, **body}],
        **top_level,
    }
    return parse_config(data, registry), registry


def make_scheduler(
    plugins: Mapping[str, type],
    profile: Mapping[str, Any] | None = None,
    nodes: Iterable[Node] = (),
    pods: Iterable[Pod] = (),
    *,
    seed: int = 0,
    clock: Callable[[], float] | None = None,
    inline_binding: bool = True,
    start: bool = True,
    wait_on_clock: bool | None = None,
    objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    binding_workers: int | None = None,
    **top_level: Any,
) -> tuple[Scheduler, InMemoryBackend]:
    """A scheduler over an in-memory cluster of ``nodes`` and ``pods`` (started by default);
    ``objects`` are the consulted kinds' objects, by kind (PersistentVolumes, …);
    ``binding_workers``: binding cycles in flight at once (without inline binding).

    With a ``clock`` and inline binding, waits at Permit run on that clock (``wait_on_clock``,
    see :class:`~kubesched.engine.scheduler.Scheduler`): nothing blocks on them."""
    config, registry = make_config(plugins, profile, **top_level)
    backend = InMemoryBackend(nodes, pods, objects)
    kwargs: dict[str, Any] = {"seed": seed, "inline_binding": inline_binding}
    if binding_workers is not None:
        kwargs["binding_workers"] = binding_workers
    if clock is not None:
        kwargs["clock"] = clock
    if wait_on_clock is None:
        wait_on_clock = clock is not None and inline_binding
    kwargs["wait_on_clock"] = wait_on_clock
    scheduler = Scheduler(config, backend, registry, **kwargs)
    if start:
        scheduler.start()
    return scheduler, backend


def run_until_idle(scheduler: Scheduler, max_cycles: int = 10_000) -> int:
    """Run scheduling cycles until the active queue is empty; returns how many ran."""
    cycles = 0
    while cycles < max_cycles and scheduler.schedule_one(timeout=0):
        cycles += 1
    scheduler.wait_for_bindings(timeout=30)
    return cycles


# -- a fake cluster for calling plugins directly ---------------------------------------------------
NodeLike = Node | NodeBuilder
PodLike = Pod | PodBuilder


def _node(node: NodeLike) -> Node:
    return node.obj() if isinstance(node, NodeBuilder) else node


def _pod(pod: PodLike) -> Pod:
    return pod.obj() if isinstance(pod, PodBuilder) else pod


def make_snapshot(nodes: Iterable[NodeLike], pods: Iterable[PodLike] = ()) -> Snapshot:
    """A snapshot of ``nodes``, each holding the ``pods`` bound to it (``spec.nodeName``)."""
    infos = {node.name: NodeInfo(node) for node in map(_node, nodes)}
    for pod in map(_pod, pods):
        if pod.node_name in infos:
            infos[pod.node_name].add_pod(pod)
    return Snapshot(list(infos.values()))


class FakeCluster:
    """Nodes and pods for a test: a snapshot and a handle to build and call plugins directly.

    Pods with ``spec.nodeName`` count as load on their node; pending pods are what a
    :class:`Harness` or ``kubesched simulate`` would schedule.
    """

    def __init__(
        self,
        nodes: Iterable[NodeLike] = (),
        pods: Iterable[PodLike] = (),
        objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []
        #: Objects plugins consult (``Handle.lister``), by kind: PersistentVolumes, CSINodes, …
        self.objects: dict[str, list[Mapping[str, Any]]] = {
            kind: list(items) for kind, items in (objects or {}).items()
        }
        self.add(*nodes, *pods)

    def add(self, *objects: NodeLike | PodLike) -> FakeCluster:
        """Add nodes and pods (objects or builders); returns the cluster, so calls chain."""
        for obj in objects:
            if isinstance(obj, (Node, NodeBuilder)):
                self.nodes.append(_node(obj))
            else:
                self.pods.append(_pod(obj))
        return self

    def snapshot(self) -> Snapshot:
        return make_snapshot(self.nodes, self.pods)

    def node_info(self, name: str) -> NodeInfo:
        """The node ``name`` with the pods bound to it."""
        info = self.snapshot().get(name)
        if info is None:
            known = ", ".join(node.name for node in self.nodes) or "none"
            raise KeyError(f"no node {name!r} in the fake cluster (nodes: {known})")
        return info

    def handle(self, profile_name: str = "custom-scheduler") -> Handle:
        """A handle whose snapshot always shows the cluster as it is now."""
        backend = InMemoryBackend(self.nodes, self.pods, self.objects)
        return Handle(profile_name, backend, self.snapshot)

    def manifests(self) -> list[dict[str, Any]]:
        others = [dict(o) for items in self.objects.values() for o in items]
        return [*others, *(dict(n.raw) for n in self.nodes), *(dict(p.raw) for p in self.pods)]

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the cluster as a ``List`` manifest (for ``kubesched simulate`` or ``explain``)."""
        target = Path(path)
        items = self.manifests()
        target.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
        return target


def new_plugin(
    plugin: type, args: Mapping[str, Any] | None = None, cluster: FakeCluster | None = None
) -> Any:
    """Build ``plugin`` as a profile would, with a handle over ``cluster`` (empty by default).

    A ``@hookimpl`` method that is not a hook (``def filters``) is a
    :class:`~kubesched.PluginLoadError`, as at start-up."""
    check_hook_names(plugin, plugin_name(plugin), f"{plugin.__module__}:{plugin.__qualname__}")
    return plugin(dict(args or {}), (cluster or FakeCluster()).handle())


# -- running the scheduler and explaining each cycle ---------------------------------------------
def plugin_name(plugin: type) -> str:
    """A plugin class's profile name: its ``name`` attribute, else the class name."""
    name = getattr(plugin, "name", None)
    return name if isinstance(name, str) and name else plugin.__name__


def plugin_profile(
    plugin: type,
    args: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    weight: int = 1,
) -> dict[str, Any]:
    """A profile body enabling ``plugin`` alone at every extension point it implements
    (:class:`~kubesched.PluginLoadError` for a ``@hookimpl`` method that is not a hook)."""
    name = name or plugin_name(plugin)
    check_hook_names(plugin, name, f"{plugin.__module__}:{plugin.__qualname__}")
    points: dict[str, Any] = {}
    for point in extension_points_of(plugin):
        entry: dict[str, Any] = {"name": name}
        if point == "score":
            entry["weight"] = weight
        enabled = [entry, {"name": TEST_BINDER}] if point == "bind" else [entry]
        points[point] = {"enabled": enabled}
    body: dict[str, Any] = {"plugins": points}
    if args:
        body["pluginConfig"] = [{"name": name, "args": dict(args)}]
    return body


class Harness:
    """The real scheduler over an in-memory cluster, on a virtual clock, recording every cycle.

    ``Harness({"A": A, "B": B}, profile)`` runs a profile body (``plugins``, ``pluginConfig``);
    :meth:`for_plugin` runs one plugin alone. Backoffs pass instantly, as in ``simulate``.
    Close it (or use ``with``) to stop its binding threads.
    """

    def __init__(
        self,
        plugins: Mapping[str, type],
        profile: Mapping[str, Any] | None = None,
        *,
        nodes: Iterable[NodeLike] = (),
        pods: Iterable[PodLike] = (),
        seed: int = 0,
        objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
        **top_level: Any,
    ) -> None:
        self.clock = VirtualClock()
        self.scheduler, self.backend = make_scheduler(
            plugins,
            profile,
            [_node(n) for n in nodes],
            [_pod(p) for p in pods],
            seed=seed,
            clock=self.clock,
            start=False,
            objects=objects,
            **top_level,
        )
        self.recorder = ExplainRecorder().attach(self.scheduler)
        self.scheduler.start()

    @classmethod
    def for_plugin(
        cls,
        plugin: type,
        args: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        weight: int = 1,
        nodes: Iterable[NodeLike] = (),
        pods: Iterable[PodLike] = (),
        seed: int = 0,
        objects: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    ) -> Harness:
        """``plugin`` alone, at every point it implements, with ``args`` as its pluginConfig."""
        name = name or plugin_name(plugin)
        profile = plugin_profile(plugin, args, name=name, weight=weight)
        return cls({name: plugin}, profile, nodes=nodes, pods=pods, seed=seed, objects=objects)

    # -- the cluster ---------------------------------------------------------------------------
    def add_node(self, *nodes: NodeLike) -> None:
        """Add nodes, or update nodes of the same name (the scheduler sees the events)."""
        for node in nodes:
            self.backend.add_node(_node(node))

    def delete_node(self, name: str) -> None:
        self.backend.delete_node(name)

    def add_pod(self, *pods: PodLike) -> None:
        for pod in pods:
            self.backend.add_pod(_pod(pod))

    def add_object(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create a consulted object (a PVC, a PV, …); the scheduler sees the event."""
        return self.backend.create_object(kind, obj)

    # -- scheduling ----------------------------------------------------------------------------
    def run(self, max_rounds: int = 1_000) -> list[CycleReport]:
        """Schedule until nothing is left to try, jumping over backoffs and the timeouts of
        pods waiting at Permit (at most ``max_rounds`` jumps: a plugin that always errs would
        retry forever); the cycles that ran."""
        first = len(self.recorder.reports)
        for _ in range(max_rounds):
            run_until_idle(self.scheduler)
            if self.scheduler.queue.pending()["active"]:
                continue
            expiry = self.scheduler.next_wakeup()
            if expiry is None:
                break
            self.clock.now = max(self.clock.now, expiry)
            self.scheduler.expire_waits()
        return self.recorder.reports[first:]

    def schedule(self, pod: PodLike) -> CycleReport:
        """Add ``pod``, run the cycles waiting in the active queue (the pod's among them) and
        return the pod's; ``LookupError`` when it had none (gated at PreEnqueue, or meant for
        another scheduler). A pod that fails is not retried: :meth:`run` does that."""
        obj = _pod(pod)
        self.add_pod(obj)
        run_until_idle(self.scheduler)
        reports = self.recorder.for_pod(obj)
        if not reports:
            gated = [i for i in self.scheduler.queue.parked() if i.pod.uid == obj.uid]
            why = (
                f"gated by {gated[0].gating_plugin}: {gated[0].gating_message}"
                if gated and gated[0].gating_plugin
                else f"no profile named {obj.scheduler_name!r} or never queued"
            )
            raise LookupError(f"pod {obj.key} had no scheduling cycle ({why})")
        return reports[-1]

    # -- pods waiting at Permit -----------------------------------------------------------------
    def waiting(self) -> list[WaitingPod]:
        """The pods waiting at Permit, by ``namespace/name``. Nothing blocks on them: they bind
        when allowed, and fail when rejected or when :meth:`advance` passes their timeout."""
        return sorted(self.scheduler.waiting_pods, key=lambda w: w.pod.key)

    def _waiting(self, pod: PodLike | str) -> WaitingPod:
        key = pod if isinstance(pod, str) else _pod(pod).key
        key = key if "/" in key else f"default/{key}"
        for waiting in self.scheduler.waiting_pods:
            if waiting.pod.key == key:
                return waiting
        held = ", ".join(w.pod.key for w in self.waiting()) or "none"
        raise LookupError(f"pod {key} is not waiting at Permit (waiting: {held})")

    def allow(self, pod: PodLike | str, plugin: str | None = None) -> None:
        """Allow a waiting pod for ``plugin`` (every plugin it waits on, by default); once no
        plugin holds it, its binding cycle runs."""
        waiting = self._waiting(pod)
        for name in [plugin] if plugin is not None else waiting.pending_plugins():
            waiting.allow(name)
        self.scheduler.run_ended_waits()

    def reject(self, pod: PodLike | str, message: str, plugin: str = "") -> None:
        """Reject a waiting pod: its binding cycle fails with ``message`` (Unreserve runs, and
        the pod goes back to the queue)."""
        self._waiting(pod).reject(plugin, message)
        self.scheduler.run_ended_waits()

    def advance(self, seconds: float) -> list[CycleReport]:
        """Move the virtual clock on by ``seconds``: waits at Permit past their timeout are
        rejected, backoffs that ended are retried; the cycles that ran."""
        first = len(self.recorder.reports)
        self.clock.now += seconds
        self.scheduler.expire_waits()
        self.scheduler.queue.flush()
        run_until_idle(self.scheduler)
        return self.recorder.reports[first:]

    def reports(self, pod: PodLike | str) -> list[CycleReport]:
        """Every cycle of a pod (object, builder, uid or ``namespace/name``), oldest first."""
        return self.recorder.for_pod(pod if isinstance(pod, str) else _pod(pod))

    def node_of(self, name: str, namespace: str = "default") -> str | None:
        """The node pod ``namespace/name`` is bound to, ``None`` while it is pending."""
        pod = self.backend.pod(namespace, name)
        return (pod.node_name or None) if pod is not None else None

    def close(self) -> None:
        self.scheduler.stop()

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
