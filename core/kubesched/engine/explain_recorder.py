"""What every plugin decided in a scheduling cycle: the record behind ``kubesched explain``.

``ExplainRecorder().attach(scheduler)`` (before the scheduler runs) keeps one
:class:`CycleReport` per scheduling cycle: each Filter plugin's verdict on each node it ran on,
each Score plugin's raw, normalized and weighted score, the totals, the node chosen and why, the
once-per-cycle points (PreFilter, PostFilter, PreScore, Reserve, Permit, PreBind, Bind) and the
outcome with kube-scheduler's message.

How it sees all that without changing a decision: through the engine's public observer hooks —
the framework tells it of every plugin call after the call (the same calls, in the profile's
order, with the same early stops), the algorithm of each cycle's steps (feasible nodes,
extenders, the pick), the scheduler of each attempt's end. The record of a cycle travels in
its :class:`~kubesched.CycleState`, so binding cycles on other threads add to the right report
and what-if copies of the state record nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import Pod
from kubesched.engine.algorithm import (
    CycleError,
    Diagnosis,
    FitError,
    ScheduleResult,
)
from kubesched.engine.extender import (
    MAX_EXTENDER_PRIORITY,
    ExtenderError,
    FilterResult,
)
from kubesched.engine.runtime import MAX_NODE_SCORE, Framework
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.results import PostFilterResult, PreFilterResult
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Status

if TYPE_CHECKING:
    from kubesched.engine.scheduler import Attempt, Scheduler

__all__ = [
    "EXCLUDED",
    "FEASIBLE",
    "NOT_EVALUATED",
    "REJECTED",
    "CycleReport",
    "ExplainRecorder",
    "NodeReport",
    "ScoreDetail",
    "Verdict",
]

#: A node's outcome in a cycle.
FEASIBLE = "feasible"
REJECTED = "rejected"
#: Left out by a PreFilter plugin's node subset: Filter did not run on it.
EXCLUDED = "excluded"
#: Not looked at: the search stopped once it had found enough feasible nodes.
NOT_EVALUATED = "not evaluated"

#: Hooks whose calls are recorded -> the extension point's name as kube-scheduler spells it.
POINT_NAMES = {
    hook: "".join(word.capitalize() for word in hook.split("_"))
    for hook in (
        *("pre_filter", "filter", "post_filter", "pre_score", "score", "normalize_score"),
        *("reserve", "unreserve", "permit", "pre_bind", "bind", "post_bind"),
    )
}
_STATE_KEY = "kubesched.testing/explain"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one plugin returned at one point (and, at Filter, for one node)."""

    plugin: str
    code: str
    reasons: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.code == "Success"

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "code": self.code, "reasons": list(self.reasons)}


def verdict_of(plugin: str, result: Any) -> Verdict:
    """A hook's return value as a verdict, read the way the framework reads it."""
    if result is None:
        return Verdict(plugin, "Success")
    if isinstance(result, Status):
        return Verdict(plugin, result.code.kube_name, result.reasons)
    if isinstance(result, PreFilterResult):
        if result.node_names is None:
            return Verdict(plugin, "Success")
        names = ", ".join(sorted(result.node_names)) or "none"
        return Verdict(plugin, "Success", (f"only nodes: {names}",))
    if isinstance(result, PostFilterResult):
        nominated = result.nominated_node_name
        return Verdict(plugin, "Success", (f"nominated node {nominated}",) if nominated else ())
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Status):
        # PostFilter's (PostFilterResult | None, Status) pair.
        post_filter_result, status = result
        verdict = verdict_of(plugin, status)
        if isinstance(post_filter_result, PostFilterResult):
            nominated = post_filter_result.nominated_node_name
            note = f"nominated node {nominated}" if nominated else "nomination cleared"
            if nominated or not status.is_success():
                verdict = Verdict(plugin, verdict.code, (*verdict.reasons, note))
        return verdict
    return Verdict(plugin, "Error", (f"returned {type(result).__name__}",))


@dataclass(slots=True)
class ScoreDetail:
    """One Score plugin on one node: raw, after NormalizeScore, and times the plugin's weight."""

    plugin: str
    weight: int
    raw: int | None = None
    normalized: int | None = None
    weighted: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class NodeReport:
    """One node in one cycle: its outcome, each Filter verdict, each score."""

    name: str
    outcome: str = NOT_EVALUATED
    #: Plugin -> verdict, for the Filter plugins that ran (or were skipped) on this node.
    filters: dict[str, Verdict] = field(default_factory=dict)
    #: Plugin -> score, for the Score plugins that scored this node.
    scores: dict[str, ScoreDetail] = field(default_factory=dict)
    #: Why the node was rejected or excluded (kube-scheduler's reason strings).
    message: str = ""

    @property
    def total(self) -> int | None:
        """The sum of the weighted scores, ``None`` when the node was not scored."""
        weighted = [s.weighted for s in self.scores.values() if s.weighted is not None]
        return sum(weighted) if weighted else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "message": self.message,
            "filter": [v.to_dict() for v in self.filters.values()],
            "score": [s.to_dict() for s in self.scores.values()],
            "total": self.total,
        }


