"""kubesched as the custom-scheduler pod runs it, against the real apiserver.

The command is the image's entrypoint with the Deployment's args, run from the prefix that
deploy/install-kubesched.sh made; the config is the ConfigMap's; the credentials are what a pod
has: ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT`` and a directory with a TokenRequest
token for the ServiceAccount and the cluster's CA (``KUBESCHED_SERVICEACCOUNT_DIR`` standing in
for /var/run/secrets/kubernetes.io/serviceaccount), and no kubeconfig. That it schedules the
seed's test pod, writes its status and events and holds its Lease with nothing refused proves
deploy/manifests/rbac.yaml sufficient.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
import yaml
from deploy_support import (
    DEPLOY,
    PodProcess,
    configmap_data,
    metric_value,
    pod_command,
    report,
    wait_for,
)
from kubernetes import client

from kubesched.backends.kube.connect import (
    SERVICEACCOUNT_DIR_ENV,
    api_client_for,
    credentials_source,
    serviceaccount_dir,
)
from kubesched.errors import KubeschedError

LABEL = "scheduler.custom/enabled"
LEASE_NAMESPACE = "kube-system"


def test_the_service_account_directory_can_be_moved(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    monkeypatch.setenv(SERVICEACCOUNT_DIR_ENV, str(tmp_path))
    assert credentials_source() == "in-cluster"
    with pytest.raises(KubeschedError, match=f"token and ca.crt in {tmp_path}"):
        api_client_for()
    (tmp_path / "token").write_text("the-token")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    api = api_client_for()
    assert api.configuration.host == "https://127.0.0.1:6443"
    assert api.configuration.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert api.configuration.get_api_key_with_prefix("BearerToken") == "Bearer the-token"
    monkeypatch.delenv(SERVICEACCOUNT_DIR_ENV)
    assert str(serviceaccount_dir()) == "/var/run/secrets/kubernetes.io/serviceaccount"


def test_pod_process_runs_the_images_command(installed, tmp_path):
    """The command below is the container's: entrypoint + args, paths and port remapped."""
    assert pod_command(installed, tmp_path / "etc-kubesched", 8080) == [
        str(installed.bin("kubesched")),
        "run",
        "--config",
        str(tmp_path / "etc-kubesched" / "scheduler-config.yaml"),
        "--bind-address=127.0.0.1",
        "--secure-port=8080",
    ]


def _snapshot(prefix: Path) -> dict[str, int]:
    return {str(p.relative_to(prefix)): p.stat().st_mtime_ns for p in prefix.rglob("*")}


def _seed_test_pod() -> dict:
    return yaml.safe_load((DEPLOY / "test-pod.yaml").read_text())


