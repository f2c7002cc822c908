"""``kubesched run`` against a real kube-apiserver, under its own least-privilege identity."""

from __future__ import annotations

import time

import pytest
from kubernetes import client
from kubesched_process import (
    LABEL,
    SA_GROUPS,
    SA_USER,
    KubeschedProcess,
    apply_rbac,
    connections_to,
    pod_manifest,
    seed_config,
    wait_for,
)


@pytest.fixture(scope="module")
def scheduler_kubeconfig(control_plane, admin_client):
    apply_rbac(admin_client)
    return control_plane.kubeconfig_for(SA_USER, SA_GROUPS)


@pytest.fixture
def kubesched(tmp_path, scheduler_kubeconfig):
    started: list[KubeschedProcess] = []

    def start(**config) -> KubeschedProcess:
        path = seed_config(tmp_path / f"config-{len(started)}.yaml", **config)
        proc = KubeschedProcess(
            path, scheduler_kubeconfig, tmp_path / f"kubesched-{len(started)}.log"
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.proc.poll() is None:
            proc.terminate()


def node_of(core_v1: client.CoreV1Api, namespace: str, name: str) -> str:
    return core_v1.read_namespaced_pod(name, namespace).spec.node_name or ""


def test_seed_end_to_end(core_v1, namespace, nodes, kubesched):
    nodes("plain-1")
    nodes("plain-2")
    proc = kubesched()
    proc.wait_ready()

    core_v1.create_namespaced_pod(namespace, pod_manifest("waiting"))
    # DefaultPreemption is a default plugin: kube-scheduler's message ends the same way.
    message = (
        f"0/2 nodes are available: 2 node(s) didn't have label {LABEL}=true. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )

    def condition():
        pod = core_v1.read_namespaced_pod("waiting", namespace)
        for cond in pod.status.conditions or ():
            if cond.type == "PodScheduled" and cond.status == "False":
                return cond
        return None

    cond = wait_for(condition, 20, what="PodScheduled=False")
    assert (cond.reason, cond.message) == ("Unschedulable", message)
    events = client.EventsV1Api(core_v1.api_client)

    def failed_event():
        items = events.list_namespaced_event(namespace).items
        return [
            e for e in items if e.reason == "FailedScheduling" and e.regarding.name == "waiting"
        ]

    event = wait_for(failed_event, 20, what="FailedScheduling event")[0]
    assert event.type == "Warning"
    assert event.note == message
    assert event.reporting_controller == "custom-scheduler"

    # Label a node: the pod is bound without a restart, within the backoff bound.
    core_v1.patch_node("plain-2", {"metadata": {"labels": {LABEL: "true"}}})
    assert (
        wait_for(lambda: node_of(core_v1, namespace, "waiting"), 15, what="binding after labelling")
        == "plain-2"
    )
    pod = core_v1.read_namespaced_pod("waiting", namespace)
    scheduled = {c.type: c for c in pod.status.conditions}["PodScheduled"]
    assert scheduled.status == "True"
    scheduled_events = wait_for(
        lambda: [
            e
            for e in events.list_namespaced_event(namespace).items
            if e.reason == "Scheduled" and e.regarding.name == "waiting"
        ],
        20,
        what="Scheduled event",
    )
    assert scheduled_events[0].note == f"Successfully assigned {namespace}/waiting to plain-2"

    # A new pod goes straight to the labelled node.
    core_v1.create_namespaced_pod(namespace, pod_manifest("direct"))
    assert wait_for(lambda: node_of(core_v1, namespace, "direct"), 15) == "plain-2"


def test_other_schedulers_pods_are_never_touched(core_v1, namespace, nodes, kubesched):
    nodes("labelled", labels={LABEL: "true"})
    proc = kubesched()
    proc.wait_ready()
    core_v1.create_namespaced_pod(namespace, pod_manifest("theirs", scheduler="someone-else"))
    core_v1.create_namespaced_pod(namespace, pod_manifest("ours"))
    assert wait_for(lambda: node_of(core_v1, namespace, "ours"), 15) == "labelled"
    theirs = core_v1.read_namespaced_pod("theirs", namespace)
    assert theirs.spec.node_name is None
    assert not theirs.status.conditions  # no condition written by us
    events = client.EventsV1Api(core_v1.api_client).list_namespaced_event(namespace).items
    assert not [e for e in events if e.regarding.name == "theirs"]


def test_health_ready_and_metrics(core_v1, namespace, nodes, kubesched):
    nodes("labelled", labels={LABEL: "true"})
    proc = kubesched()
    proc.wait_ready()
    assert proc.get("/healthz")[0] == 200
    assert proc.get("/readyz")[0] == 200
    assert proc.get("/nope")[0] == 404
    core_v1.create_namespaced_pod(namespace, pod_manifest("p1"))
    wait_for(lambda: node_of(core_v1, namespace, "p1"), 15)
    wait_for(
        lambda: (
            proc.metric(
                "scheduler_schedule_attempts_total", result="scheduled", profile="custom-scheduler"
            )
            >= 1
        ),
        10,
        what="attempt metric",
    )
    status, text = proc.get("/metrics")
    assert status == 200
    for name in (
        "scheduler_schedule_attempts_total",
        "scheduler_pending_pods",
        "scheduler_scheduling_attempt_duration_seconds_bucket",
        "scheduler_framework_extension_point_duration_seconds_bucket",
    ):
        assert name in text, name
    assert 'scheduler_pending_pods{queue="active"}' in text


def test_leader_election_one_binds_and_the_other_takes_over(core_v1, namespace, nodes, kubesched):
    nodes("labelled", labels={LABEL: "true"})
    lease = {"leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "500ms"}
    first = kubesched(leader_elect=True, lease=lease)
    second = kubesched(leader_elect=True, lease=lease)
    first.wait_ready()
    second.wait_ready()
    for i in range(10):
        core_v1.create_namespaced_pod(namespace, pod_manifest(f"before-{i}"))
    for i in range(10):
        wait_for(lambda i=i: node_of(core_v1, namespace, f"before-{i}"), 20)

    def scheduled(proc):
        return proc.metric("scheduler_schedule_attempts_total", result="scheduled")

    counts = {id(p): scheduled(p) for p in (first, second)}
    leader, standby = (first, second) if counts[id(first)] else (second, first)
    assert scheduled(leader) == 10 and scheduled(standby) == 0

    leader.kill()  # no release: the standby must wait out the lease
    for i in range(10):
        core_v1.create_namespaced_pod(namespace, pod_manifest(f"after-{i}"))
    for i in range(10):
        wait_for(
            lambda i=i: node_of(core_v1, namespace, f"after-{i}"),
            20,
            what="takeover by the standby",
        )
    assert scheduled(standby) == 10  # every pod bound once, by exactly one scheduler


def test_sigterm_releases_the_lease_and_exits_cleanly(core_v1, namespace, nodes, kubesched):
    nodes("labelled", labels={LABEL: "true"})
    lease = {"leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "500ms"}
    proc = kubesched(leader_elect=True, lease=lease)
    proc.wait_ready()
    coordination = client.CoordinationV1Api(core_v1.api_client)
    wait_for(lambda: proc.metric("leader_election_master_status") == 1, 20, what="leadership")
    assert proc.terminate() == 0
    held = coordination.read_namespaced_lease("custom-scheduler", "kube-system")
    assert not held.spec.holder_identity


def test_pods_already_bound_count_as_load(core_v1, namespace, nodes, kubesched, tmp_path):
    """A pod bound by someone else uses the node's cpu: ours does not fit beside it."""
    nodes("small", labels={LABEL: "true"}, cpu="2")
    theirs = pod_manifest("theirs", scheduler="someone-else", cpu="1500m")
    theirs["spec"]["nodeName"] = "small"
    core_v1.create_namespaced_pod(namespace, theirs)
    proc = kubesched(fit=True)
    proc.wait_ready()
    core_v1.create_namespaced_pod(namespace, pod_manifest("ours", cpu="1"))

    def message():
        pod = core_v1.read_namespaced_pod("ours", namespace)
        return next(
            (c.message for c in pod.status.conditions or () if c.type == "PodScheduled"), None
        )

    assert wait_for(message, 20).startswith("0/1 nodes are available: 1 Insufficient cpu.")
    core_v1.delete_namespaced_pod("theirs", namespace, grace_period_seconds=0)
    assert (
        wait_for(
            lambda: node_of(core_v1, namespace, "ours"), 20, what="binding once the load is gone"
        )
        == "small"
    )


def test_repeated_failures_are_one_event_with_a_series(core_v1, namespace, nodes, kubesched):
    nodes("small", labels={LABEL: "true"}, cpu="2")
    proc = kubesched(backoff=(0.1, 0.2), fit=True)
    proc.wait_ready()
    core_v1.create_namespaced_pod(namespace, pod_manifest("stuck", cpu="3"))
    events = client.EventsV1Api(core_v1.api_client)

    def failed():
        return [
            e
            for e in events.list_namespaced_event(namespace).items
            if e.reason == "FailedScheduling"
        ]

    wait_for(failed, 20, what="a FailedScheduling event")
    # Each deleted pod that held cpu retries the stuck pod; the same message stays one event.
    for i in range(8):
        bound = pod_manifest(f"bound-{i}", scheduler="someone-else", cpu="100m")
        bound["spec"]["nodeName"] = "small"
        core_v1.create_namespaced_pod(namespace, bound)
        core_v1.delete_namespaced_pod(f"bound-{i}", namespace, grace_period_seconds=0)
        time.sleep(0.3)
    wait_for(
        lambda: proc.metric("scheduler_schedule_attempts_total", result="unschedulable") >= 5,
        20,
        what="retries",
    )
    assert len(failed()) == 1


def test_apiserver_restart_mid_run_loses_and_duplicates_no_pod(tmp_path, binaries):
    """Several hundred pods while the apiserver goes away and comes back: every pod ends bound
    exactly once (watches resume or re-list; failed binds are retried)."""
    from kubesched.testing.controlplane import (
        ControlPlane,
        create_ready_node,
        new_api_client,
        ready_node,
    )

    total = 300
    with ControlPlane(binaries) as cp:
        admin = new_api_client(cp.admin_kubeconfig)
        core = client.CoreV1Api(admin)
        apply_rbac(admin)
        for i in range(3):
            create_ready_node(admin, ready_node(f"n{i}", pods="500", labels={LABEL: "true"}))
        core.create_namespace({"metadata": {"name": "load"}})
        proc = KubeschedProcess(
            seed_config(tmp_path / "config.yaml", backoff=(0.2, 1)),
            cp.kubeconfig_for(SA_USER, SA_GROUPS),
            tmp_path / "run.log",
        )
        try:
            proc.wait_ready()

            def create(i: int) -> None:
                for _ in range(200):
                    try:
                        core.create_namespaced_pod("load", pod_manifest(f"p{i}"))
                        return
                    except client.ApiException as exc:
                        if exc.status == 409:  # created before the connection broke
                            return
                    except Exception:  # apiserver away: retry
                        pass
                    time.sleep(0.1)
                raise AssertionError(f"could not create p{i}")

            for i in range(total // 3):
                create(i)
            downtime = cp.restart_apiserver(downtime=2.0)
            for i in range(total // 3, total):
                create(i)

            def unbound() -> list[str]:
                try:
                    pods = core.list_namespaced_pod("load").items
                except Exception:
                    return ["?"]
                return [p.metadata.name for p in pods if not p.spec.node_name]

            wait_for(
                lambda: len(core.list_namespaced_pod("load").items) == total and not unbound(),
                120,
                interval=0.5,
                what="every pod bound",
            )
            scheduled = proc.metric("scheduler_schedule_attempts_total", result="scheduled")
            assert scheduled == total, (scheduled, downtime)
        finally:
            proc.terminate()
            admin.close()


def test_every_pod_of_a_burst_has_its_scheduled_event(core_v1, namespace, nodes, kubesched):
    """``kubectl describe pod`` right after a burst shows ``Scheduled`` for every pod, as with
    kube-scheduler: events keep pace with binding (no overall cap; only repeats fold)."""
    nodes("burst-1", labels={LABEL: "true"}, cpu="64", pods="350")
    proc = kubesched()
    proc.wait_ready()
    # Ready means the binding workers' and event writers' connections are open: the burst
    # costs no TLS handshake (docs/benchmarks.md, "Connections opened ahead").
    apiserver_port = int(core_v1.api_client.configuration.host.rsplit(":", 1)[1])
    ready_connections = connections_to(proc.proc.pid, apiserver_port)
    assert len(ready_connections) >= 64 + 12
    names = [f"burst-{i}" for i in range(300)]
    for name in names:
        core_v1.create_namespaced_pod(namespace, pod_manifest(name))
    events = client.EventsV1Api(core_v1.api_client)

    def all_bound() -> bool:
        pods = core_v1.list_namespaced_pod(namespace).items
        return sum(1 for p in pods if p.spec.node_name) == len(names)

    wait_for(all_bound, 90, interval=0.5, what="300 pods bound")
    assert connections_to(proc.proc.pid, apiserver_port) - ready_connections == set()

    def scheduled() -> set[str] | None:
        seen = {
            e.regarding.name
            for e in events.list_namespaced_event(namespace, limit=1000).items
            if e.reason == "Scheduled"
        }
        return seen if seen >= set(names) else None

    # A cap of 10 events a second (after a burst of 50) would need 25 s more.
    wait_for(scheduled, 8, interval=0.5, what="a Scheduled event for each of 300 pods")
