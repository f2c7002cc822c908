"""CycleState: data that plugins share within one pod's scheduling cycle.

A PreFilter computes something once; its Filter reads it for every node. Keys are by convention
the writing plugin's name (``"PreFilter" + NAME`` in kube-scheduler). The framework also records
here which plugins asked to skip their Filter or Score.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.engine.position_index import Found
    from kubesched.engine.reuse import PodSignature

__all__ = ["CycleState"]


class CycleState:
    """A per-cycle key/value store; values should be treated as read-only after PreFilter."""

    __slots__ = (
        "_data",
        "found",
        "record_plugin_metrics",
        "signature",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        #: The PreBind plugins whose PreBindPreFlight returned Skip for this pod.
        self.skip_pre_bind_plugins: set[str] = set()
        #: The pod's signature, set by the framework when results may be reused across pods.
        self.signature: PodSignature | None = None
        #: kube's ``ShouldRecordPluginMetrics``: this cycle's plugin calls are timed (a sample
        #: of cycles, chosen by the scheduler).
        self.record_plugin_metrics = False
        #: Where the Filter step's feasible nodes stand in the snapshot, when it found them
        #: with a position index (the Score step then reads its rows by position).
        self.found: Found | None = None

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value stored under ``key``; raises ``KeyError`` naming the key when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"cycle state has no {key!r}: did its PreFilter run?") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """A copy for what-if evaluation (preemption); values with ``clone()`` are cloned."""
        other = CycleState()
        other._data = {
            k: (v.clone() if hasattr(v, "clone") else copy.copy(v)) for k, v in self._data.items()
        }
        other.skip_filter_plugins = set(self.skip_filter_plugins)
        other.skip_score_plugins = set(self.skip_score_plugins)
        other.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        other.record_plugin_metrics = self.record_plugin_metrics
        other.signature = None  # a what-if state is never filed under the pod's signature
        return other
