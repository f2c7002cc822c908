"""``kubesched simulate`` with GangScheduling and the default plugins: PodGroups read from the
cluster file, waits at Permit on the virtual clock (kube's 5-minute timeout passes in no wall
time), and two gangs that cannot both fit end with one of them bound."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {
        "capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
        "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"},
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}
CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "GangScheduling"}]}},
        }
    ],
}


def pod_group(name: str, min_count: int) -> dict:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def member(name: str, group: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulingGroup": {"podGroupName": group},
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def simulate(tmp_path: Path, items: list[dict]) -> tuple[dict, float]:
    cluster, config = tmp_path / "cluster.yaml", tmp_path / "config.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    config.write_text(yaml.safe_dump(CONFIG))
    began = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "simulate",
            str(cluster),
            "--config",
            str(config),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), time.monotonic() - began


def test_two_gangs_that_cannot_both_fit_end_with_one_bound(tmp_path: Path) -> None:
    """4 cpu, two gangs of three 1-cpu pods queued interleaved: one gang binds whole, the
    other binds nothing."""
    items = [NODE, pod_group("a", 3), pod_group("b", 3)]
    items += [member(f"{g}{i}", g) for i in (1, 2, 3) for g in "ab"]
    report, _ = simulate(tmp_path, items)
    bound = {p["name"] for p in report["pods"] if p["node"]}
    assert bound in ({"a1", "a2", "a3"}, {"b1", "b2", "b3"}), report["pods"]


def test_a_gang_short_of_min_count_is_never_bound_and_its_wait_takes_no_time(
    tmp_path: Path,
) -> None:
    """minCount 3 with two pods: both wait at PreEnqueue. minCount 2 where one member can never
    fit: the other waits out kube's 5 minutes at Permit, in no wall time."""
    items = [NODE, pod_group("short", 3), pod_group("big", 2)]
    items += [member("s1", "short"), member("s2", "short")]
    misfit = member("big2", "big")
    misfit["spec"]["nodeSelector"] = {"example.com/never": "true"}
    report, seconds = simulate(tmp_path, [*items, member("big1", "big"), misfit])
    by_name = {p["name"]: p for p in report["pods"]}
    assert report["summary"]["scheduled"] == 0
    for name in ("s1", "s2"):
        assert by_name[name]["message"] == (
            "waiting for minCount pods from a gang to appear in scheduling queue"
        )
    assert by_name["big1"]["message"] == (
        "rejected due to timeout after waiting 5m0s at plugin GangScheduling"
    )
    assert seconds < 30  # the process's start-up, not the 5 minutes (noisy on a shared machine)
