"""The control plane fails under a running scheduler: kube-apiserver and etcd restarted, a watch
that goes silent, a watch that ends with 410 Gone after an etcd compaction. Several hundred pods
are created while it happens; each must end bound exactly once."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid
from pathlib import Path

from faultproxy import Fault, FaultProxy
from kubernetes import client
from reliability_support import (
    PODS,
    Figure,
    Scenario,
    check_exactly_once,
    seed_profile,
    wait_for,
)

from kubesched.framework.registry import Registry
from kubesched.testing.controlplane import ControlPlane, new_api_client

PODS_WATCH = "/api/v1/pods"


class BackgroundCreator:
    """Creates pods on a thread (retrying while the API is away); ``started`` is set once the
    first ``warm`` pods exist, so a fault can strike with pods in flight."""

    def __init__(self, scenario: Scenario, names: list[str], warm: int) -> None:
        self.started = threading.Event()
        self.error: BaseException | None = None

        def run() -> None:
            try:
                scenario.create_pods(names[:warm])
                self.started.set()
                scenario.create_pods(names[warm:], workers=2)
            except BaseException as exc:
                self.error = exc
                self.started.set()

        self.thread = threading.Thread(target=run, name="pod-creator", daemon=True)
        self.thread.start()

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "pod creation did not finish"
        if self.error is not None:
            raise self.error


def _run_with_restart(
    scenario: Scenario, proxy: FaultProxy, figure: Figure, restart, what: str
) -> None:
    scenario.add_nodes(3)
    proc = scenario.start_kubesched(proxy.kubeconfig(scenario.tmp_path / "proxy.kubeconfig"))
    proc.wait_ready()
    names = [f"p{i}" for i in range(PODS)]
    creator = BackgroundCreator(scenario, names, warm=PODS // 3)
    assert creator.started.wait(60)
    in_flight = sum(1 for n in scenario.pod_nodes().values() if not n)
    downtime = restart()
    fault_ended = time.monotonic()
    creator.join(120)
    scenario.wait_bound(names, 120)
    assert proc.proc.poll() is None, "kubesched exited"
    figure.scenario = what
    figure.notes["unbound_at_fault"] = in_flight
    figure.notes["outage_s"] = round(downtime, 2)
    check_exactly_once(scenario, proxy, names, figure, fault_ended=fault_ended)


def test_apiserver_killed_and_restarted(scenario, proxy, figure):
    """kube-apiserver stopped for 2 s and started again while pods are being created and bound:
    watches re-list or resume, failed binds are retried."""
    figure.injected = "kube-apiserver stopped, 2 s down, started again (same port, etcd kept)"
    figure.checked = "every pod bound exactly once; kubesched kept running"
    _run_with_restart(
        scenario,
        proxy,
        figure,
        lambda: scenario.cluster.restart_apiserver(downtime=2.0),
        "apiserver restart",
    )


def test_etcd_restarted(scenario, proxy, figure):
    """etcd stopped for 2 s under the apiserver: requests fail or wait, nothing is lost."""
    figure.injected = "etcd stopped, 2 s down, started again on the same data"
    figure.checked = "every pod bound exactly once; kubesched kept running"
    _run_with_restart(
        scenario, proxy, figure, lambda: scenario.cluster.restart_etcd(downtime=2.0), "etcd restart"
    )


def test_restart_etcd_keeps_its_ports_and_data(cluster, admin):
    """``ControlPlane.restart_etcd``: a new etcd process on the same ports and data directory,
    and the apiserver answering reads through it when it returns."""
    core = client.CoreV1Api(admin)
    name = f"restart-etcd-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    ports, before = dict(cluster.ports), cluster.processes()[0].pid
    try:
        seconds = cluster.restart_etcd(downtime=0.5)
        assert seconds >= 0.5
        assert cluster.ports == ports
        assert cluster.processes()[0].name == "etcd"
        assert cluster.processes()[0].pid != before
        assert core.read_namespace(name).metadata.name == name  # written before the restart
    finally:
        core.delete_namespace(name)


def test_silent_watch_is_abandoned_after_the_inactivity_timeout(scenario, proxy, figure):
    """The pods watch stays open but says nothing: after the inactivity timeout the informer
    watches again from where it was, and the pods created meanwhile are scheduled."""
    scenario.add_nodes(3)
    inactivity = 3.0
    scheduler = scenario.start_in_process(
        proxy.kubeconfig(scenario.tmp_path / "proxy.kubeconfig"),
        seed_profile(),
        Registry.installed(),
        inactivity_seconds=inactivity,
    )
    assert scheduler.backend.synced
    silence = proxy.add(Fault("silence", PODS_WATCH, watch=True, seconds=60, times=1))
    wait_for(lambda: proxy.cut_watches(PODS_WATCH), 10, what="the pods watch to cut")
    wait_for(lambda: silence.hits, 10, what="a silent watch")
    names = [f"p{i}" for i in range(PODS)]
    scenario.create_pods(names)
    scenario.wait_bound(names, 60)
    silent = [r for r in proxy.records() if r.fault == silence.name]
    assert len(silent) == 1
    detected = silent[0].ended - silent[0].started
    assert inactivity <= detected < inactivity + 5, detected
    figure.scenario = "silent watch"
    figure.injected = (
        f"the pods watch kept open with nothing sent (60 s); informer inactivity timeout "
        f"{inactivity:g} s (in-process: `kubesched run` uses 90 s)"
    )
    figure.checked = "the silent stream abandoned, re-watched from its resourceVersion, no loss"
    figure.notes["detected_after_s"] = round(detected, 2)
    check_exactly_once(scenario, proxy, names, figure, fault_ended=silent[0].ended)


def _etcd_compact(cluster: ControlPlane) -> int:
    """Compact etcd's whole history (physically); the revision compacted at."""
    base = f"http://127.0.0.1:{cluster.ports['etcd']}"

    def post(path: str, body: dict) -> dict:
        request = urllib.request.Request(
            base + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    revision = int(post("/v3/kv/range", {"key": "AA=="})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision


def test_watch_gone_after_etcd_compaction_relists(binaries, tmp_path, figure):
    """The pods watch breaks; while it is away 2/3 of the pods are created and etcd is
    compacted; the watch resumes from a compacted resourceVersion and gets 410 Gone: the
    informer re-lists and every pod is bound exactly once.

    On a control plane of its own whose pods are served without the watch cache (as for a
    resourceVersion older than the cache's window), so the 410 is etcd's own.
    """
    from kubesched_process import SA_GROUPS, SA_USER, apply_rbac

    with ControlPlane(binaries, extra_apiserver_args=["--watch-cache-sizes=pods#0"]) as cp:
        admin = new_api_client(cp.admin_kubeconfig)
        apply_rbac(admin)
        scenario = Scenario(cp, admin, tmp_path)
        proxy = FaultProxy(cp.kubeconfig_for(SA_USER, SA_GROUPS)).start()
        try:
            scenario.add_nodes(3)
            proc = scenario.start_kubesched(proxy.kubeconfig(Path(tmp_path / "p.kubeconfig")))
            proc.wait_ready()
            names = [f"p{i}" for i in range(PODS)]
            scenario.create_pods(names[: PODS // 3])
            scenario.wait_bound(names[: PODS // 3], 60)
            hold = proxy.add(Fault("hold", PODS_WATCH, watch=True, seconds=60))
            wait_for(lambda: proxy.cut_watches(PODS_WATCH), 10, what="the pods watch to cut")
            wait_for(lambda: hold.hits, 10, what="the watch to come back (held)")
            scenario.create_pods(names[PODS // 3 :])
            revision = _etcd_compact(cp)
            proxy.remove(hold)
            fault_ended = time.monotonic()
            scenario.wait_bound(names, 60)
            gone = [r for r in proxy.records() if r.path == PODS_WATCH and r.status == 410]
            relists = [
                r
                for r in proxy.records()
                if r.path == PODS_WATCH and not r.watch and r.started >= fault_ended
            ]
            assert gone, "the apiserver never answered 410 Gone"
            assert relists, "no re-list after 410 Gone"
            figure.scenario = "watch 410 Gone after etcd compaction"
            figure.injected = (
                f"pods watch cut and held; {PODS - PODS // 3} pods created meanwhile; etcd "
                f"compacted at revision {revision}; watch resumed from a compacted version"
            )
            figure.checked = "410 Gone seen, re-listed, every pod bound exactly once"
            figure.notes["gone_answers"] = len(gone)
            check_exactly_once(scenario, proxy, names, figure, fault_ended=fault_ended)
        finally:
            scenario.cleanup()
            proxy.stop()
            admin.close()
