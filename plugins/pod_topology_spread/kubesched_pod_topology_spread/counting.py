"""Counting the pods a constraint selects, per node and per topology domain, across cycles.

kube-scheduler recounts every pod of every node in each PreFilter (in parallel, in Go). Here the
counts are remembered: per node while its NodeInfo stays the same (:class:`PodCounts`, over the
core's :class:`~kubesched.framework.helpers.NodeMemo`), and per topology domain over the whole
cluster in a :class:`~kubesched.framework.helpers.NodeTally` per question, which visits only the
nodes that changed since the last cycle asking it (:func:`domain_tally`). The results are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kubesched import NodeInfo, Pod
from kubesched.api.selectors import LabelSelector
from kubesched.framework.helpers import NodeMemo, NodeTallies
from kubesched.framework.snapshot import NodeListJournal

from .constraints import SpreadConstraint

__all__ = [
    "DomainTallies",
    "PodCounts",
    "count_key",
    "count_pods_match_selector",
    "domain_tally",
]

#: The most recently asked domain tallies (a few workloads at a time), by question:
#: ``(count key, topology key, required keys)``.
DomainTallies = NodeTallies[str]


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

    __slots__ = ("_memo",)

    def __init__(self) -> None:
        self._memo = NodeMemo()

    def memo(self, info: NodeInfo) -> dict[str, int]:
        """The remembered counts of ``info``'s node, key -> count."""
        return self._memo.get(info)

    def count(self, info: NodeInfo, constraint: SpreadConstraint, namespace: str, key: str) -> int:
        """Pods on the node that ``constraint`` counts; ``key`` is :func:`count_key`."""
        memo = self._memo.get(info)
        count = memo.get(key)
        if count is None:
            count = memo[key] = count_pods_match_selector(
                info.pods.values(), constraint.selector, namespace, constraint.matches
            )
        return count

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the nodes not in ``keep`` (nodes deleted from the cluster)."""
        self._memo.forget(keep)

    def __len__(self) -> int:
        return len(self._memo)


def domain_tally(
    tallies: DomainTallies,
    nodes: list[NodeInfo],
    constraint: SpreadConstraint,
    namespace: str,
    key: str,
    required_keys: frozenset[str] | None,
    counts: PodCounts,
    journal: NodeListJournal | None = None,
) -> dict[str, int]:
    """Matching pods per topology value over ``nodes`` for one constraint, the pod's namespace
    and the topology keys a node must have (``required_keys``; ``None``: every node counts, a
    missing key being the ``""`` domain). Domains are the values of the nodes that qualify,
    zero counts included; the dict is the tally's own. ``journal``: the snapshot's, when
    ``nodes`` is its ``node_infos`` (only the nodes changed since the last cycle are visited)."""
    topology_key = constraint.topology_key

    def contribution(info: NodeInfo) -> list[tuple[str, int]]:
        labels = info.node.labels  # type: ignore[union-attr]
        if required_keys is not None and not required_keys <= labels.keys():
            return []
        return [(labels.get(topology_key, ""), counts.count(info, constraint, namespace, key))]

    return tallies.get((key, topology_key, required_keys)).refresh(nodes, contribution, journal)
