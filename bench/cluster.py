"""The benchmark's control plane: etcd + kube-apiserver with limits raised, and fast bulk writes.

The apiserver's default in-flight limits (400 read / 200 mutating) and API Priority and Fairness
would queue the schedulers' requests and measure the throttling, not the schedulers; they are
raised, and APF is off. Nodes and pods are written as raw JSON from a pool of threads (the
official client's models would make the harness slower than what it measures).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kubesched.backends.kube.transport import ApiError, Transport
from kubesched.testing.controlplane import Binaries, ControlPlane, new_api_client

from .workloads import (
    HIGH_PRIORITY_CLASS,
    INIT_NAMESPACE,
    NAMESPACE,
    NODE_SET_LABEL,
    Case,
    Workload,
    object_path,
)

__all__ = ["APISERVER_ARGS", "BenchCluster", "WriteCounter", "transport_for", "write_kind"]

APISERVER_ARGS = (
    "--max-requests-inflight=3000",
    "--max-mutating-requests-inflight=1000",
    "--enable-priority-and-fairness=false",
    # The harness clears 10,000 pods with one collection delete between runs: with the default
    # one worker and 60 s deadline the apiserver drops that request.
    "--delete-collection-workers=16",
    "--request-timeout=10m",
)
ROOT = Path(__file__).resolve().parents[1]
WRITERS = 16
#: The collections a node set's extra objects live in (cleared when the node set changes).
NODE_SET_COLLECTIONS = (
    "/apis/storage.k8s.io/v1/csinodes",
    "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/resource.k8s.io/v1/deviceclasses",
)
#: kube-controller-manager's client is limited to 20 requests/s by default: binding thousands of
#: claims at that pace would take minutes of set-up.
PV_CONTROLLER_ARGS = ("--kube-api-qps=1000", "--kube-api-burst=1000")


def transport_for(kubeconfig: Path, connections: int = WRITERS + 4) -> Transport:
    """A raw-JSON transport with no client-side rate limit and enough pooled connections for
    ``connections`` concurrent requests (the client's default pool, 5 per core, would open and
    drop TLS connections under a pool of writers)."""
    from kubernetes.client import rest

    api = new_api_client(kubeconfig)
    api.configuration.connection_pool_maxsize = connections
    api.rest_client = rest.RESTClientObject(api.configuration)
    return Transport(api, qps=0, burst=1, timeout=60.0)


#: A collection delete's deadline and answer cap (its answer lists every object it deleted).
COLLECTION_DELETE_TIMEOUT = 900.0
COLLECTION_DELETE_MAX_BODY = 1 << 30


class BenchCluster:
    """One control plane for a whole benchmark; nodes stay between runs, pods do not."""

    def __init__(self, binaries: Binaries | None = None, workdir: Path | None = None) -> None:
        self.control_plane = ControlPlane(
            binaries,
            workdir=workdir,
            keep_workdir=workdir is not None,
            extra_apiserver_args=APISERVER_ARGS,
        )
        self.transport: Transport | None = None
        self.node_set: tuple[str, int] | None = None
        self.namespace = NAMESPACE
        self.init_namespace = INIT_NAMESPACE
        #: (workload, nodes, pods) whose placed pods are in the init namespace.
        self.init_set: tuple[str, int, int] | None = None
        #: (workload, pods) whose kept per-pod objects (PVs and claims) exist.
        self.pod_object_set: tuple[str, int] | None = None
        self.pv_controller: Any = None

    def start(self) -> BenchCluster:
        self.control_plane.start()
        self.transport = transport_for(self.control_plane.admin_kubeconfig)
        for namespace in (self.namespace, self.init_namespace):
            try:
                self.api("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
            except ApiError as exc:
                if exc.status != 409:  # kept from a run with the same --workdir
                    raise
        try:
            self.create_objects([HIGH_PRIORITY_CLASS])
        except ApiError as exc:
            if exc.status != 409:
                raise
        return self

    def stop(self) -> None:
        self.stop_pv_controller()
        if self.transport is not None:
            self.transport.close()
        self.control_plane.stop()

    def __enter__(self) -> BenchCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- plumbing ----------------------------------------------------------------------------------
    def api(self, method: str, path: str, query: Iterable[tuple[str, Any]] = (), body: Any = None):
        assert self.transport is not None, "start() first"
        if method == "DELETE":  # collection deletes, whose answers take long and are large
            return self.transport.request(
                method,
                path,
                list(query),
                body,
                timeout=COLLECTION_DELETE_TIMEOUT,
                max_body=COLLECTION_DELETE_MAX_BODY,
            )
        return self.transport.request(method, path, list(query), body)

    def _parallel(self, fn: Callable[[Any], Any], items: list[Any]) -> None:
        with ThreadPoolExecutor(WRITERS, thread_name_prefix="bench-writer") as pool:
            for _ in pool.map(fn, items):
                pass

    def apiserver_cpu_pids(self) -> list[int]:
        """etcd and kube-apiserver, whose CPU a run also reports."""
        return [
            c.pid for c in self.control_plane.processes() if c.name in ("etcd", "kube-apiserver")
        ]

    # -- nodes ---------------------------------------------------------------------------------
    def ensure_nodes(self, workload: Workload, count: int) -> float:
        """Make the cluster's nodes exactly ``count`` of ``workload``'s, with their CSINodes or
        ResourceSlices and the workload's cluster-wide objects; returns seconds spent."""
        if self.node_set == (workload.node_set, count):
            return 0.0
        began = time.monotonic()
        self.delete_init_pods()
        self.delete_pod_objects()
        self.api("DELETE", "/api/v1/nodes", [("labelSelector", NODE_SET_LABEL)])
        for path in NODE_SET_COLLECTIONS:
            self.api("DELETE", path, [("labelSelector", NODE_SET_LABEL)])
        self._wait_empty("/api/v1/nodes", NODE_SET_LABEL)

        def create(node: dict) -> None:
            stored = self.api("POST", "/api/v1/nodes", body=node)
            if not (stored.get("status") or {}).get("allocatable"):
                # Should the apiserver drop the status sent on create, write it as a kubelet would.
                name = quote(node["metadata"]["name"])
                self._patch_status(f"/api/v1/nodes/{name}/status", node["status"])

        self._parallel(create, workload.nodes(count))
        extra = list(workload.cluster_objects)
        if workload.node_objects is not None:
            extra += [obj for i in range(count) for obj in workload.node_objects(i)]
        self.create_objects(extra)
        self.node_set = (workload.node_set, count)
        return time.monotonic() - began

    def node_names(self) -> list[str]:
        page = self.api("GET", "/api/v1/nodes", [("labelSelector", NODE_SET_LABEL)])
        return sorted(n["metadata"]["name"] for n in page.get("items") or ())

    def create_objects(self, objects: list[dict]) -> None:
        """POST each of ``objects`` to its collection (pods and claims into the run's
        namespace), from the pool of writers."""
        self._parallel(
            lambda obj: self.api("POST", object_path(obj["kind"], self.namespace), body=obj),
            objects,
        )

    # -- what a case needs besides its nodes -----------------------------------------------------
    def ensure_init_pods(self, case: Case) -> float:
        """The case's placed pods, bound already, in the init namespace: made again when they
        are another case's or some are gone (preemption deletes them); returns seconds spent."""
        key = (case.workload.name, case.nodes, case.pods)
        nodes = self.node_names()
        wanted = case.workload.init_pods(nodes, case.pods)
        if self.init_set == key and self._count(self._init_path()) == len(wanted):
            return 0.0
        began = time.monotonic()
        self.delete_init_pods()
        # Not timed: written from this process (the pod creator's start-up would cost more).
        self._parallel(lambda pod: self.api("POST", self._init_path(), body=pod), wanted)
        self.init_set = key
        return time.monotonic() - began

    def _init_path(self) -> str:
        return f"/api/v1/namespaces/{self.init_namespace}/pods"

    def delete_init_pods(self) -> None:
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        self.api("DELETE", self._init_path(), body=body)
        self._wait_empty(self._init_path(), "")
        self.init_set = None

    def ensure_pod_objects(self, case: Case) -> float:
        """What the case's pods refer to and keeps for the whole case (PVs and their claims,
        bound by the PV controller before this returns); returns seconds spent."""
        workload = case.workload
        if workload.needs_pv_controller:
            self.start_pv_controller()
        if workload.pod_objects is None or workload.pod_objects_per_run:
            return 0.0
        key = (workload.name, case.pods)
        if self.pod_object_set == key:
            return 0.0
        began = time.monotonic()
        self.delete_pod_objects()
        self.create_objects([obj for i in range(case.pods) for obj in workload.pod_objects(i)])
        self._wait_claims_bound(case.pods)
        self.pod_object_set = key
        return time.monotonic() - began

    def create_run_objects(self, case: Case) -> None:
        """The objects made again for every run (each pod's ResourceClaim)."""
        workload = case.workload
        if workload.pod_objects is not None and workload.pod_objects_per_run:
            self.create_objects([obj for i in range(case.pods) for obj in workload.pod_objects(i)])

    def _claims_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/persistentvolumeclaims"

    def _wait_claims_bound(self, count: int, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        bound = 0
        while time.monotonic() < deadline:
            items = self.api("GET", self._claims_path()).get("items") or ()
            bound = sum(1 for c in items if (c.get("status") or {}).get("phase") == "Bound")
            if bound >= count:
                return
            time.sleep(1.0)
        raise TimeoutError(
            f"{bound}/{count} claims bound by the PV controller after {timeout:.0f}s"
        )

    def delete_pod_objects(self) -> None:
        """PVs, their claims and ResourceClaims of the bench, finalizers removed first (no
        protection controller runs to remove them)."""
        collections = (
            self._claims_path(),
            "/api/v1/persistentvolumes",
            f"/apis/resource.k8s.io/v1/namespaces/{self.namespace}/resourceclaims",
        )
        for path in collections:
            self._delete_all(path, NODE_SET_LABEL)
        self.pod_object_set = None

    def _delete_all(self, path: str, selector: str) -> None:
        query = [("labelSelector", selector)]
        self.api("DELETE", path, query)
        items = self.api("GET", path, query).get("items") or ()
        clear = {"metadata": {"finalizers": None}}

        def unblock(obj: dict) -> None:
            if not obj["metadata"].get("finalizers"):
                return
            try:
                self.transport.request(  # type: ignore[union-attr]
                    "PATCH",
                    f"{path}/{quote(obj['metadata']['name'])}",
                    body=clear,
                    content_type="application/merge-patch+json",
                )
            except ApiError as exc:
                if exc.status != 404:
                    raise

        self._parallel(unblock, list(items))
        self._wait_empty(path, selector)

    def start_pv_controller(self) -> None:
        if self.pv_controller is None:
            self.pv_controller = self.control_plane.start_controller_manager(
                extra_args=PV_CONTROLLER_ARGS
            )

    def stop_pv_controller(self) -> None:
        if self.pv_controller is not None:
            self.pv_controller.stop()
            self.pv_controller = None

    def _patch_status(self, path: str, status: dict) -> None:
        assert self.transport is not None
        self.transport.request(
            "PATCH",
            path,
            body={"status": status},
            content_type="application/strategic-merge-patch+json",
        )

    # -- pods --------------------------------------------------------------------------------------
    def pods_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/pods"

    def resource_version(self) -> str:
        page = self.api("GET", self.pods_path(), [("limit", 1)])
        return str(page["metadata"]["resourceVersion"])

    def create_pods(self, pods: list[dict]) -> tuple[float, float]:
        """Create ``pods`` from a pool of writers in a process of its own (so that the harness's
        watch is not kept waiting for the interpreter lock by the writers); returns (start, end)
        of the creation on the system's monotonic clock, which both processes share."""
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as batch:
            json.dump(pods, batch)
        args = [
            sys.executable,
            "-m",
            "bench.cluster",
            str(self.control_plane.admin_kubeconfig),
            self.pods_path(),
            batch.name,
        ]
        creator = subprocess.Popen(
            args, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert creator.stdin is not None and creator.stdout is not None
        try:
            if creator.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the pod creator did not start (exit {creator.wait(10)})")
            creator.stdin.write("go\n")
            creator.stdin.flush()
            outcome = creator.stdout.readline().split()
            if creator.wait(600) != 0 or len(outcome) != 2:
                raise RuntimeError(f"creating pods failed (exit {creator.returncode})")
            return float(outcome[0]), float(outcome[1])
        finally:
            if creator.poll() is None:
                creator.kill()
                creator.wait()
            os.unlink(batch.name)

    def delete_pods(self, timeout: float = 300.0) -> float:
        """Delete every pod of the namespace at once (bound ones too: no kubelet waits for them)
        and its events; returns the seconds until the pods were gone."""
        began = time.monotonic()
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        assert self.transport is not None
        # The apiserver answers a collection delete only when every object is gone, with the
        # whole list of them: 10,000 pods take minutes and tens of megabytes.
        bulk = {"timeout": COLLECTION_DELETE_TIMEOUT, "max_body": COLLECTION_DELETE_MAX_BODY}
        self.transport.request("DELETE", self.pods_path(), body=body, **bulk)
        for namespace in (self.namespace, self.init_namespace):
            try:  # events.k8s.io/v1 and core/v1 events are two views of the same objects
                self.transport.request("DELETE", self._events_path(namespace), body=body, **bulk)
            except ApiError:
                pass
        self._wait_empty(self.pods_path(), "", timeout)
        # Claims made for one run (allocated, reserved for pods now gone) go with its pods.
        self._delete_all(
            f"/apis/resource.k8s.io/v1/namespaces/{self.namespace}/resourceclaims",
            f"{NODE_SET_LABEL}=dra",
        )
        return time.monotonic() - began

    def server_span(self) -> float | None:
        """Seconds from the first pod's ``creationTimestamp`` to the last PodScheduled
        ``lastTransitionTime`` of the namespace's bound pods, as the apiserver stamped them
        (whole seconds): a cross-check of the harness's own clock."""
        created, scheduled = [], []
        for pod in self.api("GET", self.pods_path()).get("items") or ():
            created.append(_seconds(pod["metadata"]["creationTimestamp"]))
            for condition in (pod.get("status") or {}).get("conditions") or ():
                if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
                    scheduled.append(_seconds(condition["lastTransitionTime"]))
        if not created or not scheduled:
            return None
        return max(scheduled) - min(created)

    def _events_path(self, namespace: str | None = None) -> str:
        return f"/apis/events.k8s.io/v1/namespaces/{namespace or self.namespace}/events"

    def _count(self, path: str, selector: str = "") -> int:
        query: list[tuple[str, Any]] = [("limit", 1)]
        if selector:
            query.append(("labelSelector", selector))
        page = self.api("GET", path, query)
        remaining = (page.get("metadata") or {}).get("remainingItemCount") or 0
        return len(page.get("items") or ()) + int(remaining)

    def count_events(self) -> int:
        """Events in both namespaces (a preemption's are about the placed pods; kubesched and
        kube-scheduler both write events.k8s.io/v1)."""
        return sum(
            self._count(self._events_path(ns)) for ns in (self.namespace, self.init_namespace)
        )

    def request_counts(self) -> dict[tuple[str, str, str], float]:
        """kube-apiserver's ``apiserver_request_total`` summed by (verb, resource, subresource)
        for writes: what every client wrote so far."""
        assert self.transport is not None
        from .measure import parse_request_counts

        api = new_api_client(self.control_plane.admin_kubeconfig)
        try:
            answer = api.call_api("GET", f"{api.configuration.host}/metrics")
            answer.read()
            return parse_request_counts(answer.data.decode())
        finally:
            api.close()

    def settled_event_count(self, timeout: float = 30.0, quiet: float = 2.0) -> int:
        """:meth:`count_events` once it has not changed for ``quiet`` seconds (events still
        being written after the last binding count too), or at ``timeout``."""
        deadline = time.monotonic() + timeout
        count, since = self.count_events(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.25)
            now = self.count_events()
            if now != count:
                count, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
        return count

    def _wait_empty(self, path: str, selector: str, timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        query: list[tuple[str, Any]] = [("limit", 1)]
        if selector:
            query.append(("labelSelector", selector))
        while time.monotonic() < deadline:
            if not self.api("GET", path, query).get("items"):
                return
            time.sleep(0.2)
        raise TimeoutError(f"{path} still not empty after {timeout:.0f}s")


class WriteCounter:
    """The API writes a contender made over a run: the apiserver's request counters before and
    after, less what the harness itself wrote in between (its pods, its churn)."""

    def __init__(self, cluster: BenchCluster) -> None:
        self.cluster = cluster
        self.before = cluster.request_counts()

    def writes(self, harness_deletes: int = 0) -> dict[str, float]:
        after = self.cluster.request_counts()
        totals: dict[str, float] = {}
        for key, value in after.items():
            kind = write_kind(*key)
            if kind:
                totals[kind] = totals.get(kind, 0.0) + value - self.before.get(key, 0.0)
        if harness_deletes and "pod deletes" in totals:
            totals["pod deletes"] -= harness_deletes
        return {k: v for k, v in totals.items() if v > 0}


#: What the harness alone writes (pods it creates, churned nodes and services, namespaces) and
#: what no scheduler writes (the apiserver's own leases, reviews of the metrics endpoints).
_NOT_THE_CONTENDERS = {
    "nodes",
    "services",
    "namespaces",
    "leases",
    "tokenreviews",
    "subjectaccessreviews",
    "endpointslices",
    "endpoints",
    # A Service's cluster IP is an IPAddress object the apiserver itself writes.
    "ipaddresses",
    "servicecidrs",
    "csinodes",
    "resourceslices",
    "deviceclasses",
}


def write_kind(verb: str, resource: str, subresource: str) -> str:
    """The category a write request counts under ("" when it is not a contender's)."""
    if verb not in ("POST", "PUT", "PATCH", "DELETE", "APPLY"):
        return ""
    if resource in _NOT_THE_CONTENDERS:
        return ""
    if resource == "bindings" or (resource == "pods" and subresource == "binding"):
        return "bindings"
    if resource == "pods":
        if subresource == "status":
            return "pod status"
        if subresource == "":
            if verb == "POST":  # the harness creates every pod
                return ""
            return "pod deletes" if verb == "DELETE" else "pod updates"
        return f"pods/{subresource}"
    if resource == "events":
        return "events"
    if resource in ("resourceclaims", "persistentvolumes", "persistentvolumeclaims"):
        return "claims and volumes"
    return "other"


def _seconds(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _create_pods(kubeconfig: str, path: str, batch: str) -> None:
    """The pod creator process: connect, say ``ready``, create every pod on ``go``, print the
    start and end of the creation (monotonic seconds)."""
    pods = json.loads(Path(batch).read_text())
    transport = transport_for(Path(kubeconfig))
    transport.request("GET", path, [("limit", 1)])  # one connection open before the clock runs
    print("ready", flush=True)
    sys.stdin.readline()
    began = time.monotonic()
    with ThreadPoolExecutor(WRITERS, thread_name_prefix="bench-creator") as pool:
        for _ in pool.map(lambda pod: transport.request("POST", path, body=pod), pods):
            pass
    print(began, time.monotonic(), flush=True)


if __name__ == "__main__":
    _create_pods(*sys.argv[1:4])
