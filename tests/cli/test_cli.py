"""The ``kubesched`` command as a user runs it, with the bundled plugins installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED_CONFIG = ROOT / "deploy" / "scheduler-config.yaml"
LABEL = "scheduler.custom/enabled"


def kubesched(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_simulate_without_arguments_runs_the_bundled_seed_example():
    result = kubesched("simulate", "-o", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    placed = {p["name"]: p["node"] for p in report["pods"]}
    # Only node-a and node-c carry the label; the other scheduler's pod is left alone.
    assert set(placed) == {"test-pod", "web-1", "web-2"}
    assert set(placed.values()) <= {"node-a", "node-c"}
    assert report["summary"] == {
        "scheduled": 3,
        "unschedulable": 0,
        "leftAlone": {"default-scheduler": 1},
    }
    assert all(
        set(p) == {"namespace", "name", "schedulerName", "node", "message"} for p in report["pods"]
    )


def test_simulate_table_shows_nodes_and_kube_scheduler_messages(tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(f"""
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "10"}}}}
---
apiVersion: v1
kind: Node
metadata: {{name: n2, labels: {{{LABEL}: "false"}}}}
status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "10"}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: lonely, namespace: team}}
spec: {{schedulerName: custom-scheduler, containers: [{{name: c, image: nginx}}]}}
""")
    result = kubesched("simulate", str(cluster), "--config", str(SEED_CONFIG))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAMESPACE", "POD", "NODE", "MESSAGE"]
    assert lines[1].split(None, 3) == [
        "team",
        "lonely",
        "<none>",
        f"0/2 nodes are available: 2 node(s) didn't have label {LABEL}=true. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
    ]
    assert lines[-1] == "0 scheduled, 1 unschedulable"


def test_simulate_is_repeatable_with_a_seed():
    first = kubesched("simulate", "-o", "json", "--seed", "42")
    second = kubesched("simulate", "-o", "json", "--seed", "42")
    assert first.stdout == second.stdout


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "cannot read cluster file: No such file or directory"),
        ("kind: Pod\nmetadata: {name: x\n", "not valid YAML"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n"
            "  - name: c\n    resources: {requests: {cpu: lots}}\n",
            "document 1: Pod ns/p: spec.containers[0].resources.requests.cpu: invalid quantity "
            "'lots'",
        ),
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {zone: 3}}\n",
            "document 1: Node n: metadata.labels.zone: value 3 must be a string",
        ),
    ],
    ids=["missing-file", "bad-yaml", "bad-quantity", "non-string-label"],
)
def test_bad_cluster_files_give_one_clear_error_and_exit_2(tmp_path, content, expected):
    path = tmp_path / "cluster.yaml"
    if content is not None:
        path.write_text(content)
    result = kubesched("simulate", str(path), "--config", str(SEED_CONFIG))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(path) in result.stderr
    assert expected in result.stderr


def test_other_kinds_are_skipped_with_a_warning(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text("apiVersion: v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n")
    result = kubesched("simulate", str(path), "--config", str(SEED_CONFIG), "-o", "json")
    assert result.returncode == 0
    assert "skipping Deployment shop/web (not a kind the scheduler reads)" in result.stderr


def test_config_validate_accepts_the_deploy_profile():
    result = kubesched("config", "validate", str(SEED_CONFIG))
    assert result.returncode == 0, result.stderr
    assert "valid (1 profile(s): custom-scheduler)" in result.stdout


def test_config_validate_lists_every_error_with_its_path(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 0
profiles:
  - schedulerName: custom-scheduler
    plugins:
      score:
        enabled:
          - name: NoSuchPlugin
    pluginConfig:
      - name: LabelFilter
        args: {labels: {"bad key!": "x"}}
    plugins2: {}
  - schedulerName: custom-scheduler
""")
    result = kubesched("config", "validate", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    for fragment in (
        "parallelism:",
        'profiles[0].plugins.score.enabled[0]: unknown plugin "NoSuchPlugin"; installed: ',
        "profiles[0].plugins2: unknown field",
        'profiles[1].schedulerName: duplicate "custom-scheduler"',
    ):
        assert fragment in result.stderr, result.stderr


def test_plugin_args_errors_are_reported_by_config_validate(tmp_path):
    path = tmp_path / "args.yaml"
    path.write_text(
        SEED_CONFIG.read_text().replace('scheduler.custom/enabled: "true"', '"bad key!": "x"')
    )
    result = kubesched("config", "validate", str(path))
    assert result.returncode == 2
    assert "profiles[0].pluginConfig[0].args.labels['bad key!']: invalid label key" in result.stderr


def test_config_show_prints_the_effective_order_and_weights():
    result = kubesched("config", "show", str(SEED_CONFIG), "-o", "json")
    assert result.returncode == 0, result.stderr
    profile = json.loads(result.stdout)["profiles"][0]
    assert profile["schedulerName"] == "custom-scheduler"
    assert profile["plugins"]["filter"] == ["LabelFilter"]
    assert profile["plugins"]["queueSort"] == ["PrioritySort"]
    assert profile["plugins"]["bind"] == ["DefaultBinder"]
    assert profile["plugins"]["score"] == []


def test_plugins_lists_the_bundled_plugins_as_json():
    result = kubesched("plugins", "-o", "json")
    assert result.returncode == 0, result.stderr
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["LabelFilter"]["distribution"] == "kubesched-label-filter"
    assert plugins["LabelFilter"]["extension_points"] == ["filter"]
    assert plugins["DefaultBinder"]["extension_points"] == ["bind"]
    assert plugins["PrioritySort"]["extension_points"] == ["queueSort"]
    assert all(p["version"] for p in plugins.values())
