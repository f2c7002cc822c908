"""What the fault scenarios share: a namespace with nodes and pods, kubesched as a process or in
this process, the exactly-once check and the figures."""

from __future__ import annotations

import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from faultproxy import FaultProxy, Record
from kubernetes import client
from kubesched_process import LABEL, KubeschedProcess, pod_manifest, seed_config

from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.connect import api_client_for
from kubesched.backends.kube.recorder import EventRecorder
from kubesched.backends.kube.transport import Transport
from kubesched.config import parse_config
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.testing.controlplane import ControlPlane, create_ready_node, ready_node

#: Several hundred pods in flight in every fault scenario.
PODS = 300
#: Short backoffs so that retries after a fault are quick (seconds: initial, max).
BACKOFF = (0.2, 1.0)


@dataclass
class Figure:
    """One scenario's result, as docs/reliability.md reports it."""

    scenario: str
    injected: str = ""
    checked: str = ""
    pods: int = 0
    bound: int = 0
    lost: int = 0
    bound_twice: int = 0
    #: Seconds from the end of the fault to the first successful bind after it.
    recovery_s: float | None = None
    #: Seconds from the end of the fault until every schedulable pod was bound.
    drain_s: float | None = None
    notes: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        def seconds(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}s"

        extra = " ".join(f"{k}={v}" for k, v in self.notes.items())
        return (
            f"{self.scenario}: pods={self.pods} bound={self.bound} lost={self.lost} "
            f"twice={self.bound_twice} recovery={seconds(self.recovery_s)} "
            f"drain={seconds(self.drain_s)} {extra}".rstrip()
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def wait_for(
    predicate: Callable[[], Any], timeout: float, interval: float = 0.2, what: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception:  # the apiserver may be away for a moment: ask again
            value = None
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Scenario:
    """A namespace of its own, labelled nodes, pods, and the schedulers started for one test."""

    def __init__(self, cluster: ControlPlane, admin: client.ApiClient, tmp_path: Path) -> None:
        self.cluster = cluster
        self.admin = admin
        self.core = client.CoreV1Api(admin)
        self.tmp_path = tmp_path
        self.namespace = f"rel-{uuid.uuid4().hex[:8]}"
        self.core.create_namespace({"metadata": {"name": self.namespace}})
        self.node_names: list[str] = []
        self.processes: list[KubeschedProcess] = []
        self.in_process: list[InProcessScheduler] = []

    # -- the cluster ---------------------------------------------------------------------------
    def add_nodes(self, count: int, *, pods: str = "500") -> list[str]:
        names = [f"{self.namespace}-n{len(self.node_names) + i}" for i in range(count)]
        for name in names:
            create_ready_node(self.admin, ready_node(name, pods=pods, labels={LABEL: "true"}))
            self.node_names.append(name)
        return names

    def create_pods(self, names: Iterable[str], *, workers: int = 4) -> None:
        """Create the pods, retrying while the apiserver is away (a 409: created already)."""

        def create(name: str) -> None:
            for _ in range(300):
                try:
                    self.core.create_namespaced_pod(self.namespace, pod_manifest(name))
                    return
                except client.ApiException as exc:
                    if exc.status == 409:
                        return
                except Exception:
                    pass
                time.sleep(0.1)
            raise AssertionError(f"could not create pod {name}")

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(create, names))

    def pod_nodes(self) -> dict[str, str]:
        """Every pod of the namespace and its node ("" while unbound)."""
        pods = self.core.list_namespaced_pod(self.namespace).items
        return {p.metadata.name: p.spec.node_name or "" for p in pods}

    def wait_bound(self, names: Iterable[str], timeout: float) -> float:
        """Wait until every pod in ``names`` has a node; the monotonic time it was seen so."""
        wanted = set(names)

        def done() -> bool:
            nodes = self.pod_nodes()
            return all(nodes.get(name) for name in wanted)

        wait_for(done, timeout, interval=0.3, what=f"{len(wanted)} pods bound")
        return time.monotonic()

    # -- schedulers ----------------------------------------------------------------------------
    def start_kubesched(
        self,
        kubeconfig: Path,
        *,
        config_path: Path | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        module: str = "kubesched",
        **config: Any,
    ) -> KubeschedProcess:
        """``kubesched run`` (the seed's profile, or ``config_path``) as a process reaching the
        cluster through ``kubeconfig``; ``args``, ``env`` and ``module`` as
        :class:`KubeschedProcess` takes them."""
        index = len(self.processes)
        config.setdefault("backoff", BACKOFF)
        path = config_path or seed_config(self.tmp_path / f"config-{index}.yaml", **config)
        proc = KubeschedProcess(
            path,
            kubeconfig,
            self.tmp_path / f"kubesched-{index}.log",
            args=args,
            env=env,
            module=module,
        )
        self.processes.append(proc)
        return proc

    def start_in_process(
        self,
        kubeconfig: Path,
        config: Mapping[str, Any],
        registry: Registry,
        *,
        inactivity_seconds: float = 90.0,
        **scheduler_options: Any,
    ) -> InProcessScheduler:
        scheduler = InProcessScheduler(
            kubeconfig, config, registry, inactivity_seconds, scheduler_options
        )
        self.in_process.append(scheduler)
        return scheduler

    def cleanup(self) -> None:
        for proc in self.processes:
            if proc.proc.poll() is None:
                try:
                    proc.terminate(timeout=20)
                except Exception:
                    proc.kill()
        for scheduler in self.in_process:
            scheduler.stop()
        try:
            self.core.delete_collection_namespaced_pod(self.namespace, grace_period_seconds=0)
        except Exception:
            pass
        for name in self.node_names:
            try:
                self.core.delete_node(name)
            except Exception:
                pass
        try:
            self.core.delete_namespace(self.namespace)
        except Exception:
            pass


class InProcessScheduler:
    """The scheduler ``kubesched run`` builds (Kubernetes backend, events, the same Scheduler),
    in this process, for plugins registered by the test and settings no flag reaches."""

    def __init__(
        self,
        kubeconfig: Path,
        config: Mapping[str, Any],
        registry: Registry,
        inactivity_seconds: float,
        scheduler_options: Mapping[str, Any],
    ) -> None:
        self.config = parse_config(dict(config), registry)
        self.api = api_client_for(flag_kubeconfig=str(kubeconfig))
        self.transport = Transport(self.api, 50, 100)
        self.backend = KubernetesBackend(
            self.transport,
            recorder=EventRecorder(self.transport),
            inactivity_seconds=inactivity_seconds,
        )
        self.scheduler = Scheduler(self.config, self.backend, registry, **scheduler_options)
        self._stop = threading.Event()
        self.scheduler.start(sync_timeout=30)
        self._thread = threading.Thread(
            target=self.scheduler.run, args=(self._stop,), name="scheduling", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self.scheduler.stop(wait_for_bindings=False)
        self.backend.stop()
        self._thread.join(timeout=5)


def seed_profile(
    *,
    extra_filters: Iterable[str] = (),
    extra_scores: Iterable[str] = (),
    points: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict:
    """The seed's configuration (deploy/scheduler-config.yaml, no leader election, short
    backoffs) with more Filter and Score plugins, and ``points``' plugin sets as they are
    (e.g. ``{"reserve": {"enabled": [{"name": "X"}]}}``)."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "podInitialBackoffSeconds": BACKOFF[0],
        "podMaxBackoffSeconds": BACKOFF[1],
        "profiles": [
            {
                "schedulerName": "custom-scheduler",
                "plugins": {
                    "preFilter": {"disabled": [{"name": "*"}]},
                    "filter": {
                        "enabled": [{"name": "LabelFilter"}] + [{"name": n} for n in extra_filters],
                        "disabled": [{"name": "*"}],
                    },
                    "score": {
                        "enabled": [{"name": n} for n in extra_scores],
                        "disabled": [{"name": "*"}],
                    },
                },
                "pluginConfig": [
                    {"name": "LabelFilter", "args": {"labels": {LABEL: "true"}}},
                ],
            }
        ],
    }
    config["profiles"][0]["plugins"].update(points or {})
    return config


# -- checks -----------------------------------------------------------------------------------


def successful_binds(proxy: FaultProxy, namespace: str) -> dict[str, list[Record]]:
    """Per pod, the Binding POSTs the apiserver accepted (201), whether or not the answer
    reached the scheduler."""
    return {
        pod: [r for r in records if r.upstream == 201]
        for pod, records in proxy.bindings(namespace).items()
    }


def check_exactly_once(
    scenario: Scenario,
    proxy: FaultProxy | Iterable[FaultProxy],
    schedulable: Iterable[str],
    figure: Figure,
    *,
    fault_ended: float,
    bound_by_others: Iterable[str] = (),
) -> None:
    """Every schedulable pod bound, by exactly one accepted Binding from us (pods in
    ``bound_by_others`` by none of ours); the figures filled in."""
    proxies = [proxy] if isinstance(proxy, FaultProxy) else list(proxy)
    schedulable = list(schedulable)
    others = set(bound_by_others)
    nodes = scenario.pod_nodes()
    accepted: dict[str, list[Record]] = {}
    for p in proxies:
        for pod, records in successful_binds(p, scenario.namespace).items():
            accepted.setdefault(pod, []).extend(records)
    lost = [name for name in schedulable if not nodes.get(name)]
    twice = [name for name, records in accepted.items() if len(records) > 1]
    ours_missing = [
        name for name in schedulable if name not in others and len(accepted.get(name, [])) != 1
    ]
    ours_on_others = [name for name in others if accepted.get(name)]
    times = sorted(r.ended for records in accepted.values() for r in records)
    after = [t for t in times if t >= fault_ended]
    figure.pods = len(schedulable)
    figure.bound = sum(1 for name in schedulable if nodes.get(name))
    figure.lost = len(lost)
    figure.bound_twice = len(twice)
    figure.recovery_s = round(after[0] - fault_ended, 2) if after else None
    figure.drain_s = round(max(times) - fault_ended, 2) if after else None
    figure.notes.setdefault(
        "bind_requests",
        sum(len(r) for p in proxies for r in p.bindings(scenario.namespace).values()),
    )
    assert not lost, f"{len(lost)} pods never bound: {lost[:10]}"
    assert not twice, f"pods bound twice: {twice[:10]}"
    assert not ours_missing, f"pods without exactly one accepted bind of ours: {ours_missing[:10]}"
    assert not ours_on_others, f"we bound pods someone else had bound: {ours_on_others}"


def metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def pod_condition(core: client.CoreV1Api, namespace: str, name: str) -> dict[str, str] | None:
    """The pod's PodScheduled condition as a dict, or None."""
    pod = core.read_namespaced_pod(name, namespace)
    for cond in pod.status.conditions or ():
        if cond.type == "PodScheduled":
            return {"status": cond.status, "reason": cond.reason, "message": cond.message or ""}
    return None
