"""Finding a node for one pod: PreFilter, Filter over a rotating window, PreScore/Score, pick.

This is kube-scheduler's ``schedulePod`` (schedule_one.go): the nominated node first, an adaptive
number of feasible nodes to look for, scores summed by weight, ties broken at random.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubesched.api.objects import Pod
from kubesched.engine.extender import (
    EXTENDER_NAME,
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    FilterResult,
    HTTPExtender,
)
from kubesched.engine.position_index import FilterIndex, Found
from kubesched.engine.runtime import MAX_NODE_SCORE, FilterReuse, Framework, NodeScores
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.results import NodeToStatus
from kubesched.framework.snapshot import NodeListJournal, Snapshot
from kubesched.framework.status import Code, Status

log = logging.getLogger(__name__)

__all__ = [
    "NO_NODES_AVAILABLE",
    "CycleObserver",
    "Diagnosis",
    "FitError",
    "ScheduleResult",
    "SchedulingAlgorithm",
    "num_feasible_nodes_to_find",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class CycleObserver(Protocol):
    """Sees the algorithm's steps in each scheduling cycle without changing them (``kubesched
    explain`` records with one). Cycles run one at a time on the scheduling thread."""

    def cycle_began(self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot) -> None:
        """The cycle of ``pod`` starts, over ``snapshot``."""

    def nodes_filtered(self, feasible: list[NodeInfo], diagnosis: Diagnosis) -> None:
        """PreFilter, Filter and the filter extenders are done: the feasible nodes, and why
        the others are not."""

    def extender_filtered(
        self, name: str, nodes: list[NodeInfo], outcome: FilterResult | ExtenderError
    ) -> None:
        """One filter extender answered (or failed) for ``nodes``."""

    def extender_scored(self, name: str, scores: dict[str, int], weight: int) -> None:
        """One prioritize extender's scores and weight."""

    def cycle_ended(
        self, state: CycleState, result: ScheduleResult | None, error: Exception | None
    ) -> None:
        """The cycle chose ``result``'s node, or ended with ``error`` (a :class:`FitError`,
        a :class:`CycleError`, or a bug)."""


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int | None) -> int:
    """How many feasible nodes to find before scoring (kube-scheduler's formula).

    Fewer than 100 nodes: all. Otherwise ``percentage`` of them (0/None = adaptive:
    ``max(5, 50 - nodes/125)``), but at least 100.
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct >= 100:
        return num_all_nodes
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class Diagnosis:
    """Why no node fit: each node's rejection, and the plugins behind them."""

    node_to_status: NodeToStatus = field(default_factory=dict)
    #: Status for nodes a PreFilterResult left out (they have no entry of their own).
    absent_nodes_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


class FitError(Exception):
    """No node fits; ``str()`` is kube-scheduler's FailedScheduling message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        message = f"0/{self.num_all_nodes} nodes are available:"
        if d.pre_filter_msg:
            message += f" {d.pre_filter_msg}."
        else:
            histogram: dict[str, int] = {}
            for status in d.node_to_status.values():
                for reason in status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + 1
            absent = self.num_all_nodes - len(d.node_to_status)
            if d.absent_nodes_status is not None and absent > 0:
                for reason in d.absent_nodes_status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + absent
            # kube-scheduler sorts "<count> <reason>" as strings, so do we (messages compare).
            reasons = sorted(f"{count} {reason}" for reason, count in histogram.items())
            if reasons:
                message += f" {', '.join(reasons)}."
        if d.post_filter_msg:
            message += f" {d.post_filter_msg}"
        return message


@dataclass
class ScheduleResult:
    node_name: str
    evaluated_nodes: int
    feasible_nodes: int
    #: The Score point's outcome (``None`` when there was nothing to score).
    node_scores: NodeScores | None = None

    @property
    def scores(self) -> dict[str, dict[str, int]]:
        """plugin -> node -> weighted score (empty when there was nothing to score); built on
        first use, as only reports read it."""
        return self.node_scores.by_plugin if self.node_scores is not None else {}


class CycleError(Exception):
    """A plugin Error during the cycle: the pod goes through backoff (reason SchedulerError)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


