"""Shared plugin helpers: what kube-scheduler's ``framework/plugins/helper`` and
``component-helpers`` give its plugins, so that plugins use one tested copy instead of their own.

- :data:`MAX_NODE_SCORE` / :data:`MIN_NODE_SCORE`: the range a Score plugin's scores must be in
  after NormalizeScore (kube's ``framework.MaxNodeScore``);
- :func:`default_normalize_score`: ``helper.DefaultNormalizeScore``;
- :class:`TolerationIndex` and :func:`find_untolerated_taint`: ``v1helper``'s
  ``FindMatchingUntoleratedTaint`` with the ``NoSchedule``/``NoExecute`` filter, linear in
  taints × tolerations sharing a key;
- :func:`compile_selector`: a label selector as a plain function, specialised for the common
  ``matchLabels`` case (hot in per-node loops);
- :func:`unreadable`: the guard every queueing hint starts with (kube queues on objects it
  cannot read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.api.objects import Taint, Toleration
from kubesched.api.selectors import EQUALS, IN, LabelSelector

__all__ = [
    "DO_NOT_SCHEDULE_TAINT_EFFECTS",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "TolerationIndex",
    "compile_selector",
    "default_normalize_score",
    "find_untolerated_taint",
    "unreadable",
]

#: The highest score a node may get from one Score plugin after NormalizeScore.
MAX_NODE_SCORE = 100
#: The lowest.
MIN_NODE_SCORE = 0

#: The taint effects that keep a pod off a node (kube's ``DoNotScheduleTaintsFilterFunc``).
DO_NOT_SCHEDULE_TAINT_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def default_normalize_score(max_priority: int, reverse: bool, scores: dict[str, int]) -> None:
    """kube-scheduler's ``helper.DefaultNormalizeScore``: scale ``[0, max(scores)]`` to
    ``[0, max_priority]`` in place; ``reverse`` subtracts each result from ``max_priority``.

    When every score is 0, the scores stay 0 (``max_priority`` each with ``reverse``). Scores
    are non-negative, so Python's floor division is Go's truncating one here.
    """
    max_count = max(scores.values(), default=0)
    if max_count == 0:
        if reverse:
            for node in scores:
                scores[node] = max_priority
        return
    for node, score in scores.items():
        score = max_priority * score // max_count
        scores[node] = max_priority - score if reverse else score


class TolerationIndex:
    """A pod's tolerations by key, so that a taint is compared only with the tolerations
    that name its key and those with an empty key (which match every key): a node with
    thousands of taints against a pod with thousands of tolerations stays linear."""

    __slots__ = ("_any_key", "_by_key")

    def __init__(self, tolerations: Iterable[Toleration]) -> None:
        self._by_key: dict[str, list[Toleration]] = {}
        self._any_key: list[Toleration] = []
        for toleration in tolerations:
            if toleration.key:
                self._by_key.setdefault(toleration.key, []).append(toleration)
            else:
                self._any_key.append(toleration)

    def tolerates(self, taint: Taint) -> bool:
        """Whether some toleration tolerates ``taint`` (kube's ``TolerationsTolerateTaint``)."""
        return any(t.tolerates(taint) for t in self._by_key.get(taint.key, ())) or any(
            t.tolerates(taint) for t in self._any_key
        )


def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Iterable[Toleration] | TolerationIndex,
    effects: frozenset[str] = DO_NOT_SCHEDULE_TAINT_EFFECTS,
) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates, in the node's
    order (kube's ``FindMatchingUntoleratedTaint``); ``None`` when every such taint is
    tolerated."""
    index = tolerations if isinstance(tolerations, TolerationIndex) else None
    listed = None if index is not None else list(tolerations)  # type: ignore[arg-type]
    for taint in taints:
        if taint.effect not in effects:
            continue
        if index is not None:
            if not index.tolerates(taint):
                return taint
        elif not any(t.tolerates(taint) for t in listed or ()):
            return taint
    return None


def compile_selector(selector: LabelSelector) -> Callable[[Mapping[str, str]], bool]:
    """``selector.matches`` as a function, specialised when every requirement is ``key=value``
    (``matchLabels``, the usual workload selector)."""
    if selector.matches_nothing:
        return lambda labels: False
    requirements = selector.requirements
    if not requirements:
        return lambda labels: True
    if all(r.operator in (EQUALS, IN) and len(r.values) == 1 for r in requirements):
        pairs = tuple((r.key, r.values[0]) for r in requirements)
        if len(pairs) == 1:
            ((key, value),) = pairs
            return lambda labels: labels.get(key) == value
        return lambda labels: all(labels.get(k) == v for k, v in pairs)
    return selector.matches


def unreadable(old: Any, new: Any, kind: type) -> bool:
    """Whether a queueing hint cannot read an event's objects as ``kind`` (``new`` is not one,
    or ``old`` is neither ``None`` nor one): kube-scheduler then queues the pod
    (``QueueingHint.QUEUE``) rather than risk stranding it."""
    return not isinstance(new, kind) or (old is not None and not isinstance(old, kind))
