"""Objects a real cluster can hold but a naive scheduler chokes on: 10,000 labels on a node and in
a pod's nodeSelector, odd quantities (``1e3``, ``0.5Gi``, ``100m`` memory, ``1.5``, ``+1``,
``1E3``), missing status, nodes with no allocatable or capacity, thousands of tolerations,
containers and host ports, 10,000 taints, very long names.

Each row goes through ``kubesched simulate`` (the command, exit code and JSON) and through the
in-memory Scheduler, and must end with the right decision for every pod, or with one clear error
naming the object and field path (exit 2). "Finishes" is checked by counting, not timing: the
Python calls made (a profile hook counts each call and generator step) must stay within a bound
linear in the row's size, and the scheduler must need at most two cycles a pod. (The taint and
host-port rows found TaintToleration and NodePorts quadratic; both now index what they compare.)
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from kubesched import ManifestError
from kubesched.api.manifests import parse_cluster
from kubesched.backends.memory import InMemoryBackend
from kubesched.cli import main
from kubesched.config import load_config
from kubesched.engine.scheduler import Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.simulate import VirtualClock

PROFILE = "custom-scheduler"  # the profile kubesched runs without a config
N = 10_000
#: Python calls allowed per unit of a row's size, plus a fixed allowance (start-up, parsing).
CALLS_PER_ITEM = 300
FIXED_CALLS = 400_000


@dataclass(frozen=True)
class Row:
    objects: list[dict[str, Any]]
    #: pod name -> its node, or ``None`` (unschedulable, ``message`` in its message).
    decisions: dict[str, str | None] = field(default_factory=dict)
    message: str = ""
    #: The one error line expected instead (after ``<file>: document 1 items[i]: ``).
    error: str = ""
    #: The row's largest dimension: the call bound is linear in it.
    size: int = 1


# -- builders ---------------------------------------------------------------------------------
def node(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    allocatable: dict[str, Any] | None = None,
    taints: list[dict[str, str]] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
    }
    if taints is not None:
        manifest["spec"] = {"taints": taints}
    if status is None:
        status = {"allocatable": allocatable or {"cpu": "4", "memory": "32Gi", "pods": "110"}}
    if status != "missing":
        manifest["status"] = status
    return manifest


def pod(name: str, *, status: bool = True, namespace: str = "default", **spec: Any) -> dict:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedulerName": PROFILE, "containers": [{"name": "c", "image": "i"}], **spec},
    }
    if status:
        manifest["status"] = {"phase": "Pending"}
    return manifest


def containers(count: int, **per_container: Any) -> list[dict[str, Any]]:
    """``count`` containers; callables in ``per_container`` get the container's index."""
    return [
        {
            "name": f"c{i}",
            "image": "i",
            **{k: v(i) if callable(v) else v for k, v in per_container.items()},
        }
        for i in range(count)
    ]


def host_ports(first: int) -> Any:
    return lambda i: [{"containerPort": 80, "hostPort": first + i}]


def requests(**values: str) -> dict[str, Any]:
    return {"requests": values}


def taints(count: int, effect: str = "NoSchedule", prefix: str = "t") -> list[dict[str, str]]:
    return [{"key": f"{prefix}{i}", "value": "v", "effect": effect} for i in range(count)]


def tolerations(count: int, prefix: str = "t") -> list[dict[str, str]]:
    return [{"key": f"{prefix}{i}", "operator": "Equal", "value": "v"} for i in range(count)]


MANY = {f"k{i}": "v" for i in range(N)}
LONG_PREFIX = ".".join(["a" * 63] * 3) + "." + "b" * 61  # a 253-byte DNS subdomain
LONG_KEY = f"{LONG_PREFIX}/{'k' * 63}"
LONG_NAME = "n" * 253
TAINTED = "node(s) had untolerated taint(s)"
INSUFFICIENT_CPU = "Insufficient cpu"
SELECTOR = "node(s) didn't match Pod's node affinity/selector"

