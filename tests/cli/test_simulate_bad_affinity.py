"""``kubesched simulate`` on a cluster file holding pod-affinity terms kube-apiserver would refuse:
exit 2, one error line naming the file, document, object and field path, no traceback, nothing
on stdout (the parsing rules themselves: tests/core/test_affinity_validation.py)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.cli import main
from kubesched.testing.builders import make_node, make_pod

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
HOST = "kubernetes.io/hostname"
TERM = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "unknown-operator": (
        {
            "podAntiAffinity": {
                REQUIRED: [
                    {
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": "app", "operator": "Near", "values": ["web"]}
                            ]
                        },
                        "topologyKey": HOST,
                    }
                ]
            }
        },
        f"spec.affinity.podAntiAffinity.{REQUIRED}[0].labelSelector.matchExpressions[0]"
        '.operator: Unsupported value: "Near"',
    ),
    "missing-topology-key": (
        {"podAffinity": {REQUIRED: [{"labelSelector": {"matchLabels": {"app": "web"}}}]}},
        f"spec.affinity.podAffinity.{REQUIRED}[0].topologyKey: Required value: can not be empty",
    ),
    "weight-zero": (
        {"podAffinity": {PREFERRED: [{"weight": 0, "podAffinityTerm": TERM}]}},
        f"spec.affinity.podAffinity.{PREFERRED}[0].weight: Invalid value: 0: must be in the "
        "range 1-100",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_simulate_exits_2_with_one_line(case: str, tmp_path: Path) -> None:
    affinity, message = CASES[case]
    broken = make_pod("broken").labels(app="web").manifest()
    broken["spec"]["affinity"] = affinity
    path = tmp_path / "cluster.yaml"
    path.write_text(
        yaml.safe_dump_all(
            [make_node("n1").manifest(), broken, make_pod("fine").manifest()], sort_keys=False
        )
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate", str(path)], out, err) == 2
    errors = [line for line in err.getvalue().splitlines() if not line.startswith("warning:")]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"error: {path}: document 2: Pod default/broken: {message}")
    assert "Traceback" not in err.getvalue()
    assert out.getvalue() == ""
