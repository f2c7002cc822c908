"""The reference side: a scenario applied to a real control plane, one pod at a time, each pod's
outcome watched as the upstream kube-scheduler decided it."""

from __future__ import annotations

import copy
import itertools
import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity_compare import Comparison, Outcome, compare
from parity_kubesched import claims_of, kubesched_config, kubesched_outcome
from parity_resources import CLUSTER_OBJECTS, CLUSTER_SCOPED_KINDS, pod_claims
from parity_scenarios import (
    NAMESPACE_TEAMS,
    NON_PREEMPTING_CLASSES,
    OTHER_NAMESPACE,
    OWN_NAMESPACE,
    PRIORITY_CLASSES,
    RUNTIME_CLASS,
    SCHEDULER_NAME,
    SCHEDULER_NAMES,
    TEAM_LABEL,
    Scenario,
    renamed,
)

from kubesched.backends.kube.transport import ApiError, Transport
from kubesched.framework.registry import Registry

#: The label that marks every node a run creates (to clean up after an interrupted run too).
RUN_LABEL = "parity.kubesched.io/run"
REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
#: How long a nominated pod (preemption) may take to be bound once its victims are gone
#: (kube-scheduler usually takes well under a second; see README.md for when it does not).
SETTLE_SECONDS = 5.0
#: ``status.startTime`` of the pods bound in a run, one minute apart in the order they were
#: bound (as a kubelet would write it): preemption prefers the node whose most important
#: victims started last, and without a start time kube-scheduler reads the clock instead.
_START = "2025-01-01T{:02d}:{:02d}:00Z"
#: Where the workload objects are created, by kind.
_OBJECT_PATHS = {
    "Service": "/api/v1/namespaces/{ns}/services",
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "PersistentVolumeClaim": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    "CSIStorageCapacity": "/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities",
    "ResourceClaim": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
    "ResourceClaimTemplate": "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates",
    "StorageClass": "/apis/storage.k8s.io/v1/storageclasses",
    "PersistentVolume": "/api/v1/persistentvolumes",
    "CSINode": "/apis/storage.k8s.io/v1/csinodes",
    "ResourceSlice": "/apis/resource.k8s.io/v1/resourceslices",
    "CSIDriver": "/apis/storage.k8s.io/v1/csidrivers",
    "DeviceClass": "/apis/resource.k8s.io/v1/deviceclasses",
}
#: The kinds whose objects the schedulers' and the PV controller's writes change during a
#: run: listed again before each pod, for kubesched to see them as the reference did.
_CHANGING_KINDS = ("PersistentVolumeClaim", "PersistentVolume", "ResourceClaim")


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


