"""The ceiling contender: binds pods to nodes in turn, deciding nothing.

    python -m bench.ceiling --kubeconfig PATH --scheduler-name NAME --namespace NS \\
        --ready-file PATH [--workers 64] [--event-writers 8] [--no-events]

Lists the nodes once, then lists and watches the namespace's unassigned pods of
``schedulerName=NAME`` and POSTs a Binding for each from a pool of workers, round-robin over the
nodes; after each Binding it queues the pod's ``Scheduled`` event (``events.k8s.io/v1``, the
body kube-scheduler writes), which a pool of event writers POSTs. Those are the writes per pod
both schedulers make, so what it reaches is the apiserver's rate for a scheduler's work on this
machine, the ceiling any scheduler's throughput is compared with on equal work (``--no-events``:
Bindings alone, a bound on unequal work). It writes ``--ready-file`` once it is watching and
runs until SIGTERM.
"""

from __future__ import annotations

import argparse
import itertools
import json
import queue
import signal
import sys
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubesched.backends.kube.transport import ApiError, Transport

from .cluster import transport_for

__all__ = ["main"]


def _binding(pod: dict[str, Any], node: str) -> dict[str, Any]:
    meta = pod["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def _scheduled_event(pod: dict[str, Any], node: str, controller: str) -> dict[str, Any]:
    """The ``Scheduled`` event kube-scheduler (and kubesched) writes for a bound pod."""
    meta = pod["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{uuid.uuid4().hex[:16]}", "namespace": namespace},
        "eventTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": controller,
        "reportingInstance": f"{controller}-ceiling",
        "action": "Binding",
        "reason": "Scheduled",
        "note": f"Successfully assigned {namespace}/{name} to {node}",
        "type": "Normal",
        "regarding": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": namespace,
            "name": name,
            "uid": meta["uid"],
            "resourceVersion": meta.get("resourceVersion", ""),
        },
    }


class Binder:
    def __init__(
        self, transport: Transport, namespace: str, scheduler_name: str, events: bool = True
    ) -> None:
        self.transport = transport
        self.path = f"/api/v1/namespaces/{namespace}/pods"
        self.events_path = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
        self.selector = f"spec.schedulerName={scheduler_name},spec.nodeName="
        self.scheduler_name = scheduler_name
        self.events = events
        self.pending: queue.Queue[dict[str, Any]] = queue.Queue()
        #: Scheduled events waiting for an event writer (pod, node).
        self.to_record: queue.Queue[tuple[dict[str, Any], str]] = queue.Queue()
        self.stopped = threading.Event()
        self.errors = 0
        self.rewatches = 0
        nodes = transport.request("GET", "/api/v1/nodes")["items"]
        if not nodes:
            raise SystemExit("no nodes to bind to")
        self._nodes = itertools.cycle([n["metadata"]["name"] for n in nodes])
        self._lock = threading.Lock()

    def list_pending(self) -> str:
        page = self.transport.request("GET", self.path, [("fieldSelector", self.selector)])
        for pod in page.get("items") or ():
            self.pending.put(pod)
        return str(page["metadata"]["resourceVersion"])

    def watch(self, resource_version: str) -> None:
        """Queue every pod added from ``resource_version`` on; re-watch when the apiserver ends
        the stream (it closes watchers that fall behind), re-list when the version is gone."""
        while not self.stopped.is_set():
            query = [
                ("watch", "true"),
                ("resourceVersion", resource_version),
                ("allowWatchBookmarks", "true"),
                ("fieldSelector", self.selector),
                ("timeoutSeconds", 3600),
            ]
            try:
                for line in self.transport.stream_lines(self.path, query, timeout=(10.0, 600.0)):
                    event = json.loads(line)
                    obj = event.get("object") or {}
                    if event.get("type") == "ERROR":
                        print(f"watch: {obj.get('message')}; re-listing", file=sys.stderr)
                        resource_version = self.list_pending()
                        break
                    resource_version = obj["metadata"].get("resourceVersion", resource_version)
                    if event.get("type") == "ADDED":
                        self.pending.put(obj)
            except ApiError as exc:
                print(f"watch: {exc}; watching again", file=sys.stderr, flush=True)
            self.rewatches += 1

    def bind_forever(self) -> None:
        while not self.stopped.is_set():
            pod = self.pending.get()
            with self._lock:
                node = next(self._nodes)
            name = pod["metadata"]["name"]
            try:
                self.transport.request(
                    "POST", f"{self.path}/{name}/binding", body=_binding(pod, node)
                )
            except ApiError as exc:
                self.errors += 1
                print(f"binding {name}: {exc}", file=sys.stderr, flush=True)
                continue
            if self.events:
                self.to_record.put((pod, node))

    def record_forever(self) -> None:
        while not self.stopped.is_set():
            pod, node = self.to_record.get()
            body = _scheduled_event(pod, node, self.scheduler_name)
            try:
                self.transport.request("POST", self.events_path, body=body)
            except ApiError as exc:
                self.errors += 1
                print(f"event for {pod['metadata']['name']}: {exc}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ceiling", description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--scheduler-name", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=64, help="concurrent Bindings")
    parser.add_argument("--event-writers", type=int, default=8, help="concurrent event writes")
    parser.add_argument(
        "--no-events", action="store_true", help="write Bindings alone (no Scheduled events)"
    )
    args = parser.parse_args(argv)

    writers = 0 if args.no_events else args.event_writers
    binder = Binder(
        transport_for(args.kubeconfig, args.workers + writers + 2),
        args.namespace,
        args.scheduler_name,
        events=not args.no_events,
    )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    resource_version = binder.list_pending()
    threading.Thread(target=binder.watch, args=(resource_version,), daemon=True).start()
    for i in range(args.workers):
        threading.Thread(target=binder.bind_forever, name=f"bind-{i}", daemon=True).start()
    for i in range(writers):
        threading.Thread(target=binder.record_forever, name=f"event-{i}", daemon=True).start()
    args.ready_file.write_text("ready\n")
    done.wait()
    binder.stopped.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
