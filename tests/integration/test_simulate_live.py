"""``kubesched simulate --kubeconfig``: a read-only what-if against the real control plane.

Run as an identity bound to deploy/simulate-readonly-rbac.yaml alone, it reports where the
pending pods would go (kube's queue order: two 1-CPU nodes, seven 1-CPU pods, p0 and p1 placed)
and changes nothing: every object keeps its resourceVersion, the pods stay pending, no Event is
written, and the apiserver's audit log shows that identity sending nothing but lists.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from kubesched.cli import main
from kubesched.testing.controlplane import (
    Binaries,
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    create_ready_node,
    new_api_client,
    ready_node,
)

ROOT = Path(__file__).resolve().parents[2]
RBAC = ROOT / "deploy" / "simulate-readonly-rbac.yaml"
READER, READER_GROUP = "what-if-reader", "kubesched:simulate"
AUDIT_POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "Metadata"}]}


@pytest.fixture(scope="module")
def audited(binaries: Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A control plane of its own whose apiserver writes an audit log: (cluster, log path)."""
    directory = tmp_path_factory.mktemp("audit")
    policy, log = directory / "policy.yaml", directory / "audit.log"
    policy.write_text(yaml.safe_dump(AUDIT_POLICY))
    cluster = ControlPlane(
        binaries,
        extra_apiserver_args=[f"--audit-policy-file={policy}", f"--audit-log-path={log}"],
    )
    try:
        cluster.start()
    except (ControlPlaneError, ControlPlaneUnavailable) as exc:
        cluster.stop()
        pytest.fail(f"the audited control plane did not start: {exc}", pytrace=False)
    try:
        yield cluster, log
    finally:
        cluster.stop()


def _versions(core: client.CoreV1Api) -> dict[str, str]:
    """kind/namespace/name -> resourceVersion of every node, pod and namespace."""
    found = {f"Node/{n.metadata.name}": n.metadata.resource_version for n in core.list_node().items}
    for pod in core.list_pod_for_all_namespaces().items:
        key = f"Pod/{pod.metadata.namespace}/{pod.metadata.name}"
        found[key] = pod.metadata.resource_version
    for ns in core.list_namespace().items:
        found[f"Namespace/{ns.metadata.name}"] = ns.metadata.resource_version
    return found


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeSelector": {"what-if": "yes"},
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
    }


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_live_what_if_reports_placements_and_writes_nothing(audited: Any) -> None:
    cluster, audit_log = audited
    admin = new_api_client(cluster.admin_kubeconfig)
    core = client.CoreV1Api(admin)
    rbac = client.RbacAuthorizationV1Api(admin)
    for manifest in yaml.safe_load_all(RBAC.read_text()):
        create = (
            rbac.create_cluster_role
            if manifest["kind"] == "ClusterRole"
            else rbac.create_cluster_role_binding
        )
        create(manifest)
    namespace, elsewhere = f"wi-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:6]}"
    for name in (namespace, elsewhere):
        core.create_namespace({"metadata": {"name": name}})
    for index in range(2):
        create_ready_node(admin, ready_node(f"wi-node-{index}", cpu="1", labels={"what-if": "yes"}))
    for index in range(7):
        core.create_namespaced_pod(namespace, _pod(f"p{index}", namespace))
    core.create_namespaced_pod(elsewhere, _pod("not-asked-for", elsewhere))
    before = _versions(core)
    events_before = len(core.list_event_for_all_namespaces().items)
    kubeconfig = str(cluster.kubeconfig_for(READER, [READER_GROUP]))

    common = ["--kubeconfig", kubeconfig, "--namespace", namespace]
    common += ["--scheduler-name", "default-scheduler", "-o", "json"]
    code, out, err = _run("simulate", *common)
    assert code == 0, err
    report = json.loads(out)
    placed = {p["name"]: p["node"] for p in report["pods"] if p["node"]}
    assert sorted(placed) == ["p0", "p1"]
    assert sorted(placed.values()) == ["wi-node-0", "wi-node-1"]
    unplaced = [p for p in report["pods"] if not p["node"]]
    assert len(unplaced) == 5
    assert all(
        p["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.") for p in unplaced
    )
    assert report["summary"]["leftAlone"] == {}

    code, out, err = _run("explain", "p0", *common)
    assert code == 0, err
    assert json.loads(out)["node"] in ("wi-node-0", "wi-node-1")

    assert _versions(core) == before
    pods = core.list_namespaced_pod(namespace).items
    assert len(pods) == 7 and not any(p.spec.node_name for p in pods)
    assert all(p.status.phase == "Pending" and not p.status.conditions for p in pods)
    assert len(core.list_event_for_all_namespaces().items) == events_before

    entries = [json.loads(line) for line in audit_log.read_text().splitlines() if line]
    ours = [e for e in entries if e["user"]["username"] == READER]
    verbs = {e["verb"] for e in ours}
    assert verbs == {"list"}, verbs
    listed = {e["objectRef"]["resource"] for e in ours}
    assert {"nodes", "pods", "namespaces", "poddisruptionbudgets"} <= listed
    assert all(e["responseStatus"]["code"] == 200 for e in ours if "responseStatus" in e)
    admin.close()


def test_an_identity_that_may_list_nothing_gets_one_line(audited: Any) -> None:
    cluster, _ = audited
    kubeconfig = str(cluster.kubeconfig_for("nobody-in-particular"))
    code, out, err = _run("simulate", "--kubeconfig", kubeconfig)
    assert code == 2 and out == ""
    (line,) = [e for e in err.splitlines() if not e.startswith("warning:")]
    assert line.startswith("error: cannot list Node objects (/api/v1/nodes): 403")
    assert "simulate-readonly-rbac.yaml" in line
