"""DefaultPreemption: when no node fits a pod, evict lower-priority pods so that it can run.

kube-scheduler's DefaultPreemption PostFilter (``pkg/scheduler/framework/plugins/defaultpreemption``
with ``pkg/scheduler/framework/preemption``, v1.37) for individual pods: find the nodes where
removing lower-priority pods could help, pick the fewest and least important victims on each
(reprieving PodDisruptionBudget-protected pods first), choose the node kube-scheduler would and
nominate the pod to it. The victims are evicted asynchronously, as with kube's
``SchedulerAsyncPreemption`` (on by default since v1.33): each gets the ``DisruptionTarget``
condition, is deleted and gets a ``Preempted`` event, in the background, while PreEnqueue holds the
preemptor back until those calls are sent.
"""

from __future__ import annotations

import logging
import operator
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from cachetools import LRUCache

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    NodeToStatus,
    Pod,
    PostFilterResult,
    QueueingHint,
    Status,
    hookimpl,
)

from .args import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemptionArgs,
)
from .victims import (
    Candidate,
    PodDisruptionBudget,
    filter_victims_with_pdb_violation,
    importance,
    pick_one_node_for_preemption,
)

__all__ = [
    "ACTION_PREEMPTING",
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DISRUPTION_TARGET",
    "MESSAGE_NO_CANDIDATE",
    "MESSAGE_PREEMPT_NEVER",
    "MESSAGE_PREFIX",
    "MESSAGE_TERMINATING_VICTIM",
    "MESSAGE_WAITING_FOR_PREEMPTION",
    "NAME",
    "REASON_NOT_HELPFUL",
    "REASON_NO_VICTIMS",
    "REASON_PREEMPTED",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "PodDisruptionBudget",
    "disruption_target_condition",
    "filter_victims_with_pdb_violation",
    "fit_error_message",
    "message_disruption_target",
    "message_found_placement",
    "message_no_victim_on_node",
    "message_preempted",
    "pick_one_node_for_preemption",
]

log = logging.getLogger(__name__)

NAME = "DefaultPreemption"

#: A node without a single pod of lower priority than the preemptor (UnschedulableAndUnresolvable).
REASON_NO_VICTIMS = "No preemption victims found for incoming pod"
#: Every node preemption was not tried on: its Filter status was UnschedulableAndUnresolvable.
REASON_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MESSAGE_PREEMPT_NEVER = "not eligible due to preemptionPolicy=Never."
MESSAGE_TERMINATING_VICTIM = "not eligible due to a terminating pod on the nominated node."
MESSAGE_NO_CANDIDATE = "no candidate node for preemption"
#: PreEnqueue's rejection (UnschedulableAndUnresolvable) while the pod's victims are evicted.
MESSAGE_WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"
#: What the plugin puts before every message; the scheduler appends it to the Filter message.
MESSAGE_PREFIX = "preemption: "
MESSAGE_NO_NODES = "no nodes available"


def message_found_placement(node_name: str, victims: int) -> str:
    """The Success message: the node chosen and how many pods are evicted there."""
    return f"found a potential placement for pod on node {node_name}, preempting {victims} victims"


def message_no_victim_on_node(node_name: str) -> str:
    """The Error of a node where the pod fits with every lower-priority pod kept."""
    return f'expected at least one victim pod on node "{node_name}"'


def message_disruption_target(scheduler_name: str) -> str:
    """The message of the ``DisruptionTarget`` condition a victim gets."""
    return f"{scheduler_name}: preempting to accommodate a higher priority pod"


def message_preempted(preemptor_uid: str, node_name: str) -> str:
    """The note of the ``Preempted`` event recorded on each victim."""
    return f"Preempted by pod {preemptor_uid} on node {node_name}"


PREEMPT_NEVER = "Never"
#: The pod condition kube-scheduler sets on its victims before deleting them, and its reason.
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
#: The Normal event recorded on each victim, and its action.
REASON_PREEMPTED = "Preempted"
ACTION_PREEMPTING = "Preempting"
PDB_KIND = "PodDisruptionBudget"
#: The status of a node missing from the Filter statuses (PreFilter left it out).
_UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
#: One node's dry-run answer: the victims, how many violate a PDB, or why none will do.
_DryRun = tuple[list[Pod], int, Status | None]
#: Dry-run answers kept (per signature and node): a few signatures over 5,000 nodes.
DRY_RUNS_KEPT = 20_000


