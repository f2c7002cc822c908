"""Shared plugin helpers: what kube-scheduler's ``framework/plugins/helper`` and
``component-helpers`` give its plugins, so that plugins use one tested copy instead of their own.

- :data:`MAX_NODE_SCORE` / :data:`MIN_NODE_SCORE`: the range a Score plugin's scores must be in
  after NormalizeScore (kube's ``framework.MaxNodeScore``);
- :func:`default_normalize_score`: ``helper.DefaultNormalizeScore``;
- :class:`TolerationIndex` and :func:`find_untolerated_taint`: ``v1helper``'s
  ``FindMatchingUntoleratedTaint`` with the ``NoSchedule``/``NoExecute`` filter, linear in
  taints × tolerations sharing a key;
- :func:`compile_selector`: a label selector as a plain function, specialised for the common
  ``matchLabels`` case (hot in per-node loops);
- :func:`unreadable`: the guard every queueing hint starts with (kube queues on objects it
  cannot read);
- :class:`NodeMemo`, :class:`NodeTally` and :class:`NodeTallies`: what a plugin counts per node,
  kept across cycles while the node's :class:`~kubesched.framework.nodeinfo.NodeInfo` (object and
  generation) stays the same, and summed over the cluster by revisiting only the changed nodes
  (kube-scheduler recounts every node in each cycle, in parallel; the sums are the same).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from cachetools import LRUCache

from kubesched.api.objects import Taint, Toleration
from kubesched.api.selectors import EQUALS, IN, LabelSelector
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.snapshot import NodeListJournal

__all__ = [
    "DO_NOT_SCHEDULE_TAINT_EFFECTS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeMemo",
    "NodeTallies",
    "NodeTally",
    "TolerationIndex",
    "compile_selector",
    "default_normalize_score",
    "find_untolerated_taint",
    "unreadable",
]

#: The highest score a node may get from one Score plugin after NormalizeScore.
MAX_NODE_SCORE = 100
#: The lowest.
MIN_NODE_SCORE = 0

#: The taint effects that keep a pod off a node (kube's ``DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_TAINT_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def default_normalize_score(max_priority: int, reverse: bool, scores: dict[str, int]) -> None:
    """kube-scheduler's ``helper.DefaultNormalizeScore``: scale ``[0, max(scores)]`` to
    ``[0, max_priority]`` in place; ``reverse`` subtracts each result from ``max_priority``.

    When every score is 0, the scores stay 0 (``max_priority`` each with ``reverse``). Scores
    are non-negative, so Python's floor division is Go's truncating one here.
    """
    max_count = max(scores.values(), default=0)
    if max_count == 0:
        if reverse:  # the common case of TaintToleration: one C-level update per cycle
            scores.update(dict.fromkeys(scores, max_priority))
        return
    for node, score in scores.items():
        score = max_priority * score // max_count
        scores[node] = max_priority - score if reverse else score


class TolerationIndex:
    """A pod's tolerations by key, so that a taint is compared only with the tolerations
    that name its key and those with an empty key (which match every key): a node with
    thousands of taints against a pod with thousands of tolerations stays linear."""

    __slots__ = ("_any_key", "_by_key")

    def __init__(self, tolerations: Iterable[Toleration]) -> None:
        self._by_key: dict[str, list[Toleration]] = {}
        self._any_key: list[Toleration] = []
        for toleration in tolerations:
            if toleration.key:
                self._by_key.setdefault(toleration.key, []).append(toleration)
            else:
                self._any_key.append(toleration)

    def tolerates(self, taint: Taint) -> bool:
        """Whether some toleration tolerates ``taint`` (kube's ``TolerationsTolerateTaint``)."""
        return any(t.tolerates(taint) for t in self._by_key.get(taint.key, ())) or any(
            t.tolerates(taint) for t in self._any_key
        )


def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration] | TolerationIndex,
    effects: frozenset[str] = DO_NOT_SCHEDULE_TAINT_EFFECTS,
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates, in the node's
    order (kube's ``FindMatchingUntoleratedTaint``); ``None`` when every such taint is
    tolerated."""
    index = tolerations if isinstance(tolerations, TolerationIndex) else None
    listed = None if index is not None else list(tolerations)  # type: ignore[arg-type]
    for taint in taints:
        if taint.effect not in effects:
            continue
        if index is not None:
            if not index.tolerates(taint):
                return taint
        elif not any(t.tolerates(taint) for t in listed or ()):
            return taint
    return None


def compile_selector(selector: LabelSelector) -> Callable[[Mapping[str, str]], bool]:
    """``selector.matches`` as a function, specialised when every requirement is ``key=value``
    (``matchLabels``, the usual workload selector)."""
    if selector.matches_nothing:
        return lambda labels: False
    requirements = selector.requirements
    if not requirements:
        return lambda labels: True
    if all(r.operator in (EQUALS, IN) and len(r.values) == 1 for r in requirements):
        pairs = tuple((r.key, r.values[0]) for r in requirements)
        if len(pairs) == 1:
            ((key, value),) = pairs
            return lambda labels: labels.get(key) == value
        return lambda labels: all(labels.get(k) == v for k, v in pairs)
    return selector.matches


def unreadable(old: Any, new: Any, kind: type) -> bool:
    """Whether a queueing hint cannot read an event's objects as ``kind`` (``new`` is not one,
    or ``old`` is neither ``None`` nor one): kube-scheduler then queues the pod
    (``QueueingHint.QUEUE``) rather than risk stranding it."""
    return not isinstance(new, kind) or (old is not None and not isinstance(old, kind))


K = TypeVar("K", bound=Hashable)


class NodeMemo:
    """Per node, a dict of whatever a plugin computed from the node's pods, kept while the
    node's NodeInfo stays the same object at the same generation (a changed node gets a new
    NodeInfo or a new generation, and so an empty dict).

    Entries of nodes that left the cluster stay until :meth:`forget`; a plugin calls it when
    :func:`len` exceeds the cluster's size by some margin.
    """

    __slots__ = ("_nodes",)

    def __init__(self) -> None:
        self._nodes: dict[str, tuple[NodeInfo, int, dict[Any, Any]]] = {}

    def get(self, info: NodeInfo) -> dict[Any, Any]:
        """The remembered values of ``info``'s node (empty when the node changed)."""
        entry = self._nodes.get(info.name)
        if entry is None or entry[0] is not info or entry[1] != info.generation:
            memo: dict[Any, Any] = {}
            self._nodes[info.name] = (info, info.generation, memo)
            return memo
        return entry[2]

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the nodes not named in ``keep``."""
        names = set(keep)
        for name in [n for n in self._nodes if n not in names]:
            del self._nodes[name]

    def __len__(self) -> int:
        return len(self._nodes)


#: What one node adds to a tally: ``(key, amount)`` pairs (a key may repeat).
Contribution = list[tuple[K, int]]


class NodeTally(Generic[K]):
    """Sums per key of what every node contributes, for one question, kept from one cycle to
    the next.

    :meth:`refresh` asks ``contribution`` again only for the positions whose NodeInfo changed
    (object or generation) since its last call: the snapshot keeps nodes in place and swaps in
    a new NodeInfo for a changed node. Given the snapshot's :class:`NodeListJournal` for the
    list, it finds those positions in the journal instead of comparing every node. In a list of
    another length nodes are matched by name, so that only the changed, added and gone ones are
    counted again. A key stays in :attr:`totals` while some node contributes to it, even when
    its amounts add up to 0; :attr:`contributors` counts those nodes.

    For a list whose members come and go between calls (the snapshot's nodes holding pods
    with affinity terms, which grows as such pods are placed), :meth:`refresh_members` keeps
    the nodes by name instead; a tally is refreshed one way or the other, not both.
    """

    __slots__ = (
        "_contributions",
        "_generations",
        "_infos",
        "_journal",
        "_journal_read",
        "_members",
        "contributors",
        "totals",
    )

    def __init__(self) -> None:
        self._infos: list[NodeInfo | None] = []
        self._generations: list[int] = []
        self._contributions: list[Contribution[K]] = []
        #: The journal of the list last refreshed from, and how many of its entries were read.
        self._journal: NodeListJournal | None = None
        self._journal_read = 0
        #: refresh_members' nodes: name -> (NodeInfo, generation, contribution).
        self._members: dict[str, tuple[NodeInfo, int, Contribution[K]]] | None = None
        #: key -> summed amounts.
        self.totals: dict[K, int] = {}
        #: key -> contributions to it (nodes, unless a node names a key twice).
        self.contributors: dict[K, int] = {}

    def _add(self, contribution: Contribution[K], sign: int) -> None:
        totals, contributors = self.totals, self.contributors
        for key, amount in contribution:
            left = contributors.get(key, 0) + sign
            if left:
                contributors[key] = left
                totals[key] = totals.get(key, 0) + sign * amount
            else:
                del contributors[key], totals[key]

    def refresh(
        self,
        nodes: Sequence[NodeInfo],
        contribution: Callable[[NodeInfo], Contribution[K]],
        journal: NodeListJournal | None = None,
    ) -> dict[K, int]:
        """The totals over ``nodes``; ``contribution`` is called for changed nodes that have
        a Node (a NodeInfo without one contributes nothing). The dict is the tally's own:
        copy it before changing it.

        ``journal``: the snapshot's :attr:`~kubesched.framework.snapshot.Snapshot.journal`
        when ``nodes`` is its ``node_infos`` (ignored for any other list): only the positions
        it lists since the last call are looked at."""
        infos, generations, contributions = self._infos, self._generations, self._contributions
        if journal is not None and journal.nodes is not nodes:
            journal = None
        trusted = journal is not None and journal is self._journal
        read = self._journal_read
        self._journal = journal
        self._journal_read = len(journal.replaced) if journal is not None else 0
        if len(infos) != len(nodes):
            self._realign(nodes, contribution)
            return self.totals
        candidates: Iterable[int] = (
            dict.fromkeys(journal.replaced[read:])  # type: ignore[union-attr]
            if trusted
            else range(len(nodes))
        )
        changed = [
            (i, info)
            for i in candidates
            if (info := nodes[i]) is not infos[i] or info.generation != generations[i]
        ]
        for i, info in changed:
            self._add(contributions[i], -1)
            new = contribution(info) if info.node is not None else []
            self._add(new, 1)
            infos[i], generations[i], contributions[i] = info, info.generation, new
        return self.totals

    def refresh_members(
        self,
        nodes: Sequence[NodeInfo],
        contribution: Callable[[NodeInfo], Contribution[K]],
        journal: NodeListJournal | None = None,
    ) -> dict[K, int]:
        """The totals over ``nodes``, a list of distinct nodes whose members may differ from
        the last call's: a node is looked up by name, ``contribution`` is called for the new
        and changed ones (object or generation) that have a Node, and the nodes no longer
        listed are subtracted. A call costs a look-up per node, not a rebuild of the tally
        (:meth:`refresh` on a list of another length rebuilds its positions). The dict is the
        tally's own: copy it before changing it.

        ``journal``: the snapshot's, when ``nodes`` holds every node of the snapshot's list
        that contributes anything (one of its holder lists, with a ``contribution`` that is
        empty for the other nodes). From the second call with the same journal on, only the
        positions it lists since the last call are looked at, not ``nodes``."""
        members = self._members
        if members is None:
            members = self._members = {}
        add = self._add
        if journal is not None and journal is self._journal:
            replaced, listed = journal.replaced, journal.nodes
            changed = dict.fromkeys(replaced[self._journal_read :])
            self._journal_read = len(replaced)
            for position in changed:  # a node that no longer contributes leaves
                self._update_member(members, listed[position], contribution, keep_empty=False)
            return self.totals
        for info in nodes:
            self._update_member(members, info, contribution, keep_empty=True)
        if len(members) > len(nodes):  # every listed node is a member: the rest are gone
            listed_names = {info.name for info in nodes}
            for name in [n for n in members if n not in listed_names]:
                add(members.pop(name)[2], -1)
        self._journal = journal
        self._journal_read = len(journal.replaced) if journal is not None else 0
        return self.totals

    def _update_member(
        self,
        members: dict[str, tuple[NodeInfo, int, Contribution[K]]],
        info: NodeInfo,
        contribution: Callable[[NodeInfo], Contribution[K]],
        keep_empty: bool,
    ) -> None:
        """Count ``info`` again in :meth:`refresh_members` unless it is the member it was."""
        entry = members.get(info.name)
        if entry is not None:
            if entry[0] is info and entry[1] == info.generation:
                return
            self._add(entry[2], -1)
        new = contribution(info) if info.node is not None else []
        if new or keep_empty:
            self._add(new, 1)
            members[info.name] = (info, info.generation, new)
        elif entry is not None:
            del members[info.name]

    def _realign(
        self, nodes: Sequence[NodeInfo], contribution: Callable[[NodeInfo], Contribution[K]]
    ) -> None:
        """A list of another length (a node added or gone, or a sublist such as the snapshot's
        nodes with affinity pods, which grows as such pods are placed): nodes are matched by
        name, and only the changed, new and gone ones are counted again."""
        before = {
            info.name: (info, generation, contributed)
            for info, generation, contributed in zip(
                self._infos, self._generations, self._contributions, strict=True
            )
            if info is not None
        }
        infos: list[NodeInfo | None] = []
        generations: list[int] = []
        contributions: list[Contribution[K]] = []
        for info in nodes:
            entry = before.pop(info.name, None)
            if entry is not None and entry[0] is info and entry[1] == info.generation:
                contributed = entry[2]
            else:
                if entry is not None:
                    self._add(entry[2], -1)
                contributed = contribution(info) if info.node is not None else []
                self._add(contributed, 1)
            infos.append(info)
            generations.append(info.generation)
            contributions.append(contributed)
        for _, _, contributed in before.values():
            self._add(contributed, -1)
        self._infos, self._generations, self._contributions = infos, generations, contributions


class NodeTallies(Generic[K]):
    """The most recently used :class:`NodeTally` per question, at most ``maxsize`` of them (a
    question is whatever decides the contributions: a selector, a namespace, a topology key)."""

    __slots__ = ("_tallies",)

    def __init__(self, maxsize: int = 16) -> None:
        if maxsize < 1:
            raise ValueError(f"NodeTallies: maxsize must be at least 1, got {maxsize}")
        self._tallies: LRUCache[Hashable, NodeTally[K]] = LRUCache(maxsize)

    def get(self, question: Hashable) -> NodeTally[K]:
        """The tally of ``question`` (a new, empty one when it was never asked or dropped)."""
        tally = self._tallies.get(question)
        if tally is None:
            tally = self._tallies[question] = NodeTally()
        return tally

    def __len__(self) -> int:
        return len(self._tallies)
