"""Counting, per topology pair, the pods that match terms, remembered across cycles.

kube-scheduler matches every pod of every node in each PreFilter and PreScore (in parallel, in
Go). Here what a node contributes is remembered while its NodeInfo stays the same: per node
(:class:`MatchCounts`, over the core's :class:`~kubesched.framework.helpers.NodeMemo`) and
summed over the cluster (a :class:`~kubesched.framework.helpers.NodeTally` per question, in
:data:`PairTallies`), which each cycle revisits only the nodes that changed. The results are
the same.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched import NodeInfo
from kubesched.framework.helpers import NodeMemo, NodeTallies

from .terms import AffinityTerm

__all__ = ["Contribution", "MatchCounts", "Pair", "PairTallies"]

Pair = tuple[str, str]
#: What one node adds to the pair counts: ``[(pair, count), ...]``.
Contribution = list[tuple[Pair, int]]
#: The most recently asked pair tallies, by question. A pair stays while some node contributes
#: to it, even if its amounts add up to 0 (a scored pair counts as scored).
PairTallies = NodeTallies[Pair]


class MatchCounts:
    """How many pods of a node match a term (or all of a set of terms), remembered while the
    node's pods stay the same."""

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo = NodeMemo()

    def count_all(self, info: NodeInfo, terms: tuple[AffinityTerm, ...], key: str) -> int:
        """Pods matching every one of ``terms`` (namespace selectors resolved)."""
        if len(terms) == 1:
            return self.count(info, terms[0])
        memo = self._memo.get(info)
        count = memo.get(key)
        if count is None:
            count = memo[key] = sum(
                1 for p in info.pods.values() if all(t.matches_resolved(p) for t in terms)
            )
        return count

    def count(self, info: NodeInfo, term: AffinityTerm) -> int:
        """Pods matching ``term`` (its namespace selector resolved)."""
        memo = self._memo.get(info)
        count = memo.get(term.key)
        if count is None:
            count = memo[term.key] = sum(1 for p in info.pods.values() if term.matches_resolved(p))
        return count

    def forget(self, keep: Iterable[str]) -> None:
        self._memo.forget(keep)

    def __len__(self) -> int:
        return len(self._memo)
