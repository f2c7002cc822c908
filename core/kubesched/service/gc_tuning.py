"""Garbage-collector settings for a long-running scheduler process.

A scheduler holds every node and pod of the cluster for its whole life, and allocates many small
short-lived objects per cycle (statuses, lists, copies of a node). With CPython's defaults
(a young collection every 700 net allocations, and full collections that walk the whole heap)
the collector spent a fifth of the in-memory scheduling time at 5,000 nodes re-walking the
cluster objects (docs/benchmarks.md). After the initial lists, those objects are moved out of
the collector's sight (``gc.freeze``) and young collections run less often; cycles of garbage
are still collected.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

__all__ = ["YOUNG_GENERATION_THRESHOLD", "tune_after_initial_sync"]

#: Net allocations between two young-generation collections (CPython's default: 700).
YOUNG_GENERATION_THRESHOLD = 50_000


def tune_after_initial_sync() -> Callable[[], None]:
    """Freeze what the initial lists built and space out young collections (process-wide;
    called once the scheduler's caches are filled). Returns the call that undoes both, for a
    scheduler that is not the whole process (``simulate`` inside a test session)."""
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    _, older, oldest = previous
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, max(older, 20), max(oldest, 20))

    def undo() -> None:
        gc.unfreeze()
        gc.set_threshold(*previous)

    return undo
