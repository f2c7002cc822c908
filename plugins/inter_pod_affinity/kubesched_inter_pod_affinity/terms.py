"""Pod (anti-)affinity terms, parsed once per pod, and the plugin's args.

kube-scheduler keeps these parsed in its ``PodInfo`` (``fwk.AffinityTerm``,
``framework.NewPodInfo``); kubesched's NodeInfo holds plain pods, so the plugin parses the
terms of existing pods through :class:`TermsCache` and keeps per-node match counts in
:class:`MatchCounts`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import ArgsError, FieldError, Pod
from kubesched.api.selectors import NOTHING, LabelSelector, SelectorError
from kubesched.framework.helpers import compile_selector

__all__ = [
    "AffinityTerm",
    "InterPodAffinityArgs",
    "PodTerms",
    "TermsCache",
    "WeightedAffinityTerm",
    "compile_selector",
    "parse_pod_terms",
]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_ARGS_FIELDS = ("hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods")
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


# --- args ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InterPodAffinityArgs:
    """``pluginConfig[].args`` of InterPodAffinity."""

    #: The score an existing pod's required affinity term gives the nodes of its domain when
    #: the incoming pod matches it (0 turns that off).
    hard_pod_affinity_weight: int = 1
    #: Score only by the incoming pod's preferred terms, ignoring existing pods' preferences.
    ignore_preferred_terms_of_existing_pods: bool = False

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> InterPodAffinityArgs:
        """Validate ``args``; raises :class:`ArgsError` listing every bad field."""
        allowed = ", ".join(_ARGS_FIELDS)
        errors = [
            FieldError(key, f"unknown field; allowed: {allowed}")
            for key in args
            if key not in _ARGS_FIELDS
        ]
        weight = args.get("hardPodAffinityWeight")
        if weight is None:
            weight = 1  # v1 defaulting
        if not isinstance(weight, int) or isinstance(weight, bool):
            errors.append(
                FieldError("hardPodAffinityWeight", f"Invalid value: {weight!r}: must be an int")
            )
        elif not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            errors.append(
                FieldError(
                    "hardPodAffinityWeight",
                    f"Invalid value: {weight}: not in valid range "
                    f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]",
                )
            )
        ignore = args.get("ignorePreferredTermsOfExistingPods", False)
        if not isinstance(ignore, bool):
            errors.append(
                FieldError(
                    "ignorePreferredTermsOfExistingPods",
                    f"Invalid value: {ignore!r}: must be a boolean",
                )
            )
        if errors:
            raise ArgsError(errors)
        return cls(weight, ignore)


# --- terms ---------------------------------------------------------------------------------------


def _selector_key(selector: LabelSelector) -> str:
    return ("-" if selector.matches_nothing else "+") + str(selector)


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A ``PodAffinityTerm`` parsed: its namespaces, selectors and topology key."""

    namespaces: frozenset[str]
    selector: LabelSelector
    topology_key: str
    namespace_selector: LabelSelector = NOTHING
    #: A cache key for what the term selects (strings keep their hash).
    key: str = field(default="", compare=False, repr=False)
    #: ``selector.matches`` specialised for the usual ``key=value`` selectors.
    selects: Callable[[Mapping[str, str]], bool] = field(default=bool, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "selects", compile_selector(self.selector))
        if not self.key:
            key = "\x00".join(
                (
                    ",".join(sorted(self.namespaces)),
                    _selector_key(self.namespace_selector),
                    _selector_key(self.selector),
                )
            )
            object.__setattr__(self, "key", key)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """Whether ``pod`` is in the term's namespaces (by name, or by the labels of its
        namespace) and its labels match the selector."""
        if pod.namespace in self.namespaces or self.namespace_selector.matches(
            namespace_labels or {}
        ):
            return self.selector.matches(pod.labels)
        return False

    def matches_resolved(self, pod: Pod) -> bool:
        """:meth:`matches` for a term whose namespace selector was resolved into names (it is
        then empty, all namespaces, or selects none)."""
        if pod.namespace in self.namespaces or self.namespace_selector.is_empty():
            return self.selects(pod.labels)
        return False

    def with_namespaces(self, names: Iterable[str]) -> AffinityTerm:
        """The term with ``names`` added and the namespace selector resolved away."""
        return AffinityTerm(self.namespaces | frozenset(names), self.selector, self.topology_key)


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodTerms:
    """A pod's four kinds of terms (kube-scheduler's ``PodInfo``); ``errors`` when some
    could not be parsed (those kinds are then empty)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    errors: tuple[str, ...] = ()


def _aggregate(messages: list[str]) -> str:
    """Kubernetes' error aggregate: the one message, or ``[a, b]``."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _selector_error(exc: SelectorError) -> str:
    """``LabelSelectorAsSelector``'s error: the first bad requirement's, its path relative to
    the requirement (``values[0][key]: Invalid value: …``, ``key: Invalid value: …``)."""
    groups: dict[str, list[str]] = {}
    for error in exc.errors:
        path = error.path
        head, dot, rest = path.partition("].")
        if path.startswith("matchExpressions[") and dot:
            groups.setdefault(head, []).append(f"{rest}: {error.message}")
        elif path.startswith("matchLabels[") and path.endswith("]"):
            key = path[len("matchLabels[") : -1]
            bad_key = error.message.startswith(f"Invalid value: {json.dumps(key)}:")
            where = "key" if bad_key else f"values[0][{key}]"
            groups.setdefault(path, []).append(f"{where}: {error.message}")
        else:
            groups.setdefault(path, []).append(str(error))
    return _aggregate(next(iter(groups.values())))


