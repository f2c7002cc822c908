"""Running a scenario through the reference kube-scheduler and through kubesched, and comparing.

The reference side (:class:`ReferenceRunner`) applies a scenario to a real control plane on which
one upstream kube-scheduler runs for the whole session: it creates the scenario's nodes (named
afresh for every run) and bound pods, waits until the scheduler's cache holds exactly those
nodes, then creates the pods to schedule one at a time, each after the previous one was bound or
marked unschedulable, and reads each pod's outcome: its node, or the message of its
``PodScheduled=False`` condition. Then it deletes what it created, so that the next scenario runs
on a cluster with only its own nodes.

The kubesched side (:func:`kubesched_outcome`) schedules each pod with ``kubesched.simulate`` over
the same objects as the apiserver stored them (defaults applied) and the same cluster the
reference scheduler saw for that pod: the nodes, the bound pods, and the earlier pods where the
reference scheduler put them. So a difference in one pod never cascades into the next.
"""

from __future__ import annotations

import copy
import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from parity_scenarios import (
    BINPACK_SCHEDULER_NAME,
    GPU,
    PRIORITY_CLASSES,
    RATIO_SCHEDULER_NAME,
    RUNTIME_CLASS,
    SCHEDULER_NAME,
    ZONE,
    Scenario,
    reductions,
    renamed,
)

from kubesched.config import SchedulerConfiguration, parse_config
from kubesched.kube.transport import ApiError, Transport
from kubesched.manifests import Cluster
from kubesched.objects import Node, Pod
from kubesched.registry import Registry
from kubesched.simulate import SimulationResult, simulate
from kubesched.testing.explain import ExplainRecorder

__all__ = [
    "PROFILE",
    "Comparison",
    "KubeschedOutcome",
    "Outcome",
    "ParitySettings",
    "ParityStats",
    "ReferenceRunner",
    "RunError",
    "ScenarioRun",
    "compare",
    "kubesched_config",
    "kubesched_outcome",
    "mismatch_report",
    "shrink",
]

#: kube-scheduler v1.37's default plugins that kubesched does not bundle (yet): both schedulers
#: run the profile without them, so both run exactly the same plugins, in their default order.
DISABLED_PLUGINS = (
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DefaultPreemption",
    "DynamicResources",
    "NodeDeclaredFeatures",
)
_DISABLED = {"disabled": [{"name": name} for name in DISABLED_PLUGINS]}
_NOT_GREEN = {"key": "pool", "operator": "NotIn", "values": ["green"]}
#: The KubeSchedulerConfiguration both schedulers run, word for word: kube-scheduler's default
#: plugins less the disabled ones, with their default args; then the same plugins bin-packing
#: (other weights, MostAllocated over cpu, memory and GPUs); then with a RequestedToCapacityRatio
#: shape, GPUs left to the node, and a node affinity the scheduler enforces.
PROFILE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": SCHEDULER_NAME, "plugins": {"multiPoint": _DISABLED}},
        {
            "schedulerName": BINPACK_SCHEDULER_NAME,
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "NodeAffinity", "weight": 5},
                        {"name": "ImageLocality", "weight": 3},
                    ],
                    **_DISABLED,
                }
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [
                                {"name": "cpu", "weight": 2},
                                {"name": "memory", "weight": 1},
                                {"name": GPU, "weight": 3},
                            ],
                        }
                    },
                },
                {
                    "name": "NodeResourcesBalancedAllocation",
                    "args": {
                        "resources": [
                            {"name": "cpu", "weight": 1},
                            {"name": "memory", "weight": 1},
                            {"name": GPU, "weight": 1},
                        ]
                    },
                },
            ],
        },
        {
            "schedulerName": RATIO_SCHEDULER_NAME,
            "plugins": {"multiPoint": _DISABLED},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResources": [GPU],
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 2},
                            ],
                            "requestedToCapacityRatio": {
                                "shape": [
                                    {"utilization": 0, "score": 10},
                                    {"utilization": 60, "score": 3},
                                    {"utilization": 100, "score": 0},
                                ]
                            },
                        },
                    },
                },
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchExpressions": [_NOT_GREEN]}]
                            },
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 40,
                                    "preference": {
                                        "matchExpressions": [
                                            {"key": ZONE, "operator": "In", "values": ["zone-a"]}
                                        ]
                                    },
                                }
                            ],
                        }
                    },
                },
            ],
        },
    ],
}
#: The label that marks every node a run creates (to clean up after an interrupted run too).
RUN_LABEL = "parity.kubesched.io/run"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"