class PodWatch:
    """The pods of one namespace as they change, in order, over one watch stream that lasts
    from one pod to the next (a stream per pod would cost a connection per pod).

    :meth:`next` waits at most ``timeout`` seconds for the next change; a different timeout
    than the open stream's reopens it from the last change seen, as does the server's end of
    the stream.
    """

    def __init__(self, api: Transport, namespace: str, version: str) -> None:
        self.api = api
        self.path = _pods_path(namespace)
        self.version = version
        self._lines: Iterator[bytes] | None = None
        self._timeout = 0.0

    def next(self, timeout: float) -> tuple[str, Mapping[str, Any]] | None:
        """The next change (``ADDED``, ``MODIFIED`` or ``DELETED``, and the pod), or ``None``
        when nothing changed within ``timeout`` seconds."""
        while True:
            if self._lines is not None and self._timeout != timeout:
                self.close()
            if self._lines is None:
                query = [
                    ("watch", "1"),
                    ("resourceVersion", self.version),
                    ("timeoutSeconds", 3600),
                ]
                self._lines = self.api.stream_lines(self.path, query, (5.0, timeout))
                self._timeout = timeout
            try:
                line = next(self._lines)
            except StopIteration:  # the server ended the stream: again from where it stopped
                self._lines = None
                continue
            except ApiError:  # nothing within the timeout (the stream is closed)
                self._lines = None
                return None
            event = json.loads(line)
            pod = event.get("object") or {}
            if event.get("type") == "ERROR":
                raise RunError(f"watching the pods of {self.path}: {pod.get('message', pod)}")
            self.version = pod["metadata"]["resourceVersion"]
            return str(event["type"]), pod

    def close(self) -> None:
        if self._lines is not None:
            self._lines.close()  # type: ignore[attr-defined]
            self._lines = None


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
        self.configs = {name: kubesched_config(registry, name) for name in SCHEDULER_NAMES}
        self.decision_timeout = decision_timeout
        self.sync_timeout = sync_timeout
        self.poll_seconds = poll_seconds
        self._runs = itertools.count(1)
        self._probes = itertools.count(1)
        #: The watch on the current scenario's pods.
        self._pods: PodWatch | None = None
        #: The objects of :data:`CLUSTER_OBJECTS` as stored, by kind (every run sees them).
        self._cluster_objects: dict[str, list[Mapping[str, Any]]] = {}

    # -- cluster-wide set-up ----------------------------------------------------------------------
    def prepare_cluster(self) -> None:
        """The PriorityClasses and RuntimeClass the scenarios name; no nodes but ours."""
        for name, value in PRIORITY_CLASSES.items():
            priority_class: dict[str, Any] = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
            if name in NON_PREEMPTING_CLASSES:
                priority_class["preemptionPolicy"] = "Never"
            self._create_if_absent("/apis/scheduling.k8s.io/v1/priorityclasses", priority_class)
        self._create_if_absent("/apis/node.k8s.io/v1/runtimeclasses", RUNTIME_CLASS)
        for manifest in CLUSTER_OBJECTS:
            path = _OBJECT_PATHS[manifest["kind"]]
            self._create_if_absent(path, manifest)
            stored = self.api.request("GET", f"{path}/{_name(manifest)}")
            self._cluster_objects.setdefault(manifest["kind"], []).append(stored)
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
        namespaces = {OWN_NAMESPACE: f"parity-r{number}", OTHER_NAMESPACE: f"parity-r{number}-b"}
        run = ScenarioRun(scenario)
        try:
            self._run(renamed(scenario, prefix), prefix, namespaces, run)
        except RunError as exc:
            run.error = str(exc)
        finally:
            self._clean_up(list(namespaces.values()), scenario, prefix)
            run.seconds = time.monotonic() - began
        return run

    def _run(
        self, real: Scenario, prefix: str, namespaces: dict[str, str], run: ScenarioRun
    ) -> None:
        def logical(name: str) -> str:
            return name.removeprefix(prefix)

        namespace = namespaces[OWN_NAMESPACE]
        objects: dict[str, list[Mapping[str, Any]]] = {
            "Namespace": [],
            **{kind: list(items) for kind, items in self._cluster_objects.items()},
        }
        for name, team in NAMESPACE_TEAMS.items():
            body = {"metadata": {"name": namespaces[name], "labels": {TEAM_LABEL: team}}}
            created_namespace = self._create("/api/v1/namespaces", body, "a namespace")
            objects["Namespace"].append(created_namespace)
            if name == OWN_NAMESPACE:
                version = created_namespace["metadata"]["resourceVersion"]
                self._pods = PodWatch(self.api, namespaces[name], version)
        for manifest in real.objects:
            kind = manifest["kind"]
            if kind in CLUSTER_SCOPED_KINDS:
                manifest = _run_scoped(manifest, prefix, namespaces)
            stored = self._create(
                _OBJECT_PATHS[kind].format(ns=namespace), manifest, f"{kind} {_name(manifest)}"
            )
            if manifest.get("status"):  # no controller writes it: we do
                stored = self.api.request(
                    "PATCH",
                    f"{_OBJECT_PATHS[kind].format(ns=namespace)}/{_name(manifest)}/status",
                    body={"status": manifest["status"]},
                    content_type="application/merge-patch+json",
                )
            objects.setdefault(kind, []).append(stored)
        if "ResourceClaimTemplate" in objects:  # the claims made from them change too
            objects.setdefault("ResourceClaim", [])
        if "PersistentVolumeClaim" in objects:  # and claims get volumes provisioned
            objects.setdefault("PersistentVolume", [])
        changing = [kind for kind in _CHANGING_KINDS if kind in objects]
        if "PersistentVolumeClaim" in objects:
            self._wait_for_prebound_claims(namespace)
        nodes = []
        for manifest in real.nodes:
            node = copy.deepcopy(manifest)
            node["metadata"].setdefault("labels", {})[RUN_LABEL] = prefix.rstrip("-")
            nodes.append(self._create_node(node, logical(node["metadata"]["name"])))
        started = itertools.count()
        cluster: dict[str, Mapping[str, Any]] = {}  # uid -> the bound pods, as stored
        for manifest in real.bound_pods:
            placed = in_namespaces(manifest, namespaces)
            created = self._create(
                _pods_path(placed["metadata"]["namespace"]), placed, f"pod {_name(manifest)}"
            )
            created = self._started(created, next(started))
            cluster[created["metadata"]["uid"]] = created
        self._wait_for_nodes(namespace, [n["metadata"]["name"] for n in nodes])
        for manifest in real.pods:
            name = _name(manifest)
            if changing:  # the claims and volumes as the reference scheduler now sees them
                objects.update(self._changing_objects(changing, namespace, prefix))
            created = self._create(
                _pods_path(namespace), in_namespaces(manifest, namespaces), f"pod {name}"
            )
            reference, pod = self._decision(namespace, created, logical)
            scheduled = self._as_attempted(created, pod, namespace, objects)
            bound = list(cluster.values())
            if pod.get("status", {}).get("nominatedNodeName") or (
                reference.node is None and not reference.gated
            ):
                # Preemption may have evicted pods: the cluster is what the apiserver now has.
                remaining = self._bound_pods(list(namespaces.values()))
                reference.victims = tuple(
                    sorted(_name(p) for uid, p in cluster.items() if uid not in remaining)
                )
                cluster = {uid: cluster[uid] for uid in cluster if uid in remaining}
            kubesched = kubesched_outcome(
                nodes,
                bound,
                scheduled,
                self.configs[created["spec"]["schedulerName"]],
                self.registry,
                logical,
                objects,
            )
            if reference.node is not None and any(pod_claims(scheduled)):
                reference.volumes, reference.devices = claims_of(
                    scheduled, *self._claims(namespace), logical
                )
            run.comparisons.append(compare(name, reference, kubesched))
            if pod["spec"].get("nodeName"):
                # Later pods see this one where the reference scheduler put it.
                pod = self._started(pod, next(started))
                cluster[pod["metadata"]["uid"]] = pod
            elif not reference.gated:
                # Left unschedulable: take it out before it is retried behind the next pods.
                self.api.request(
                    "DELETE", f"{_pods_path(namespace)}/{name}", [("gracePeriodSeconds", 0)]
                )

    def _as_attempted(
        self,
        created: Mapping[str, Any],
        last: Mapping[str, Any],
        namespace: str,
        objects: dict[str, list[Mapping[str, Any]]],
    ) -> Mapping[str, Any]:
        """The pod as the reference scheduler first attempted it: for a pod with claims made
        from templates, with the ``status.resourceClaimStatuses`` the resourceclaim controller
        wrote, and those claims (added to ``objects``) as the controller made them, before the
        scheduler allocated them."""
        statuses = (last.get("status") or {}).get("resourceClaimStatuses")
        if not any(
            "resourceClaimTemplateName" in c for c in created["spec"].get("resourceClaims") or ()
        ):
            return created
        generated = {s.get("resourceClaimName") for s in statuses or ()}
        path = _OBJECT_PATHS["ResourceClaim"].format(ns=namespace)
        for claim in self.api.request("GET", path)["items"]:
            if _name(claim) in generated:
                made = {k: v for k, v in claim.items() if k != "status"}
                made["metadata"] = {k: v for k, v in claim["metadata"].items() if k != "finalizers"}
                objects["ResourceClaim"] = [
                    *objects["ResourceClaim"],
                    {"kind": "ResourceClaim", **made},
                ]
        status = {**(created.get("status") or {}), "resourceClaimStatuses": statuses}
        return {**created, "status": status}

    def _wait_for_prebound_claims(self, namespace: str) -> None:
        """Block until the PV controller has bound every claim created with a ``volumeName``
        (kube-scheduler counts a claim as bound only once it is ``Bound``)."""
        path = _OBJECT_PATHS["PersistentVolumeClaim"].format(ns=namespace)
        deadline = time.monotonic() + self.sync_timeout
        while True:
            waiting = [
                _name(c)
                for c in self.api.request("GET", path)["items"]
                if c["spec"].get("volumeName") and (c.get("status") or {}).get("phase") != "Bound"
            ]
            if not waiting:
                return
            if time.monotonic() > deadline:
                raise RunError(
                    f"the PV controller did not bind the pre-bound claims {', '.join(waiting)} "
                    f"within {self.sync_timeout:.0f}s"
                )
            time.sleep(0.02)

    def _changing_objects(
        self, kinds: list[str], namespace: str, prefix: str
    ) -> dict[str, list[Mapping[str, Any]]]:
        """The run's objects of ``kinds`` as stored now: its namespace's claims, and the
        volumes of its classes (static ones, and those provisioned for its claims)."""
        current: dict[str, list[Mapping[str, Any]]] = {}
        for kind in kinds:
            path = _OBJECT_PATHS[kind].format(ns=namespace)
            items = self.api.request("GET", path)["items"]
            if kind == "PersistentVolume":
                items = [
                    v
                    for v in items
                    if str(v["spec"].get("storageClassName", "")).startswith(prefix)
                ]
            current[kind] = [{"kind": kind, **item} for item in items]
        return current

    def _claims(self, namespace: str) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """The namespace's PersistentVolumeClaims and ResourceClaims, as stored now."""
        return (
            self.api.request("GET", _OBJECT_PATHS["PersistentVolumeClaim"].format(ns=namespace))[
                "items"
            ],
            self.api.request("GET", _OBJECT_PATHS["ResourceClaim"].format(ns=namespace))["items"],
        )

    def _started(self, pod: Mapping[str, Any], index: int) -> dict[str, Any]:
        """Write the pod's ``status.startTime`` (a kubelet would), ``index`` minutes in."""
        path = f"{_pods_path(pod['metadata']['namespace'])}/{pod['metadata']['name']}/status"
        started = _START.format(index // 60, index % 60)
        return dict(
            self.api.request(
                "PATCH",
                path,
                body={"status": {"startTime": started}},
                content_type="application/merge-patch+json",
            )
        )

    def _bound_pods(self, namespaces: list[str]) -> set[str]:
        """The uids of the pods bound in ``namespaces``."""
        uids = set()
        for namespace in namespaces:
            for pod in self.api.request("GET", _pods_path(namespace))["items"]:
                if pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp"):
                    uids.add(pod["metadata"]["uid"])
        return uids

    def _decision(
        self, namespace: str, created: Mapping[str, Any], logical: Callable[[str], str]
    ) -> tuple[Outcome, Mapping[str, Any]]:
        """Watch the pod until it is bound or its PodScheduled condition says why not; when
        that first attempt nominated it to a node (preemption), until it is bound or
        :data:`SETTLE_SECONDS` pass. Returns the outcome and the pod as last seen."""
        name = created["metadata"]["name"]
        pod: Mapping[str, Any] = created
        for pod in itertools.chain([created], self._changes(name, self.decision_timeout)):
            if node := pod["spec"].get("nodeName"):
                return Outcome(node=logical(node)), pod
            condition = _pod_scheduled(pod)
            if condition is None or condition.get("status") != "False":
                continue
            reason = condition.get("reason", "")
            message = condition.get("message", "")
            if reason == "SchedulingGated":  # set by the apiserver on create
                return Outcome(gated=True, message=message), pod
            if reason != "Unschedulable":
                return Outcome(error=f"condition {reason}: {message}"), pod
            nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
            outcome = Outcome(message=message, nominated=logical(nominated) if nominated else "")
            if not nominated:
                return outcome, pod
            break
        else:
            return Outcome(error=f"no decision within {self.decision_timeout:.0f}s"), pod
        # Nominated: its victims are being evicted.
        last = pod
        for last in self._changes(name, SETTLE_SECONDS):
            if node := last["spec"].get("nodeName"):
                outcome.final_node = logical(node)
                break
        return outcome, last

    def _changes(self, name: str, seconds: float) -> Iterator[Mapping[str, Any]]:
        """Pod ``name`` as it changes, for at most ``seconds``."""
        if self._pods is None:
            raise RunError("no watch on the scenario's pods")
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            # The decision's whole time as the stream's timeout, so that one stream serves pod
            # after pod; the settle time is short, and reopens it.
            change = self._pods.next(seconds if seconds == self.decision_timeout else left)
            if change is None:
                return
            kind, pod = change
            if pod["metadata"]["name"] != name:
                continue
            if kind == "DELETED":
                raise RunError(f"pod {name} was deleted while it was being decided")
            yield pod

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
            outcome, _ = self._decision(namespace, created, str)
            self.api.request(
                "DELETE", f"{pods_path}/{probe['metadata']['name']}", [("gracePeriodSeconds", 0)]
            )
            # DefaultPreemption adds "preemption: ..." (nothing to evict for the probe).
            if outcome.message.split(" preemption: ")[0] == expected:
                return
            last = outcome.describe()
            time.sleep(0.02)
        raise RunError(
            f"the reference scheduler's cache did not settle on the scenario's {len(names)} "
            f"nodes within {self.sync_timeout:.0f}s (last probe: {last})"
        )

    def _clean_up(self, namespaces: list[str], scenario: Scenario, prefix: str) -> None:
        """Delete the run's pods (at once: no kubelet waits for them), claims and cluster-scoped
        objects (volumes with their protection finalizer lifted: no controller lifts it), nodes
        and namespaces."""
        if self._pods is not None:
            self._pods.close()
            self._pods = None
        for namespace in namespaces:
            try:
                self.api.request("DELETE", _pods_path(namespace), [("gracePeriodSeconds", 0)])
            except ApiError as exc:
                if exc.status != 404:
                    raise
        kinds = {o["kind"] for o in scenario.objects}
        if "PersistentVolumeClaim" in kinds:
            path = _OBJECT_PATHS["PersistentVolumeClaim"].format(ns=namespaces[0])
            for claim in self.api.request("GET", path)["items"]:
                self._delete_unprotected(f"{path}/{_name(claim)}")
        if "PersistentVolume" in kinds or "PersistentVolumeClaim" in kinds:
            path = _OBJECT_PATHS["PersistentVolume"]
            for volume in self.api.request("GET", path)["items"]:
                if str(volume["spec"].get("storageClassName", "")).startswith(prefix):
                    self._delete_unprotected(f"{path}/{_name(volume)}")
        for kind in sorted(kinds & set(CLUSTER_SCOPED_KINDS) - {"PersistentVolume"}):
            self.api.request("DELETE", _OBJECT_PATHS[kind], [("labelSelector", RUN_LABEL)])
        try:
            self.delete_run_nodes()
            for namespace in namespaces:
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

    def _delete_unprotected(self, path: str) -> None:
        """Delete an object whose protection finalizer no controller here would lift."""
        merge = "application/merge-patch+json"
        try:
            self.api.request("DELETE", path)
            self.api.request(
                "PATCH", path, body={"metadata": {"finalizers": None}}, content_type=merge
            )
        except ApiError as exc:
            if exc.status != 404:
                raise

    def _create_if_absent(self, path: str, body: Mapping[str, Any]) -> None:
        try:
            self.api.request("POST", path, body=body)
        except ApiError as exc:
            if exc.status != 409:
                raise


def _name(manifest: Mapping[str, Any]) -> str:
    return str(manifest["metadata"]["name"])


def _run_scoped(
    manifest: Mapping[str, Any], prefix: str, namespaces: Mapping[str, str]
) -> dict[str, Any]:
    """A cluster-scoped object of a run: labelled with it (to be deleted with it), and a
    volume's ``claimRef`` in the run's namespace."""
    obj = copy.deepcopy(dict(manifest))
    obj["metadata"].setdefault("labels", {})[RUN_LABEL] = prefix.rstrip("-")
    if claim_ref := (obj.get("spec") or {}).get("claimRef"):
        claim_ref["namespace"] = namespaces[claim_ref.get("namespace") or OWN_NAMESPACE]
    return obj


def _pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


def in_namespaces(manifest: Mapping[str, Any], namespaces: Mapping[str, str]) -> dict[str, Any]:
    """A copy of a pod manifest in its run namespace (``metadata.namespace`` names the logical
    one), with the namespaces its (anti-)affinity terms name mapped the same way."""
    pod = copy.deepcopy(dict(manifest))
    metadata = pod["metadata"]
    metadata["namespace"] = namespaces[metadata.get("namespace") or OWN_NAMESPACE]
    affinity = pod["spec"].get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        for term in [
            *terms.get("requiredDuringSchedulingIgnoredDuringExecution", ()),
            *(w["podAffinityTerm"] for w in terms.get(_PREFERRED, ())),
        ]:
            if "namespaces" in term:
                term["namespaces"] = [namespaces.get(n, n) for n in term["namespaces"]]
    return pod


_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


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
