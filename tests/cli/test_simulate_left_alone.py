"""``simulate`` says which pending pods it left alone and why (their ``schedulerName``), and
``--scheduler-name`` schedules them: a ``kubectl get pods -A -o yaml`` snapshot of an ordinary
cluster has only ``default-scheduler`` pods, which the default profile (``custom-scheduler``)
does not serve."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing.builders import make_node, make_pod

CONFIG_TWO_PROFILES = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: alpha
- schedulerName: beta
"""


def _snapshot(tmp_path: Path) -> Path:
    pods = [make_pod(f"web-{i}").scheduler("default-scheduler").req(cpu="100m") for i in range(3)]
    pods.append(make_pod("batch").scheduler("volcano"))
    pods.append(make_pod("mine").req(cpu="100m"))  # custom-scheduler
    pods.append(make_pod("done").scheduler("default-scheduler").phase("Succeeded"))
    objects = [make_node("n1").manifest(), *(p.manifest() for p in pods)]
    path = tmp_path / "snapshot.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["simulate", *argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_the_summary_names_the_pods_left_alone(tmp_path: Path) -> None:
    code, out, err = _run(str(_snapshot(tmp_path)))
    assert code == 0, err
    summary = out.strip().splitlines()[-1]
    assert summary == (
        "1 scheduled, 0 unschedulable, 4 left alone (schedulerName default-scheduler: 3, "
        "volcano: 1; no profile serves them: --scheduler-name NAME or a profile of that name "
        "schedules them)"
    )


def test_json_counts_them_by_scheduler_name(tmp_path: Path) -> None:
    code, out, err = _run(str(_snapshot(tmp_path)), "-o", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert summary == {
        "scheduled": 1,
        "unschedulable": 0,
        "leftAlone": {"default-scheduler": 3, "volcano": 1},
    }


def test_scheduler_name_schedules_them(tmp_path: Path) -> None:
    code, out, err = _run(
        str(_snapshot(tmp_path)), "--scheduler-name", "default-scheduler", "-o", "json"
    )
    assert code == 0, err
    data = json.loads(out)
    placed = {p["name"]: p["node"] for p in data["pods"]}
    assert placed == {"web-0": "n1", "web-1": "n1", "web-2": "n1"}
    # the profile now runs as default-scheduler: custom-scheduler's pod is left alone instead
    assert data["summary"]["leftAlone"] == {"custom-scheduler": 1, "volcano": 1}


def test_nothing_left_alone_keeps_the_summary_short(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([make_node("n1").manifest(), make_pod("p").manifest()]))
    code, out, _ = _run(str(path))
    assert code == 0
    assert out.strip().splitlines()[-1] == "1 scheduled, 0 unschedulable"


def test_scheduler_name_among_several_profiles_must_name_one(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG_TWO_PROFILES)
    code, out, err = _run(
        str(_snapshot(tmp_path)), "--config", str(config), "--scheduler-name", "default-scheduler"
    )
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        "error: --scheduler-name default-scheduler: no profile is named 'default-scheduler' and "
        "the configuration has 2 (alpha, beta); name the one to use 'default-scheduler'"
    )


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_scheduler_name_of_a_profile_changes_nothing(tmp_path: Path, name: str) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG_TWO_PROFILES)
    code, out, err = _run(
        str(_snapshot(tmp_path)), "--config", str(config), "--scheduler-name", name, "-o", "json"
    )
    assert code == 0, err
    assert json.loads(out)["summary"]["leftAlone"]["default-scheduler"] == 3


def test_namespace_needs_kubeconfig(tmp_path: Path) -> None:
    code, _, err = _run(str(_snapshot(tmp_path)), "--namespace", "team")
    assert code == 2
    assert err.splitlines()[-1] == "error: --context and --namespace need --kubeconfig"


def test_a_file_and_a_kubeconfig_are_one_too_many(tmp_path: Path) -> None:
    code, _, err = _run(str(_snapshot(tmp_path)), "--kubeconfig", str(tmp_path / "kc"))
    assert code == 2
    assert "or --kubeconfig, not both" in err.splitlines()[-1]


def test_a_missing_kubeconfig_is_one_line(tmp_path: Path) -> None:
    code, _, err = _run("--kubeconfig", str(tmp_path / "nope"))
    assert code == 2
    assert err.splitlines()[-1] == f"error: {tmp_path / 'nope'}: kubeconfig not found"
