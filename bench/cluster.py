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

from .workloads import NODE_SET_LABEL, Workload

__all__ = ["APISERVER_ARGS", "BenchCluster", "transport_for"]

APISERVER_ARGS = (
    "--max-requests-inflight=3000",
    "--max-mutating-requests-inflight=1000",
    "--enable-priority-and-fairness=false",
)
ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "bench"
WRITERS = 16


def transport_for(kubeconfig: Path, connections: int = WRITERS + 4) -> Transport:
    """A raw-JSON transport with no client-side rate limit and enough pooled connections for
    ``connections`` concurrent requests (the client's default pool, 5 per core, would open and
    drop TLS connections under a pool of writers)."""
    from kubernetes.client import rest

    api = new_api_client(kubeconfig)
    api.configuration.connection_pool_maxsize = connections
    api.rest_client = rest.RESTClientObject(api.configuration)
    return Transport(api, qps=0, burst=1, timeout=60.0)


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

    def start(self) -> BenchCluster:
        self.control_plane.start()
        self.transport = transport_for(self.control_plane.admin_kubeconfig)
        self.api("POST", "/api/v1/namespaces", body={"metadata": {"name": self.namespace}})
        return self

    def stop(self) -> None:
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

    # -- nodes -------------------------------------------------------------------------------------
    def ensure_nodes(self, workload: Workload, count: int) -> float:
        """Make the cluster's nodes exactly ``count`` of ``workload``'s; returns seconds spent."""
        if self.node_set == (workload.node_set, count):
            return 0.0
        began = time.monotonic()
        self.api("DELETE", "/api/v1/nodes", [("labelSelector", NODE_SET_LABEL)])
        self._wait_empty("/api/v1/nodes", NODE_SET_LABEL)

        def create(node: dict) -> None:
            stored = self.api("POST", "/api/v1/nodes", body=node)
            if not (stored.get("status") or {}).get("allocatable"):
                # Should the apiserver drop the status sent on create, write it as a kubelet would.
                name = quote(node["metadata"]["name"])
                self._patch_status(f"/api/v1/nodes/{name}/status", node["status"])

        self._parallel(create, workload.nodes(count))
        self.node_set = (workload.node_set, count)
        return time.monotonic() - began

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
            if creator.wait(60) != 0 or len(outcome) != 2:
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
        self.transport.request("DELETE", self.pods_path(), body=body)
        try:  # events.k8s.io/v1 and core/v1 events are two views of the same objects
            self.transport.request("DELETE", self._events_path(), body=body)
        except ApiError:
            pass
        self._wait_empty(self.pods_path(), "", timeout)
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

    def _events_path(self) -> str:
        return f"/apis/events.k8s.io/v1/namespaces/{self.namespace}/events"

    def count_events(self) -> int:
        """Events in the namespace (kubesched and kube-scheduler both write events.k8s.io/v1)."""
        page = self.api("GET", self._events_path(), [("limit", 1)])
        remaining = (page.get("metadata") or {}).get("remainingItemCount") or 0
        return len(page.get("items") or ()) + int(remaining)

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
