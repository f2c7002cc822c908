"""ImageLocality: prefer nodes that already hold the pod's container images.

kube-scheduler's Score plugin of the same name (``pkg/scheduler/framework/plugins/
imagelocality``, v1.37). Each image of the pod (init containers, containers and image volumes)
found on the node adds its size scaled by the share of nodes that have it, so that an image
present everywhere does not pull every pod to one node. The sum is clamped to
``[23 MiB, 1000 MiB x number of images]`` and mapped linearly onto ``[0, 100]``.

Image names are matched as kube-scheduler matches them: the pod's reference gets ``:latest``
when it carries no tag, and must then equal one of the names in the node's ``status.images``.
There is no registry normalization: ``nginx`` becomes ``nginx:latest``, which does not match a
node reporting only ``docker.io/library/nginx:latest`` (kube-scheduler's own TODO).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kubesched import (
    ArgsError,
    CycleState,
    FieldError,
    Handle,
    Node,
    NodeInfo,
    Pod,
    hookimpl,
)
from kubesched.framework.helpers import MAX_NODE_SCORE

__all__ = [
    "MAX_CONTAINER_THRESHOLD",
    "MAX_NODE_SCORE",
    "MB",
    "MIN_THRESHOLD",
    "NAME",
    "ImageLocality",
    "calculate_priority",
    "normalized_image_name",
]

NAME = "ImageLocality"
MB = 1024 * 1024
#: Bounds of the summed image score: 90% of registry images are compressed to sizes in
#: ``[23 MiB, 1000 MiB]`` (kube-scheduler's comment); the upper bound is per image of the pod.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` to a reference without a tag (the last ``:`` not after the last ``/``).

    A digest reference (``name@sha256:...``) has its ``:`` after the last ``/`` and is kept.
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, image_count: int) -> int:
    """Clamp ``sum_scores`` to ``[MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD * image_count]`` and map
    it linearly onto ``[0, MAX_NODE_SCORE]``, truncating as Go's integer division does."""
    max_threshold = MAX_CONTAINER_THRESHOLD * image_count
    if max_threshold <= MIN_THRESHOLD:
        # No image at all (Go computes 0 / -MIN_THRESHOLD here): nothing to prefer.
        return 0
    sum_scores = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def _pod_images(pod: Pod) -> Iterator[str]:
    """The pod's image references, normalized: init containers, containers, image volumes."""
    for container in (*pod.init_containers, *pod.containers):
        yield normalized_image_name(container.image)
    for volume in (pod.raw.get("spec") or {}).get("volumes") or ():
        image = volume.get("image") if isinstance(volume, Mapping) else None
        if isinstance(image, Mapping):
            yield normalized_image_name(image.get("reference") or "")


def _node_images(node: Node) -> dict[str, int]:
    """Image name -> size in bytes; a name listed twice keeps its first size (as kube's cache)."""
    sizes: dict[str, int] = {}
    for names, size in node.images:
        for name in names:
            sizes.setdefault(name, size)
    return sizes


class ImageLocality:
    """Scores a node by the pod images it already holds, scaled by how widespread they are."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.handle = handle
        # Node name -> (the Node object it was built from, its image sizes). A changed node is
        # a new object, so an identity check keeps the entry current without invalidation.
        self._images: dict[str, tuple[Node, dict[str, int]]] = {}

    def _images_of(self, node: Node, total_nodes: int) -> dict[str, int]:
        cached = self._images.get(node.name)
        if cached is not None and cached[0] is node:
            return cached[1]
        if len(self._images) > 2 * total_nodes + 16:  # drop the entries of removed nodes
            self._images.clear()
        sizes = _node_images(node)
        self._images[node.name] = (node, sizes)
        return sizes

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Score reads the pod's images, and how many nodes hold each: the snapshot's image
        census version stands for the latter."""
        return [list(_pod_images(pod)), self.handle.snapshot().images_version]

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """0..100: the pod's images on the node, by size and spread across the cluster."""
        node = node_info.node
        snapshot = self.handle.snapshot()
        total_nodes = len(snapshot)
        if node is None or total_nodes == 0:
            return 0
        on_node = self._images_of(node, total_nodes)
        sum_scores = 0
        image_count = 0
        for image in _pod_images(pod):
            image_count += 1
            size = on_node.get(image)
            if size is not None:
                spread = snapshot.image_num_nodes(image) / total_nodes
                sum_scores += int(size * spread)  # float64(size) * spread, truncated, as in Go
        return calculate_priority(sum_scores, image_count)