def fit_error_message(num_all_nodes: int, node_statuses: Mapping[str, Status]) -> str:
    """The FitError message of a failed preemption: each node's reasons counted, nodes without a
    status counted as "Preemption is not helpful for scheduling", sorted as strings."""
    histogram: dict[str, int] = {}
    for status in node_statuses.values():
        for reason in status.reasons:
            histogram[reason] = histogram.get(reason, 0) + 1
    absent = num_all_nodes - len(node_statuses)
    if absent > 0:
        histogram[REASON_NOT_HELPFUL] = histogram.get(REASON_NOT_HELPFUL, 0) + absent
    message = f"0/{num_all_nodes} nodes are available:"
    reasons = sorted(f"{count} {reason}" for reason, count in histogram.items())
    if reasons:
        message += f" {', '.join(reasons)}."
    return message


def disruption_target_condition(victim: Pod, scheduler_name: str) -> dict[str, Any] | None:
    """The ``DisruptionTarget`` condition to patch on ``victim`` (kube's ``UpdatePodCondition``
    of it), or ``None`` when the victim already has that very condition."""
    condition: dict[str, Any] = {
        "type": DISRUPTION_TARGET,
        "status": "True",
        "reason": REASON_PREEMPTION_BY_SCHEDULER,
        "message": message_disruption_target(scheduler_name),
    }
    # PodObservedGenerationTracking (on by default): the generation the condition was set at.
    generation = (victim.raw.get("metadata") or {}).get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation > 0:
        condition["observedGeneration"] = generation
    old = next(
        (
            c
            for c in (victim.raw.get("status") or {}).get("conditions") or ()
            if isinstance(c, Mapping) and c.get("type") == DISRUPTION_TARGET
        ),
        None,
    )
    if old is None:
        condition["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return condition
    if old.get("status") == condition["status"]:
        if (
            old.get("reason") == condition["reason"]
            and old.get("message") == condition["message"]
            and not old.get("lastProbeTime")
            and (old.get("observedGeneration") or 0) == condition.get("observedGeneration", 0)
        ):
            return None
        condition["lastTransitionTime"] = old.get("lastTransitionTime")
    else:
        condition["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return condition


def _aggregate(errors: Iterable[str]) -> str:
    """Several errors as ``utilerrors.NewAggregate`` prints them (duplicates once)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


# --- the plugin ----------------------------------------------------------------------------------


class DefaultPreemption:
    """PostFilter: preempt lower-priority pods on the node kube-scheduler would pick.
    PreEnqueue: hold a preemptor back while its victims' API calls are being sent."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = DefaultPreemptionArgs.parse(args)
        self.handle = handle
        self._list_pdbs = handle.lister(PDB_KIND)
        self._lock = threading.Lock()
        #: UIDs of the preemptors whose victims are being evicted in the background, or whose
        #: calls have ended before the informer has shown their last victim go.
        self._preempting: set[str] = set()
        #: Preemptor UID -> UID of its last victim, once only that one's calls are left.
        self._last_victim: dict[str, str] = {}
        #: The preemptors of ``_preempting`` whose calls have all ended (successfully).
        self._calls_ended: set[str] = set()
        #: Sends the victims but the last at once (kube's Parallelizer), made on first use.
        self._victim_pool: ThreadPoolExecutor | None = None
        #: (what decides the dry run but the node, node name) -> (the node's generation, the
        #: dry run's answer there): see :meth:`_dry_run_key`. Valid for ``_pdb_objects``.
        self._dry_runs: LRUCache[tuple[Any, str], tuple[int, _DryRun]] = LRUCache(DRY_RUNS_KEPT)
        self._pdb_objects: list[Mapping[str, Any]] = []

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Gate the pod while its preemption is running (kube's ``IsPodRunningPreemption``)."""
        if self.is_pod_running_preemption(pod.uid):
            return Status.unresolvable(MESSAGE_WAITING_FOR_PREEMPTION)
        return None

    @hookimpl
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """Preempt, and nominate the pod to the node whose victims are being evicted."""
        return self.run_post_filter(state, pod, filtered_node_status)

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A pod gated at PreEnqueue may pass once an assigned pod (its last victim) is gone."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self.is_pod_schedulable_after_assigned_pod_deletion,
            )
        ]

    def is_pod_schedulable_after_assigned_pod_deletion(
        self, pod: Pod, old: Any, new: Any
    ) -> QueueingHint:
        """Always Skip, as kube's: whether a deletion helps is for the plugins that rejected the
        pod in its cycle, whose hints the queue asks too; PreEnqueue then decides whether the
        gate lifts."""
        return QueueingHint.SKIP

    def is_pod_running_preemption(self, uid: str) -> bool:
        """Whether the victims of the pod ``uid`` are still being evicted: its background
        calls have not ended, or the last victim (once its turn came) is still bound in the
        informer's store, neither gone nor terminating.

        kube-scheduler's gate opens as soon as its calls have ended, its informer reporting a
        deletion within milliseconds; ours can lag by seconds on a busy machine, and a pod let
        through meanwhile finds its victims still in the cache and preempts again. So after
        successful calls the gate stays shut until the store shows the last victim gone (its
        deletion event then moves the pod: this plugin registers it). Victims are deleted in
        order on one watch stream, so by then the others are gone too."""
        if uid not in self._preempting:  # the common case, without the lock
            return False
        with self._lock:
            if uid not in self._preempting:
                return False
            last = self._last_victim.get(uid)
        if last is None:
            return True
        # The informer's store already has the deletion when its event reaches the queue, so a
        # pod the deletion brings back is not gated again by calls that have in fact ended.
        if self._victim_bound(last):
            return True
        self._forget_if_ended(uid)
        return False

    def _victim_bound(self, uid: str) -> bool:
        """Whether the informer's store still has the victim ``uid`` bound and not terminating
        (a victim rejected at Permit was never bound: it counts as gone).

        A victim terminating with no grace period left and no finalizer counts as still there:
        the API server deleted it in the same call, its deletion event follows, and a pod let
        through before it would fail on the victim still in the cache (kube's window between
        the two events is too short to matter; ours is not)."""
        victim = self.handle.backend.get_pod(uid)
        if victim is None or not victim.node_name:
            return False
        if not victim.deletion_timestamp:
            return True
        meta = victim.raw.get("metadata") or {}
        return meta.get("deletionGracePeriodSeconds") == 0 and not meta.get("finalizers")

    def _forget_if_ended(self, uid: str) -> None:
        with self._lock:
            if uid in self._calls_ended:
                self._calls_ended.discard(uid)
                self._preempting.discard(uid)
                self._last_victim.pop(uid, None)

    def run_post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """kube's ``PostFilter``: :meth:`preempt` with ``preemption: `` before its message.

        A result of ``PostFilterResult("")`` with a rejection means "clear the pod's nomination";
        ``None`` leaves it as it is.
        """
        result, status = self.preempt(state, pod, filtered_node_status)
        if not status.message():
            return result, status
        prefixed = Status(status.code, MESSAGE_PREFIX + status.message())
        prefixed.err = status.err
        return result, prefixed

    def preempt(
        self, state: CycleState, pod: Pod, filtered_node_status: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        """kube's ``Evaluator.Preempt``: evaluate, then start evicting the best node's victims."""
        candidate, result, status = self._evaluate(state, pod, filtered_node_status)
        if candidate is None:
            return result, status
        self.prepare_candidate_async(candidate, pod)
        return PostFilterResult(candidate.name), Status(
            Code.SUCCESS, message_found_placement(candidate.name, len(candidate.victims))
        )

    def _evaluate(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[Candidate | None, PostFilterResult | None, Status]:
        nominated = pod.nominated_node_name
        # A node without a status was left out by PreFilter: UnschedulableAndUnresolvable.
        nominated_status = statuses.get(nominated, _UNRESOLVABLE) if nominated else None
        eligible, message = self.pod_eligible_to_preempt_others(pod, nominated_status)
        if not eligible:
            return None, None, Status.unschedulable(message)
        all_nodes = self.handle.snapshot().node_infos
        candidates, node_statuses, errors = self.find_candidates(state, all_nodes, pod, statuses)
        if errors and not candidates:
            return None, None, Status.error(_aggregate(errors))
        if not candidates:
            # Clear the pod's nomination: preemption cannot make room anywhere now.
            message = fit_error_message(len(all_nodes), node_statuses)
            return None, PostFilterResult(""), Status.unschedulable(message)
        candidates, status = self.call_extenders(pod, candidates)
        if not status.is_success():
            return None, None, status
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, None, Status.unschedulable(MESSAGE_NO_CANDIDATE)
        return best, None, Status.success()

    # -- eligibility -----------------------------------------------------------------------------
    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status | None
    ) -> tuple[bool, str]:
        """Not with ``preemptionPolicy: Never``, nor while lower-priority pods on the pod's
        nominated node are terminating by preemption (unless that node is now unresolvable)."""
        if pod.preemption_policy == PREEMPT_NEVER:
            return False, MESSAGE_PREEMPT_NEVER
        nominated = pod.nominated_node_name
        if nominated:
            if (
                nominated_node_status is not None
                and nominated_node_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            ):
                return True, ""
            info = self.handle.snapshot().get(nominated)
            if info is not None:
                for other in info.pods.values():
                    if other.priority < pod.priority and self._terminating_by_preemption(other):
                        return False, MESSAGE_TERMINATING_VICTIM
        return True, ""

    @staticmethod
    def _terminating_by_preemption(pod: Pod) -> bool:
        """Being deleted, with the ``DisruptionTarget`` condition a scheduler's preemption
        writes (``podTerminatingByPreemption``)."""
        if not pod.deletion_timestamp:
            return False
        for condition in (pod.raw.get("status") or {}).get("conditions") or ():
            if isinstance(condition, Mapping) and condition.get("type") == DISRUPTION_TARGET:
                return (
                    condition.get("status") == "True"
                    and condition.get("reason") == REASON_PREEMPTION_BY_SCHEDULER
                )
        return False

    # -- candidates ------------------------------------------------------------------------------
    def calculate_num_candidates(self, num_nodes: int) -> int:
        """``minCandidateNodesPercentage`` of the nodes, at least ``minCandidateNodesAbsolute``,
        at most all of them."""
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random node to start the dry run at (``handle.rng``), and how many candidates."""
        return self.handle.rng.randrange(num_nodes), self.calculate_num_candidates(num_nodes)

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return [PodDisruptionBudget.from_dict(raw) for raw in self._list_pdbs()]

    def find_candidates(
        self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Pod, statuses: NodeToStatus
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Dry-run preemption on the nodes whose Filter status was Unschedulable (only those
        could fit once pods leave), from a random offset."""
        if not all_nodes:
            return [], {}, [MESSAGE_NO_NODES]
        potential = [
            info
            for info in all_nodes
            if (status := statuses.get(info.name)) is not None and status.code is Code.UNSCHEDULABLE
        ]
        if not potential:
            return [], {}, []
        offset, num_candidates = self.get_offset_and_num_candidates(len(potential))
        raw_pdbs = self._list_pdbs()
        if len(raw_pdbs) != len(self._pdb_objects) or not all(
            map(operator.is_, raw_pdbs, self._pdb_objects)
        ):
            self._pdb_objects = list(raw_pdbs)
            self._dry_runs.clear()
        pdbs = [PodDisruptionBudget.from_dict(raw) for raw in raw_pdbs]
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def _dry_run_key(self, state: CycleState, pod: Pod) -> tuple[Any, ...] | None:
        """What decides :meth:`select_victims_on_node` besides the node, when another pod's
        answer on the same node may be reused: every running Filter signed the pod (the
        condition under which the scheduling cycle reuses Filter results, signature.py), so
        the Filters' answers on any state of the node follow from the signature; the pod's
        priority picks the potential victims. ``None``: not reusable."""
        signature = state.signature
        if signature is None or not self.handle.filter_results_reusable(state):
            return None
        return (signature.key, frozenset(state.skip_filter_plugins), pod.priority)

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """kube's ``DryRunPreemption`` with a parallelism of one: visit the nodes from
        ``offset``, stop once ``num_candidates`` are found with at least one that violates no
        PDB. Returns the candidates (non-violating first), the failed nodes' statuses, errors."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        total = len(potential_nodes)
        # A dry run on a node without nominated pods, unchanged since a pod signed the same way
        # ran there, has that pod's answer (PDBs unchanged: find_candidates clears the memory).
        key = self._dry_run_key(state, pod)
        handle = self.handle
        nominated = handle.nodes_with_nominated_pods() if handle.has_nominated_pods() else ()
        for i in range(total):
            info = potential_nodes[(offset + i) % total]
            reusable = key is not None and info.name not in nominated
            entry = self._dry_runs.get((key, info.name)) if reusable else None
            if entry is not None and entry[0] == info.generation:
                victims, violations, status = entry[1]
            else:
                victims, violations, status = self.select_victims_on_node(
                    state.clone(), pod, info.clone(), pdbs
                )
                if reusable and (status is None or status.code is not Code.ERROR):
                    self._dry_runs[(key, info.name)] = (
                        info.generation,
                        (victims, violations, status),
                    )
            if status is None and victims:
                found = non_violating if violations == 0 else violating
                if len(found) < num_candidates:
                    found.append(Candidate(info.name, list(victims), violations))
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status is None:
                status = Status.error(message_no_victim_on_node(info.name))
            if status.code is Code.ERROR:
                errors.append(status.message())
            statuses[info.name] = status
        return non_violating + violating, statuses, errors

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status | None]:
        """The fewest, least important pods to evict from ``node_info`` (a copy it changes) for
        the pod to fit, and how many of them violate a PDB; or why none will do.

        Every lower-priority pod is removed; if the pod fits then, they are added back one by
        one — PDB-protected ones first, each group most important first — and stay unless the
        pod stops fitting.
        """
        runner = self.handle
        potential = [other for other in node_info.pods.values() if other.priority < pod.priority]
        if not potential:
            return [], 0, Status.unresolvable(REASON_NO_VICTIMS)

        def remove(victim: Pod) -> Status | None:
            node_info.remove_pod(victim)
            status = runner.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)
            return None if status.is_success() else Status.error(status.message())

        def add(victim: Pod) -> Status | None:
            node_info.add_pod(victim)
            status = runner.run_pre_filter_extension_add_pod(state, pod, victim, node_info)
            return None if status.is_success() else Status.error(status.message())

        for victim in potential:
            if (error := remove(victim)) is not None:
                return [], 0, error
        status = runner.run_filter_with_nominated_pods(state, pod, node_info)
        if status is not None:
            return [], 0, status
        potential.sort(key=importance)
        violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        def reprieve(victim: Pod) -> bool | Status:
            if (error := add(victim)) is not None:
                return error
            if runner.run_filter_with_nominated_pods(state, pod, node_info) is None:
                return True
            if (error := remove(victim)) is not None:
                return error
            victims.append(victim)
            return False

        num_violating = 0
        for victim, count in violating:
            fits = reprieve(victim)
            if isinstance(fits, Status):
                return [], 0, fits
            if not fits:
                num_violating += count
        for victim in non_violating:
            if isinstance(fits := reprieve(victim), Status):
                return [], 0, fits
        if violating and non_violating:
            victims.sort(key=importance)
        return victims, num_violating, None

    def call_extenders(
        self, pod: Pod, candidates: list[Candidate]
    ) -> tuple[list[Candidate], Status]:
        """kube's ``callExtenders``: each interested extender with a preemptVerb narrows the
        candidates (nodes and victims) in turn; an ignorable one's error or empty victim list
        is skipped, another's is the pod's Error."""
        extenders = [e for e in self.handle.extenders if e.supports_preemption]
        if not extenders or not candidates:
            return candidates, Status.success()
        victims = {c.name: (list(c.victims), c.num_pdb_violations) for c in candidates}
        snapshot = self.handle.snapshot()
        for extender in extenders:
            if not extender.is_interested(pod):
                continue
            try:
                narrowed = extender.process_preemption(pod, victims, snapshot)
            except Exception as exc:  # the extender's failure (kube: any error)
                if extender.ignorable:
                    log.info("skipped extender %s as it returned error: %s", extender.name, exc)
                    continue
                return [], Status.error(str(exc))
            for node, (pods, _) in list(narrowed.items()):
                if not pods:
                    if extender.ignorable:
                        del narrowed[node]
                        continue
                    return [], Status.error(f'expected at least one victim pod on node "{node}"')
            victims = narrowed
            if not victims:
                break
        order = {c.name: i for i, c in enumerate(candidates)}
        ordered = sorted(victims, key=lambda n: order.get(n, len(order)))
        return [Candidate(n, victims[n][0], victims[n][1]) for n in ordered], Status.success()

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """The best candidate (``SelectCandidate``)."""
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        return pick_one_node_for_preemption(candidates)

    # -- actuation -------------------------------------------------------------------------------
    def prepare_candidate_async(self, candidate: Candidate, pod: Pod) -> None:
        """Evict the candidate's victims in the background (``prepareCandidateAsync``), the pod
        gated at PreEnqueue meanwhile. Victims already being deleted are left alone; when that
        leaves none, nothing is sent."""
        victims = [victim for victim in candidate.victims if not victim.deletion_timestamp]
        if not victims:
            return
        with self._lock:
            # Preemptions whose calls ended and whose pod was not asked about since (it was
            # deleted, or bound elsewhere): forgotten once their last victim is gone.
            ended = list(self._calls_ended)
            self._preempting.add(pod.uid)
            self._calls_ended.discard(pod.uid)
            self._last_victim.pop(pod.uid, None)
        for uid in ended:
            last = self._last_victim.get(uid)
            if last is None or not self._victim_bound(last):
                self._forget_if_ended(uid)
        self.handle.run_in_background(
            lambda: self._evict(candidate.name, pod, victims), name=f"preemption of {pod.key}"
        )

    def _evict(self, node_name: str, pod: Pod, victims: Sequence[Pod]) -> None:
        """First clear lower-priority nominations to the node (they may no longer fit), then
        preempt every victim but the last (at once, as kube's Parallelizer does), then the last
        one; a failure skips the rest. When a call failed, the pod is sent back to activeQ at
        the end, as kube does; otherwise PreEnqueue holds it until the informer has seen the
        last victim go (:meth:`is_pod_running_preemption`)."""
        failed = False
        try:
            lower = [
                other
                for other in self.handle.nominated_pods_for_node(node_name)
                if other.priority < pod.priority
            ]
            for error in self.handle.clear_nominated_node_name(*lower):
                failed = True  # not critical: the victims are preempted all the same
                log.warning("clearing a nomination to node %s failed: %s", node_name, error)
            self._preempt_all(node_name, pod, victims[:-1])
            # From here on PreEnqueue looks the last victim up: once it is gone or terminating,
            # the pod passes even if this thread has not come back from the call yet.
            with self._lock:
                self._last_victim[pod.uid] = victims[-1].uid
            self.preempt_pod(node_name, pod, victims[-1])
        except Exception as exc:
            failed = True
            log.error("preemption for pod %s on node %s failed: %s", pod.key, node_name, exc)
        with self._lock:
            if failed or pod.uid not in self._last_victim:
                self._preempting.discard(pod.uid)
                self._last_victim.pop(pod.uid, None)
            else:
                self._calls_ended.add(pod.uid)
        if not failed and not self._victim_bound(victims[-1].uid):
            self._forget_if_ended(pod.uid)  # the informer has it already
        if failed:
            # Without the deletions it waits for, the pod could stay in the unschedulable pool
            # until its time limit: retry it now (its gate is open by now).
            self.handle.activate([pod])

    def _preempt_all(self, node_name: str, preemptor: Pod, victims: Sequence[Pod]) -> None:
        """:meth:`preempt_pod` for each of ``victims``, at once on a pool of
        ``handle.parallelism`` threads (in turn with a synchronous backend, whose calls take no
        time); the first failure is raised once all have returned, the calls not begun yet
        cancelled."""
        if len(victims) <= 1 or self.handle.backend.synchronous:
            for victim in victims:
                self.preempt_pod(node_name, preemptor, victim)
            return
        with self._lock:
            if self._victim_pool is None:
                self._victim_pool = ThreadPoolExecutor(
                    max_workers=max(self.handle.parallelism, 1), thread_name_prefix="preemption"
                )
            pool = self._victim_pool
        futures = [pool.submit(self.preempt_pod, node_name, preemptor, v) for v in victims]
        error: BaseException | None = None
        for future in futures:
            if error is not None:
                future.cancel()
            try:
                future.result()
            except CancelledError:
                pass
            except Exception as exc:
                error = error or exc
        if error is not None:
            raise error

    def preempt_pod(self, node_name: str, preemptor: Pod, victim: Pod) -> None:
        """kube's ``PreemptPod``: reject a victim waiting at Permit; otherwise patch the
        ``DisruptionTarget`` condition on it, then delete it. Then record ``Preempted`` on it.
        A victim already gone is skipped; a refused call raises."""
        backend = self.handle.backend
        waiting = self.handle.waiting_pods.get(victim.uid)
        if waiting is not None and waiting.pending_plugins():
            waiting.reject(NAME, "preempted")
        else:
            condition = disruption_target_condition(victim, preemptor.scheduler_name)
            if condition is not None and not backend.patch_pod_status(
                victim, conditions=[condition]
            ):
                return
            if backend.delete_pod(victim) is False:
                return
        backend.record_event(
            victim,
            event_type="Normal",
            reason=REASON_PREEMPTED,
            action=ACTION_PREEMPTING,
            note=message_preempted(preemptor.uid, node_name),
            reporting_controller=self.handle.profile_name,
            related=preemptor,
        )
