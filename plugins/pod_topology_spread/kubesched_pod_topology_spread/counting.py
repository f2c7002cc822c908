"""Counting the pods a constraint selects, per node and per topology domain, across cycles.

kube-scheduler recounts every pod of every node in each PreFilter (in parallel, in Go). Here the
counts are remembered: per node while its NodeInfo stays the same (:class:`PodCounts`), and per
topology domain over the whole cluster, updated by visiting only the nodes that changed since
the last cycle asking the same question (:class:`DomainTally`). The results are the same.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping

from kubesched import NodeInfo, Pod
from kubesched.api.selectors import LabelSelector

from .constraints import SpreadConstraint

__all__ = [
    "DomainTallies",
    "DomainTally",
    "PodCounts",
    "count_key",
    "count_pods_match_selector",
]


def count_key(constraint: SpreadConstraint, namespace: str) -> str:
    """What a count depends on besides the node's pods: the namespace and the selector."""
    return namespace + "\x00" + constraint.selector_key


def count_pods_match_selector(
    pods: Iterable[Pod],
    selector: LabelSelector,
    namespace: str,
    matches: Callable[[Mapping[str, str]], bool] | None = None,
) -> int:
    """Pods of ``namespace``, not terminating, that ``selector`` selects; an empty selector
    counts none (kube-scheduler's ``countPodsMatchSelector``)."""
    if selector.is_empty():
        return 0
    match = matches or selector.matches
    return sum(
        1
        for p in pods
        if p.namespace == namespace and p.deletion_timestamp is None and match(p.labels)
    )


class PodCounts:
    """Matching-pod counts per node, remembered while the node's pods stay the same.

    Consecutive pods of one workload ask the same question of every node, and from one cycle to
    the next only the nodes whose pods changed get a new :class:`NodeInfo` (or a new
    generation): the others answer from memory instead of matching every pod again.
    """

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[NodeInfo, int, dict[str, int]]] = {}

    def memo(self, info: NodeInfo, name: str) -> dict[str, int]:
        """The remembered counts of node ``name`` (its NodeInfo ``info``), key -> count."""
        entry = self._nodes.get(name)
        if entry is None or entry[0] is not info or entry[1] != info.generation:
            memo: dict[str, int] = {}
            self._nodes[name] = (info, info.generation, memo)
            return memo
        return entry[2]

    def count(
        self, info: NodeInfo, name: str, constraint: SpreadConstraint, namespace: str, key: str
    ) -> int:
        """Pods on the node that ``constraint`` counts; ``key`` is :func:`count_key`."""
        memo = self.memo(info, name)
        count = memo.get(key)
        if count is None:
            count = memo[key] = count_pods_match_selector(
                info.pods.values(), constraint.selector, namespace, constraint.matches
            )
        return count

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the nodes not in ``keep`` (nodes deleted from the cluster)."""
        names = set(keep)
        for name in [n for n in self._nodes if n not in names]:
            del self._nodes[name]

    def __len__(self) -> int:
        return len(self._nodes)


class DomainTally:
    """Matching pods per topology value over every node, for one question: a constraint's
    selector and topology key, the pod's namespace, and the topology keys a node must have.

    :meth:`refresh` recounts only the nodes whose NodeInfo changed since its last call (the
    snapshot keeps nodes in place and swaps in a new NodeInfo for a changed node); a change in
    the list's length recounts everything. Domains are the values of the nodes that qualify,
    zero counts included.
    """

    __slots__ = ("_counts", "_generations", "_infos", "sizes", "totals")

    def __init__(self) -> None:
        #: Per position in the node list: the NodeInfo and generation last counted, and its
        #: (topology value or None when left out, count).
        self._infos: list[NodeInfo | None] = []
        self._generations: list[int] = []
        self._counts: list[tuple[str | None, int]] = []
        #: topology value -> matching pods.
        self.totals: dict[str, int] = {}
        #: topology value -> nodes in the domain (a domain goes with its last node).
        self.sizes: dict[str, int] = {}

    def _add(self, value: str | None, count: int, sign: int) -> None:
        if value is None:
            return
        self.totals[value] = self.totals.get(value, 0) + sign * count
        size = self.sizes[value] = self.sizes.get(value, 0) + sign
        if not size:
            del self.sizes[value], self.totals[value]

    def refresh(
        self,
        nodes: list[NodeInfo],
        constraint: SpreadConstraint,
        namespace: str,
        key: str,
        required_keys: frozenset[str] | None,
        counts: PodCounts,
    ) -> dict[str, int]:
        """The totals for ``nodes``; ``required_keys``: topology keys a node must have to
        count (``None``: every node counts, a missing key being the ``""`` domain)."""
        infos, generations = self._infos, self._generations
        if len(infos) != len(nodes):
            self.__init__()  # type: ignore[misc]
            infos, generations = self._infos, self._generations
            infos.extend([None] * len(nodes))
            generations.extend([-1] * len(nodes))
            self._counts.extend([(None, 0)] * len(nodes))
            changed = range(len(nodes))
        else:
            changed = [
                i
                for i, info in enumerate(nodes)
                if info is not infos[i] or info.generation != generations[i]
            ]
        topology_key = constraint.topology_key
        for i in changed:
            info = nodes[i]
            self._add(*self._counts[i], -1)
            value: str | None = None
            count = 0
            node = info.node
            if node is not None and (required_keys is None or required_keys <= node.labels.keys()):
                value = node.labels.get(topology_key, "")
                count = counts.count(info, node.name, constraint, namespace, key)
                self._add(value, count, 1)
            infos[i], generations[i], self._counts[i] = info, info.generation, (value, count)
        return self.totals


class DomainTallies:
    """The most recently used :class:`DomainTally` per question (a few workloads at a time)."""

    __slots__ = ("_limit", "_tallies")

    def __init__(self, limit: int = 16) -> None:
        self._tallies: OrderedDict[tuple[object, ...], DomainTally] = OrderedDict()
        self._limit = limit

    def get(self, question: tuple[object, ...]) -> DomainTally:
        tally = self._tallies.get(question)
        if tally is None:
            tally = self._tallies[question] = DomainTally()
            if len(self._tallies) > self._limit:
                self._tallies.popitem(last=False)
        else:
            self._tallies.move_to_end(question)
        return tally