SCHEDULED = "scheduled"
MESSAGE = "message"
NODE = "node"
GATED = "gated"
ERROR = "error"


# -- outcomes -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What happened to one pod: its node (logical name) or why it is not bound."""

    node: str | None = None
    message: str = ""
    gated: bool = False
    #: Not an outcome at all: the pod was refused or never decided (the reason).
    error: str = ""

    def describe(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if self.gated:
            return "gated (not attempted)"
        if self.node is not None:
            return f"bound to {self.node}"
        return f"unschedulable: {self.message}"


@dataclass
class KubeschedOutcome(Outcome):
    #: Nodes that passed every Filter, and each scored node's weighted total.
    feasible: list[str] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    #: Node -> Score plugin -> weighted score, for the scored nodes.
    scores: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def best(self) -> list[str]:
        """The nodes the pod may go to: the only feasible one, or those with the top total."""
        if len(self.feasible) <= 1 or not self.totals:
            return list(self.feasible)
        top = max(self.totals.values())
        return [n for n in self.feasible if self.totals.get(n) == top]

    def describe(self) -> str:
        text = super().describe()
        if self.totals:
            scores = ", ".join(f"{n}={t}" for n, t in sorted(self.totals.items()))
            text += f" (totals: {scores})"
        return text


@dataclass
class Comparison:
    """One pod's outcome under both schedulers, and what differs."""

    pod: str
    reference: Outcome
    kubesched: KubeschedOutcome
    #: ``scheduled``, ``message``, ``node``, ``gated`` or ``error``; empty when they agree.
    mismatch: str = ""
    #: How the node was compared when both bound it: ``unique`` (one best node) or ``tie``.
    node_check: str = ""

    @property
    def ok(self) -> bool:
        return not self.mismatch


def compare(pod: str, reference: Outcome, kubesched: KubeschedOutcome) -> Comparison:
    """Compare one pod: scheduled or not; the message; the node when kubesched's choice is
    forced (one feasible node or a unique top total), or membership among its tied best."""
    result = Comparison(pod, reference, kubesched)
    if reference.error or kubesched.error:
        result.mismatch = ERROR
    elif reference.gated or kubesched.gated:
        result.mismatch = "" if reference.gated == kubesched.gated else GATED
    elif (reference.node is None) != (kubesched.node is None):
        result.mismatch = SCHEDULED
    elif reference.node is None:
        result.mismatch = "" if reference.message == kubesched.message else MESSAGE
    else:
        best = kubesched.best
        result.node_check = "unique" if len(best) == 1 else "tie"
        result.mismatch = "" if reference.node in best else NODE
    return result


# -- the kubesched side ---------------------------------------------------------------------------


def kubesched_config(registry: Registry) -> SchedulerConfiguration:
    return parse_config(copy.deepcopy(PROFILE), registry, source="parity profile")


def _simulate_recorded(
    cluster: Cluster, config: SchedulerConfiguration, registry: Registry
) -> tuple[SimulationResult, ExplainRecorder]:
    """``kubesched simulate`` with every scheduling cycle recorded (kubesched explain's way)."""
    recorder = ExplainRecorder()
    result = simulate(cluster, config, registry, seed=0, on_scheduler=recorder.attach)
    return result, recorder


def kubesched_outcome(
    nodes: list[Mapping[str, Any]],
    bound: list[Mapping[str, Any]],
    pod: Mapping[str, Any],
    config: SchedulerConfiguration,
    registry: Registry,
    logical: Callable[[str], str],
) -> KubeschedOutcome:
    """kubesched's outcome for ``pod`` on a cluster of ``nodes`` and ``bound`` pods (stored
    objects); node names are reported through ``logical``."""
    try:
        cluster = Cluster([Node(n) for n in nodes], [Pod(p) for p in [*bound, pod]])
    except ValueError as exc:
        return KubeschedOutcome(error=f"kubesched cannot read the objects: {exc}")
    target = cluster.pods[-1]
    result, recorder = _simulate_recorded(cluster, config, registry)
    outcome = next((o for o in result.pods if o.name == target.name), None)
    if outcome is None:
        return KubeschedOutcome(error="kubesched reported nothing for the pod")
    reports = recorder.for_pod(target.uid)
    if outcome.node is None and not reports:
        return KubeschedOutcome(message=outcome.message, gated=True)
    last = reports[-1] if reports else None
    if last is not None and last.result not in ("Scheduled", "Unschedulable"):
        # A plugin failed (reason SchedulerError): not an outcome kube-scheduler can share.
        return KubeschedOutcome(error=f"{last.result or 'unfinished'}: {last.message}")
    return KubeschedOutcome(
        node=logical(outcome.node) if outcome.node else None,
        message="" if outcome.node else outcome.message,
        feasible=[logical(n) for n in last.feasible()] if last else [],
        totals={logical(n): t for n, t in last.totals().items()} if last else {},
        scores={
            logical(n.name): {p: s.weighted or 0 for p, s in n.scores.items()}
            for n in (last.nodes.values() if last else ())
            if n.scores
        },
    )


# -- the reference side ---------------------------------------------------------------------------


@dataclass
class ScenarioRun:
    """A scenario run through both schedulers: one comparison per pod, in creation order."""

    scenario: Scenario
    comparisons: list[Comparison] = field(default_factory=list)
    #: Why the run could not complete (a manifest the apiserver refused, a timeout).
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and all(c.ok for c in self.comparisons)

    def mismatches(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.ok]

    def comparison(self, pod: str) -> Comparison | None:
        return next((c for c in self.comparisons if c.pod == pod), None)


class RunError(Exception):
    """The run could not go on (the apiserver refused an object, or nothing was decided)."""


class ReferenceRunner:
    """Applies scenarios one after another to a cluster where one reference scheduler runs.

    The cluster must have no nodes but the ones the runner creates: every scheduler sees every
    node. ``decision_timeout`` bounds the wait for each pod; ``sync_timeout`` the wait for the
    scheduler's cache to hold exactly a scenario's nodes.
    """

    def __init__(
        self,
        api_client: Any,
        registry: Registry,
        *,
        decision_timeout: float = 30.0,
        sync_timeout: float = 15.0,
        poll_seconds: float = 0.003,
    ) -> None:
        # Raw JSON both ways: the objects exactly as the apiserver stores them, and no models.
        self.api = Transport(api_client, qps=0)
        self.registry = registry
        self.config = kubesched_config(registry)
        self.decision_timeout = decision_timeout
        self.sync_timeout = sync_timeout
        self.poll_seconds = poll_seconds
        self._runs = itertools.count(1)
        self._probes = itertools.count(1)

    # -- cluster-wide set-up ----------------------------------------------------------------------
    def prepare_cluster(self) -> None:
        """The PriorityClasses and RuntimeClass the scenarios name; no nodes but ours."""
        for name, value in PRIORITY_CLASSES.items():
            self._create_if_absent(
                "/apis/scheduling.k8s.io/v1/priorityclasses",
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": name},
                    "value": value,
                },
            )
        self._create_if_absent("/apis/node.k8s.io/v1/runtimeclasses", RUNTIME_CLASS)
        self.delete_run_nodes()
        nodes = self.api.request("GET", "/api/v1/nodes")["items"]
        if others := [n["metadata"]["name"] for n in nodes]:
            raise RunError(
                f"the cluster has nodes of its own ({', '.join(others[:5])}); the parity suite "
                "needs a cluster whose only nodes are its own (every scheduler sees every node)"
            )

    def delete_run_nodes(self) -> None:
        """Delete every node a run created (also those of an interrupted session)."""
        self.api.request("DELETE", "/api/v1/nodes", [("labelSelector", RUN_LABEL)])

    # -- one scenario -----------------------------------------------------------------------------
    def run(self, scenario: Scenario) -> ScenarioRun:
        """Run ``scenario`` through the reference scheduler and kubesched, pod by pod."""
        began = time.monotonic()
        number = next(self._runs)
        prefix = f"r{number}-"
        namespace = f"parity-r{number}"
        run = ScenarioRun(scenario)
        try:
            self._run(renamed(scenario, prefix), prefix, namespace, run)
        except RunError as exc:
            run.error = str(exc)
        finally:
            self._clean_up(namespace)
            run.seconds = time.monotonic() - began
        return run

    def _run(self, real: Scenario, prefix: str, namespace: str, run: ScenarioRun) -> None:
        def logical(name: str) -> str:
            return name.removeprefix(prefix)

        self._create("/api/v1/namespaces", {"metadata": {"name": namespace}}, "the namespace")
        pods_path = f"/api/v1/namespaces/{namespace}/pods"
        nodes = []
        for manifest in real.nodes:
            node = copy.deepcopy(manifest)
            node["metadata"].setdefault("labels", {})[RUN_LABEL] = prefix.rstrip("-")
            nodes.append(self._create_node(node, logical(node["metadata"]["name"])))
        bound = [
            self._create(pods_path, p, f"pod {p['metadata']['name']}") for p in real.bound_pods
        ]
        self._wait_for_nodes(namespace, [n["metadata"]["name"] for n in nodes])
        placed: list[Mapping[str, Any]] = []
        for manifest in real.pods:
            name = manifest["metadata"]["name"]
            created = self._create(pods_path, manifest, f"pod {name}")
            reference = self._decision(namespace, created, logical)
            kubesched = kubesched_outcome(
                nodes, [*bound, *placed], created, self.config, self.registry, logical
            )
            run.comparisons.append(compare(name, reference, kubesched))
            if reference.node is not None:
                # Later pods see this one where the reference scheduler put it.
                pinned = copy.deepcopy(created)
                pinned["spec"]["nodeName"] = prefix + reference.node
                placed.append(pinned)

    def _decision(
        self, namespace: str, created: Mapping[str, Any], logical: Callable[[str], str]
    ) -> Outcome:
        """Wait until the pod is bound or its PodScheduled condition says why not."""
        path = f"/api/v1/namespaces/{namespace}/pods/{created['metadata']['name']}"
        deadline = time.monotonic() + self.decision_timeout
        pod: Mapping[str, Any] = created
        while True:
            if node := pod["spec"].get("nodeName"):
                return Outcome(node=logical(node))
            condition = _pod_scheduled(pod)
            if condition is not None and condition.get("status") == "False":
                reason = condition.get("reason", "")
                if reason == "SchedulingGated":  # set by the apiserver on create
                    return Outcome(gated=True, message=condition.get("message", ""))
                if reason == "Unschedulable":
                    return Outcome(message=condition.get("message", ""))
                return Outcome(error=f"condition {reason}: {condition.get('message', '')}")
            if time.monotonic() > deadline:
                return Outcome(error=f"no decision within {self.decision_timeout:.0f}s")
            time.sleep(self.poll_seconds)
            pod = self.api.request("GET", path)

    def _wait_for_nodes(self, namespace: str, names: list[str]) -> None:
        """Block until the scheduler's cache holds exactly ``names`` and the pods created so far.

        A probe pod that every node rejects, and that only these nodes may take (one
        ``matchFields`` term per name), reports ``0/N nodes are available: N node(s) didn't
        match ...`` only when the cache has these N nodes and no other: a stale node would be
        counted apart, a missing one would lower N. The scheduler learns of pods in the order
        they were created, so by the time it tries the probe it knows the pods created before.
        """
        expected = f"0/{len(names)} nodes are available: {len(names)} {REASON_AFFINITY}."
        deadline = time.monotonic() + self.sync_timeout
        last = ""
        pods_path = f"/api/v1/namespaces/{namespace}/pods"
        while time.monotonic() < deadline:
            probe = _probe_pod(f"probe-{next(self._probes)}", names)
            created = self._create(pods_path, probe, "the probe pod")
            outcome = self._decision(namespace, created, str)
            self.api.request(
                "DELETE", f"{pods_path}/{probe['metadata']['name']}", [("gracePeriodSeconds", 0)]
            )
            if outcome.message == expected:
                return
            last = outcome.describe()
            time.sleep(0.02)
        raise RunError(
            f"the reference scheduler's cache did not settle on the scenario's {len(names)} "
            f"nodes within {self.sync_timeout:.0f}s (last probe: {last})"
        )

    def _clean_up(self, namespace: str) -> None:
        """Delete the run's pods (at once: no kubelet waits for them), nodes and namespace."""
        try:
            self.api.request(
                "DELETE", f"/api/v1/namespaces/{namespace}/pods", [("gracePeriodSeconds", 0)]
            )
            self.delete_run_nodes()
            self.api.request("DELETE", f"/api/v1/namespaces/{namespace}")
        except ApiError as exc:
            if exc.status != 404:
                raise

    # -- API helpers ------------------------------------------------------------------------------
    def _create_node(self, manifest: Mapping[str, Any], what: str) -> dict[str, Any]:
        node = self._create("/api/v1/nodes", manifest, f"node {what}")
        path = f"/api/v1/nodes/{node['metadata']['name']}"
        merge = "application/merge-patch+json"
        if not (node.get("status") or {}).get("allocatable"):  # an apiserver that drops it
            node = self.api.request(
                "PATCH", f"{path}/status", body={"status": manifest["status"]}, content_type=merge
            )
        taints = (node.get("spec") or {}).get("taints") or []
        # An apiserver with TaintNodesByCondition taints new nodes not-ready; lift that.
        kept = [t for t in taints if t["key"] != "node.kubernetes.io/not-ready"]
        if len(kept) != len(taints):
            node = self.api.request(
                "PATCH", path, body={"spec": {"taints": kept or None}}, content_type=merge
            )
        return node

    def _create(self, path: str, body: Mapping[str, Any], what: str) -> dict[str, Any]:
        try:
            created: dict[str, Any] = self.api.request("POST", path, body=body)
        except ApiError as exc:
            raise RunError(f"the apiserver refused {what}: {exc.message}") from None
        return created

    def _create_if_absent(self, path: str, body: Mapping[str, Any]) -> None:
        try:
            self.api.request("POST", path, body=body)
        except ApiError as exc:
            if exc.status != 409:
                raise


