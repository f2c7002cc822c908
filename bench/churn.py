"""What the harness keeps creating and deleting while a contender schedules (scheduler_perf's
``churn`` opcode).

- ``preemptors`` (PreemptionAsync, mode ``create``): a priority-10 pod asking 3 CPU every 200 ms,
  which can only be placed by preempting; never deleted by the harness.
- ``mixed`` (SchedulingWithMixedChurn, mode ``recreate``): every ``interval`` the node, the pod
  and the Service of the previous tick are deleted and new ones created: a node with room for no
  pods, a priority-10 pod asking 9 CPU (no node has that: it fails, with preemption tried, every
  time it is retried) and a Service.

Churned pods are named ``churn-…`` / ``pre-…``, so the harness's watch (which measures ``pod-…``)
ignores them. :attr:`Churn.deletes` counts the pods the harness deleted, which are not the
contender's writes.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import quote

from kubesched.backends.kube.transport import ApiError, Transport

from .workloads import high_priority_pod, large_cpu_pod, object_path

__all__ = ["CHURN_LABEL", "Churn"]

log = logging.getLogger("bench")

#: Marks what the churn creates, so that whatever is left of it can be removed.
CHURN_LABEL = "bench.kubesched.io/churn"
PREEMPTOR_INTERVAL = 0.2
MIXED_INTERVAL = 1.0


def _churn_node(index: int) -> dict:
    """scheduler_perf's ``churn/node-default``: Ready, capacity of 0 pods."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"churn-node-{index:05d}", "labels": {CHURN_LABEL: "true"}},
        "status": {
            "capacity": {"pods": "0"},
            "allocatable": {"pods": "0"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _churn_service(index: int) -> dict:
    """scheduler_perf's ``churn/service-default``."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"churn-{index:05d}", "labels": {CHURN_LABEL: "true"}},
        "spec": {
            "selector": {"app": "foo"},
            "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}],
        },
    }


class Churn:
    """Runs one kind of churn on a thread until :meth:`stop`."""

    def __init__(
        self, kind: str, transport: Transport, namespace: str, scheduler_name: str, run: str
    ) -> None:
        if kind not in ("preemptors", "mixed"):
            raise ValueError(f"unknown churn {kind!r}; known: preemptors, mixed")
        self.kind = kind
        self.transport = transport
        self.namespace = namespace
        self.scheduler_name = scheduler_name
        self.run = run
        self.interval = PREEMPTOR_INTERVAL if kind == "preemptors" else MIXED_INTERVAL
        self.ticks = 0
        self.deletes = 0
        self.errors = 0
        self._live: list[tuple[str, str]] = []  # (collection path, name) of the last tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-churn", daemon=True)

    def start(self) -> Churn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._delete_live()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except ApiError as exc:  # a failed tick is noted, the churn goes on
                self.errors += 1
                log.warning("churn tick %d: %s", self.ticks, exc)

    def tick(self) -> None:
        index = self.ticks
        self.ticks += 1
        if self.kind == "preemptors":
            pod = high_priority_pod("pre")(index, self.scheduler_name, self.run)
            self._create(pod)
            return
        self._delete_live()
        pod = large_cpu_pod(index, self.scheduler_name, self.run)
        pod["metadata"]["labels"][CHURN_LABEL] = "true"
        for obj in (_churn_node(index), pod, _churn_service(index)):
            self._create(obj)
            self._live.append((object_path(obj["kind"], self.namespace), obj["metadata"]["name"]))

    def _create(self, obj: dict) -> None:
        self.transport.request("POST", object_path(obj["kind"], self.namespace), body=obj)

    def _delete_live(self) -> None:
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
        for path, name in self._live:
            try:
                self.transport.request("DELETE", f"{path}/{quote(name)}", body=body)
                if path.endswith("/pods"):
                    self.deletes += 1
            except ApiError as exc:
                if exc.status != 404:
                    self.errors += 1
                    log.warning("churn: deleting %s/%s: %s", path, name, exc)
        self._live.clear()
