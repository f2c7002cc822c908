"""Snapshot: the immutable view of the cluster that one scheduling cycle reads.

The cache updates it incrementally: only nodes changed since the last cycle are copied, so a
5,000-node cluster does not pay a full copy per pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from .nodeinfo import NodeInfo

__all__ = ["Snapshot"]


class Snapshot:
    """Nodes (with their pods) in a stable order, and by name."""

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

    def image_num_nodes(self, image: str) -> int:
        """The number of nodes whose ``status.images`` list ``image`` (exact name)."""
        return self._image_num_nodes.get(image, 0)

    def _reorder(self) -> None:
        self.node_infos = list(self.by_name.values())
        self._index = {info.name: i for i, info in enumerate(self.node_infos)}

    def _replace(self, info: NodeInfo) -> None:
        """Swap in a fresh copy of a node already in the snapshot, keeping its position."""
        self.by_name[info.name] = info
        self.node_infos[self._index[info.name]] = info

    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def __len__(self) -> int:
        return len(self.node_infos)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_infos)
