"""Small result types that hooks return or receive besides ``Status``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubesched.api.objects import Pod
from kubesched.framework.status import Status

__all__ = ["NodeToStatus", "PostFilterResult", "PreFilterResult", "QueuedPodInfo"]


@dataclass(slots=True)
class PreFilterResult:
    """A PreFilter's answer that only these nodes can fit; ``None`` means all nodes.

    Results of several plugins are intersected; nodes outside the set are rejected as
    UnschedulableAndUnresolvable without running Filter on them.
    """

    node_names: frozenset[str] | None = None

    def __init__(self, node_names: Iterable[str] | None = None) -> None:
        self.node_names = None if node_names is None else frozenset(node_names)

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@dataclass(slots=True)
class PostFilterResult:
    """A PostFilter's success: the node the pod is nominated to (preemption)."""

    nominated_node_name: str = ""


#: Why each node was rejected in this cycle: node name -> the Filter status.
NodeToStatus = dict[str, Status]


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue, with the bookkeeping QueueSort and backoff read."""

    pod: Pod
    #: When the pod was last added to the queue (seconds on the queue's clock).
    timestamp: float
    #: Scheduling attempts so far; backoff grows with it.
    attempts: int = 0
    #: When the pod first entered the queue.
    initial_attempt_timestamp: float = 0.0
    #: Plugins that rejected the pod in its last attempt: only their events move it back.
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: The PreEnqueue plugin that gated the pod, and why.
    gating_plugin: str = ""
    gating_message: str = ""
    #: Whether the last failure was an Error (goes through backoff, not the unschedulable pool).
    last_failure_was_error: bool = False
