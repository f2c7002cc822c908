"""PrioritySort: higher ``spec.priority`` first, then the earlier-queued pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import ArgsError, FieldError, Handle, QueuedPodInfo, hookimpl

__all__ = ["NAME", "PrioritySort"]

NAME = "PrioritySort"


class PrioritySort:
    """Kube-scheduler's default QueueSort plugin."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, "unknown field; PrioritySort takes no args") for key in args]
            )

    @hookimpl
    def queue_sort_less(self, pod_a: QueuedPodInfo, pod_b: QueuedPodInfo) -> bool:
        """Higher priority first; equal priorities by the time they were queued."""
        if pod_a.pod.priority != pod_b.pod.priority:
            return pod_a.pod.priority > pod_b.pod.priority
        return pod_a.timestamp < pod_b.timestamp