@pytest.fixture
def pods(tmp_path):
    started: list[PodProcess] = []

    def start(installed, credentials, config_data=None) -> PodProcess:
        workdir = tmp_path / f"pod-{len(started)}"
        workdir.mkdir()
        proc = PodProcess(
            installed,
            workdir / "etc-kubesched",
            credentials.in_cluster_env(),
            workdir,
            config_data=config_data,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()


def test_in_cluster_schedules_the_seed_test_pod(
    installed, sa_credentials, core_v1, namespace, nodes, pods
):
    suffix = uuid.uuid4().hex[:6]
    plain, target = f"plain-{suffix}", f"target-{suffix}"
    nodes(plain)
    nodes(target)
    before = _snapshot(installed.prefix)

    proc = pods(installed, sa_credentials)
    proc.wait_ready()
    assert "credentials in-cluster" in proc.output()

    # No node has the label yet: the pod stays Pending, saying why (pods/status, events).
    core_v1.create_namespaced_pod(namespace, _seed_test_pod())
    events = client.EventsV1Api(core_v1.api_client)

    def condition():
        pod = core_v1.read_namespaced_pod("test-pod", namespace)
        for cond in pod.status.conditions or ():
            if cond.type == "PodScheduled" and cond.status == "False":
                return cond
        return None

    cond = wait_for(condition, 60, "PodScheduled=False on test-pod")
    assert cond.reason == "Unschedulable"
    assert f"didn't have label {LABEL}=true" in cond.message

    # The seed's `kubectl label nodes <node-name> scheduler.custom/enabled=true`.
    core_v1.patch_node(target, {"metadata": {"labels": {LABEL: "true"}}})
    bound = wait_for(
        lambda: core_v1.read_namespaced_pod("test-pod", namespace).spec.node_name,
        30,
        "test-pod bound",
    )
    assert bound == target

    def recorded(reason):
        return [
            e
            for e in events.list_namespaced_event(namespace).items
            if e.reason == reason and e.regarding.name == "test-pod"
        ]

    failed = wait_for(lambda: recorded("FailedScheduling"), 30, "FailedScheduling event")
    assert failed[0].reporting_controller == "custom-scheduler"
    scheduled = wait_for(lambda: recorded("Scheduled"), 30, "Scheduled event")
    assert scheduled[0].note == f"Successfully assigned {namespace}/test-pod to {target}"

    coordination = client.CoordinationV1Api(core_v1.api_client)
    lease = coordination.read_namespaced_lease("custom-scheduler", LEASE_NAMESPACE)
    assert lease.spec.holder_identity
    assert f"successfully acquired lease {LEASE_NAMESPACE}/custom-scheduler" in proc.output()

    assert proc.terminate() == 0
    released = coordination.read_namespaced_lease("custom-scheduler", LEASE_NAMESPACE)
    assert not released.spec.holder_identity
    log = proc.output()
    # A 403 status, not a port or a count that happens to hold the digits (port 40367 did).
    refused = re.search(r"(?<!\d)403(?!\d)|[Ff]orbidden", log)
    assert refused is None, f"something was refused:\n{log[-3000:]}"
    assert _snapshot(installed.prefix) == before, "kubesched wrote under its install prefix"


def test_another_schedulers_lease_is_never_taken(
    installed, sa_credentials, core_v1, namespace, nodes, pods, other_scheduler_lease
):
    """A profile pointed at kube-scheduler's Lease cannot lead, so it never binds."""
    nodes(f"enabled-{uuid.uuid4().hex[:6]}", labels={LABEL: "true"})
    config = yaml.safe_load(configmap_data()["scheduler-config.yaml"])
    config["leaderElection"].update(
        resourceName=other_scheduler_lease, retryPeriod="500ms", renewDeadline="1s"
    )
    config["leaderElection"]["leaseDuration"] = "2s"
    proc = pods(installed, sa_credentials, {"scheduler-config.yaml": yaml.safe_dump(config)})
    proc.wait_ready()  # a standby is ready: its caches are synced
    core_v1.create_namespaced_pod(namespace, _seed_test_pod())
    wait_for(
        lambda: proc.output().count(f"lease {LEASE_NAMESPACE}/{other_scheduler_lease}") >= 3,
        30,
        "repeated refusals",
    )
    assert "403" in proc.output() or "orbidden" in proc.output()
    assert not core_v1.read_namespaced_pod("test-pod", namespace).spec.node_name
    lease = client.CoordinationV1Api(core_v1.api_client).read_namespaced_lease(
        other_scheduler_lease, LEASE_NAMESPACE
    )
    assert lease.spec.holder_identity == "kube-scheduler-0"
    assert proc.terminate() == 0


def test_the_secure_port_serves_metrics_to_tokens_the_shipped_rbac_allows(
    request, installed, sa_credentials, core_v1, namespace, nodes, pods
):
    """As the Deployment runs it, with deploy/manifests/rbac.yaml alone: HTTPS on the secure
    port; /metrics 401 without a token, 403 for an identity not allowed, 200 for the
    scheduler's ServiceAccount (kubesched:metrics-reader), its TokenReviews and
    SubjectAccessReviews allowed by system:auth-delegator; health paths open. The metrics
    count the pod it scheduled."""
    nodes(f"enabled-{uuid.uuid4().hex[:6]}", labels={LABEL: "true"})
    proc = pods(installed, sa_credentials)
    proc.wait_ready()
    core_v1.create_namespaced_pod(namespace, _seed_test_pod())
    wait_for(lambda: core_v1.read_namespaced_pod("test-pod", namespace).spec.node_name, 30, "bound")
    core_v1.create_namespaced_service_account(namespace, {"metadata": {"name": "someone"}})
    someone = core_v1.create_namespaced_service_account_token(
        "someone", namespace, {"spec": {"expirationSeconds": 600}}
    ).status.token

    anonymous = proc.get("/metrics")
    forbidden = proc.get("/metrics", someone)
    allowed = wait_for(  # the attempt is counted once the binding cycle has ended
        lambda: (
            (a := proc.get("/metrics", sa_credentials.token))[0] == 200
            and 'result="scheduled"' in a[1]
            and a
        ),
        30,
        "the scheduled attempt in /metrics",
    )
    health = {path: proc.get(path) for path in ("/healthz", "/livez", "/readyz")}

    assert anonymous[0] == 401
    assert forbidden[0] == 403
    assert (
        f'User "system:serviceaccount:{namespace}:someone" cannot get path "/metrics"'
        in (forbidden[1])
    )
    assert health == {path: (200, "ok\n") for path in health}
    text = allowed[1]
    profile = {"profile": "custom-scheduler"}
    scheduled = {"result": "scheduled", **profile}
    assert metric_value(text, "scheduler_schedule_attempts_total", **scheduled) >= 1
    attempts = "scheduler_scheduling_attempt_duration_seconds_count"
    assert metric_value(text, attempts, **scheduled) >= 1
    point = "scheduler_framework_extension_point_duration_seconds_count"
    for name in ("PreFilter", "Filter", "Reserve", "Permit", "PreBind", "Bind", "PostBind"):
        assert metric_value(text, point, extension_point=name, status="Success", **profile) >= 1
    assert metric_value(text, "scheduler_binding_duration_seconds_count", result="success") >= 1
    assert metric_value(text, "scheduler_pending_pods", queue="active") == 0
    assert metric_value(text, "leader_election_master_status", name="kube-scheduler") == 1
    report(
        request.config,
        "secure port as custom-scheduler: /metrics 401 without a token, 403 for "
        f"{namespace}:someone, 200 for its own ServiceAccount; /healthz /livez /readyz 200",
    )
    assert proc.terminate() == 0
