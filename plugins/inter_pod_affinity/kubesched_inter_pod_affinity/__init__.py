"""InterPodAffinity: kube-scheduler's pod affinity and anti-affinity plugin.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/interpodaffinity``,
v1.37). PreFilter counts, per topology pair (``key=value`` of a node label), the existing pods
whose required anti-affinity the incoming pod violates (only nodes holding pods with required
anti-affinity are visited), and the pods that match the incoming pod's required affinity (all
terms at once) and anti-affinity (each term); Filter then checks a node against those counts
in O(terms + node labels). PreScore sums, per topology pair, the weights of the preferred
terms (the incoming pod's against every pod; existing pods' against the incoming pod, with
``hardPodAffinityWeight`` for their required affinity); Score adds up the node's pairs and
NormalizeScore scales the range to 0-100. ``sign_pod`` lets the framework reuse a node's answers
across like pods while every term in play is keyed on the hostname (they are then node-local).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
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
from kubesched.api.selectors import SelectorError
from kubesched.framework.helpers import MAX_NODE_SCORE, unreadable

from .counting import Contribution, MatchCounts, Pair, PairTallies
from .state import (
    PreFilterState,
    PreScoreState,
    aggregate,
    matches_all,
    matches_any,
    update_pair,
)
from .terms import (
    AffinityTerm,
    InterPodAffinityArgs,
    TermsCache,
    parse_pod_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "MAX_NODE_SCORE",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "AffinityTerm",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "PreFilterState",
    "PreScoreState",
]

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: An existing pod's required anti-affinity rejects the incoming pod in the node's domain.
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)
#: No pod in the node's domain matches the incoming pod's required affinity.
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
#: A pod in the node's domain matches the incoming pod's required anti-affinity.
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

NAMESPACE_KIND = "Namespace"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: Why a pod is not signed (``sign_pod``): its answers on a node depend on other nodes.
NOT_NODE_LOCAL = "InterPodAffinity's answers for this pod depend on other nodes"
#: The tally behind ``sign_pod``: hostname values, and pods whose terms reach beyond their host.
_LOCALITY = ("node-locality",)
_LABELLED = ("", "nodes with a hostname label")
_FAR_REACHING = ("", "pods with terms beyond their host")
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_POD_AFFINITY_KINDS = ("podAffinity", "podAntiAffinity")


# --- plugin --------------------------------------------------------------------------------------


class InterPodAffinity:
    """Places pods near, or away from, the pods their (anti-)affinity terms select."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = InterPodAffinityArgs.parse(args)
        self.handle = handle
        #: Lists the Namespaces, whose labels ``namespaceSelector`` selects by.
        self.list_namespaces = handle.lister(NAMESPACE_KIND)
        self._terms = TermsCache()
        self._counts = MatchCounts()
        self._tallies = PairTallies(32)

    # -- namespaces --------------------------------------------------------------------------
    def _namespaces(self) -> dict[str, Mapping[str, str]]:
        """Namespace name -> labels, from the lister."""
        out: dict[str, Mapping[str, str]] = {}
        for obj in self.list_namespaces():
            meta = obj.get("metadata") or {}
            out[meta.get("name") or ""] = meta.get("labels") or {}
        return out

    def _labels_of_namespace(self, namespace: str) -> Mapping[str, str]:
        """``GetNamespaceLabelsSnapshot``: no labels for a namespace the lister does not hold."""
        for obj in self.list_namespaces():
            meta = obj.get("metadata") or {}
            if meta.get("name") == namespace:
                return meta.get("labels") or {}
        return {}

    def _merge_namespaces(self, term: AffinityTerm) -> AffinityTerm:
        """``mergeAffinityTermNamespacesIfNotEmpty``: the namespaces the selector selects,
        added to the term's names (an empty selector, all namespaces, stays as it is)."""
        if term.namespace_selector.is_empty():
            return term
        selector = term.namespace_selector
        return term.with_namespaces(
            name for name, labels in self._namespaces().items() if selector.matches(labels)
        )

    # -- signing -----------------------------------------------------------------------------
    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Sign the pod when every answer of this plugin on a node depends on that node alone.

        That holds when every term that can act, the pod's own and those of the pods already
        placed, is keyed on ``kubernetes.io/hostname`` and no two nodes share a hostname value:
        each count Filter and Score read is then of the node's own pods. The pod must have no
        required affinity (whether a matching pod exists anywhere decides it) and no term with
        a namespace selector (resolved against the Namespaces). What the answers read of the
        pod is signed: its namespace, labels, its namespace's labels and its terms.
        """
        # Parsed, not cached: the terms cache holds placed pods; the incoming ones would stay
        # in it (and keep deleted pods alive) up to its limit.
        terms = parse_pod_terms(pod)
        if terms.errors or terms.required_affinity:
            return Status.unschedulable(NOT_NODE_LOCAL)
        own = [
            *terms.required_anti_affinity,
            *(w.term for w in terms.preferred_affinity),
            *(w.term for w in terms.preferred_anti_affinity),
        ]
        for term in own:
            selector = term.namespace_selector
            if term.topology_key != HOSTNAME_LABEL or not (
                selector.matches_nothing or selector.is_empty()
            ):
                return Status.unschedulable(NOT_NODE_LOCAL)
        snapshot = self.handle.snapshot()
        if not own and not snapshot.have_pods_with_affinity:
            return None  # no term anywhere: PreFilter and PreScore skip
        totals = self._tallies.get(_LOCALITY).refresh(
            snapshot.node_infos, self._locality_contribution, snapshot.journal
        )
        labelled = totals.get(_LABELLED, 0)
        hostnames = len(totals) - (_LABELLED in totals) - (_FAR_REACHING in totals)
        if _FAR_REACHING in totals or hostnames != labelled:
            return Status.unschedulable(NOT_NODE_LOCAL)
        return [
            pod.namespace,
            sorted(pod.labels.items()),
            sorted(self._labels_of_namespace(pod.namespace).items()),
            [t.key for t in terms.required_anti_affinity],
            [[w.term.key, w.weight] for w in terms.preferred_affinity],
            [[w.term.key, w.weight] for w in terms.preferred_anti_affinity],
        ]

    def _locality_contribution(self, info: NodeInfo) -> Contribution:
        """The node's hostname value, and how many of its pods have a term keyed otherwise."""
        out: Contribution = []
        labels = info.node.labels if info.node is not None else {}
        hostname = labels.get(HOSTNAME_LABEL)
        if hostname is not None:
            out.append(((HOSTNAME_LABEL, hostname), 1))
            out.append((_LABELLED, 1))
        far = 0
        for existing in info.pods_with_affinity.values():
            t = self._terms.get(existing)
            kinds = (
                t.required_affinity,
                t.required_anti_affinity,
                [w.term for w in t.preferred_affinity],
                [w.term for w in t.preferred_anti_affinity],
            )
            if any(term.topology_key != HOSTNAME_LABEL for kind in kinds for term in kind):
                far += 1
        if far:
            out.append((_FAR_REACHING, far))
        return out

    # -- PreFilter ---------------------------------------------------------------------------
    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Count the pairs Filter checks; Skip when nothing can reject a node."""
        terms = parse_pod_terms(pod)
        if terms.errors:
            return Status.unresolvable(f"parsing pod: {aggregate(terms.errors)}")
        s = PreFilterState(
            pod,
            tuple(self._merge_namespaces(t) for t in terms.required_affinity),
            tuple(self._merge_namespaces(t) for t in terms.required_anti_affinity),
            self._labels_of_namespace(pod.namespace),
        )
        s.existing_anti_affinity_counts = self._existing_anti_affinity_counts(s, nodes)
        self._count_incoming(s, nodes)
        if len(self._counts) > len(nodes) + 1024:
            self._counts.forget(info.name for info in nodes)
        if (
            not s.existing_anti_affinity_counts
            and not s.affinity_terms
            and not s.anti_affinity_terms
        ):
            return Status.skip()
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def _existing_anti_affinity_counts(
        self, s: PreFilterState, nodes: list[NodeInfo]
    ) -> dict[Pair, int]:
        """Pairs -> existing pods (on nodes holding pods with required anti-affinity) whose
        required anti-affinity terms the incoming pod matches."""
        pod, namespace_labels = s.pod, s.namespace_labels
        terms_of = self._terms.get

        def contribution(info: NodeInfo) -> Contribution:
            if not info.pods_with_required_anti_affinity:
                return []
            labels = info.node.labels if info.node is not None else {}
            out = []
            for existing in info.pods_with_required_anti_affinity.values():
                for term in terms_of(existing).required_anti_affinity:
                    value = labels.get(term.topology_key)
                    if value is not None and term.matches(pod, namespace_labels):
                        out.append(((term.topology_key, value), 1))
            return out

        # What the terms of existing pods see of the incoming pod.
        question = (
            "existing",
            pod.namespace,
            tuple(sorted(pod.labels.items())),
            tuple(sorted((namespace_labels or {}).items())),
        )
        # Only nodes holding pods with required anti-affinity contribute: the snapshot lists
        # them, so a cluster without such pods costs nothing here.
        snapshot = self.handle.snapshot()
        whole = nodes is snapshot.node_infos
        holders = (
            snapshot.have_pods_with_required_anti_affinity
            if whole
            else [info for info in nodes if info.pods_with_required_anti_affinity]
        )
        if not holders:
            return {}
        # Over the snapshot's holders the journal says which of them changed since last time.
        journal = snapshot.journal if whole else None
        return dict(self._tallies.get(question).refresh_members(holders, contribution, journal))

    def _count_incoming(self, s: PreFilterState, nodes: list[NodeInfo]) -> None:
        """The pairs of the pods matching the incoming pod's affinity (all terms) and
        anti-affinity (each term)."""
        affinity, anti = s.affinity_terms, s.anti_affinity_terms
        counts = self._counts
        journal = self.handle.snapshot().journal  # used only when nodes are its node_infos
        if affinity:
            affinity_key = "\x01".join(t.key for t in affinity)

            def affinity_contribution(info: NodeInfo) -> Contribution:
                count = counts.count_all(info, affinity, affinity_key) if info.pods else 0
                labels = info.node.labels if info.node is not None else {}
                return [
                    ((t.topology_key, labels[t.topology_key]), count)
                    for t in affinity
                    if count and t.topology_key in labels
                ]

            question: tuple[Any, ...] = (
                "affinity",
                affinity_key,
                tuple(t.topology_key for t in affinity),
            )
            tally = self._tallies.get(question)
            s.affinity_counts = dict(tally.refresh(nodes, affinity_contribution, journal))
        if anti:

            def anti_contribution(info: NodeInfo) -> Contribution:
                if not info.pods:
                    return []
                labels = info.node.labels if info.node is not None else {}
                out = []
                for t in anti:
                    value = labels.get(t.topology_key)
                    if value is not None:
                        count = counts.count(info, t)
                        if count:
                            out.append(((t.topology_key, value), count))
                return out

            question = ("anti", tuple((t.key, t.topology_key) for t in anti))
            tally = self._tallies.get(question)
            s.anti_affinity_counts = dict(tally.refresh(nodes, anti_contribution, journal))

    # -- PreFilter extensions ----------------------------------------------------------------
    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update the cycle state as if ``pod_to_add`` ran on ``node_info`` (kube's AddPod)."""
        return self._update_with_pod(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status | None:
        """Update the cycle state as if ``pod_to_remove`` left ``node_info`` (RemovePod)."""
        return self._update_with_pod(state, pod_to_remove, node_info, -1)

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
        self, state: CycleState, pod: Pod, node_info: NodeInfo, multiplier: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        node = node_info.node
        if node is None:
            return None
        for term in self._terms.get(pod).required_anti_affinity:
            if term.matches(s.pod, s.namespace_labels):
                update_pair(s.existing_anti_affinity_counts, node, term.topology_key, multiplier)
        if matches_all(s.affinity_terms, pod):
            for term in s.affinity_terms:
                update_pair(s.affinity_counts, node, term.topology_key, multiplier)
        for term in s.anti_affinity_terms:
            if term.matches(pod, None):
                update_pair(s.anti_affinity_counts, node, term.topology_key, multiplier)
        return None

    # -- Filter ------------------------------------------------------------------------------
    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Affinity (unresolvable), the pod's anti-affinity, then existing pods' anti-affinity."""
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.error(
                f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'
            )
        node = node_info.node
        labels = node.labels if node is not None else {}
        if s.affinity_terms and not self._satisfies_affinity(s, labels):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if s.anti_affinity_counts:
            for term in s.anti_affinity_terms:
                value = labels.get(term.topology_key)
                if value is not None and s.anti_affinity_counts.get((term.topology_key, value)):
                    return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        existing = s.existing_anti_affinity_counts
        if existing and any(existing.get(pair, 0) > 0 for pair in labels.items()):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    @staticmethod
    def _satisfies_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
        pods_exist = True
        for term in s.affinity_terms:
            value = labels.get(term.topology_key)
            if value is None:
                return False  # every topology label must exist, self-affinity included
            if s.affinity_counts.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        # With no matching pod anywhere, a pod matching its own terms may start the group.
        return pods_exist or (not s.affinity_counts and s.self_affinity)

    # -- PreScore / Score --------------------------------------------------------------------
    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Sum the preferred terms' weights per pair; Skip when no term applies anywhere."""
        affinity = pod.affinity or {}
        has_constraints = any(
            (affinity.get(kind) or {}).get(_PREFERRED)
            for kind in ("podAffinity", "podAntiAffinity")
        )
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        snapshot = self.handle.snapshot()
        nodes_all = snapshot.node_infos
        terms = parse_pod_terms(pod)
        if terms.errors:
            return Status.error(f"failed to parse pod: {aggregate(terms.errors)}")
        weighted = [
            (self._merge_namespaces(w.term), w.weight) for w in terms.preferred_affinity
        ] + [(self._merge_namespaces(w.term), -w.weight) for w in terms.preferred_anti_affinity]
        namespace_labels = self._labels_of_namespace(pod.namespace)
        totals = [
            self._tallies.get(("score-term", term.key, term.topology_key, amount)).refresh(
                nodes_all, self._preferred_term_contribution(term, amount), snapshot.journal
            )
            for term, amount in weighted
        ]
        # Unless the pod has preferred terms, only existing pods with terms can score.
        hard_weight = self.args.hard_pod_affinity_weight
        question = (
            "score-existing",
            pod.namespace,
            tuple(sorted(pod.labels.items())),
            tuple(sorted(namespace_labels.items())),
            hard_weight,
        )
        # Only nodes holding pods with affinity terms contribute (the snapshot lists them).
        holders = snapshot.have_pods_with_affinity
        if holders:
            totals.append(
                self._tallies.get(question).refresh_members(
                    holders,
                    self._existing_terms_contribution(pod, namespace_labels, hard_weight),
                    snapshot.journal,
                )
            )
        s = PreScoreState()
        for pairs in totals:
            for (key, value), amount in pairs.items():
                scores = s.topology_score.setdefault(key, {})
                scores[value] = scores.get(value, 0) + amount
        if not s.topology_score:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _preferred_term_contribution(
        self, term: AffinityTerm, amount: int
    ) -> Callable[[NodeInfo], Contribution]:
        """Per node: ``amount`` (the signed weight) for each of its pods the term selects."""
        counts = self._counts

        def contribution(info: NodeInfo) -> Contribution:
            value = info.node.labels.get(term.topology_key) if info.node is not None else None
            if value is None or not info.pods:
                return []
            count = counts.count(info, term)
            return [((term.topology_key, value), amount * count)] if count else []

        return contribution

    def _existing_terms_contribution(
        self, pod: Pod, namespace_labels: Mapping[str, str], hard_weight: int
    ) -> Callable[[NodeInfo], Contribution]:
        """Per node: the weights of its pods' terms that select the incoming pod (required
        affinity at ``hard_weight``, preferred affinity and anti-affinity at theirs)."""
        terms_of = self._terms.get

        def contribution(info: NodeInfo) -> Contribution:
            if not info.pods_with_affinity or info.node is None or not info.node.labels:
                return []
            labels = info.node.labels
            out: Contribution = []

            def add(term: AffinityTerm, amount: int) -> None:
                value = labels.get(term.topology_key)
                if value is not None and term.matches(pod, namespace_labels):
                    out.append(((term.topology_key, value), amount))

            for existing in info.pods_with_affinity.values():
                existing_terms = terms_of(existing)
                if hard_weight > 0:
                    for term in existing_terms.required_affinity:
                        add(term, hard_weight)
                for w in existing_terms.preferred_affinity:
                    add(w.term, w.weight)
                for w in existing_terms.preferred_anti_affinity:
                    add(w.term, -w.weight)
            return out

        return contribution

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """The summed weights of the node's pairs (negative for anti-affinity)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        node = node_info.node
        if node is None:
            return 0
        labels = node.labels
        score = 0
        for key, values in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                score += values.get(value, 0)
        return score

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> Status | None:
        """Scale ``[min, max]`` to ``[0, 100]`` (all 0 when every node scored the same)."""
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.error(
                f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found'
            )
        if not s.topology_score or not scores:
            return None
        low, high = min(scores.values()), max(scores.values())
        spread = high - low
        for name, value in scores.items():
            scores[name] = int(MAX_NODE_SCORE * ((value - low) / spread)) if spread > 0 else 0
        return None

    # -- events ------------------------------------------------------------------------------
    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Bound pods coming, going or relabelled; the pod's own labels; nodes added or
        relabelled."""
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
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
                self.is_schedulable_after_target_pod_update_label,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_assigned_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """Queue when a bound pod now matches the pod's affinity, stops matching (or, deleted,
        matched) its anti-affinity, or was deleted with anti-affinity the pod matched."""
        if (old is not None and not isinstance(old, Pod)) or (
            new is not None and not isinstance(new, Pod)
        ):
            return QueueingHint.QUEUE
        if (new is not None and not new.node_name and not new.nominated_node_name) or (
            old is not None and not old.node_name and not old.nominated_node_name
        ):
            return QueueingHint.SKIP
        try:
            terms, anti_terms = _required_terms(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if not matches_all(terms, old) and matches_all(terms, new):
                return QueueingHint.QUEUE
            if matches_any(anti_terms, old) and not matches_any(anti_terms, new):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if matches_all(terms, new) else QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if matches_any(anti_terms, old):
            return QueueingHint.QUEUE
        try:
            _, old_anti_terms = _required_terms(old)
        except SelectorError:
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if matches_any(old_anti_terms, pod) else QueueingHint.SKIP

    def is_schedulable_after_target_pod_update_label(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """New labels of the pod itself may escape an existing pod's anti-affinity."""
        return QueueingHint.QUEUE

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue when a node gains (or changes) an affinity topology key, loses (or changes)
        an anti-affinity one, or is added and the pod has anti-affinity."""
        if unreadable(old, new, Node) or new is None:  # (the second test narrows the type)
            return QueueingHint.QUEUE
        try:
            terms, anti_terms = _required_terms(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        for term in terms:
            key = term.topology_key
            if old is None:
                if key in new.labels:
                    return QueueingHint.QUEUE
                continue
            if key in new.labels and old.labels.get(key) != new.labels[key]:
                return QueueingHint.QUEUE  # gained the key, or moved to another domain
        for term in anti_terms:
            if old is None:
                return QueueingHint.QUEUE
            key = term.topology_key
            if key in old.labels and old.labels[key] != new.labels.get(key):
                return QueueingHint.QUEUE  # lost the key, or moved to another domain
        return QueueingHint.SKIP


def _required_terms(pod: Pod) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    """The pod's required affinity and anti-affinity terms as written (namespace selectors
    not resolved); raises :class:`SelectorError`."""
    terms = parse_pod_terms(pod)
    if terms.errors and any(e.startswith("required") for e in terms.errors):
        raise SelectorError([])
    return terms.required_affinity, terms.required_anti_affinity
