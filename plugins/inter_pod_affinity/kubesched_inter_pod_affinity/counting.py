"""Counting, per topology pair, the pods that match terms, remembered across cycles.

kube-scheduler matches every pod of every node in each PreFilter and PreScore (in parallel, in
Go). Here what a node contributes is remembered while its NodeInfo stays the same: per node
(:class:`MatchCounts`) and summed over the cluster (:class:`PairTally`), which each cycle
revisits only the nodes that changed. The results are the same.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

from kubesched import NodeInfo

from .terms import AffinityTerm

__all__ = ["Contribution", "MatchCounts", "Pair", "PairTallies", "PairTally"]

Pair = tuple[str, str]
#: What one node adds to the pair counts: ``[(pair, count), ...]``.
Contribution = list[tuple[Pair, int]]


class MatchCounts:
    """How many pods of a node match a term (or all of a set of terms), remembered while the
    node's pods stay the same."""

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[NodeInfo, int, dict[str, int]]] = {}

    def _memo(self, info: NodeInfo) -> dict[str, int]:
        entry = self._nodes.get(info.name)
        if entry is None or entry[0] is not info or entry[1] != info.generation:
            memo: dict[str, int] = {}
            self._nodes[info.name] = (info, info.generation, memo)
            return memo
        return entry[2]

    def count_all(self, info: NodeInfo, terms: tuple[AffinityTerm, ...], key: str) -> int:
        """Pods matching every one of ``terms`` (namespace selectors resolved)."""
        if len(terms) == 1:
            return self.count(info, terms[0])
        memo = self._memo(info)
        count = memo.get(key)
        if count is None:
            count = memo[key] = sum(
                1 for p in info.pods.values() if all(t.matches_resolved(p) for t in terms)
            )
        return count

    def count(self, info: NodeInfo, term: AffinityTerm) -> int:
        """Pods matching ``term`` (its namespace selector resolved)."""
        memo = self._memo(info)
        count = memo.get(term.key)
        if count is None:
            count = memo[term.key] = sum(1 for p in info.pods.values() if term.matches_resolved(p))
        return count

    def forget(self, keep: Iterable[str]) -> None:
        names = set(keep)
        for name in [n for n in self._nodes if n not in names]:
            del self._nodes[name]

    def __len__(self) -> int:
        return len(self._nodes)


class PairTally:
    """Pair counts summed over every node for one question, kept from one cycle to the next.

    :meth:`refresh` asks ``contribution`` again only for the nodes whose NodeInfo changed since
    its last call (the snapshot keeps nodes in place and swaps in a new NodeInfo for a changed
    node); a change in the list's length asks every node. A pair stays while some node
    contributes to it, even if its amounts add up to 0 (a scored pair counts as scored).
    """

    __slots__ = ("_contributions", "_generations", "_infos", "_touches", "totals")

    def __init__(self) -> None:
        self._infos: list[NodeInfo | None] = []
        self._generations: list[int] = []
        self._contributions: list[Contribution] = []
        #: pair -> summed amounts.
        self.totals: dict[Pair, int] = {}
        self._touches: dict[Pair, int] = {}

    def _add(self, contribution: Contribution, sign: int) -> None:
        totals, touches = self.totals, self._touches
        for pair, amount in contribution:
            left = touches.get(pair, 0) + sign
            if left:
                touches[pair] = left
                totals[pair] = totals.get(pair, 0) + sign * amount
            else:
                del touches[pair], totals[pair]

    def refresh(
        self, nodes: list[NodeInfo], contribution: Callable[[NodeInfo], Contribution]
    ) -> dict[Pair, int]:
        infos, generations = self._infos, self._generations
        if len(infos) != len(nodes):
            self.__init__()  # type: ignore[misc]
            infos, generations = self._infos, self._generations
            infos.extend([None] * len(nodes))
            generations.extend([-1] * len(nodes))
            self._contributions.extend([[]] * len(nodes))
            changed: Iterable[int] = range(len(nodes))
        else:
            changed = [
                i
                for i, info in enumerate(nodes)
                if info is not infos[i] or info.generation != generations[i]
            ]
        contributions = self._contributions
        for i in changed:
            info = nodes[i]
            self._add(contributions[i], -1)
            new = contribution(info) if info.node is not None else []
            self._add(new, 1)
            infos[i], generations[i], contributions[i] = info, info.generation, new
        return self.totals


class PairTallies:
    """The most recently used :class:`PairTally` per question."""

    __slots__ = ("_limit", "_tallies")

    def __init__(self, limit: int = 32) -> None:
        self._tallies: OrderedDict[tuple[object, ...], PairTally] = OrderedDict()
        self._limit = limit

    def get(self, question: tuple[object, ...]) -> PairTally:
        tally = self._tallies.get(question)
        if tally is None:
            tally = self._tallies[question] = PairTally()
            if len(self._tallies) > self._limit:
                self._tallies.popitem(last=False)
        else:
            self._tallies.move_to_end(question)
        return tally
