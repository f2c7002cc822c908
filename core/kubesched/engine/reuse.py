"""Reusing Filter and Score results across pods that are scheduled the same way.

The pods of one ReplicaSet ask for the same resources, tolerate the same taints and select the
same nodes; between two of them, one node of thousands changes (the one the first was placed on).
kube-scheduler exploits this with pod signatures (``SignPlugin``, v1.35+). Here each plugin
signs the parts of the pod it reads (the ``sign_pod`` hook); the framework keeps, per signature,
every node's Filter status and raw Score values, each stamped with the node's
``NodeInfo.generation``, and reuses them while that generation holds.

A result is reused only when every plugin whose Filter (or Score) runs for the pod signed it, so
a plugin that depends on other nodes (PodTopologySpread with constraints; InterPodAffinity unless
every term in play is keyed on the hostname) or that does not implement the hook turns reuse off
for the pods it acts on, never on wrong data.

A deleted node's results are never read again: when nodes leave the scheduler cache's snapshot,
the scheduler calls :meth:`ResultMemo.forget` on each of its profiles' memos, so a table holds at
most the live nodes however many have come and gone.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["PodSignature", "ResultMemo", "canonical"]

_Index = TypeVar("_Index")


@dataclass(frozen=True, slots=True)
class PodSignature:
    """One pod's signature: ``key`` over the plugins that signed it; ``unsigned`` the plugins
    that could not (or do not implement ``sign_pod``); ``fragments`` each signing plugin's
    data as canonical JSON (a plugin that signed with ``None`` reads nothing and has none)."""

    key: str
    unsigned: frozenset[str]
    fragments: Mapping[str, str] = field(default_factory=dict)

    def key_for(self, plugins: Iterable[str]) -> str:
        """The key over ``plugins``' fragments alone: a table of those plugins' results does
        not depend on what the others read (a Filter table is not split by what only a Score
        plugin signed, nor by the fragment of a plugin whose Filter was skipped)."""
        fragments = self.fragments
        return "\x00".join(f"{p}\x01{fragments[p]}" for p in plugins if p in fragments)


def canonical(fragment: Any) -> str | None:
    """A fragment as canonical JSON text; ``None`` when it is not JSON data."""
    try:
        return json.dumps(fragment, sort_keys=True, separators=(",", ":"), default=_refuse)
    except (TypeError, ValueError):
        return None


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON data")


class ResultMemo:
    """Per-node results of recent signatures, least recently used dropped first.

    A table maps a node name to ``(generation, result)``; a result whose generation is not the
    node's current one is stale and recomputed. ``max_tables`` bounds memory: at 5,000 nodes a
    table holds 5,000 small tuples (~0.5 MB). A table may carry an index over its entries
    (:meth:`index`), dropped with it.
    """

    def __init__(self, max_tables: int = 16) -> None:
        self.max_tables = max_tables
        self._tables: OrderedDict[tuple[Any, ...], dict[str, tuple[int, Any]]] = OrderedDict()
        #: table key -> the index kept over that table (kubesched.engine.position_index).
        self._indexes: dict[tuple[Any, ...], Any] = {}
        #: Guards the set of tables (not their entries): :meth:`node_names` may walk it from
        #: another thread (tests, metrics).
        self._lock = threading.Lock()

    def table(self, key: tuple[Any, ...]) -> dict[str, tuple[int, Any]]:
        """The table for ``key`` (created empty when new)."""
        with self._lock:
            table = self._tables.get(key)
            if table is None:
                table = self._tables[key] = {}
                while len(self._tables) > self.max_tables:
                    dropped, _ = self._tables.popitem(last=False)
                    self._indexes.pop(dropped, None)
            else:
                self._tables.move_to_end(key)
            return table

    def index(
        self,
        key: tuple[Any, ...],
        make: Callable[[dict[str, tuple[int, Any]]], _Index],
    ) -> _Index:
        """The index kept over the table for ``key``, made by ``make(table)`` when the table
        has none yet. An index lives as long as its table: the one it was made for is the
        one it reads (its ``table``)."""
        table = self.table(key)
        with self._lock:
            index = self._indexes.get(key)
            if index is None or index.table is not table:
                index = self._indexes[key] = make(table)
            return index  # type: ignore[no-any-return]

    def forget(self, names: Collection[str]) -> None:
        """Drop every table's results for the nodes ``names`` (they left the cluster)."""
        with self._lock:
            tables = list(self._tables.values())
        for table in tables:
            for name in names:
                table.pop(name, None)

    def node_names(self) -> set[str]:
        """The nodes some table holds a result for."""
        with self._lock:
            tables = list(self._tables.values())
        return {name for table in tables for name in list(table)}

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()
            self._indexes.clear()

    def __len__(self) -> int:
        return len(self._tables)
