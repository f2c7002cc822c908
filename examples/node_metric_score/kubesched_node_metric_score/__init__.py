"""NodeMetricScore: prefer nodes by a number an agent publishes on them (load, GPU temperature,
cost), optionally rejecting nodes past a limit.

Agents (a load watcher, a GPU exporter, a cost controller) write the number into a node
annotation or label; this plugin reads it at each pod's cycle. PreScore reads every feasible
node's value once into the cycle state, Score scales it to [0, 100] across those nodes (the
lowest value scores 100 when lower is better), and Filter, when ``rejectAbove`` is set, rejects
the nodes whose value is higher.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    FieldError,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = [
    "ANNOTATION",
    "HIGHER",
    "LABEL",
    "LOWER",
    "MAX_SCORE",
    "NAME",
    "NodeMetricScore",
    "NodeMetricScoreArgs",
    "reason_above",
]

NAME = "NodeMetricScore"
MAX_SCORE = 100
#: Where the number is read (``source``), and which end is better (``prefer``).
ANNOTATION, LABEL = "annotation", "label"
LOWER, HIGHER = "lower", "higher"
_FIELDS = ("key", "source", "prefer", "missingScore", "rejectAbove")
_STATE_KEY = f"PreScore{NAME}"


def reason_above(key: str, limit: float) -> str:
    """The Filter reason for a node whose value is above ``rejectAbove``."""
    return f"node(s) had {key} above {limit:g}"


@dataclass(frozen=True)
class NodeMetricScoreArgs:
    """``pluginConfig[].args`` of NodeMetricScore."""

    #: The annotation or label key holding the number, e.g. ``example.com/gpu-temperature``.
    key: str
    source: str = ANNOTATION
    prefer: str = LOWER
    #: The score of a node without a readable number (0: it comes last).
    missing_score: int = 0
    #: Nodes whose number is higher are rejected (``None``: no node is rejected).
    reject_above: float | None = None

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> NodeMetricScoreArgs:
        """Validate ``args``; raises :class:`ArgsError` listing every bad field at once."""
        errors = [
            FieldError(k, f"unknown field; allowed: {', '.join(_FIELDS)}")
            for k in args
            if k not in _FIELDS
        ]
        key = args.get("key")
        if not isinstance(key, str) or not key:
            errors.append(FieldError("key", "required: the annotation or label holding a number"))
        source = args.get("source", ANNOTATION)
        if source not in (ANNOTATION, LABEL):
            errors.append(FieldError("source", f"must be {ANNOTATION} or {LABEL}, got {source!r}"))
        prefer = args.get("prefer", LOWER)
        if prefer not in (LOWER, HIGHER):
            errors.append(FieldError("prefer", f"must be {LOWER} or {HIGHER}, got {prefer!r}"))
        missing = args.get("missingScore", 0)
        if isinstance(missing, bool) or not isinstance(missing, int) or not 0 <= missing <= 100:
            errors.append(
                FieldError("missingScore", f"must be an integer in [0, 100], got {missing!r}")
            )
        limit = args.get("rejectAbove")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float))):
            errors.append(FieldError("rejectAbove", f"must be a number, got {limit!r}"))
        if errors:
            raise ArgsError(errors)
        return cls(str(key), source, prefer, missing, None if limit is None else float(limit))


class NodeMetricScore:
    """Built once per profile as ``NodeMetricScore(args, handle)``."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeMetricScoreArgs.parse(args)

    def value(self, node: Node | None) -> float | None:
        """The node's number; ``None`` when it is absent or not a finite number."""
        if node is None:
            return None
        values = node.annotations if self.args.source == ANNOTATION else node.labels
        try:
            number = float(values[self.args.key])
        except (KeyError, ValueError):
            return None
        return number if math.isfinite(number) else None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node whose number is above ``rejectAbove`` (when set)."""
        limit = self.args.reject_above
        if limit is None:
            return None
        value = self.value(node_info.node)
        if value is not None and value > limit:
            return Status.unschedulable(reason_above(self.args.key, limit))
        return None

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Read every feasible node's number once; skip Score when no node has one."""
        values = {info.name: self.value(info.node) for info in nodes}
        if all(v is None for v in values.values()):
            return Status.skip()
        state.write(_STATE_KEY, values)
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The node's number scaled to [0, 100] between this cycle's lowest and highest."""
        values: dict[str, float | None] = state.read(_STATE_KEY)
        value = values.get(node_info.name)
        if value is None:
            return self.args.missing_score
        known = [v for v in values.values() if v is not None]
        low, high = min(known), max(known)
        if high == low:
            return MAX_SCORE
        share = (value - low) / (high - low)
        if self.args.prefer == LOWER:
            share = 1 - share
        return round(share * MAX_SCORE)

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A node added, or whose number changed, may now be under ``rejectAbove``."""
        if self.args.reject_above is None:
            return []
        action = (
            ActionType.UPDATE_NODE_ANNOTATION
            if self.args.source == ANNOTATION
            else ActionType.UPDATE_NODE_LABEL
        )
        event = ClusterEvent(EventResource.NODE, ActionType.ADD | action)
        return [ClusterEventWithHint(event, self._hint_under_limit)]

    def _hint_under_limit(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        value = self.value(new) if isinstance(new, Node) else None
        limit = self.args.reject_above
        if limit is not None and value is not None and value > limit:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