class SchedulingAlgorithm:
    """Stateful only in the rotating start index, as kube-scheduler is."""

    def __init__(
        self,
        percentage_of_nodes_to_score: int = 0,
        rng: random.Random | None = None,
        extenders: Sequence[HTTPExtender] = (),
        observe_point: Callable[[str, str, str, float], None] | None = None,
    ) -> None:
        """``observe_point(extension_point, status_code_name, profile, seconds)``: told of
        each PreFilter, Filter, PreScore and Score point's duration (the metrics)."""
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.rng = rng or random.Random()
        #: HTTP extenders, in the order kube-scheduler calls them (see kubesched.engine.extender).
        self.extenders = list(extenders)
        self.next_start_node_index = 0
        self.observe = observe_point
        self._observers: list[CycleObserver] = []

    def add_observer(self, observer: CycleObserver) -> None:
        """Tell ``observer`` of each cycle's steps from the next cycle on."""
        self._observers.append(observer)

    def _observed(self, point: str, fw: Framework, started: float, status: Status) -> None:
        if self.observe is not None:
            self.observe(point, status.code.kube_name, fw.name, time.perf_counter() - started)

    def schedule(
        self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> ScheduleResult:
        """The chosen node; raises :class:`FitError` or :class:`CycleError`."""
        if not self._observers:
            return self._schedule(fw, state, pod, snapshot)
        for observer in self._observers:
            observer.cycle_began(fw, state, pod, snapshot)
        try:
            result = self._schedule(fw, state, pod, snapshot)
        except Exception as exc:
            for observer in self._observers:
                observer.cycle_ended(state, None, exc)
            raise
        for observer in self._observers:
            observer.cycle_ended(state, result, None)
        return result

    def _schedule(
        self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> ScheduleResult:
        num_nodes = len(snapshot)
        if num_nodes == 0:
            # kube-scheduler: UnschedulableAndUnresolvable (reason Unschedulable), not an Error.
            raise CycleError(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_NODES_AVAILABLE))
        state.signature = fw.sign_pod(pod)
        try:
            feasible, diagnosis = self.find_nodes_that_fit(fw, state, pod, snapshot)
            if not feasible:
                raise FitError(pod, num_nodes, diagnosis)
            if len(feasible) == 1:
                return ScheduleResult(feasible[0].name, 1 + len(diagnosis.node_to_status), 1)
            scores = self.prioritize(fw, state, pod, feasible)
        finally:
            # The Filter step's positions are the Score step's alone. A binding cycle keeps its
            # state while it waits for a worker (thousands of them in a backlog): holding a
            # list of hundreds of nodes and positions each cost 50+ MB at 5,000 nodes.
            state.found = None
        node = self.select_host(feasible, scores.totals)
        return ScheduleResult(
            node, len(feasible) + len(diagnosis.node_to_status), len(feasible), scores
        )

    def find_nodes_that_fit(
        self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        """The nodes that pass PreFilter, Filter and the filter extenders, and the diagnosis
        of the others."""
        feasible, diagnosis = self._find_nodes_that_fit(fw, state, pod, snapshot)
        for observer in self._observers:
            observer.nodes_filtered(feasible, diagnosis)
        return feasible, diagnosis

    def _find_nodes_that_fit(
        self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot
    ) -> tuple[list[NodeInfo], Diagnosis]:
        diagnosis = Diagnosis()
        all_nodes = snapshot.node_infos
        started = time.perf_counter()
        result, status, narrowing = fw.run_pre_filter(state, pod, all_nodes)
        self._observed("PreFilter", fw, started, status)
        if not status.is_success():
            if status.code is Code.ERROR:
                raise CycleError(status)
            diagnosis.pre_filter_msg = status.message()
            if status.plugin:
                diagnosis.unschedulable_plugins.add(status.plugin)
            diagnosis.node_to_status = {info.name: status for info in all_nodes}
            return [], diagnosis
        # A nominated node (preemption) is tried first; if it still fits, it is the answer.
        if pod.nominated_node_name:
            info = snapshot.get(pod.nominated_node_name)
            if info is not None and (
                result is None or info.name in (result.node_names or ()) or result.all_nodes()
            ):
                if fw.run_filter_with_nominated_pods(state, pod, info) is None:
                    try:  # kube logs an extender's failure here and goes on to every node
                        passed = self.find_nodes_that_pass_extenders(pod, [info], Diagnosis())
                    except CycleError:
                        passed = []
                    if passed:
                        return passed, diagnosis
        nodes = all_nodes
        if result is not None and not result.all_nodes():
            names = result.node_names or frozenset()
            nodes = [info for info in all_nodes if info.name in names]
            diagnosis.absent_nodes_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]",
            )
            diagnosis.unschedulable_plugins.update(narrowing)
        started = time.perf_counter()
        feasible = self._filter(
            fw, state, pod, nodes, diagnosis, snapshot.journal if nodes is all_nodes else None
        )
        self._observed(
            "Filter", fw, started, Status.success() if feasible else Status(Code.UNSCHEDULABLE)
        )
        if self.extenders:
            feasible = self.find_nodes_that_pass_extenders(pod, feasible, diagnosis)
        return feasible, diagnosis

    def find_nodes_that_pass_extenders(
        self, pod: Pod, feasible: list[NodeInfo], diagnosis: Diagnosis
    ) -> list[NodeInfo]:
        """kube's ``findNodesThatPassExtenders``: each interested filter extender in turn over
        the nodes the previous ones kept; their rejections join the diagnosis
        (``FailedAndUnresolvableNodes`` over ``FailedNodes``), and the pod records the
        ``Extender`` pseudo-plugin when they took any node away. An ignorable extender's error
        is skipped; another's raises :class:`CycleError`."""
        before = len(feasible)
        for extender in self.extenders:
            if not feasible:
                break
            if not extender.is_interested(pod):
                continue
            try:
                result = self.run_extender_filter(extender, pod, feasible)
            except ExtenderError as err:
                if extender.ignorable:
                    log.info(
                        "skipping extender %s as it returned error and has ignorable flag set: %s",
                        extender.name,
                        err,
                    )
                    continue
                raise CycleError(Status(Code.ERROR, str(err))) from None
            statuses = diagnosis.node_to_status
            for name, message in result.failed_and_unresolvable.items():
                statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
            for name, message in result.failed.items():
                if name not in result.failed_and_unresolvable:
                    statuses[name] = Status(Code.UNSCHEDULABLE, message)
            feasible = result.feasible
        if len(feasible) != before:
            diagnosis.unschedulable_plugins.add(EXTENDER_NAME)
        return feasible

    def run_extender_filter(
        self, extender: HTTPExtender, pod: Pod, nodes: list[NodeInfo]
    ) -> FilterResult:
        """One extender's filter call, told to the observers."""
        try:
            result = extender.filter(pod, nodes)
        except ExtenderError as err:
            for observer in self._observers:
                observer.extender_filtered(extender.name, nodes, err)
            raise
        for observer in self._observers:
            observer.extender_filtered(extender.name, nodes, result)
        return result

    def run_extender_prioritize(
        self, extender: HTTPExtender, pod: Pod, nodes: list[NodeInfo]
    ) -> tuple[dict[str, int], int]:
        """One extender's prioritize call, told to the observers."""
        scores, weight = extender.prioritize(pod, nodes)
        for observer in self._observers:
            observer.extender_scored(extender.name, scores, weight)
        return scores, weight

    def _filter(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        nodes: list[NodeInfo],
        diagnosis: Diagnosis,
        journal: NodeListJournal | None = None,
    ) -> list[NodeInfo]:
        """kube's ``findNodesThatPassFilters``: from the rotating start index, the nodes that
        pass every Filter until ``numFeasibleNodesToFind`` are found, each rejection in the
        diagnosis. ``journal`` is that of ``nodes`` when they are the snapshot's whole list:
        a pod whose Filter results are all reused is then answered from a position index."""
        total = len(nodes)
        if total == 0:
            return []
        to_find = num_feasible_nodes_to_find(
            total,
            fw.percentage_of_nodes_to_score
            if fw.percentage_of_nodes_to_score is not None
            else self.percentage_of_nodes_to_score,
        )
        if not fw.has_score_plugins() and not any(
            e.is_filter or e.is_prioritizer for e in self.extenders
        ):
            to_find = 1
        if not fw.has_filter_plugins():
            start = self.next_start_node_index % total
            chosen = [nodes[(start + i) % total] for i in range(to_find)]
            self.next_start_node_index = (start + len(chosen)) % total
            return chosen
        feasible: list[NodeInfo] = []
        start = self.next_start_node_index % total
        processed = 0
        # On a node with nominated pods, Filter depends on them too: such nodes always go
        # through run_filter_with_nominated_pods, never through reused results.
        nominated = fw.handle.nodes_with_nominated_pods() if fw.handle.has_nominated_pods() else ()
        reuse = fw.filter_reuse(state)
        if (
            reuse is not None
            and reuse.complete
            and journal is not None
            and not nominated
            and journal.nodes is nodes
            and len(reuse.table) >= to_find
        ):
            found = self._filter_indexed(fw, state, pod, reuse, journal, to_find, diagnosis)
            if found is not None:
                return found
        run_filter: Callable[[CycleState, Pod, NodeInfo], Status | None]
        if reuse is None:
            run_filter = fw.run_filter_with_nominated_pods if nominated else fw.run_filter
        elif not reuse.complete:  # some running Filters must still be called on every node
            run_filter = fw.partial_filter(state, pod, reuse)
            reuse = None
        else:
            run_filter = fw.run_filter
        reusable = reuse.table if reuse is not None else None
        statuses = diagnosis.node_to_status
        reused = reusable.get if reusable is not None else None
        # The loop visits hundreds of nodes per pod: what it calls is bound to locals once.
        error = Code.ERROR
        keep = feasible.append
        rejected_by = diagnosis.unschedulable_plugins.add
        with_nominated = fw.run_filter_with_nominated_pods
        for info in itertools.chain(
            itertools.islice(nodes, start, None), itertools.islice(nodes, start)
        ):
            processed += 1
            if nominated and info.name in nominated:
                status = with_nominated(state, pod, info)
            elif reused is None:
                status = run_filter(state, pod, info)
            else:
                entry = reused(info.name)
                if entry is not None and entry[0] == info.generation:
                    status = entry[1]
                else:
                    status = run_filter(state, pod, info)
                    if status is None or status.code is not error:
                        reusable[info.name] = (info.generation, status)  # type: ignore[index]
            if status is None:
                keep(info)
                to_find -= 1
                if not to_find:
                    break
            elif status.code is error:
                raise CycleError(status)
            else:
                statuses[info.name] = status
                rejected_by(status.plugin)
        self.next_start_node_index = (start + processed) % total
        return feasible

    def _filter_indexed(
        self,
        fw: Framework,
        state: CycleState,
        pod: Pod,
        reuse: FilterReuse,
        journal: NodeListJournal,
        to_find: int,
        diagnosis: Diagnosis,
    ) -> list[NodeInfo] | None:
        """:meth:`_filter`'s answer from the :class:`FilterIndex` of ``reuse``'s table, for a
        pod every running Filter signed: the same nodes, rejections and start index as the
        loop, with only the nodes replaced since the last such cycle evaluated. ``None`` when
        a node's Filters gave an Error (the loop then runs, and meets it only if it visits
        that node).

        Taken only once the table holds a window's worth of results (a signature seen
        before), so that the first pod of a kind does not evaluate every node."""
        table = reuse.table
        error = Code.ERROR
        run_filter = fw.run_filter

        def status_of(info: NodeInfo) -> Status | bool | None:
            entry = table.get(info.name)
            if entry is not None and entry[0] == info.generation:
                return entry[1]  # type: ignore[no-any-return]
            status = run_filter(state, pod, info)
            if status is not None and status.code is error:
                return False
            table[info.name] = (info.generation, status)
            return status

        index = fw.memo.index(reuse.key, FilterIndex)
        if not index.catch_up(journal, status_of):
            return None
        nodes = journal.nodes
        total = len(nodes)
        start = self.next_start_node_index % total
        walk = index.walk(start, to_find)
        statuses = diagnosis.node_to_status
        rejected_by = diagnosis.unschedulable_plugins.add
        for position, status in walk.rejected:
            statuses[nodes[position].name] = status
            rejected_by(status.plugin)
        self.next_start_node_index = (start + walk.processed) % total
        feasible = list(map(nodes.__getitem__, walk.feasible))
        state.found = Found(feasible, walk.feasible, journal)
        return feasible

    def prioritize(
        self, fw: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo]
    ) -> NodeScores:
        if not fw.has_score_plugins() and not self.extenders:
            return NodeScores([], {}, [0] * len(feasible))
        started = time.perf_counter()
        status = fw.run_pre_score(state, pod, feasible)
        self._observed("PreScore", fw, started, status)
        if not status.is_success():
            raise CycleError(status)
        started = time.perf_counter()
        scores, status = fw.run_score(state, pod, feasible)
        self._observed("Score", fw, started, status)
        if not status.is_success():
            raise CycleError(status)
        if self.extenders:
            self._add_extender_scores(pod, feasible, scores)
        return scores

    def _add_extender_scores(self, pod: Pod, feasible: list[NodeInfo], scores: NodeScores) -> None:
        """kube's ``prioritizeNodes``, extender part: each interested extender's score times
        its weight times MaxNodeScore/MaxExtenderPriority, added to the totals (one column per
        extender, named by its urlPrefix). A failing extender gives no score, fatal to nothing."""
        index = {name: i for i, name in enumerate(scores.names)}
        # A copy: with one Score plugin the totals are that plugin's column itself.
        totals = scores.totals = list(scores.totals)
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        for extender in self.extenders:
            # kube asks every interested extender; one without a prioritizeVerb gives 0s.
            if not extender.is_prioritizer or not extender.is_interested(pod):
                continue
            try:
                given, weight = self.run_extender_prioritize(extender, pod, feasible)
            except ExtenderError as err:
                log.debug("extender %s gave no score: %s", extender.name, err)
                continue
            column = [0] * len(scores.names)
            for host, score in given.items():
                i = index.get(host)
                if i is not None:
                    column[i] += score * weight * scale
                    totals[i] += score * weight * scale
            scores.columns[extender.name] = column
            scores._by_plugin = None

    def select_host(self, feasible: list[NodeInfo], totals: list[int]) -> str:
        """The highest total (``totals`` aligned with ``feasible``); among equal totals, each
        has the same chance, as with kube-scheduler's selectHost (one draw among the ties
        rather than its reservoir's draw per tie: the same distribution, fewer draws)."""
        if not totals:
            return ""
        best_total = max(totals)
        ties = [i for i, total in enumerate(totals) if total == best_total]
        best = ties[0] if len(ties) == 1 else ties[self.rng.randrange(len(ties))]
        return feasible[best].name