ROWS: dict[str, Row] = {
    # -- labels ---------------------------------------------------------------------------------
    "10k-labels-node-and-selector": Row(
        [node("big", MANY), node("small", {"k0": "v"}), pod("p", nodeSelector=MANY)],
        {"p": "big"},
        size=N,
    ),
    "10k-label-selector-one-mismatch": Row(
        [node("big", MANY), pod("p", nodeSelector={**MANY, "k9999": "other"})],
        {"p": None},
        SELECTOR,
        size=N,
    ),
    "long-names-keys-and-values": Row(
        [
            node(LONG_NAME, {LONG_KEY: "v" * 63}),
            node("other"),
            pod("p" * 253, namespace="n" * 63, nodeSelector={LONG_KEY: "v" * 63}),
        ],
        {"p" * 253: LONG_NAME},
    ),
    "names-far-past-the-api-limits": Row(
        [node("n" * 100_000), pod("p" * 100_000)], {"p" * 100_000: "n" * 100_000}, size=100
    ),
    # -- quantities -----------------------------------------------------------------------------
    "odd-quantities": Row(
        [
            # small: 1.5 cpu, 512Mi, one pod; big: 1000 cpu, 1000 *bytes*, 1000 pods.
            node("small", allocatable={"cpu": "1.5", "memory": "0.5Gi", "pods": "+1"}),
            node("big", allocatable={"cpu": "1E3", "memory": "1e3", "pods": "1e3"}),
            pod("a", containers=containers(1, resources=requests(cpu="+1", memory="0.5Gi"))),
            # 100m of memory is a tenth of a byte: counted as 1 byte, as kube rounds up.
            pod("b", containers=containers(1, resources=requests(cpu="2", memory="100m"))),
            pod("c", containers=containers(1, resources=requests(cpu="1.001e3"))),
        ],
        {"a": "small", "b": "big", "c": None},
        INSUFFICIENT_CPU,
    ),
    "quantities-as-yaml-numbers": Row(
        [
            node("n", allocatable={"cpu": 1.5, "memory": 1024, "pods": 1}),
            pod("a", containers=containers(1, resources=requests(cpu=1.5, memory=1024))),
        ],
        {"a": "n"},
    ),
    "10k-containers-requests-add-up": Row(
        [
            node("nine", allocatable={"cpu": "9", "memory": "1Ti", "pods": "110"}),
            node("ten", allocatable={"cpu": "10", "memory": "1Ti", "pods": "110"}),
            pod("p", containers=containers(N, resources=requests(cpu="1m", memory="1Ki"))),
        ],
        {"p": "ten"},
        size=N,
    ),
    "invalid-quantity-is-one-clear-error": Row(
        [node("n", allocatable={"cpu": "1.5.5", "pods": "10"}), pod("p")],
        error="Node n: status.allocatable.cpu: invalid quantity '1.5.5'",
    ),
    "negative-request-is-one-clear-error": Row(
        [node("n"), pod("p", containers=containers(1, resources=requests(memory="-1Gi")))],
        error="Pod default/p: spec.containers[0].resources.requests[memory]: "
        'Invalid value: "-1Gi": must be greater than or equal to 0',
    ),
    "exponent-out-of-range-is-one-clear-error": Row(
        [node("n", allocatable={"cpu": "1e4294967297"}), pod("p")],
        error="Node n: status.allocatable.cpu: invalid quantity '1e4294967297': exponent out "
        "of range",
    ),
    "toleration-not-an-object-is-one-clear-error": Row(
        [node("n"), pod("p", tolerations=["NoSchedule"])],
        error="Pod default/p: spec.tolerations[0]: expected a toleration (an object), got str",
    ),
    "unschedulable-as-a-string-is-one-clear-error": Row(
        [dict(node("n"), spec={"unschedulable": "false"}), pod("p")],
        error="Node n: spec.unschedulable: 'false' is not a boolean",
    ),
    # -- status ---------------------------------------------------------------------------------
    "no-status-anywhere": Row(
        [node("n", status="missing"), pod("p", status=False)], {"p": None}, "Too many pods"
    ),
    "node-with-capacity-only": Row(
        [node("n", status={"capacity": {"cpu": "1", "memory": "1Gi", "pods": "1"}}), pod("p")],
        {"p": "n"},
    ),
    "node-with-empty-status": Row([node("n", status={}), pod("p")], {"p": None}, "Too many pods"),
    # -- taints and tolerations ----------------------------------------------------------------
    "10k-taints-one-wildcard-toleration": Row(
        [node("t", taints=taints(N)), pod("p", tolerations=[{"operator": "Exists"}])],
        {"p": "t"},
        size=N,
    ),
    "10k-taints-none-tolerated": Row(
        [node("t", taints=taints(N)), pod("p", tolerations=tolerations(100, prefix="x"))],
        {"p": None},
        TAINTED,
        size=N,
    ),
    "10k-soft-taints-scored": Row(
        [node("t", taints=taints(N, "PreferNoSchedule")), node("clean"), pod("p")],
        {"p": "clean"},
        size=N,
    ),
    "10k-tolerations-few-taints": Row(
        [node("t", taints=taints(3)), pod("p", tolerations=tolerations(N))], {"p": "t"}, size=N
    ),
    # -- host ports -----------------------------------------------------------------------------
    "3k-containers-host-ports": Row(
        [
            node("busy"),
            node("free"),
            pod("bound", nodeName="busy", containers=containers(1, ports=host_ports(3999))),
            pod("p", containers=containers(3000, ports=host_ports(1000))),
        ],
        {"p": "free"},
        size=3000,
    ),
    "10k-taints-10k-tolerations": Row(
        [node("t", taints=taints(10000)), pod("p", tolerations=tolerations(10000))],
        {"p": "t"},
        size=10000,
    ),
    "10k-host-ports-against-10k-used": Row(
        [
            node("busy"),
            pod("bound", nodeName="busy", containers=containers(10000, ports=host_ports(20000))),
            pod("p", containers=containers(10000, ports=host_ports(1000))),
        ],
        {"p": "busy"},
        size=10000,
    ),
}


