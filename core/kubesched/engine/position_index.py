"""A signature's Filter and Score results by snapshot position, kept up to date by the journal.

With every running Filter signed (:mod:`kubesched.engine.reuse`), a node's Filter status and a
signed Score row change only when the node does. The Filter loop still visited a node at a
time from the rotating start index until it had found ``numFeasibleNodesToFind`` (hundreds per
pod), one table look-up and generation check each, and the Score step did the same again over
the nodes found. :class:`FilterIndex` keeps the sorted positions of the nodes that pass and of
those that do not, so a cycle takes its feasible nodes with a bisection and a slice;
:class:`ScoreIndex` keeps each position's Score entry, so a cycle takes its rows with one
C-level gather. Between cycles only the positions the snapshot's
:class:`~kubesched.framework.snapshot.NodeListJournal` lists as replaced are looked at again
(a node the last pod went to, a node the informers changed); a new node list (a node added or
gone) rebuilds the index once.

The answers are the loop's, node for node: the same nodes in the same order (positions from
the start index up, then from 0), the same statuses for the rejected nodes visited, the same
number of nodes evaluated. The entries themselves stay in the :class:`ResultMemo` tables, which
remain the one source of truth: an index is made for one table object and dropped with it
(:meth:`~kubesched.engine.reuse.ResultMemo.index`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.snapshot import NodeListJournal
from kubesched.framework.status import Status

__all__ = ["FilterIndex", "Found", "ScoreIndex", "Walk"]

#: How a Filter index gets one node's status: ``None`` (passes), a rejection, or ``False`` when
#: the node's Filters gave an Error (the index is then given up for the cycle).
StatusOf = Callable[[NodeInfo], "Status | bool | None"]


class Walk:
    """One cycle's Filter outcome from an index: the feasible positions in visiting order,
    the rejected positions visited (in that order, with their statuses) and how many nodes
    the loop would have evaluated."""

    __slots__ = ("feasible", "processed", "rejected")

    def __init__(
        self, feasible: list[int], rejected: list[tuple[int, Status]], processed: int
    ) -> None:
        self.feasible = feasible
        self.rejected = rejected
        self.processed = processed


class Found:
    """Where one cycle's feasible nodes stand: the list the Filter step returned, each one's
    position in the snapshot's node list, and that list's journal (the Score step takes its
    rows by these positions while it is given this very list)."""

    __slots__ = ("journal", "nodes", "positions")

    def __init__(
        self, nodes: list[NodeInfo], positions: list[int], journal: NodeListJournal
    ) -> None:
        self.nodes = nodes
        self.positions = positions
        self.journal = journal


class FilterIndex:
    """The positions of one Filter table's passing and rejected nodes, in one node list."""

    __slots__ = ("feasible", "journal", "read", "rejected", "statuses", "table")

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.journal: NodeListJournal | None = None
        self.read = 0
        #: Ascending positions of the nodes that pass / that do not.
        self.feasible: list[int] = []
        self.rejected: list[int] = []
        #: Per position: the node's rejection, ``None`` when it passes.
        self.statuses: list[Status | None] = []

    def catch_up(self, journal: NodeListJournal, status_of: StatusOf) -> bool:
        """Bring the index to ``journal``'s list: the replaced positions since the last call
        (every position when the list is new to it). False when a node's Filters gave an
        Error: the caller runs the loop, which meets that Error only if it visits the node."""
        nodes = journal.nodes
        if journal is not self.journal:
            feasible: list[int] = []
            rejected: list[int] = []
            statuses: list[Status | None] = []
            for position, info in enumerate(nodes):
                status = status_of(info)
                if status is False:
                    self.journal = None
                    return False
                statuses.append(status)  # type: ignore[arg-type]
                (feasible if status is None else rejected).append(position)
            self.feasible, self.rejected, self.statuses = feasible, rejected, statuses
            self.journal, self.read = journal, len(journal.replaced)
            return True
        replaced = journal.replaced
        if self.read == len(replaced):
            return True
        statuses = self.statuses
        for position in dict.fromkeys(replaced[self.read :]):
            status = status_of(nodes[position])
            if status is False:
                self.journal = None
                return False
            was = statuses[position]
            statuses[position] = status  # type: ignore[assignment]
            if (was is None) == (status is None):
                continue
            gained, lost = (
                (self.feasible, self.rejected) if status is None else (self.rejected, self.feasible)
            )
            del lost[bisect.bisect_left(lost, position)]
            bisect.insort(gained, position)
        self.read = len(replaced)
        return True

    def walk(self, start: int, to_find: int) -> Walk:
        """What the Filter loop finds from position ``start``: at most ``to_find`` feasible
        positions, visiting ``start`` … the end, then 0 … ``start - 1``."""
        feasible, total = self.feasible, len(self.statuses)
        at = bisect.bisect_left(feasible, start)
        chosen = feasible[at : at + to_find]
        if len(chosen) < to_find:
            chosen += feasible[: min(at, to_find - len(chosen))]
        processed = (chosen[-1] - start) % total + 1 if len(chosen) == to_find else total
        rejected: list[tuple[int, Status]] = []
        if self.rejected:
            statuses = self.statuses
            end = start + processed
            visited = self.rejected
            lo = bisect.bisect_left(visited, start)
            hi = bisect.bisect_left(visited, min(end, total))
            positions = visited[lo:hi]
            if end > total:
                positions += visited[: bisect.bisect_left(visited, end - total)]
            rejected = [(p, statuses[p]) for p in positions]  # type: ignore[misc]
        return Walk(chosen, rejected, processed)


class ScoreIndex:
    """Each position's entry of one Score table (``None``: look it up again), in one list."""

    __slots__ = ("entries", "journal", "read", "table")

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table
        self.journal: NodeListJournal | None = None
        self.read = 0
        self.entries: list[Any] = []

    def catch_up(self, journal: NodeListJournal) -> None:
        """Forget the entries of the positions replaced since the last call (all of them when
        the list is new to the index)."""
        if journal is not self.journal:
            self.entries = [None] * len(journal.nodes)
            self.journal, self.read = journal, len(journal.replaced)
            return
        replaced = journal.replaced
        if self.read == len(replaced):
            return
        entries = self.entries
        for position in replaced[self.read :]:
            entries[position] = None
        self.read = len(replaced)