def _pod_scheduled(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            return condition
    return None


def _probe_pod(name: str, nodes: list[str]) -> dict[str, Any]:
    terms = [
        {
            "matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}],
            "matchExpressions": [{"key": "parity.kubesched.io/probe", "operator": "Exists"}],
        }
        for node in nodes
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": SCHEDULER_NAME,
            # Tolerate every taint and cordon, so that NodeAffinity gives every node's reason.
            "tolerations": [{"operator": "Exists"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            },
            "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}],
        },
    }


# -- the session's settings and tally -------------------------------------------------------------


@dataclass(frozen=True)
class ParitySettings:
    """The session's settings, from ``KUBESCHED_PARITY_*`` (see README.md)."""

    scenarios: int
    seed: int
    shrink_seconds: float
    shrink_max: int
    report_dir: Path | None

    @classmethod
    def from_environment(cls) -> ParitySettings:
        report_dir = os.environ.get("KUBESCHED_PARITY_REPORT_DIR")
        return cls(
            scenarios=_env_int("KUBESCHED_PARITY_SCENARIOS", 200),
            seed=_env_int("KUBESCHED_PARITY_SEED", 0),
            shrink_seconds=float(_env_int("KUBESCHED_PARITY_SHRINK_SECONDS", 60)),
            shrink_max=_env_int("KUBESCHED_PARITY_SHRINK_MAX", 5),
            report_dir=Path(report_dir) if report_dir else None,
        )


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a whole number") from None


@dataclass
class ParityStats:
    """What the session compared, for the summary line and the report file."""

    settings: ParitySettings
    scenarios: int = 0
    scenarios_agreeing: int = 0
    runs_failed: int = 0
    pods: int = 0
    pods_agreeing: int = 0
    #: What was compared: ``bound (unique)``, ``bound (tie)``, ``unschedulable``, ``gated``.
    compared: Counter[str] = field(default_factory=Counter)
    mismatches: Counter[str] = field(default_factory=Counter)
    shrunk: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def add(self, run: ScenarioRun) -> None:
        self.scenarios += 1
        self.seconds += run.seconds
        if run.error:
            self.runs_failed += 1
            self.failures.append(f"{run.scenario.name}: {run.error}")
            return
        self.scenarios_agreeing += run.ok
        for comparison in run.comparisons:
            self.pods += 1
            self.pods_agreeing += comparison.ok
            reference = comparison.reference
            if reference.gated:
                self.compared["gated"] += 1
            elif reference.node is None:
                self.compared["unschedulable"] += 1
            else:
                self.compared[f"bound ({comparison.node_check or 'not compared'})"] += 1
            if not comparison.ok:
                self.mismatches[comparison.mismatch] += 1
                self.failures.append(
                    f"{run.scenario.name} {comparison.pod}: {comparison.mismatch} differs"
                )

    def rate(self) -> float:
        return 100.0 * self.pods_agreeing / self.pods if self.pods else 100.0

    def summary(self) -> str:
        settings = self.settings
        compared = ", ".join(f"{n} {kind}" for kind, n in sorted(self.compared.items()))
        differing = ", ".join(f"{n} {kind}" for kind, n in sorted(self.mismatches.items()))
        return (
            f"parity with kube-scheduler: {self.pods_agreeing}/{self.pods} pods agree "
            f"({self.rate():.2f}%), {self.scenarios_agreeing}/{self.scenarios} scenarios "
            f"(seed {settings.seed}); compared: {compared or 'nothing'}; "
            f"differing: {differing or 'none'}; runs that could not complete: "
            f"{self.runs_failed}; {self.seconds:.0f}s in scenarios"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.settings.seed,
            "scenarios": self.scenarios,
            "scenariosAgreeing": self.scenarios_agreeing,
            "runsFailed": self.runs_failed,
            "pods": self.pods,
            "podsAgreeing": self.pods_agreeing,
            "ratePercent": round(self.rate(), 3),
            "compared": dict(self.compared),
            "mismatches": dict(self.mismatches),
            "failures": self.failures,
            "seconds": round(self.seconds, 1),
        }


# -- shrinking and reporting ----------------------------------------------------------------------


def pinned(run: ScenarioRun, target: str) -> Scenario:
    """``run``'s scenario with the pods created before ``target`` turned into pods bound where
    the reference scheduler put them (or dropped when it did not bind them), and no pod after:
    the cluster ``target`` was scheduled on, with ``target`` the only pod to schedule."""
    scenario = run.scenario
    bound = list(scenario.bound_pods)
    for manifest in scenario.pods:
        name = manifest["metadata"]["name"]
        if name == target:
            return replace(scenario, bound_pods=bound, pods=[manifest])
        comparison = run.comparison(name)
        if comparison is not None and comparison.reference.node is not None:
            pod = copy.deepcopy(manifest)
            pod["spec"].pop("schedulerName", None)
            pod["spec"].pop("schedulingGates", None)
            pod["spec"]["nodeName"] = comparison.reference.node
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
