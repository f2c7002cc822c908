"""The kubesched side: one pod scheduled by ``kubesched.service.simulate`` over the objects the
apiserver stored and the cluster the reference scheduler saw for that pod."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from parity_compare import KubeschedOutcome
from parity_profile import PROFILE
from parity_resources import pod_claims

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Node, Pod
from kubesched.config import SchedulerConfiguration, parse_config
from kubesched.engine.explain_recorder import ExplainRecorder
from kubesched.framework.registry import Registry
from kubesched.service.simulate import SimulationResult, simulate


def kubesched_config(
    registry: Registry, scheduler_name: str | None = None
) -> SchedulerConfiguration:
    """:data:`PROFILE` for kubesched; with ``scheduler_name``, only that profile (a simulation
    builds every profile's plugins, and a pod runs through one)."""
    profile = copy.deepcopy(PROFILE)
    if scheduler_name is not None:
        profile["profiles"] = [
            p for p in profile["profiles"] if p["schedulerName"] == scheduler_name
        ]
    return parse_config(profile, registry, source="parity profile")


def _simulate_recorded(
    cluster: Cluster, config: SchedulerConfiguration, registry: Registry
) -> tuple[SimulationResult, ExplainRecorder, set[str], Any]:
    """``kubesched simulate`` with every scheduling cycle recorded (kubesched explain's way);
    also the uids of the pods still in the cluster at the end (victims of preemption are not),
    and the simulation's backend (its claims as PreBind left them)."""
    recorder = ExplainRecorder()
    schedulers: list[Any] = []

    def attach(scheduler: Any) -> None:
        schedulers.append(scheduler)
        recorder.attach(scheduler)

    result = simulate(cluster, config, registry, seed=0, on_scheduler=attach)
    backend = schedulers[0].backend if schedulers else None
    remaining = set(backend.pods) if backend is not None else set()
    return result, recorder, remaining, backend


def _nominated_by(report: Any) -> str:
    """The node a cycle's PostFilter nominated (``""``: none)."""
    for verdict in report.points.get("PostFilter", ()):
        for reason in verdict.reasons:
            if reason.startswith("nominated node "):
                return str(reason.removeprefix("nominated node "))
    return ""


def kubesched_outcome(
    nodes: list[Mapping[str, Any]],
    bound: list[Mapping[str, Any]],
    pod: Mapping[str, Any],
    config: SchedulerConfiguration,
    registry: Registry,
    logical: Callable[[str], str],
    objects: Mapping[str, list[Mapping[str, Any]]] | None = None,
) -> KubeschedOutcome:
    """kubesched's outcome for ``pod`` on a cluster of ``nodes`` and ``bound`` pods (stored
    objects, with the workload ``objects`` by kind); node names are reported through
    ``logical``. The first attempt decides; when it preempted, the rest of the simulation says
    where the pod went and which pods it evicted."""
    try:
        cluster = Cluster(
            [Node(n) for n in nodes],
            [Pod(p) for p in [*bound, pod]],
            {kind: [dict(o) for o in items] for kind, items in (objects or {}).items()},
        )
    except ValueError as exc:
        return KubeschedOutcome(error=f"kubesched cannot read the objects: {exc}")
    target = cluster.pods[-1]
    result, recorder, remaining, backend = _simulate_recorded(cluster, config, registry)
    outcome = next((o for o in result.pods if o.name == target.name), None)
    if outcome is None:
        return KubeschedOutcome(error="kubesched reported nothing for the pod")
    reports = recorder.for_pod(target.uid)
    if outcome.node is None and not reports:
        return KubeschedOutcome(message=outcome.message, gated=True)
    first = reports[0] if reports else None
    if first is not None and first.result not in ("Scheduled", "Unschedulable"):
        # A plugin failed (reason SchedulerError): not an outcome kube-scheduler can share.
        return KubeschedOutcome(error=f"{first.result or 'unfinished'}: {first.message}")
    if first is not None and first.result == "Unschedulable":
        nominated = _nominated_by(first)
        victims = tuple(sorted(p.name for p in cluster.pods[:-1] if p.uid not in remaining))
        return KubeschedOutcome(
            message=first.message,
            nominated=logical(nominated) if nominated else "",
            final_node=logical(outcome.node) if nominated and outcome.node else None,
            victims=victims if nominated else (),
        )
    volumes: dict[str, str] = {}
    devices: dict[str, tuple[str, ...]] = {}
    if outcome.node and backend is not None:
        volumes, devices = claims_of(
            pod,
            backend.lister("PersistentVolumeClaim")(),
            backend.lister("ResourceClaim")(),
            logical,
        )
    return KubeschedOutcome(
        node=logical(outcome.node) if outcome.node else None,
        message="" if outcome.node else outcome.message,
        volumes=volumes,
        devices=devices,
        feasible=[logical(n) for n in first.feasible()] if first else [],
        totals={logical(n): t for n, t in first.totals().items()} if first else {},
        scores={
            logical(n.name): {p: s.weighted or 0 for p, s in n.scores.items()}
            for n in (first.nodes.values() if first else ())
            if n.scores
        },
    )


def claims_of(
    pod: Mapping[str, Any],
    volume_claims: list[Mapping[str, Any]],
    resource_claims: list[Mapping[str, Any]],
    logical: Callable[[str], str],
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The volumes the pod's claims are bound to and the devices allocated to its
    ResourceClaims (``""`` / ``()``: none), among the claims of the pod's namespace."""
    namespace = pod["metadata"].get("namespace")
    volume_names, device_claims = pod_claims(pod)

    def by_name(items: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        return {
            c["metadata"]["name"]: c
            for c in items
            if c["metadata"].get("namespace") in (namespace, None)
        }

    pvcs, claims = by_name(volume_claims), by_name(resource_claims)
    volumes = {
        name: logical(str((pvcs.get(name) or {}).get("spec", {}).get("volumeName") or ""))
        for name in volume_names
    }
    devices = {}
    for name in device_claims:
        allocation = ((claims.get(name) or {}).get("status") or {}).get("allocation") or {}
        results = (allocation.get("devices") or {}).get("results") or ()
        devices[name] = tuple(
            sorted(
                f"{r['request']}={r['driver']}/{logical(r['pool'])}/{r['device']}" for r in results
            )
        )
    return volumes, devices


# -- the reference side ---------------------------------------------------------------------------
