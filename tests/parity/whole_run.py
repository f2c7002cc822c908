"""A whole scenario file through both schedulers at once, compared on invariants.

The reference side creates the scenario's namespaces, ReplicaSets, nodes and bound pods, then
every pod to schedule at once, and lets kube-scheduler take them in its own order until it is
done: every pod bound or ``PodScheduled=False``, and no binding for :data:`QUIET_SECONDS`.
kubesched simulates the same objects as the apiserver stored them (``kubesched simulate`` of the
file, with :data:`parity_profile.PROFILE` as it is: sampling included). Neither placement has to
match the other node by node; both must satisfy :mod:`invariants`, and both must bind as many
pods of each workload.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from invariants import Placement, anti_affinity_violations, over_capacity, spread_violations
from parity_kubesched import kubesched_config
from parity_reference import RUN_LABEL, ReferenceRunner, RunError, in_namespaces
from parity_scenarios import (
    NAMESPACE_TEAMS,
    OTHER_NAMESPACE,
    OWN_NAMESPACE,
    TEAM_LABEL,
    Scenario,
    renamed,
)

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Node, Pod
from kubesched.backends.kube.transport import ApiError
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate

__all__ = ["QUIET_SECONDS", "WholeRun", "run_whole"]

#: How long kube-scheduler must have bound nothing (every pod decided) for the run to be over.
QUIET_SECONDS = 3.0
_POLL_SECONDS = 0.25
_runs = itertools.count(1)


@dataclass
class WholeRun:
    """Both placements of one scenario (logical names), and how long each side took."""

    scenario: Scenario
    reference: dict[str, str | None] = field(default_factory=dict)
    kubesched: dict[str, str | None] = field(default_factory=dict)
    reference_seconds: float = 0.0
    kubesched_seconds: float = 0.0

    def per_workload(self, placement: Placement) -> Counter[str]:
        """Pods bound, by their ``app`` label."""
        bound: Counter[str] = Counter()
        for pod in self.scenario.pods:
            app = (pod["metadata"].get("labels") or {}).get("app", "")
            bound[app] += placement.get(pod["metadata"]["name"]) is not None
        return bound

    def problems(self) -> list[str]:
        """Every invariant either placement breaks, and any difference in the counts."""
        found = []
        for side, placement in (("kube-scheduler", self.reference), ("kubesched", self.kubesched)):
            for check in (spread_violations, anti_affinity_violations, over_capacity):
                found.extend(f"{side}: {p}" for p in check(self.scenario, placement))
        ours, theirs = self.per_workload(self.kubesched), self.per_workload(self.reference)
        if ours != theirs:
            found.append(
                f"bound per workload: kube-scheduler {dict(theirs)}, kubesched {dict(ours)}"
            )
        return found

    def summary(self) -> str:
        names = self.scenario.pod_names()
        theirs = sum(self.reference.get(name) is not None for name in names)
        ours = sum(self.kubesched.get(name) is not None for name in names)
        return (
            f"{self.scenario.name}: {len(self.scenario.nodes)} nodes, {len(names)} pods, "
            f"{theirs} bound by kube-scheduler, {ours} by kubesched; "
            f"invariants broken: {len(self.problems())}; kube-scheduler "
            f"{self.reference_seconds:.1f}s, kubesched {self.kubesched_seconds:.1f}s"
        )


def run_whole(
    runner: ReferenceRunner, registry: Registry, scenario: Scenario, timeout: float = 180.0
) -> WholeRun:
    """Run ``scenario`` whole through the reference scheduler (on ``runner``'s cluster) and
    through kubesched; :class:`RunError` when the reference side cannot finish."""
    number = next(_runs)
    prefix = f"w{number}-"
    namespaces = {OWN_NAMESPACE: f"parity-w{number}", OTHER_NAMESPACE: f"parity-w{number}-b"}
    real = renamed(scenario, prefix)
    run = WholeRun(scenario)
    began = time.monotonic()
    try:
        stored = _create_all(runner, real, prefix, namespaces)
        expected = len(real.pods) + len(real.bound_pods)
        pods = _settle(runner, namespaces[OWN_NAMESPACE], expected, timeout)
    finally:
        run.reference_seconds = time.monotonic() - began
        _clean_up(runner, list(namespaces.values()))
    run.reference = {
        name.removeprefix(prefix): (node.removeprefix(prefix) if node else None)
        for name, node in pods.items()
    }
    began = time.monotonic()
    nodes, bound, pending, objects = stored
    cluster = Cluster([Node(n) for n in nodes], [Pod(p) for p in [*bound, *pending]], objects)
    result = simulate(cluster, kubesched_config(registry), registry, seed=0)
    run.kubesched = {
        o.name.removeprefix(prefix): (o.node.removeprefix(prefix) if o.node else None)
        for o in result.pods
    }
    run.kubesched_seconds = time.monotonic() - began
    return run


def _create_all(
    runner: ReferenceRunner, real: Scenario, prefix: str, namespaces: Mapping[str, str]
) -> tuple[list[Any], list[Any], list[Any], dict[str, list[Any]]]:
    """Create everything (the pods to schedule last, at once); the objects as stored."""
    api = runner.api
    objects: dict[str, list[Any]] = {"Namespace": [], "ReplicaSet": []}
    for name, team in NAMESPACE_TEAMS.items():
        body = {"metadata": {"name": namespaces[name], "labels": {TEAM_LABEL: team}}}
        objects["Namespace"].append(api.request("POST", "/api/v1/namespaces", body=body))
    own = namespaces[OWN_NAMESPACE]
    for manifest in real.objects:
        if manifest["kind"] != "ReplicaSet":
            raise RunError(f"a whole run creates ReplicaSets only, not {manifest['kind']}")
        path = f"/apis/apps/v1/namespaces/{own}/replicasets"
        objects["ReplicaSet"].append(api.request("POST", path, body=manifest))
    nodes = []
    for manifest in real.nodes:
        labelled = {**manifest, "metadata": {**manifest["metadata"]}}
        labelled["metadata"]["labels"] = {
            **manifest["metadata"].get("labels", {}),
            RUN_LABEL: prefix.rstrip("-"),
        }
        nodes.append(runner._create_node(labelled, manifest["metadata"]["name"]))
    bound = [_create_pod(runner, in_namespaces(p, namespaces)) for p in real.bound_pods]
    pending = [_create_pod(runner, in_namespaces(p, namespaces)) for p in real.pods]
    return nodes, bound, pending, objects


def _create_pod(runner: ReferenceRunner, pod: Mapping[str, Any]) -> Any:
    path = f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods"
    try:
        return runner.api.request("POST", path, body=pod)
    except ApiError as exc:
        raise RunError(
            f"the apiserver refused pod {pod['metadata']['name']}: {exc.message}"
        ) from None


def _settle(
    runner: ReferenceRunner, namespace: str, expected: int, timeout: float
) -> dict[str, str | None]:
    """Pod name -> node (or ``None``) once the ``expected`` pods of ``namespace`` are each bound
    or unschedulable and nothing changed for :data:`QUIET_SECONDS`."""
    deadline = time.monotonic() + timeout
    last_change, last = time.monotonic(), dict[str, str | None]()
    while time.monotonic() < deadline:
        items = runner.api.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
        pods = {p["metadata"]["name"]: p for p in items}
        placement = {name: p["spec"].get("nodeName") for name, p in pods.items()}
        if placement != last:
            last, last_change = placement, time.monotonic()
        decided = sum(1 for p in pods.values() if p["spec"].get("nodeName") or _unschedulable(p))
        if (
            decided >= len(pods)
            and len(pods) >= expected
            and (time.monotonic() - last_change >= QUIET_SECONDS)
        ):
            return placement
        time.sleep(_POLL_SECONDS)
    raise RunError(f"kube-scheduler did not settle the whole run within {timeout:.0f}s")


def _unschedulable(pod: Mapping[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            return condition.get("status") == "False"
    return False


def _clean_up(runner: ReferenceRunner, namespaces: list[str]) -> None:
    for namespace in namespaces:
        try:
            runner.api.request(
                "DELETE", f"/api/v1/namespaces/{namespace}/pods", [("gracePeriodSeconds", 0)]
            )
            runner.api.request("DELETE", f"/api/v1/namespaces/{namespace}")
        except ApiError as exc:
            if exc.status != 404:
                raise
    runner.delete_run_nodes()
