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

import uuid
from pathlib import Path

import pytest
import yaml
from deploy_support import (
    DEPLOY,
    PodProcess,
    configmap_data,
    pod_command,
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
        "--port=8080",
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
    for refusal in ("403", "Forbidden", "forbidden"):
        assert refusal not in log, f"something was refused:\n{log[-3000:]}"
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
