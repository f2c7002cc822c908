"""The cycle state PreFilter and PreScore write for Filter and Score, and the score formula."""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from .constraints import SpreadConstraint

__all__ = [
    "CriticalPaths",
    "PreFilterState",
    "PreScoreState",
    "round_half_away",
    "topology_normalizing_weight",
]

_MAX_INT32 = 2**31 - 1
_num = itemgetter(1)


class CriticalPaths:
    """The two domains with the fewest matching pods (``[0]`` always holds the minimum).

    Two are enough because preemption evaluates one node at a time on its own copy of the
    state (kube-scheduler's ``criticalPaths``).
    """

    __slots__ = ("paths",)

    def __init__(self, paths: list[list[Any]] | None = None) -> None:
        #: ``[[topology value, match count], [topology value, match count]]``.
        self.paths: list[list[Any]] = paths or [["", _MAX_INT32], ["", _MAX_INT32]]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> CriticalPaths:
        """The paths :meth:`update` would reach from every count, found in one pass."""
        paths = [[value, num] for value, num in heapq.nsmallest(2, counts.items(), key=_num)]
        while len(paths) < 2:
            paths.append(["", _MAX_INT32])
        return cls(paths)

    def clone(self) -> CriticalPaths:
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def __repr__(self) -> str:
        return f"CriticalPaths({self.paths!r})"


class PreFilterState:
    """What Filter reads: the hard constraints and the matching pods per domain."""

    __slots__ = (
        "constraints",
        "critical_paths",
        "self_match",
        "topology_keys",
        "tp_value_to_match_num",
        "verdicts",
    )

    def __init__(self, constraints: list[SpreadConstraint] | None = None) -> None:
        self.constraints: list[SpreadConstraint] = constraints or []
        #: Per constraint: its topology key.
        self.topology_keys: tuple[str, ...] = tuple(c.topology_key for c in self.constraints)
        #: Filter's answer per tuple of a node's values of :attr:`topology_keys` (the only
        #: thing of the node it reads); emptied whenever the counts change.
        self.verdicts: dict[tuple[str | None, ...], Any] = {}
        #: Per constraint: the two least loaded domains.
        self.critical_paths: list[CriticalPaths] = []
        #: Per constraint: topology value -> matching pods (every eligible domain is a key).
        self.tp_value_to_match_num: list[dict[str, int]] = []
        #: Per constraint: 1 when the pod being scheduled matches the selector itself.
        self.self_match: list[int] = []

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum, 0 while fewer domains than ``minDomains`` are eligible."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> PreFilterState:
        """A copy for what-if evaluation; the constraints are shared (they never change)."""
        other = PreFilterState(self.constraints)
        other.critical_paths = [p.clone() for p in self.critical_paths]
        other.tp_value_to_match_num = [dict(m) for m in self.tp_value_to_match_num]
        other.self_match = self.self_match
        return other


#: One constraint as Score reads it (see :attr:`PreScoreState.terms`).
ScoreTerm = tuple[SpreadConstraint, str | None, dict[str, int], float, int]


class PreScoreState:
    """What Score reads: the soft constraints, the counts per domain, the domain weights."""

    __slots__ = (
        "constraints",
        "ignored_nodes",
        "scores_by_domain",
        "terms",
        "topology_keys",
        "topology_normalizing_weight",
        "topology_value_to_pod_counts",
    )

    def __init__(self) -> None:
        self.constraints: list[SpreadConstraint] = []
        #: Per constraint: its topology key.
        self.topology_keys: tuple[str, ...] = ()
        #: Score's answer per tuple of a node's values of :attr:`topology_keys`, when that is
        #: all of the node it reads (no constraint on the hostname); ``None`` otherwise.
        self.scores_by_domain: dict[tuple[str | None, ...], int] | None = None
        #: Nodes missing a topology key: they score 0.
        self.ignored_nodes: set[str] = set()
        #: Per constraint: topology value -> matching pods (hostname counts are made in Score).
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []
        #: Per constraint, what Score reads of it, fixed once PreScore is done: the
        #: constraint, its count key (hostname constraints, counted per node; ``None`` for the
        #: others), its domains' counts, its weight and ``maxSkew - 1``.
        self.terms: list[ScoreTerm] = []

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as in kube-scheduler


def topology_normalizing_weight(size: int) -> float:
    """The weight of a topology with ``size`` domains: ``log(size + 2)``."""
    return math.log(size + 2)


def round_half_away(value: float) -> int:
    """Go's ``math.Round`` (Python's ``round`` rounds half to even)."""
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)
