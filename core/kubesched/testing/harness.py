"""Run a profile over an in-memory cluster without installing anything.

``make_scheduler({"MyFilter": MyFilter}, {"filter": {"enabled": [{"name": "MyFilter"}]}},
nodes=[...], pods=[...])`` gives a ready :class:`~kubesched.scheduler.Scheduler` whose registry
holds exactly the plugins passed (plus a first-in-first-out QueueSort and a binder from this
module, unless the profile disables them), so a test never depends on what happens to be
installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..backends.base import BindError
from ..backends.memory import InMemoryBackend
from ..config import SchedulerConfiguration, parse_config
from ..cycle_state import CycleState
from ..handle import Handle
from ..hookspecs import hookimpl
from ..objects import Node, Pod
from ..registry import Registry
from ..results import QueuedPodInfo
from ..scheduler import Scheduler
from ..status import Status

__all__ = [
    "FIFO_SORT",
    "TEST_BINDER",
    "FifoSort",
    "TestBinder",
    "make_config",
    "make_scheduler",
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
    **top_level: Any,
) -> tuple[Scheduler, InMemoryBackend]:
    """A scheduler over an in-memory cluster of ``nodes`` and ``pods`` (started by default)."""
    config, registry = make_config(plugins, profile, **top_level)
    backend = InMemoryBackend(nodes, pods)
    kwargs: dict[str, Any] = {"seed": seed, "inline_binding": inline_binding}
    if clock is not None:
        kwargs["clock"] = clock
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