@dataclass
class CycleReport:
    """One scheduling cycle of one pod, from PreFilter to the end of its binding cycle."""

    pod: str
    uid: str
    profile: str
    attempt: int
    #: The Filter plugins in the order they run, and the Score plugins with their weights.
    filter_plugins: list[str] = field(default_factory=list)
    score_plugins: dict[str, int] = field(default_factory=dict)
    #: Once-per-cycle points ("PreFilter", "Reserve", …) -> each plugin's verdict, in call order.
    points: dict[str, list[Verdict]] = field(default_factory=dict)
    #: Every node of the snapshot, in the order the scheduler keeps them.
    nodes: dict[str, NodeReport] = field(default_factory=dict)
    #: The node the algorithm picked (``None`` when none fit), and why it won.
    selected: str | None = None
    why: str = ""
    #: ``Scheduled``, ``Unschedulable`` or ``SchedulerError``; empty while still binding.
    result: str = ""
    #: The node the pod was bound to (``None`` unless ``result`` is ``Scheduled``).
    node: str | None = None
    message: str = ""
    nominated: str = ""
    _narrowed: PreFilterResult | None = field(default=None, repr=False)

    # -- reading -------------------------------------------------------------------------------
    def verdict(self, node: str, plugin: str) -> Verdict | None:
        """``plugin``'s Filter verdict on ``node``; ``None`` when it did not run there."""
        return self.nodes[node].filters.get(plugin)

    def score(self, node: str, plugin: str) -> ScoreDetail | None:
        return self.nodes[node].scores.get(plugin)

    def totals(self) -> dict[str, int]:
        """Node -> total weighted score, for the nodes that were scored."""
        return {n.name: n.total for n in self.nodes.values() if n.total is not None}

    def feasible(self) -> list[str]:
        return [n.name for n in self.nodes.values() if n.outcome == FEASIBLE]

    def rejected(self) -> dict[str, str]:
        """Node -> why it was rejected or excluded."""
        return {n.name: n.message for n in self.nodes.values() if n.outcome in (REJECTED, EXCLUDED)}

    def summary(self) -> str:
        """One line: the outcome and why."""
        picked = f"selected {self.selected} ({self.why})" if self.selected else ""
        if self.result == "Scheduled":
            return f"Scheduled on {self.node}: {self.why}"
        if not self.result:
            return f"Selected {self.selected} ({self.why}); the binding cycle has not finished"
        if picked:
            return f"{self.result}: {picked}, then: {self.message}"
        return f"{self.result}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "attempt": self.attempt,
            "result": self.result,
            "node": self.node,
            "selected": self.selected,
            "why": self.why,
            "message": self.message,
            "nominatedNodeName": self.nominated,
            "filterPlugins": list(self.filter_plugins),
            "scorePlugins": [{"name": n, "weight": w} for n, w in self.score_plugins.items()],
            "points": {p: [v.to_dict() for v in vs] for p, vs in self.points.items()},
            "nodes": [n.to_dict() for n in self.nodes.values()],
        }

    # -- recording (called by the wrappers and the algorithm) ----------------------------------
    def _note(self, hook: str, plugin: str, args: tuple[Any, ...], result: Any) -> None:
        if isinstance(result, BaseException):
            verdict = Verdict(plugin, "Error", (f"{type(result).__name__}: {result}",))
        else:
            verdict = verdict_of(plugin, result)
        if hook == "filter":
            node = self.nodes.setdefault(args[2].name, NodeReport(args[2].name))
            node.filters[plugin] = verdict
        elif hook == "score" and (verdict.passed or not isinstance(result, (Status, Exception))):
            weight = self.score_plugins.get(plugin, 1)
            detail = self.nodes[args[2].name].scores.setdefault(plugin, ScoreDetail(plugin, weight))
            try:  # a success Status counts as 0, as the framework counts it
                detail.raw = 0 if isinstance(result, Status) else int(result)
            except (TypeError, ValueError):  # the framework reports this as the plugin's error
                detail.raw = None
        elif hook == "normalize_score" and verdict.passed:
            for name, value in args[2].items():
                normalized = self.nodes[name].scores.get(plugin)
                if normalized is not None:
                    normalized.normalized = int(value)
        else:
            if hook == "pre_filter" and isinstance(result, PreFilterResult):
                self._narrowed = result if self._narrowed is None else self._narrowed.merge(result)
            self.points.setdefault(POINT_NAMES[hook], []).append(verdict)

    def _filtered(self, feasible: list[NodeInfo], diagnosis: Diagnosis) -> None:
        for name, status in diagnosis.node_to_status.items():
            if name in self.nodes:
                self.nodes[name].outcome, self.nodes[name].message = REJECTED, status.message()
        for info in feasible:
            self.nodes[info.name].outcome = FEASIBLE
        subset = self._narrowed.node_names if self._narrowed is not None else None
        absent = diagnosis.absent_nodes_status
        if subset is not None:
            for node in self.nodes.values():
                if node.name not in subset and node.outcome == NOT_EVALUATED:
                    node.outcome = EXCLUDED
                    node.message = absent.message() if absent is not None else "excluded"

    def _extender_filtered(
        self, name: str, nodes: list[NodeInfo], result: FilterResult | ExtenderError
    ) -> None:
        """An extender's filter answer, as a Filter plugin's verdict on each node it got."""
        if name not in self.filter_plugins:
            self.filter_plugins.append(name)
        kept = set() if isinstance(result, ExtenderError) else {i.name for i in result.feasible}
        for info in nodes:
            if isinstance(result, ExtenderError):
                verdict = Verdict(name, "Error", (str(result),))
            elif info.name in kept:
                verdict = Verdict(name, "Success")
            elif info.name in result.failed_and_unresolvable:
                message = result.failed_and_unresolvable[info.name]
                verdict = Verdict(name, "UnschedulableAndUnresolvable", (message,))
            elif info.name in result.failed:
                verdict = Verdict(name, "Unschedulable", (result.failed[info.name],))
            else:
                verdict = Verdict(name, "Unschedulable", ("left out by the extender",))
            self.nodes.setdefault(info.name, NodeReport(info.name)).filters[name] = verdict

    def _extender_scored(self, name: str, scores: dict[str, int], weight: int) -> None:
        """An extender's prioritize answer: its 0–10 score, scaled, times its weight."""
        self.score_plugins[name] = weight
        scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
        for host, score in scores.items():
            if host in self.nodes:
                detail = ScoreDetail(name, weight, score, score * scale, score * scale * weight)
                self.nodes[host].scores[name] = detail

    def _skipped(self, state: CycleState) -> None:
        """Mark the Filter plugins a PreFilter skipped, on each node up to the one that
        rejected it (Filter stops there, so later plugins did not run either way)."""
        order = self.filter_plugins
        for node in self.nodes.values():
            if node.outcome not in (FEASIBLE, REJECTED) or not (node.filters or order):
                continue
            failed = [order.index(p) for p, v in node.filters.items() if not v.passed]
            reached = min(failed) if failed else len(order)
            for plugin in state.skip_filter_plugins:
                if plugin in order and order.index(plugin) < reached:
                    node.filters.setdefault(plugin, Verdict(plugin, "Skip", ("PreFilter: Skip",)))

    def _scheduled(self, result: ScheduleResult, state: CycleState) -> None:
        self._skipped(state)
        self.selected = result.node_name
        for plugin, per_node in result.scores.items():
            for name, weighted in per_node.items():
                weight = self.score_plugins.get(plugin, 1)
                detail = self.nodes[name].scores.setdefault(plugin, ScoreDetail(plugin, weight))
                if detail.normalized is None:
                    detail.normalized = detail.raw  # the plugin has no NormalizeScore
                detail.weighted = weighted
        self.why = self._why(result)

    def _why(self, result: ScheduleResult) -> str:
        chosen = result.node_name
        if result.feasible_nodes == 1:
            others = [n for n in self.nodes.values() if n.name != chosen]
            if chosen == self.nominated and all(n.outcome == NOT_EVALUATED for n in others):
                return "the pod's nominated node, which still fits"
            if len(self.nodes) == 1:
                return "the only node"
            if not self.score_plugins:
                return "the first feasible node found (no Score plugins: the search stops there)"
            return "the only feasible node, so nothing was scored"
        totals = {name: self.nodes[name].total or 0 for name in self.feasible()}
        best = totals.get(chosen, 0)
        tied = [n for n, total in totals.items() if total == best and n != chosen]
        if tied:
            return f"highest total score {best}, tied with {', '.join(tied)}; picked at random"
        runner = max((n for n in totals if n != chosen), key=lambda n: totals[n], default=None)
        if runner is None:
            return f"highest total score {best}"
        return f"highest total score {best} (next: {runner} with {totals[runner]})"

    def _finished(self, attempt: Attempt) -> None:
        if attempt.node_name:
            self.result, self.node = "Scheduled", attempt.node_name
            self.message = f"Successfully assigned {self.pod} to {attempt.node_name}"
        else:
            self.result, self.message = attempt.reason, attempt.message


