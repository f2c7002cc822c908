"""Snapshot: the immutable view of the cluster that one scheduling cycle reads.

The cache updates it incrementally: only nodes changed since the last cycle are copied, so a
5,000-node cluster does not pay a full copy per pod.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from kubesched.framework.nodeinfo import NodeInfo, next_generation

__all__ = ["NodeListJournal", "Snapshot"]


class NodeListJournal:
    """The positions of :attr:`Snapshot.node_infos` swapped for a changed node's fresh copy,
    in order, since that list was built.

    Something that keeps a result per node position (a
    :class:`~kubesched.framework.helpers.NodeTally`) and remembers how far it had read can
    visit only the positions listed after that, instead of comparing every node of a 5,000-node
    list each cycle. The journal belongs to one list object (:attr:`nodes`): when the snapshot
    builds a new list (a node added or gone, or the journal grown to the list's length) it
    starts a new journal, and a reader holding the old one must look at every node again.
    """

    __slots__ = ("nodes", "replaced")

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self.nodes = nodes
        #: Positions in :attr:`nodes`, one per swap (a position may appear more than once).
        self.replaced: list[int] = []


class Snapshot:
    """Nodes (with their pods) in a stable order, and by name.

    Its NodeInfos are never changed in place: the cache swaps in a changed node's fresh copy
    (``_replace``), which the :attr:`journal` records; a reader that trusts the journal would
    not see a NodeInfo changed where it stands."""

    def __init__(self, node_infos: list[NodeInfo] | None = None) -> None:
        self.by_name: dict[str, NodeInfo] = {}
        self.node_infos: list[NodeInfo] = []
        for info in node_infos or ():
            self.by_name[info.name] = info
        self._reorder()
        self._recount_images()

    def _recount_images(self) -> None:
        """How many nodes have each image (ImageLocality spreads its score by it)."""
        counts: dict[str, int] = {}
        for info in self.node_infos:
            if info.node is None:
                continue
            names = {name for names, _size in info.node.images for name in names}
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        self._image_num_nodes = counts
        #: Changes whenever the census above may have: a plugin whose results depend on it
        #: signs pods with it (ImageLocality).
        self.images_version = next_generation()

    def image_num_nodes(self, image: str) -> int:
        """The number of nodes whose ``status.images`` list ``image`` (exact name)."""
        return self._image_num_nodes.get(image, 0)

    def _reorder(self) -> None:
        self.node_infos = list(self.by_name.values())
        #: What changed in :attr:`node_infos` since it was built (see :class:`NodeListJournal`).
        self.journal = NodeListJournal(self.node_infos)
        self._index = {info.name: i for i, info in enumerate(self.node_infos)}
        self._with_affinity = {i.name: i for i in self.node_infos if i.pods_with_affinity}
        self._with_required_anti_affinity = {
            i.name: i for i in self.node_infos if i.pods_with_required_anti_affinity
        }
        #: The two affinity lists, built on first use and then kept up to date by _replace,
        #: with the snapshot positions of their nodes (ascending).
        self._affinity_lists: tuple[list[NodeInfo], list[NodeInfo]] | None = None
        self._affinity_positions: tuple[list[int], list[int]] = ([], [])

    def _replace(self, info: NodeInfo) -> None:
        """Swap in a fresh copy of a node already in the snapshot, keeping its position."""
        name = info.name
        self.by_name[name] = info
        position = self._index[name]
        journal = self.journal
        if len(journal.replaced) >= max(len(self.node_infos), 64):
            # A fresh list and journal, so that a journal never outgrows its list: readers of
            # the old one look at every node once.
            self.node_infos = list(self.node_infos)
            journal = self.journal = NodeListJournal(self.node_infos)
        self.node_infos[position] = info
        journal.replaced.append(position)
        for which, (index, has) in enumerate(
            (
                (self._with_affinity, info.pods_with_affinity),
                (self._with_required_anti_affinity, info.pods_with_required_anti_affinity),
            )
        ):
            if has:  # (re)listed: the lists must hold this copy, not the replaced one
                index[name] = info
            elif index.pop(name, None) is None:
                continue
            if self._affinity_lists is not None:
                self._relist(which, position, info if has else None)

    def _relist(self, which: int, position: int, info: NodeInfo | None) -> None:
        """Put ``info`` at snapshot ``position`` in built affinity list ``which`` (0: with
        affinity, 1: with required anti-affinity), or take that position out (``None``): a
        look-up and a copy of the list instead of sorting it again. The list is copied, not
        changed, as a plugin may still hold the one it was given."""
        assert self._affinity_lists is not None
        positions = self._affinity_positions[which]
        nodes = list(self._affinity_lists[which])
        at = bisect.bisect_left(positions, position)
        present = at < len(positions) and positions[at] == position
        if info is not None and present:
            nodes[at] = info
        elif info is not None:
            positions.insert(at, position)
            nodes.insert(at, info)
        elif present:
            del positions[at], nodes[at]
        kept = self._affinity_lists
        self._affinity_lists = (nodes, kept[1]) if which == 0 else (kept[0], nodes)

    def _lists(self) -> tuple[list[NodeInfo], list[NodeInfo]]:
        if self._affinity_lists is None:
            order = self._index
            positions = (
                sorted(order[name] for name in self._with_affinity),
                sorted(order[name] for name in self._with_required_anti_affinity),
            )
            nodes = self.node_infos
            self._affinity_positions = positions
            self._affinity_lists = (
                [nodes[i] for i in positions[0]],
                [nodes[i] for i in positions[1]],
            )
        return self._affinity_lists

    @property
    def have_pods_with_affinity(self) -> list[NodeInfo]:
        """The nodes holding at least one pod with pod affinity or anti-affinity terms, in
        snapshot order (kube-scheduler's ``HavePodsWithAffinityList``): inter-pod affinity
        looks at these instead of every node."""
        return self._lists()[0]

    @property
    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        """The nodes holding a pod with required anti-affinity terms, in snapshot order
        (``HavePodsWithRequiredAntiAffinityList``)."""
        return self._lists()[1]

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def __len__(self) -> int:
        return len(self.node_infos)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_infos)
