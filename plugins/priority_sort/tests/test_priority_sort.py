"""PrioritySort: higher priority first, then the earlier-queued pod."""

from __future__ import annotations

import pytest
from kubesched_priority_sort import NAME, PrioritySort

from kubesched import InMemoryBackend, QueuedPodInfo
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def info(name: str, priority: int, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod(name).priority(priority).obj(), timestamp=timestamp)


@pytest.mark.parametrize(
    ("a", "b", "less"),
    [
        (info("a", 10, 2.0), info("b", 5, 1.0), True),
        (info("a", 5, 1.0), info("b", 10, 2.0), False),
        (info("a", 5, 1.0), info("b", 5, 2.0), True),
        (info("a", 5, 2.0), info("b", 5, 1.0), False),
        (info("a", -1, 1.0), info("b", 0, 2.0), False),
    ],
    ids=[
        "higher-priority-first",
        "lower-priority-later",
        "same-priority-earlier-first",
        "same-priority-later-second",
        "negative-priority",
    ],
)
def test_less(a, b, less):
    plugin = PrioritySort({}, Handle("t", InMemoryBackend(), Snapshot))
    assert plugin.queue_sort_less(a, b) is less


def test_the_queue_pops_by_priority():
    profile = {"plugins": {"queueSort": {"enabled": [{"name": NAME}]}}}
    pods = [
        make_pod("low").priority(1).obj(),
        make_pod("high").priority(100).obj(),
        make_pod("mid").priority(50).obj(),
    ]
    scheduler, _ = make_scheduler({NAME: PrioritySort}, profile, [make_node("n1").obj()], pods)
    order = []
    scheduler.observe_attempts(lambda attempt, seconds: order.append(attempt.pod.name))
    run_until_idle(scheduler)
    assert order == ["high", "mid", "low"]