class _Recording:
    """The report as stored in a cycle's state; a cloned state (what-if) records nothing."""

    __slots__ = ("report",)

    def __init__(self, report: CycleReport) -> None:
        self.report = report

    def clone(self) -> None:
        return None


def _note_call(hook: str, plugin: str, args: tuple[Any, ...], outcome: Any) -> None:
    """A plugin call's outcome, noted in the report its cycle's state carries (if any)."""
    recording = args[0].get(_STATE_KEY) if args and isinstance(args[0], CycleState) else None
    if recording is not None:
        recording.report._note(hook, plugin, args, outcome)


class _CycleRecorder:
    """The algorithm's observer: opens each cycle's report, notes the feasible nodes, the
    extenders' answers and the pick (an :class:`~kubesched.engine.algorithm.CycleObserver`)."""

    def __init__(self, recorder: ExplainRecorder) -> None:
        self._recorder = recorder
        self._report: CycleReport | None = None

    def cycle_began(self, fw: Framework, state: CycleState, pod: Pod, snapshot: Snapshot) -> None:
        report = self._recorder._begin(fw, pod, snapshot)
        state.write(_STATE_KEY, _Recording(report))
        self._report = report

    def nodes_filtered(self, feasible: list[NodeInfo], diagnosis: Diagnosis) -> None:
        if self._report is not None:
            self._report._filtered(feasible, diagnosis)

    def extender_filtered(
        self, name: str, nodes: list[NodeInfo], outcome: FilterResult | ExtenderError
    ) -> None:
        if self._report is not None:
            self._report._extender_filtered(name, nodes, outcome)

    def extender_scored(self, name: str, scores: dict[str, int], weight: int) -> None:
        if self._report is not None:
            self._report._extender_scored(name, scores, weight)

    def cycle_ended(
        self, state: CycleState, result: ScheduleResult | None, error: Exception | None
    ) -> None:
        report, self._report = self._report, None
        if report is None:
            return
        if isinstance(error, FitError):
            report.why = "no node fits"
            report._skipped(state)
        elif isinstance(error, CycleError):
            report.why = f"a plugin failed: {error.status.message()}"
        elif result is not None:
            report._scheduled(result, state)


class ExplainRecorder:
    """Keeps a :class:`CycleReport` for every scheduling cycle of the schedulers it watches."""

    def __init__(self) -> None:
        self.reports: list[CycleReport] = []
        self._by_pod: dict[str, list[CycleReport]] = {}
        self._lock = threading.Lock()

    def attach(self, scheduler: Scheduler) -> ExplainRecorder:
        """Record ``scheduler``'s cycles from now on (attach before it schedules anything),
        through its public observer hooks: every plugin call (``Framework.observe_calls``),
        the algorithm's steps (``SchedulingAlgorithm.add_observer``) and each attempt's end
        (``Scheduler.observe_attempts``)."""
        for framework in scheduler.frameworks.values():
            framework.observe_calls(_note_call, POINT_NAMES)
        scheduler.algorithm.add_observer(_CycleRecorder(self))
        scheduler.observe_attempts(self._attempt_ended)
        return self

    def _attempt_ended(self, attempt: Attempt, _seconds: float) -> None:
        reports = self._by_pod.get(attempt.pod.uid)
        if reports and not reports[-1].result:
            reports[-1]._finished(attempt)

    def _begin(self, fw: Framework, pod: Pod, snapshot: Snapshot) -> CycleReport:
        with self._lock:
            earlier = self._by_pod.setdefault(pod.uid, [])
            report = CycleReport(
                pod=pod.key,
                uid=pod.uid,
                profile=fw.name,
                attempt=len(earlier) + 1,
                filter_plugins=fw.plugins_at("filter"),
                score_plugins={name: fw.score_weight(name) for name in fw.plugins_at("score")},
                nodes={info.name: NodeReport(info.name) for info in snapshot.node_infos},
                nominated=pod.nominated_node_name,
            )
            earlier.append(report)
            self.reports.append(report)
        return report

    def for_pod(self, pod: Pod | str) -> list[CycleReport]:
        """Every cycle of one pod (a Pod, its uid, or ``namespace/name``), oldest first."""
        if isinstance(pod, Pod):
            return list(self._by_pod.get(pod.uid, ()))
        if pod in self._by_pod:
            return list(self._by_pod[pod])
        return [r for r in self.reports if r.pod == pod]

    def pods(self) -> Iterable[str]:
        """The keys (``namespace/name``) of the pods that had at least one cycle."""
        return list(dict.fromkeys(r.pod for r in self.reports))