def _new_term(pod: Pod, raw: Any) -> AffinityTerm:
    if not isinstance(raw, Mapping):
        raise SelectorError([FieldError("", "must be a pod affinity term object")])
    selector = LabelSelector.parse(raw.get("labelSelector"))
    namespaces = raw.get("namespaces") or ()
    raw_ns_selector = raw.get("namespaceSelector")
    if not namespaces and raw_ns_selector is None:
        names = frozenset((pod.namespace,))
    else:
        names = frozenset(namespaces)
    ns_selector = LabelSelector.parse(raw_ns_selector)
    return AffinityTerm(names, selector, raw.get("topologyKey") or "", ns_selector)


def _terms(pod: Pod, raw: Any) -> tuple[AffinityTerm, ...]:
    return tuple(_new_term(pod, t) for t in raw or ())


def _weighted(pod: Pod, raw: Any) -> tuple[WeightedAffinityTerm, ...]:
    out = []
    for t in raw or ():
        if not isinstance(t, Mapping):
            raise SelectorError([FieldError("", "must be a weighted pod affinity term object")])
        term = _new_term(pod, t.get("podAffinityTerm"))
        out.append(WeightedAffinityTerm(term, t.get("weight") or 0))
    return tuple(out)


def parse_pod_terms(pod: Pod) -> PodTerms:
    """``framework.NewPodInfo``: every kind parsed; a kind with a bad term is left empty and
    its error recorded (``requiredAffinityTerms: …``)."""
    affinity = pod.affinity or {}
    pod_affinity = affinity.get("podAffinity") or {}
    anti_affinity = affinity.get("podAntiAffinity") or {}
    kinds = (
        ("requiredAffinityTerms", _terms, pod_affinity.get(_REQUIRED)),
        ("requiredAntiAffinityTerms", _terms, anti_affinity.get(_REQUIRED)),
        ("preferredAffinityTerms", _weighted, pod_affinity.get(_PREFERRED)),
        ("preferredAntiAffinityTerms", _weighted, anti_affinity.get(_PREFERRED)),
    )
    parsed: list[tuple[Any, ...]] = []
    errors = []
    for name, parse, raw in kinds:
        try:
            parsed.append(parse(pod, raw))
        except SelectorError as exc:
            errors.append(f"{name}: {_selector_error(exc)}")
            parsed.append(())
    required, required_anti, preferred, preferred_anti = parsed
    return PodTerms(required, required_anti, preferred, preferred_anti, errors=tuple(errors))


class TermsCache:
    """The parsed terms of existing pods, parsed once per pod object.

    Two generations bound the memory: when the current one is full it becomes the old one,
    and pods still in use move back on their next look-up.
    """

    __slots__ = ("_current", "_limit", "_old")

    def __init__(self, limit: int = 50_000) -> None:
        self._current: dict[str, tuple[Pod, PodTerms]] = {}
        self._old: dict[str, tuple[Pod, PodTerms]] = {}
        self._limit = limit

    def get(self, pod: Pod) -> PodTerms:
        entry = self._current.get(pod.uid)
        if entry is not None and entry[0] is pod:
            return entry[1]
        entry = self._old.get(pod.uid)
        terms = entry[1] if entry is not None and entry[0] is pod else parse_pod_terms(pod)
        if len(self._current) >= self._limit:
            self._old, self._current = self._current, {}
        self._current[pod.uid] = (pod, terms)
        return terms
