"""PodTopologySpread: kube-scheduler's topology spread constraints plugin.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/podtopologyspread``,
v1.37). PreFilter counts, per ``DoNotSchedule`` constraint, the pods its selector matches in
every topology domain (the pod's namespace, terminating pods left out) and keeps the two
smallest domains; Filter then rejects a node whose domain would exceed ``maxSkew`` over the
global minimum (0 while there are fewer domains than ``minDomains``) in O(constraints).
PreScore counts the same way for ``ScheduleAnyway`` constraints; Score gives a node the
weighted count of its domains and NormalizeScore turns it around (fewest pods scores 100).
A pod without constraints gets the profile's default constraints (``defaultingType``) with a
selector taken from the Services and controllers that own it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.selectors import RequiredNodeAffinity, SelectorError
from kubesched.framework.helpers import MAX_NODE_SCORE

from .constraints import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME_LABEL,
    IGNORE,
    LIST_DEFAULTING,
    SCHEDULE_ANYWAY,
    SPREADING_KINDS,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
    SpreadConstraint,
    SpreadingObjects,
    default_selector,
    filter_constraints,
    node_labels_match_constraints,
)
from .counting import DomainTallies, PodCounts, count_key, count_pods_match_selector, domain_tally
from .state import (
    CriticalPaths,
    PreFilterState,
    PreScoreState,
    round_half_away,
    topology_normalizing_weight,
)

__all__ = [
    "DO_NOT_SCHEDULE",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "HONOR",
    "IGNORE",
    "LIST_DEFAULTING",
    "MAX_NODE_SCORE",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "CriticalPaths",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "PreFilterState",
    "PreScoreState",
    "SpreadConstraint",
    "topology_normalizing_weight",
]

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: The node's domain would exceed a constraint's ``maxSkew``.
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
#: The node lacks a constraint's topology key (UnschedulableAndUnresolvable).
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

_TOPOLOGY_SPREAD_CONSTRAINTS = "topologySpreadConstraints"


def _spec(pod: Pod) -> Mapping[str, Any]:
    return pod.raw.get("spec") or {}


#: Filter's memory of a domain: not answered yet.
_UNDECIDED: Any = object()

# --- plugin --------------------------------------------------------------------------------------


class PodTopologySpread:
    """Spreads pods evenly across topology domains, as their constraints ask."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = PodTopologySpreadArgs.parse(args)
        self.handle = handle
        self.system_defaulted = self.args.defaulting_type == SYSTEM_DEFAULTING
        self.default_constraints: tuple[Mapping[str, Any], ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else self.args.default_constraints
        )
        #: Listers of the Services and controllers whose selectors default constraints use
        #: (only watched when there are default constraints, as kube-scheduler does).
        self.listers: dict[str, SpreadingObjects] = (
            {kind: handle.lister(kind) for kind in SPREADING_KINDS}
            if self.default_constraints
            else {}
        )
        # kube-scheduler feature gates, on by default in v1.37 (tests turn them off).
        self.enable_node_inclusion_policy = True
        self.enable_match_label_keys = True
        self._counts = PodCounts()
        self._tallies = DomainTallies()

    # -- constraints -------------------------------------------------------------------------
    def _filter(self, raw: Any, pod: Pod, action: str) -> list[SpreadConstraint]:
        return filter_constraints(
            raw,
            pod.labels,
            action,
            self.enable_match_label_keys,
            self.enable_node_inclusion_policy,
        )

    def build_default_constraints(self, pod: Pod, action: str) -> list[SpreadConstraint]:
        """The default constraints of ``action``, with the selector of the pod's Services and
        controller; none when that selector is empty."""
        constraints = self._filter(self.default_constraints, pod, action)
        if not constraints:
            return []
        selector = default_selector(pod, self.listers)
        if selector.is_empty():
            return []
        return [c.with_selector(selector) for c in constraints]

    def get_constraints(self, pod: Pod) -> list[SpreadConstraint]:
        """The pod's hard constraints, or the hard default ones when it has none."""
        raw = _spec(pod).get(_TOPOLOGY_SPREAD_CONSTRAINTS)
        if raw:
            return self._filter(raw, pod, DO_NOT_SCHEDULE)
        return self.build_default_constraints(pod, DO_NOT_SCHEDULE)

    def _includes(
        self, c: SpreadConstraint, pod: Pod, node: Node, req: RequiredNodeAffinity
    ) -> bool:
        return not self.enable_node_inclusion_policy or c.match_node_inclusion_policies(
            pod, node, req
        )

    def _policy_checks(
        self, constraints: list[SpreadConstraint], required: RequiredNodeAffinity
    ) -> list[bool]:
        """Per constraint: whether its inclusion policies can exclude a node at all (Honor of a
        pod without node constraints, and Ignore, exclude none)."""
        unconstrained = required.label_selector is None and required.node_selector is None
        return [
            self.enable_node_inclusion_policy
            and (
                (c.node_affinity_policy == HONOR and not unconstrained)
                or c.node_taints_policy == HONOR
            )
            for c in constraints
        ]

    def _count_domains(
        self,
        pod: Pod,
        constraints: list[SpreadConstraint],
        nodes: list[NodeInfo],
        counts: list[dict[str, int]],
        require_all: bool,
        only_known: bool,
    ) -> None:
        """Add each node's matching pods to its domain of every constraint (the hot loop of
        PreFilter and PreScore: one memory look-up per node and constraint).

        ``require_all``: skip nodes missing a topology key; ``only_known``: count only the
        domains already in ``counts`` (and nodes lacking a key fall in the ``""`` domain).
        """
        required = RequiredNodeAffinity.from_pod(pod)
        check_affinity = not self.enable_node_inclusion_policy and (
            required.label_selector is not None or required.node_selector is not None
        )
        namespace = pod.namespace
        checks = self._policy_checks(constraints, required)
        if not check_affinity and not any(checks):
            # No node is left out for this pod in particular: the tallies kept across cycles
            # answer, visiting only the nodes that changed.
            required_keys = frozenset(c.topology_key for c in constraints) if require_all else None
            journal = self.handle.snapshot().journal  # used only when nodes are its node_infos
            for c, tp_counts in zip(constraints, counts, strict=True):
                if only_known and not tp_counts:
                    continue
                key = count_key(c, namespace)
                totals = domain_tally(
                    self._tallies, nodes, c, namespace, key, required_keys, self._counts, journal
                )
                if only_known:
                    for value in tp_counts:
                        tp_counts[value] += totals.get(value, 0)
                else:
                    tp_counts.update(totals)
            self._forget_deleted_nodes(nodes)
            return
        prepared = [
            (c, counts[i], count_key(c, namespace), check)
            for i, (c, check) in enumerate(zip(constraints, checks, strict=True))
        ]
        key_set = {c.topology_key for c in constraints}
        memo_of = self._counts.memo
        for info in nodes:
            node = info.node
            if node is None:
                continue
            labels = node.labels
            if check_affinity and not required.match(node):
                continue
            if require_all and not key_set <= labels.keys():
                continue
            memo = memo_of(info)
            for c, tp_counts, key, check in prepared:
                if check and not c.match_node_inclusion_policies(pod, node, required):
                    continue
                value = labels.get(c.topology_key, "")
                if only_known and value not in tp_counts:
                    continue
                count = memo.get(key)
                if count is None:
                    count = memo[key] = count_pods_match_selector(
                        info.pods.values(), c.selector, namespace, c.matches
                    )
                tp_counts[value] = tp_counts.get(value, 0) + count
        self._forget_deleted_nodes(nodes)

    def _forget_deleted_nodes(self, nodes: list[NodeInfo]) -> None:
        if len(self._counts) > len(nodes) + 1024:
            self._counts.forget(info.name for info in nodes)

    # -- PreFilter ---------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Count the matching pods per domain of every hard constraint; Skip without any."""
        try:
            constraints = self.get_constraints(pod)
        except SelectorError as exc:
            return Status.error(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {exc}"
            )
        if not constraints:
            return Status.skip()
        state.write(PRE_FILTER_STATE_KEY, self.calculate_pre_filter_state(pod, constraints, nodes))
        return None

    def calculate_pre_filter_state(
        self, pod: Pod, constraints: list[SpreadConstraint], nodes: list[NodeInfo]
    ) -> PreFilterState:
        s = PreFilterState(constraints)
        counts: list[dict[str, int]] = [{} for _ in constraints]
        # Spreading applies to nodes that pass the node affinity (gate off) and have every
        # topology key.
        self._count_domains(pod, constraints, nodes, counts, require_all=True, only_known=False)
        s.tp_value_to_match_num = counts
        s.critical_paths = [CriticalPaths.of(tp_counts) for tp_counts in counts]
        s.self_match = [1 if c.selector.matches(pod.labels) else 0 for c in constraints]
        return s

    # -- PreFilter extensions ----------------------------------------------------------------
    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update the cycle state as if ``pod_to_add`` ran on ``node_info`` (kube's AddPod)."""
        return self._update_with_pod(state, pod_to_add, pod_to_schedule, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update the cycle state as if ``pod_to_remove`` left ``node_info`` (RemovePod)."""
        return self._update_with_pod(state, pod_to_remove, pod_to_schedule, node_info, -1)

    @hookimpl
    def pre_filter_add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """PreFilter extension AddPod: see :meth:`add_pod`."""
        return self.add_pod(state, pod_to_schedule, pod_to_add, node_info)

    @hookimpl
    def pre_filter_remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """PreFilter extension RemovePod: see :meth:`remove_pod`."""
        return self.remove_pod(state, pod_to_schedule, pod_to_remove, node_info)

    def _update_with_pod(
        self, state: CycleState, updated: Pod, preemptor: Pod, node_info: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        node = node_info.node
        if updated.namespace != preemptor.namespace or node is None:
            return None
        if not node_labels_match_constraints(node.labels, s.constraints):
            return None
        required = RequiredNodeAffinity.from_pod(preemptor)
        if not self.enable_node_inclusion_policy and not required.match(node):
            return None
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.labels):
                continue
            if not self._includes(c, preemptor, node, required):
                continue
            value = node.labels[c.topology_key]
            counts = s.tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + delta
            s.critical_paths[i].update(value, counts[value])
            s.verdicts.clear()
        return None

    # -- Filter ------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node missing a topology key, or whose domain would exceed ``maxSkew``."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not s.constraints:
            return None
        node = node_info.node
        labels = node.labels if node is not None else {}
        # The answer follows from the node's topology values alone: once per domain.
        values = tuple(map(labels.get, s.topology_keys))
        verdict = s.verdicts.get(values, _UNDECIDED)
        if verdict is _UNDECIDED:
            verdict = s.verdicts[values] = self._verdict(s, values)
        return verdict

    @staticmethod
    def _verdict(s: PreFilterState, values: tuple[str | None, ...]) -> Status | None:
        for i, (c, value) in enumerate(zip(s.constraints, values, strict=True)):
            if value is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            match_num = s.tp_value_to_match_num[i].get(value, 0)
            skew = match_num + s.self_match[i] - s.min_match_num(i, c.min_domains)
            if skew > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # -- PreScore / Score --------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Count the matching pods per domain of every soft constraint; Skip without any."""
        all_nodes = self.handle.snapshot().node_infos
        if not all_nodes:
            return Status.skip()
        raw = _spec(pod).get(_TOPOLOGY_SPREAD_CONSTRAINTS)
        # Only non-system-default constraints need every topology label on a node: nodes
        # without a zone label still get hostname spreading.
        require_all = bool(raw) or not self.system_defaulted
        s = PreScoreState()
        try:
            if raw:
                s.constraints = self._filter(raw, pod, SCHEDULE_ANYWAY)
            else:
                s.constraints = self.build_default_constraints(pod, SCHEDULE_ANYWAY)
        except SelectorError as exc:
            which = "obtaining pod's" if raw else "setting default"
            return Status.error(
                f"calculating preScoreState: {which} soft topology spread constraints: {exc}"
            )
        if not s.constraints:
            return Status.skip()
        s.topology_keys = tuple(c.topology_key for c in s.constraints)
        if HOSTNAME_LABEL not in s.topology_keys:
            s.scores_by_domain = {}
        self._init_pre_score_state(s, nodes, require_all)
        # Only domains of candidate nodes count; hostname counts are made in Score.
        self._count_domains(
            pod,
            s.constraints,
            all_nodes,
            s.topology_value_to_pod_counts,
            require_all=require_all,
            only_known=True,
        )
        s.terms = [
            (
                c,
                count_key(c, pod.namespace) if c.topology_key == HOSTNAME_LABEL else None,
                s.topology_value_to_pod_counts[i],
                s.topology_normalizing_weight[i],
                c.max_skew - 1,
            )
            for i, c in enumerate(s.constraints)
        ]
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    @staticmethod
    def _init_pre_score_state(s: PreScoreState, nodes: list[NodeInfo], require_all: bool) -> None:
        """The candidate nodes' domains (hostname ones are counted in Score), the nodes left
        out for a missing topology key, and each topology's weight."""
        key_set = {c.topology_key for c in s.constraints}
        present = [info.node for info in nodes if info.node is not None]
        if require_all:
            eligible = [node for node in present if key_set <= node.labels.keys()]
            if len(eligible) != len(present):
                kept = {id(node) for node in eligible}
                s.ignored_nodes = {node.name for node in present if id(node) not in kept}
        else:
            eligible = present
        s.topology_value_to_pod_counts = [
            {}
            if c.topology_key == HOSTNAME_LABEL
            else dict.fromkeys((node.labels.get(c.topology_key, "") for node in eligible), 0)
            for c in s.constraints
        ]
        for i, c in enumerate(s.constraints):
            size = len(s.topology_value_to_pod_counts[i])
            if c.topology_key == HOSTNAME_LABEL:
                size = len(nodes) - len(s.ignored_nodes)
            s.topology_normalizing_weight.append(topology_normalizing_weight(size))

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """The weighted number of matching pods in the node's domains (lower is better)."""
        scores = self.score_nodes(state, pod, [node_info])
        return scores if isinstance(scores, Status) else scores[0]

    @hookimpl
    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> list[int] | Status:
        """:meth:`score` for every node in one call: this Score reads other pods' placement, so
        it is never reused across pods and runs for every feasible node of every pod with soft
        constraints (one call per node cost a third of such a pod's cycle)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        ignored = s.ignored_nodes
        keys = s.topology_keys
        by_domain = s.scores_by_domain
        compute = self._score
        scores: list[int] = []
        append = scores.append
        for node_info in nodes:
            node = node_info.node
            if node is None or node.name in ignored:
                append(0)
                continue
            values = tuple(map(node.labels.get, keys))
            if by_domain is None:
                append(compute(s, pod, node_info, values))
                continue
            # Without a hostname constraint the answer follows from the node's domains alone.
            score = by_domain.get(values)
            if score is None:
                score = by_domain[values] = compute(s, pod, node_info, values)
            append(score)
        return scores

    def _score(
        self, s: PreScoreState, pod: Pod, node_info: NodeInfo, values: tuple[str | None, ...]
    ) -> int:
        # Per constraint: count * weight + (maxSkew - 1). Score runs for every feasible node
        # of every pod with soft constraints, so PreScore fixed each constraint's key, counts
        # and weight.
        score = 0.0
        for (c, key, counts, weight, skew_less_one), value in zip(s.terms, values, strict=True):
            if value is None:
                continue
            if key is not None:  # a hostname constraint: the node's own matching pods
                count = self._counts.count(node_info, c, pod.namespace, key)
            else:
                count = counts.get(value, 0)
            score += count * weight + skew_less_one
        return round_half_away(score)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        """Fewest matching pods scores 100: ``100 * (max + min - score) / max``."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        counted = [v for name, v in scores.items() if name not in s.ignored_nodes]
        min_score = min(counted, default=0)
        max_score = max(0, *counted) if counted else 0
        for name, value in scores.items():
            if name in s.ignored_nodes:
                scores[name] = 0
            elif max_score == 0:
                scores[name] = MAX_NODE_SCORE
            else:
                scores[name] = MAX_NODE_SCORE * (max_score + min_score - value) // max_score
        return None

    # -- events ------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Pods coming, going or relabelled; the pod's own labels or tolerations; nodes."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.ASSIGNED_POD,
                    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
                ),
                self.is_schedulable_after_assigned_pod_change,
            ),
            # kube-scheduler's TargetPod: the rejected pod's own update.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD,
                    ActionType.UPDATE_POD_TOLERATIONS | ActionType.UPDATE_POD_LABEL,
                ),
                self.is_schedulable_after_target_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.DELETE
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_TAINT,
                ),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_target_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """Queue on a new toleration (with a ``nodeTaintsPolicy: Honor`` constraint) or a
        label change that flips a constraint's match."""
        if not isinstance(old, Pod) or not isinstance(new, Pod):
            return QueueingHint.QUEUE
        try:
            constraints = self.get_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        if (_spec(old).get("tolerations") or []) != (_spec(new).get("tolerations") or []):
            if any(c.node_taints_policy == HONOR for c in constraints):
                return QueueingHint.QUEUE
        return _after_pod_label_change(old, new, constraints)

    def is_schedulable_after_assigned_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """Queue when a bound pod of the same namespace that the constraints select (before or
        after a label change) comes or goes."""
        if (old is not None and not isinstance(old, Pod)) or (
            new is not None and not isinstance(new, Pod)
        ):
            return QueueingHint.QUEUE
        if (new is not None and not _involved_in_spreading(new, pod)) or (
            old is not None and not _involved_in_spreading(old, pod)
        ):
            return QueueingHint.SKIP
        try:
            constraints = self.get_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            return _after_pod_label_change(old, new, constraints)
        changed = new if new is not None else old
        if changed is None:
            return QueueingHint.QUEUE
        if any(c.selector.matches(changed.labels) for c in constraints):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue when a node with every topology key comes or goes, or such a node changes a
        topology value or its taints, or gains or loses a topology key."""
        if (old is not None and not isinstance(old, Node)) or (
            new is not None and not isinstance(new, Node)
        ):
            return QueueingHint.QUEUE
        try:
            constraints = self.get_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        old_matching = old is not None and node_labels_match_constraints(old.labels, constraints)
        new_matching = new is not None and node_labels_match_constraints(new.labels, constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QueueingHint.QUEUE
            if new_matching and (
                any(
                    old.labels.get(c.topology_key) != new.labels.get(c.topology_key)
                    for c in constraints
                )
                or _taints(old) != _taints(new)
            ):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_matching else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_matching else QueueingHint.SKIP


def _taints(node: Node) -> list[Any]:
    return list((node.raw.get("spec") or {}).get("taints") or [])


def _involved_in_spreading(incoming: Pod, pod_with_spreading: Pod) -> bool:
    """Whether a bound (or nominated) pod counts for the spreading of ``pod_with_spreading``."""
    if not incoming.node_name and not incoming.nominated_node_name:
        return False
    return incoming.namespace == pod_with_spreading.namespace


def _after_pod_label_change(
    old: Pod, new: Pod, constraints: list[SpreadConstraint]
) -> QueueingHint:
    if old.labels == new.labels:
        return QueueingHint.SKIP
    for c in constraints:
        if c.selector.matches(old.labels) != c.selector.matches(new.labels):
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
