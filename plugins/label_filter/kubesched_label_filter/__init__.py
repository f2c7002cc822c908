"""LabelFilter: a node must carry every required label for the pod to run there.

The seed's rule (``scheduler.custom/enabled=true``) made configurable. Filter only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    FieldError,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = ["DEFAULT_LABELS", "NAME", "LabelFilter", "LabelFilterArgs", "reason_missing_label"]

NAME = "LabelFilter"
DEFAULT_LABELS: Mapping[str, str] = {"scheduler.custom/enabled": "true"}


def reason_missing_label(key: str, value: str) -> str:
    """The rejection reason for a node without ``key=value`` (kube-scheduler's wording style)."""
    return f"node(s) didn't have label {key}={value}"


_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*"
_LABEL_KEY = re.compile(rf"^({_PREFIX}/)?{_NAME}$")
_LABEL_VALUE = re.compile(rf"^({_NAME})?$")


@dataclass(frozen=True)
class LabelFilterArgs:
    """``pluginConfig[].args`` of LabelFilter."""

    labels: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_LABELS))

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> LabelFilterArgs:
        """Validate ``args``; raises :class:`ArgsError` listing every bad field."""
        errors: list[FieldError] = [
            FieldError(key, "unknown field; allowed: labels") for key in args if key != "labels"
        ]
        labels = args.get("labels", DEFAULT_LABELS)
        if not isinstance(labels, Mapping) or not labels:
            errors.append(FieldError("labels", "must be a non-empty mapping of label key to value"))
            raise ArgsError(errors)
        for key, value in labels.items():
            if not isinstance(key, str) or not _LABEL_KEY.match(key) or len(key) > 316:
                errors.append(FieldError(f"labels[{key!r}]", "invalid label key"))
            if not isinstance(value, str):
                errors.append(
                    FieldError(
                        f"labels[{key!r}]", f"value must be a string, got {value!r} (quote it)"
                    )
                )
            elif len(value) > 63 or not _LABEL_VALUE.match(value):
                errors.append(FieldError(f"labels[{key!r}]", f"invalid label value {value!r}"))
        if errors:
            raise ArgsError(errors)
        return cls(dict(sorted(labels.items())))


class LabelFilter:
    """Rejects nodes that lack any of the required labels."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = LabelFilterArgs.parse(args)
        self._required = tuple(self.args.labels.items())

    def _missing(self, node: Node) -> tuple[str, str] | None:
        labels = node.labels
        for key, value in self._required:
            if labels.get(key) != value:
                return key, value
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node missing a required label (preemption cannot fix that)."""
        if node_info.node is None:
            return Status.unresolvable("node not found")
        missing = self._missing(node_info.node)
        if missing is None:
            return None
        return Status.unresolvable(reason_missing_label(*missing))

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A new node, or a node whose labels changed, may now carry the labels."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self._hint,
            )
        ]

    def _hint(self, pod: Pod, old: Node | None, new: Node | None) -> QueueingHint:
        if new is not None and self._missing(new) is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP
