"""pytest fixtures for plugin tests, loaded automatically when kubesched is installed.

kubesched registers this module under pytest's ``pytest11`` entry point as ``kubesched``, so a
plugin's tests use the fixtures without any conftest (``-p no:kubesched`` turns them off):

- ``make_pod`` / ``make_node``: the builders of :mod:`kubesched.testing.builders`.
- ``fake_cluster``: an empty :class:`~kubesched.testing.harness.FakeCluster` to add nodes and
  pods to.
- ``new_plugin``: ``new_plugin(MyPlugin, args)`` builds a plugin as a profile would, with a
  handle whose snapshot is ``fake_cluster``.
- ``cycle_state``: a fresh :class:`~kubesched.CycleState`.
- ``scheduler_harness``: ``scheduler_harness(MyPlugin, args)`` runs one plugin alone, and
  ``scheduler_harness({"A": A, "B": B}, profile)`` a profile, through the real scheduler over
  ``fake_cluster``'s nodes and pods; returns a :class:`~kubesched.testing.harness.Harness`,
  closed when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.testing import builders
from kubesched.testing.harness import FakeCluster, Harness
from kubesched.testing.harness import new_plugin as _new_plugin

__all__ = [
    "cycle_state",
    "fake_cluster",
    "make_node",
    "make_pod",
    "new_plugin",
    "scheduler_harness",
]


@pytest.fixture
def make_pod() -> Callable[..., builders.PodBuilder]:
    """``make_pod("web").req(cpu="500m").obj()``."""
    return builders.make_pod


@pytest.fixture
def make_node() -> Callable[..., builders.NodeBuilder]:
    """``make_node("n1").labels(disk="ssd").obj()``."""
    return builders.make_node


@pytest.fixture
def fake_cluster() -> FakeCluster:
    """An empty fake cluster; ``fake_cluster.add(make_node("n1"), make_pod("p").node("n1"))``."""
    return FakeCluster()


@pytest.fixture
def cycle_state() -> CycleState:
    return CycleState()


@pytest.fixture
def new_plugin(fake_cluster: FakeCluster) -> Callable[..., Any]:
    """``new_plugin(MyPlugin, {"arg": 1})``: the plugin, its handle's snapshot ``fake_cluster``."""

    def build(plugin: type, args: Mapping[str, Any] | None = None) -> Any:
        return _new_plugin(plugin, args, fake_cluster)

    return build


@pytest.fixture
def scheduler_harness(fake_cluster: FakeCluster) -> Iterator[Callable[..., Harness]]:
    """A factory of harnesses over ``fake_cluster`` (its nodes and pods when the harness is
    made): ``scheduler_harness(MyPlugin, args, weight=2)`` for one plugin alone,
    ``scheduler_harness({"A": A, "B": B}, profile)`` for a profile body."""
    made: list[Harness] = []

    def build(
        plugins: type | Mapping[str, type],
        args_or_profile: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Harness:
        options.setdefault("nodes", fake_cluster.nodes)
        options.setdefault("pods", fake_cluster.pods)
        if isinstance(plugins, type):
            harness = Harness.for_plugin(plugins, args_or_profile, **options)
        else:
            harness = Harness(plugins, args_or_profile, **options)
        made.append(harness)
        return harness

    yield build
    for harness in made:
        harness.close()
