"""Ordering victims and candidate nodes, and PodDisruptionBudgets, as kube's ``preemption``
package does for individual pods (``MoreImportantVictim``, ``FilterVictimsWithPDBViolation``,
``pickOneNodeForPreemption``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubesched import Pod
from kubesched.api.selectors import LabelSelector, SelectorError

__all__ = [
    "Candidate",
    "PodDisruptionBudget",
    "filter_victims_with_pdb_violation",
    "importance",
    "pick_one_node_for_preemption",
    "start_time",
]

#: ``pickOneNodeForPreemption`` adds MaxInt32+1 to every priority before summing them, so that
#: a few negative-priority victims never beat fewer victims of the same priority.
_PRIORITY_OFFSET = 2**31


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    """The parts of a ``policy/v1`` PodDisruptionBudget that preemption reads."""

    namespace: str
    #: ``None`` for a selector that does not parse: it selects no pod (kube skips it).
    selector: LabelSelector | None
    disruptions_allowed: int
    #: ``status.disruptedPods``: evictions the apiserver already counted.
    disrupted_pods: frozenset[str] = frozenset()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PodDisruptionBudget:
        """From the raw object (``Handle.lister("PodDisruptionBudget")``)."""
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        try:
            selector: LabelSelector | None = LabelSelector.parse(spec.get("selector"))
        except SelectorError:
            selector = None
        allowed = status.get("disruptionsAllowed") or 0
        disrupted = status.get("disruptedPods") or {}
        return cls(
            meta.get("namespace") or "default",
            selector,
            allowed if isinstance(allowed, int) and not isinstance(allowed, bool) else 0,
            frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(),
        )

    def selects(self, pod: Pod) -> bool:
        """Same namespace and selected; a missing or empty selector selects no pod here."""
        return (
            self.namespace == pod.namespace
            and self.selector is not None
            and not self.selector.is_empty()
            and self.selector.matches(pod.labels)
        )


@dataclass(slots=True)
class Candidate:
    """A node where the pod fits once ``victims`` (most important first) are gone."""

    name: str
    victims: list[Pod]
    num_pdb_violations: int = 0


def start_time(pod: Pod) -> float:
    """``status.startTime`` in seconds; a pod that has not started counts as the newest (kube
    takes the current time for it)."""
    text = (pod.raw.get("status") or {}).get("startTime")
    if not isinstance(text, str) or not text:
        return math.inf
    return _seconds(text)


@functools.lru_cache(maxsize=4096)
def _seconds(text: str) -> float:
    """An RFC 3339 time in seconds (inf when it does not parse); victims share a few start
    times and are compared again for every candidate of every preemptor."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return math.inf
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def importance(pod: Pod) -> tuple[int, float]:
    """Sort key, most important first: the higher priority, then the earlier start."""
    return (-pod.priority, start_time(pod))


def filter_victims_with_pdb_violation(
    victims: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[tuple[Pod, int]], list[Pod]]:
    """The victims whose eviction takes a PDB below zero (each with its violation count) and
    the others, both in the given order. Budgets are spent in that order too."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]

    def violates(pod: Pod) -> bool:
        if not pod.labels:
            return False
        for i, pdb in enumerate(pdbs):
            # A pod the apiserver already counted as disrupted does not spend the budget again.
            if not pdb.selects(pod) or pod.name in pdb.disrupted_pods:
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                return True
        return False

    violating: list[tuple[Pod, int]] = []
    non_violating: list[Pod] = []
    for pod in victims:
        if violates(pod):
            violating.append((pod, 1))
        else:
            non_violating.append(pod)
    return violating, non_violating


def _earliest_start_of_most_important(victims: Sequence[Pod]) -> float:
    """The earliest start among the highest-priority victims (``GetEarliestPodStartTime``)."""
    top = max(pod.priority for pod in victims)
    return min(start_time(pod) for pod in victims if pod.priority == top)


#: Each rule scores the remaining candidates; only the best-scored go on to the next rule.
_RULES: tuple[Callable[[Candidate], float], ...] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -c.victims[0].priority,
    lambda c: -sum(pod.priority + _PRIORITY_OFFSET for pod in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_most_important(c.victims),
)


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """The fewest PDB violations, then the lowest highest-victim priority, the lowest sum of
    priorities, the fewest victims, the latest start of the highest-priority victims; among
    candidates still tied, the first."""
    remaining = list(candidates)
    for rule in _RULES:
        if len(remaining) <= 1:
            break
        scores = [rule(c) for c in remaining]  # once each: a rule can walk every victim
        best = max(scores)
        remaining = [c for c, score in zip(remaining, scores, strict=True) if score == best]
    return remaining[0] if remaining else None
