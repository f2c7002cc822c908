"""NodeAffinity: kube-scheduler's node selector and node affinity plugin.

Filter keeps the nodes that satisfy the pod's ``spec.nodeSelector`` AND its required node
affinity (and the profile's ``addedAffinity``); Score sums the weights of the preferred terms a
node matches, normalized to 0-100. PreFilter narrows the candidates to the node names a required
affinity lists in ``matchFields`` (``metadata.name In [...]``) in every term.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
    PreFilterResult,
    QueueingHint,
    Status,
    hookimpl,
)
from kubesched.api.selectors import (
    IN,
    OBJECT_NAME_FIELD,
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    SelectorError,
)
from kubesched.framework.helpers import MAX_NODE_SCORE, default_normalize_score, unreadable

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "NodeAffinity",
    "NodeAffinityArgs",
]

NAME = "NodeAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: The pod's node selector or required node affinity does not match the node.
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: The profile's ``addedAffinity`` does not match the node.
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: Every required term names nodes, and no node name is common to a term's requirements.
ERR_REASON_CONFLICT = "pod affinity terms conflict"


_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_MISSING = object()


def _node_affinity(pod: Pod) -> Mapping[str, Any]:
    node_affinity = pod.affinity.get("nodeAffinity") if pod.affinity else None
    return node_affinity if isinstance(node_affinity, Mapping) else {}


def _pod_preferred_terms(pod: Pod) -> PreferredSchedulingTerms | None:
    """The pod's preferred terms, ``None`` when it has none; raises ``SelectorError``."""
    terms = _node_affinity(pod).get(_PREFERRED)
    return None if terms is None else PreferredSchedulingTerms.parse(terms)


@dataclass(frozen=True)
class NodeAffinityArgs:
    """``pluginConfig[].args`` of NodeAffinity."""

    #: The ``addedAffinity`` object as given (``None`` when absent).
    added_affinity: Mapping[str, Any] | None = None
    #: Its required terms: every pod must also match them.
    added_node_selector: NodeSelector | None = None
    #: Its preferred terms, added to every pod's.
    added_preferred_terms: PreferredSchedulingTerms | None = None

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> NodeAffinityArgs:
        """Validate ``args``; raises :class:`ArgsError` listing every bad field."""
        errors = [
            FieldError(key, "unknown field; allowed: addedAffinity")
            for key in args
            if key != "addedAffinity"
        ]
        added = args.get("addedAffinity")
        if added is None:
            if errors:
                raise ArgsError(errors)
            return cls()
        if not isinstance(added, Mapping):
            raise ArgsError([*errors, FieldError("addedAffinity", "must be a NodeAffinity object")])
        errors.extend(
            FieldError(f"addedAffinity.{key}", f"unknown field; allowed: {_REQUIRED}, {_PREFERRED}")
            for key in added
            if key not in (_REQUIRED, _PREFERRED)
        )
        node_selector = preferred = None
        if added.get(_REQUIRED) is not None:
            try:
                node_selector = NodeSelector.parse(added[_REQUIRED], f"addedAffinity.{_REQUIRED}")
            except SelectorError as exc:
                errors.extend(exc.errors)
        if added.get(_PREFERRED):
            try:
                preferred = PreferredSchedulingTerms.parse(
                    added[_PREFERRED], f"addedAffinity.{_PREFERRED}"
                )
            except SelectorError as exc:
                errors.extend(exc.errors)
        if errors:
            raise ArgsError(errors)
        return cls(dict(added), node_selector, preferred)


class NodeAffinity:
    """Filters and scores nodes by the pod's node selector and node affinity."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.args = NodeAffinityArgs.parse(args)
        self.handle = handle

    @hookimpl
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
    ) -> PreFilterResult | Status | None:
        """Skip pods without constraints; narrow to the nodes named in every required term."""
        required = _node_affinity(pod).get(_REQUIRED)
        if required is None and self.args.added_node_selector is None and not pod.node_selector:
            return Status.skip()
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity.from_pod(pod))
        terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
        if not terms or not isinstance(terms, list | tuple):
            return None
        node_names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            fields = term.get("matchFields") if isinstance(term, Mapping) else None
            for requirement in fields or ():
                if (
                    isinstance(requirement, Mapping)
                    and requirement.get("key") == OBJECT_NAME_FIELD
                    and requirement.get("operator") == IN
                ):
                    # A term's requirements are ANDed: intersect.
                    names = set(requirement.get("values") or ())
                    term_names = names if term_names is None else term_names & names
            if term_names is None:
                return None  # this term can match any node, and terms are ORed
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return Status.unresolvable(ERR_REASON_CONFLICT)
        return PreFilterResult(node_names) if node_names else None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node outside the added affinity or the pod's selector and affinity."""
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        if self.args.added_node_selector is not None and not (
            self.args.added_node_selector.matches(node)
        ):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        required = state.get(PRE_FILTER_STATE_KEY)
        if required is None:  # PreFilter disabled or skipped
            required = RequiredNodeAffinity.from_pod(pod)
        # Broken terms match no node; their parse errors are ignored here, as kube does.
        if not required.match(node):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Parse the pod's preferred terms once; Skip when neither it nor the profile has any."""
        try:
            preferred = _pod_preferred_terms(pod)
        except SelectorError as exc:
            return Status.from_error(exc)
        if preferred is None and self.args.added_preferred_terms is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, preferred)
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        """The summed weights of the preferred terms (the pod's and the added ones) matched."""
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        count = 0
        if self.args.added_preferred_terms is not None:
            count += self.args.added_preferred_terms.score(node)
        preferred = state.get(PRE_SCORE_STATE_KEY, _MISSING)
        if preferred is _MISSING:  # PreScore disabled
            try:
                preferred = _pod_preferred_terms(pod)
            except SelectorError as exc:
                return Status.from_error(exc)
        if preferred is not None:
            count += preferred.score(node)
        return count

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        """Scale to 0-100 against the best node (kube's DefaultNormalizeScore)."""
        default_normalize_score(MAX_NODE_SCORE, False, scores)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter and Score read the pod's nodeSelector and node affinity (the added affinity
        of the profile is the same for every pod)."""
        return [pod.node_selector, _node_affinity(pod)]

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A new node, or new labels on a node, may satisfy the pod's affinity."""
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            )
        ]

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue only when the node now matches and (on update) did not before."""
        if unreadable(old, new, Node) or new is None:  # (the second test narrows the type)
            return QueueingHint.QUEUE  # unexpected objects: retry rather than strand the pod
        added = self.args.added_node_selector
        if added is not None and not added.matches(new):
            return QueueingHint.SKIP
        required = RequiredNodeAffinity.from_pod(pod)
        matched = _hint_match(required, new)
        if matched is not True:
            return QueueingHint.QUEUE if matched is None else QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        was_matched = _hint_match(required, old)
        if was_matched is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if was_matched else QueueingHint.QUEUE


def _hint_match(required: RequiredNodeAffinity, node: Node) -> bool | None:
    """Match, or ``None`` where kube's Match returns an error (no term matched, some broken)."""
    if required.match(node):
        return True
    label_ok = required.label_selector is None or required.label_selector.matches(node.labels)
    return None if label_ok and required.errors else False