# -- counting ---------------------------------------------------------------------------------
class Calls:
    count = 0


@contextlib.contextmanager
def counting_calls() -> Iterator[Calls]:
    """Counts every Python call and generator step on this thread while active."""
    calls = Calls()

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls.count += 1

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def _bound(row: Row) -> int:
    return FIXED_CALLS + CALLS_PER_ITEM * row.size


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.installed()


def _cluster_file(tmp_path: Path, row: Row) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": row.objects}))
    return path


def _check_simulate(row: Row, tmp_path: Path) -> None:
    path = _cluster_file(tmp_path, row)
    out, err = io.StringIO(), io.StringIO()
    with counting_calls() as calls:
        code = main(["simulate", str(path), "-o", "json"], out, err)
    errors = [line for line in err.getvalue().splitlines() if not line.startswith("warning:")]
    if row.error:
        assert code == 2, out.getvalue()
        assert len(errors) == 1, errors
        assert row.error in errors[0], errors[0]
        assert errors[0].startswith(f"error: {path}: document 1 items[")
        return
    assert code == 0, err.getvalue()
    assert errors == []
    outcomes = {p["name"]: p for p in json.loads(out.getvalue())["pods"]}
    assert {name: p["node"] for name, p in outcomes.items()} == row.decisions
    for name, node_name in row.decisions.items():
        if node_name is None:
            assert row.message in outcomes[name]["message"], outcomes[name]
    assert calls.count <= _bound(row), f"{calls.count} Python calls for size {row.size}"


def _check_scheduler(row: Row, registry: Registry) -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": row.objects})
    if row.error:
        with pytest.raises(ManifestError) as caught:
            parse_cluster(text, "cluster.json")
        (line,) = str(caught.value).splitlines()
        assert line.startswith("cluster.json: document 1 items[")
        assert row.error in line
        return
    cluster = parse_cluster(text, "cluster.json")
    scheduler = Scheduler(
        load_config(None, registry),
        InMemoryBackend(cluster.nodes, cluster.pods, cluster.objects),
        registry,
        clock=VirtualClock(),
        seed=0,
        inline_binding=True,
    )
    pending = [p for p in cluster.pods if not p.node_name]
    cycles = 0
    with counting_calls() as calls:
        scheduler.start()
        while cycles <= 2 * len(pending) and scheduler.schedule_one(timeout=0):
            cycles += 1
    scheduler.stop()
    assert cycles <= len(pending), "a pod needed more than one cycle with nothing changing"
    assert calls.count <= _bound(row), f"{calls.count} Python calls for size {row.size}"
    by_name = {p.name: p for p in pending}
    for name, node_name in row.decisions.items():
        attempt = scheduler.attempts[by_name[name].uid]
        assert attempt.node_name == node_name, (name, attempt.message)
        if node_name is None:
            assert row.message in attempt.message


@pytest.mark.parametrize("name", list(ROWS))
def test_simulate_command(name: str, tmp_path: Path) -> None:
    _check_simulate(ROWS[name], tmp_path)


@pytest.mark.parametrize("name", list(ROWS))
def test_in_memory_scheduler(name: str, registry: Registry) -> None:
    _check_scheduler(ROWS[name], registry)
