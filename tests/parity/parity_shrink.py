"""Shrinking a disagreeing scenario to the fewest objects that still disagree, and its report."""

from __future__ import annotations

import copy
import time
from dataclasses import replace

import yaml
from parity_compare import NODE
from parity_profile import PROFILE
from parity_reference import ReferenceRunner, ScenarioRun
from parity_scenarios import (
    Scenario,
    reductions,
)


def pinned(run: ScenarioRun, target: str) -> Scenario:
    """``run``'s scenario with the pods created before ``target`` turned into pods bound where
    the reference scheduler put them (or dropped when it did not bind them, as are the pods
    they evicted), and no pod after:
    the cluster ``target`` was scheduled on, with ``target`` the only pod to schedule."""
    scenario = run.scenario
    bound = list(scenario.bound_pods)
    for manifest in scenario.pods:
        name = manifest["metadata"]["name"]
        if name == target:
            return replace(scenario, bound_pods=bound, pods=[manifest])
        comparison = run.comparison(name)
        if comparison is None:
            continue
        reference = comparison.reference
        victims = set(reference.victims)
        bound = [p for p in bound if p["metadata"]["name"] not in victims]
        if (node := reference.node or reference.final_node) is not None:
            pod = copy.deepcopy(manifest)
            pod["spec"].pop("schedulerName", None)
            pod["spec"].pop("schedulingGates", None)
            pod["spec"]["nodeName"] = node
            bound.append(pod)
    raise ValueError(f"no pod {target} in scenario {scenario.name}")


def shrink(
    runner: ReferenceRunner, run: ScenarioRun, target: str, budget_seconds: float
) -> ScenarioRun:
    """The smallest run found within ``budget_seconds`` in which pod ``target`` still shows the
    same kind of mismatch: earlier pods pinned where the reference put them, then objects and
    fields taken out one at a time while the mismatch stays."""
    kind = run.comparison(target).mismatch  # type: ignore[union-attr]
    deadline = time.monotonic() + budget_seconds

    def still_fails(candidate: Scenario) -> ScenarioRun | None:
        attempt = runner.run(candidate)
        found = attempt.comparison(target)
        if attempt.error or found is None or found.mismatch != kind:
            return None
        return attempt

    best = run
    first = still_fails(pinned(run, target))
    if first is not None:
        best = first
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for candidate in reductions(best.scenario, target):
            if time.monotonic() >= deadline:
                break
            if candidate.size() >= best.scenario.size():
                continue
            smaller = still_fails(candidate)
            if smaller is not None:
                best, progress = smaller, True
                break
    return best


def mismatch_report(run: ScenarioRun, target: str, original: ScenarioRun) -> str:
    """A reproducible report: what differs, then the scenario's manifests as YAML."""
    comparison = run.comparison(target)
    assert comparison is not None
    lines = [
        f"scenario {original.scenario.name}: pod {target}: {comparison.mismatch} differs",
        f"  reference kube-scheduler: {comparison.reference.describe()}",
        f"  kubesched:                {comparison.kubesched.describe()}",
    ]
    if comparison.mismatch == NODE:
        lines.append(f"  kubesched's best nodes:   {', '.join(comparison.kubesched.best)}")
        for node, scores in sorted(comparison.kubesched.scores.items()):
            weighted = ", ".join(f"{plugin} {score}" for plugin, score in scores.items())
            lines.append(f"    {node}: {weighted}")
    shrunk = run is not original

    def counts(scenario: Scenario) -> str:
        nodes, bound = len(scenario.nodes), len(scenario.bound_pods)
        return (
            f"{nodes} node{'s' * (nodes != 1)}, {bound} bound pod{'s' * (bound != 1)}, "
            f"{len(scenario.pods)} to schedule"
        )

    if shrunk:
        lines.append(
            f"minimal scenario: {counts(run.scenario)} (generated: {counts(original.scenario)})"
        )
    else:
        lines.append(f"scenario as generated (not shrunk): {counts(run.scenario)}")
    lines.append(
        "Reproduce: create the objects in order (pods one at a time, each once the previous is "
        "decided) on a cluster with no other node, with kube-scheduler running the profile "
        "below; or `kubesched simulate scenario.yaml --config profile.yaml` for kubesched alone "
        "(with one pod to schedule the two agree on order)."
    )
    lines.append("--- # profile.yaml")
    lines.append(yaml.safe_dump(PROFILE, sort_keys=False).rstrip())
    lines.append("--- # scenario.yaml")
    lines.append(run.scenario.to_yaml().rstrip())
    return "\n".join(lines)
