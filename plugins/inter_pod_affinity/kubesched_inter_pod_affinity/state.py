"""The cycle state InterPodAffinity's PreFilter and PreScore write for Filter and Score."""

from __future__ import annotations

from collections.abc import Mapping

from kubesched import Node, Pod

from .counting import Pair
from .terms import AffinityTerm

__all__ = [
    "PreFilterState",
    "PreScoreState",
    "aggregate",
    "matches_all",
    "matches_any",
    "update_pair",
]


def update_pair(counts: dict[Pair, int], node: Node, key: str, value: int) -> None:
    """Add ``value`` to the node's pair of ``key`` (if it has the label); drop zero entries."""
    label = node.labels.get(key)
    if label is None:
        return
    pair = (key, label)
    total = counts.get(pair, 0) + value
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


class PreFilterState:
    """What Filter reads: the incoming pod's terms and the three pair counts."""

    __slots__ = (
        "affinity_counts",
        "affinity_terms",
        "anti_affinity_counts",
        "anti_affinity_terms",
        "existing_anti_affinity_counts",
        "namespace_labels",
        "pod",
        "self_affinity",
    )

    def __init__(
        self,
        pod: Pod,
        affinity_terms: tuple[AffinityTerm, ...] = (),
        anti_affinity_terms: tuple[AffinityTerm, ...] = (),
        namespace_labels: Mapping[str, str] | None = None,
    ) -> None:
        self.pod = pod
        #: The incoming pod's required terms, namespace selectors resolved to names.
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        #: The labels of the incoming pod's namespace (what existing pods' selectors see).
        self.namespace_labels = namespace_labels
        #: Pairs -> existing pods whose required anti-affinity the incoming pod matches.
        self.existing_anti_affinity_counts: dict[Pair, int] = {}
        #: Pairs -> existing pods matching all the incoming pod's affinity terms.
        self.affinity_counts: dict[Pair, int] = {}
        #: Pairs -> existing pods matching one of the incoming pod's anti-affinity terms.
        self.anti_affinity_counts: dict[Pair, int] = {}
        #: Whether the incoming pod matches all its own affinity terms (the first of a group).
        self.self_affinity = bool(affinity_terms) and all(
            t.matches(pod, None) for t in affinity_terms
        )

    def clone(self) -> PreFilterState:
        other = PreFilterState(self.pod)
        other.affinity_terms = self.affinity_terms
        other.anti_affinity_terms = self.anti_affinity_terms
        other.namespace_labels = self.namespace_labels
        other.self_affinity = self.self_affinity
        other.existing_anti_affinity_counts = dict(self.existing_anti_affinity_counts)
        other.affinity_counts = dict(self.affinity_counts)
        other.anti_affinity_counts = dict(self.anti_affinity_counts)
        return other


class PreScoreState:
    """What Score reads: topology key -> topology value -> summed weights."""

    __slots__ = ("topology_score",)

    def __init__(self) -> None:
        self.topology_score: dict[str, dict[str, int]] = {}

    def clone(self) -> PreScoreState:
        return self  # read-only after PreScore, as in kube-scheduler


def matches_all(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    """Non-empty terms that ``pod`` all matches (namespace selectors already resolved)."""
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def matches_any(terms: tuple[AffinityTerm, ...], pod: Pod) -> bool:
    return any(t.matches(pod, None) for t in terms)


def aggregate(messages: tuple[str, ...]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
