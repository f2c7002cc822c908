"""The medium-scale comparison: each pod replayed on the state kube-scheduler saw, by rules that
hold although kube-scheduler samples nodes.

From 100 nodes on kube-scheduler stops filtering once it has found
``numFeasibleNodesToFind`` feasible nodes (``pkg/scheduler/schedule_one.go``), starting where the
previous pod's search stopped, and scores only those; which nodes it saw depends on the pods
before and on its goroutines. So the pod-by-pod comparison of the small suite (the same node)
does not apply. Instead ``ReferenceRunner.run`` records, for each pod, kube-scheduler's outcome
and the exact cluster it decided on (the scenario's nodes and bound pods, and the earlier pods
where kube-scheduler bound them, as the apiserver stored them), and kubesched decides the pod
alone on that cluster scoring *every* node (:func:`full_evaluation_configs`: the same profiles
with ``percentageOfNodesToScore: 100``). :func:`compare_replay` then applies the rules stated in
README.md ("Medium scale").
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from parity_compare import (
    ERROR,
    GATED,
    MESSAGE,
    NODE,
    SCHEDULED,
    Comparison,
    KubeschedOutcome,
    Outcome,
)
from parity_profile import PROFILE
from parity_reference import ReferenceRunner, ScenarioRun
from parity_scenarios import SCHEDULER_NAMES

from kubesched.config import SchedulerConfiguration, parse_config
from kubesched.engine.algorithm import num_feasible_nodes_to_find
from kubesched.framework.registry import Registry

__all__ = [
    "CHECK_FEASIBLE",
    "CHECK_GATED",
    "CHECK_MESSAGE",
    "CHECK_TOP_TIE",
    "CHECK_TOP_UNIQUE",
    "FEASIBLE",
    "MediumStats",
    "ReplayComparison",
    "compare_replay",
    "deciding_with",
    "full_evaluation_configs",
    "replay_comparisons",
    "sampled",
]

#: A mismatch: kubesched finds kube-scheduler's node infeasible.
FEASIBLE = "node feasible"
#: How a pod was compared.
CHECK_MESSAGE = "unschedulable (message)"
CHECK_GATED = "gated"
CHECK_TOP_UNIQUE = "bound, not sampled (top, unique)"
CHECK_TOP_TIE = "bound, not sampled (top, tie)"
CHECK_FEASIBLE = "bound, sampled (feasible)"


def full_evaluation_configs(registry: Registry) -> dict[str, SchedulerConfiguration]:
    """:data:`parity_profile.PROFILE`, one configuration per profile, each profile with
    ``percentageOfNodesToScore: 100``: every node filtered and every feasible node scored."""
    configs = {}
    for name in SCHEDULER_NAMES:
        profile = copy.deepcopy(PROFILE)
        profile["profiles"] = [p for p in profile["profiles"] if p["schedulerName"] == name]
        profile["profiles"][0]["percentageOfNodesToScore"] = 100
        configs[name] = parse_config(profile, registry, source="parity profile (every node)")
    return configs


@contextmanager
def deciding_with(
    runner: ReferenceRunner, configs: Mapping[str, SchedulerConfiguration]
) -> Iterator[ReferenceRunner]:
    """``runner`` deciding kubesched's side with ``configs`` until the block ends (the session's
    runner: its run numbers name namespaces that, with no controller-manager, never go away)."""
    before = runner.configs
    runner.configs = {**before, **configs}
    try:
        yield runner
    finally:
        runner.configs = before


def sampled(feasible: int, nodes: int, percentage: int | None = None) -> bool:
    """Whether kube-scheduler sampled: it stops at the feasible node after the
    ``numFeasibleNodesToFind``-th (``length > numNodesToFind`` cancels the search), so with at
    most that many feasible nodes it filtered every node and scored every feasible one."""
    return feasible > num_feasible_nodes_to_find(nodes, percentage)


@dataclass
class ReplayComparison(Comparison):
    """One pod: kube-scheduler's outcome, kubesched's on the same state, and what differs
    (``mismatch``: also ``node feasible``; ``node`` means not among kubesched's top)."""

    #: One of the ``CHECK_*`` strings: what the rules could compare for this pod.
    check: str = ""

    def describe(self) -> str:
        lines = [
            f"pod {self.pod}: {self.mismatch} differs ({self.check or 'not compared'})",
            f"  reference kube-scheduler: {self.reference.describe()}",
            f"  kubesched (every node):   {_brief(self.kubesched)}",
        ]
        if self.mismatch == NODE:
            lines.append(f"  kubesched's best nodes:   {', '.join(self.kubesched.best)}")
            for node in sorted({*self.kubesched.best, self.reference.node or ""} - {""}):
                scores = self.kubesched.scores.get(node, {})
                weighted = ", ".join(f"{plugin} {score}" for plugin, score in scores.items())
                lines.append(f"    {node}: {weighted or 'not scored'}")
        return "\n".join(lines)


def _brief(outcome: KubeschedOutcome) -> str:
    """Like ``describe`` without the totals of hundreds of nodes."""
    text = Outcome.describe(outcome)
    if outcome.node is not None:
        text += f" ({len(outcome.feasible)} feasible nodes)"
    return text


def compare_replay(
    pod: str,
    reference: Outcome,
    kubesched: KubeschedOutcome,
    nodes: int,
    percentage: int | None = None,
) -> ReplayComparison:
    """Compare one pod by the medium-scale rules (README.md): scheduled or not; when neither
    bound it, the message character for character (its counts cover every node on both
    sides: a search that finds no feasible node visits them all); when both did, kube-scheduler's
    node is feasible for kubesched and, when kube-scheduler did not sample (:func:`sampled`, with
    kubesched's count of feasible nodes), among kubesched's top-scored nodes (ties allowed).
    ``kubesched`` must come from a search over every node."""
    result = ReplayComparison(pod, reference, kubesched)
    if reference.error or kubesched.error:
        result.mismatch = ERROR
    elif reference.gated or kubesched.gated:
        result.check = CHECK_GATED
        result.mismatch = "" if reference.gated == kubesched.gated else GATED
    elif (reference.node is None) != (kubesched.node is None):
        result.mismatch = SCHEDULED
    elif reference.node is None:
        result.check = CHECK_MESSAGE
        result.mismatch = "" if reference.message == kubesched.message else MESSAGE
    elif reference.node not in kubesched.feasible:
        result.check = CHECK_FEASIBLE
        result.mismatch = FEASIBLE
    elif sampled(len(kubesched.feasible), nodes, percentage):
        result.check = CHECK_FEASIBLE
    else:
        best = kubesched.best
        result.check = CHECK_TOP_UNIQUE if len(best) == 1 else CHECK_TOP_TIE
        result.mismatch = "" if reference.node in best else NODE
    return result


def replay_comparisons(run: ScenarioRun, nodes: int) -> list[ReplayComparison]:
    """A run's pods (kubesched's side decided over every node) compared by the replay rules."""
    return [compare_replay(c.pod, c.reference, c.kubesched, nodes) for c in run.comparisons]


@dataclass
class MediumStats:
    """What the medium-scale tests compared, for the session's last lines."""

    pods: int = 0
    agreeing: int = 0
    checks: Counter[str] = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)
    whole_runs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, scenario: str, comparisons: list[ReplayComparison]) -> None:
        for comparison in comparisons:
            self.pods += 1
            self.agreeing += comparison.ok
            self.checks[comparison.check or "not compared"] += 1
            if not comparison.ok:
                self.mismatches.append(f"{scenario} {comparison.pod}: {comparison.mismatch}")

    def summary(self) -> list[str]:
        lines = []
        if self.pods:
            checks = ", ".join(f"{n} {kind}" for kind, n in sorted(self.checks.items()))
            differing = "; ".join(self.mismatches) or "none"
            lines.append(
                f"medium-scale replay: {self.agreeing}/{self.pods} pods agree; compared: "
                f"{checks}; differing: {differing}"
            )
        lines.extend(f"medium-scale whole run: {line}" for line in self.whole_runs)
        if lines:
            lines[-1] += f" ({self.seconds:.0f}s in medium-scale tests)"
        return lines
