"""The benchmark harness keeps working: a tiny run of ``python -m bench run --quick``.

A few nodes and pods go through all three contenders (the binding loop, the upstream
kube-scheduler, ``kubesched run``) on a real control plane, and a few pods through the
in-memory path with its profile. The tests assert that the harness produces figures, never how
fast anything is. Without Go and without built control-plane binaries the control-plane test
skips, saying so (under ``CI=true`` it fails instead).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.api import rotation
from bench.measure import percentile
from bench.memory import profile_run, run_sizes
from bench.plugin_costs import run_plugin_cost
from bench.report import BEGIN, END, update_doc
from bench.workloads import BASIC, MIXED, parse_size
from kubesched.testing.controlplane import (
    BIN_DIR_ENV,
    ControlPlaneUnavailable,
    find_binaries,
)

ROOT = Path(__file__).resolve().parents[2]

IN_CI = os.environ.get("CI") == "true"
CONTENDERS = {"ceiling", "reference", "kubesched"}
SCHEDULERS = {"reference", "kubesched"}


def _control_plane_missing() -> str | None:
    """Why no control plane can be had here (without building anything); None if one can."""
    if shutil.which("go"):
        return None
    try:
        find_binaries(build=False, build_script=ROOT / "tests" / "controlplane" / "build.sh")
    except ControlPlaneUnavailable as exc:
        return str(exc) if os.environ.get(BIN_DIR_ENV) else f"no Go and no built binaries ({exc})"
    return None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("500x1000", (500, 1000)), ("5,000x10_000", (5000, 10000)), ("4X8", (4, 8))],
    ids=["plain", "separators", "upper-case-x"],
)
def test_parse_size(text: str, expected: tuple[int, int]) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["500", "0x10", "ax1"], ids=["no-x", "zero-nodes", "not-a-number"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"NODESxPODS|at least 1"):
        parse_size(text)


def test_rounds_rotate_every_contender_through_every_position() -> None:
    orders = [rotation(i) for i in range(3)]
    assert orders[0] == ["ceiling", "reference", "kubesched"]
    for position in range(3):
        assert {order[position] for order in orders} == CONTENDERS


def test_percentile_is_nearest_rank() -> None:
    values = list(range(1, 101))
    assert (percentile(values, 50), percentile(values, 99), percentile(values, 100)) == (
        50,
        99,
        100,
    )
    assert math.isnan(percentile([], 50))


def test_update_doc_replaces_only_the_generated_block(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Reading watch events\n\nkept\n")
    update_doc(doc, f"{BEGIN}\nfirst\n{END}\n")
    update_doc(doc, f"{BEGIN}\nsecond\n{END}\n")
    text = doc.read_text()
    assert "## Reading watch events\n\nkept" in text
    assert "second" in text and "first" not in text
    assert text.count(BEGIN) == 1


def test_workloads_give_every_pod_a_fitting_node() -> None:
    """Mixed pods avoid the tainted nodes unless they tolerate them, and anti-affinity groups
    never need more hosts than a small cluster has."""
    nodes = MIXED.nodes(6)
    pods = MIXED.pods(12, "bench-kubesched", "smoke")
    assert sum(1 for n in nodes if n["spec"].get("taints")) == 1
    groups = [p["metadata"]["labels"]["app"] for p in pods]
    assert max(groups.count(g) for g in set(groups) if g.startswith("anti-")) <= 5
    assert all(
        p["spec"]["schedulerName"] == "bench-kubesched"
        for p in BASIC.pods(3, "bench-kubesched", "s")
    )


def test_each_plugin_workload_exercises_its_plugin() -> None:
    """Every pod is placed, and the plugin under test is the one doing the work."""
    spread = run_plugin_cost("PodTopologySpread", 30, 12)
    assert spread.scheduled == spread.pods == 12
    assert spread.calls_per_pod["PreFilter"] == 1 and spread.calls_per_pod["Filter"] >= 1
    preemption = run_plugin_cost("DefaultPreemption", 10, 5)
    assert preemption.scheduled == preemption.pods == 5  # each one preempted a victim
    assert preemption.calls_per_pod["PostFilter"] >= 1
    affinity = run_plugin_cost("InterPodAffinity", 100, 12)
    assert affinity.scheduled == 12 and affinity.us_per_pod["Filter"] > 0


def test_in_memory_path_produces_figures() -> None:
    (result,) = run_sizes([10], 20, repeats=1, progress=lambda _line: None)
    assert result.scheduled == 20
    assert result.pods_per_second > 0 and result.pods_per_cpu_second > 0
    assert {"PreFilter", "Filter", "Score"} <= set(result.points_us_per_pod)
    profile = profile_run(10, 20)
    assert {"Filter", "Bind"} <= {point for point, _seconds, _calls in profile.points}
    assert {plugin for plugin, *_ in profile.plugins} >= {"NodeResourcesFit", "DefaultBinder"}
    assert profile.top and profile.profiled_seconds > 0


def test_quick_run_through_every_contender(tmp_path: Path) -> None:
    if missing := _control_plane_missing():
        if IN_CI:
            pytest.fail(f"CI=true and no control plane can be had: {missing}", pytrace=False)
        pytest.skip(f"no control plane: {missing}")
    doc = tmp_path / "benchmarks.md"
    shutil.copy(ROOT / "docs" / "benchmarks.md", doc)
    results = tmp_path / "results.json"
    command = [sys.executable, "-m", "bench", "run", "--quick", "--out", str(doc)]
    done = subprocess.run(
        [*command, "--json", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,  # a first build of the control plane takes a while
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    data = json.loads(results.read_text())
    assert "same" in data["conditions"]["profile_check"]
    assert [(c["workload"], c["arrival"]) for c in data["cases"]] == [
        ("SchedulingBasic", "backlog"),
        ("SchedulingBasic", "burst"),
        ("PreemptionBasic", "burst"),
        ("Mixed", "burst"),
    ]
    for case in data["cases"]:
        # The binding ceiling ignores every constraint: a bound for SchedulingBasic only.
        expected = CONTENDERS if case["workload"] == "SchedulingBasic" else SCHEDULERS
        assert {run["contender"] for run in case["runs"]} == expected
        for run in case["runs"]:
            where = f"{case['key']} {run['contender']}"
            assert run["complete"], where
            assert run["pods_per_second"] > 0, where
            # Every write was counted by the apiserver: each pod's Binding at least.
            assert run["writes"]["bindings"] >= run["pods"], where
            # One Scheduled event each: the ceiling writes what the schedulers write.
            assert run["writes"]["events"] >= run["pods"], where
            if case["workload"] == "PreemptionBasic" and run["contender"] != "ceiling":
                # Each 3-CPU pod preempted three 900m pods, and first failed (status patch).
                assert run["writes"]["pod deletes"] >= 3 * run["pods"], where
                assert run["writes"]["pod status"] >= run["pods"], where
            assert run["cpu_seconds"] >= 0 and run["peak_rss_mb"] > 0, where
            if case["arrival"] == "burst":
                assert run["p50_ms"] is not None and run["p99_ms"] >= run["p50_ms"], where
            else:
                assert run["p50_ms"] is None, where
            if run["contender"] != "ceiling":  # the schedulers' own metrics were read
                assert run["attempts"].get("scheduled", 0) >= run["pods"], where
    assert [m["nodes"] for m in data["memory"]] == [20, 100]
    assert data["profile"]["points"]
    costs = {c["plugin"]: c for c in data["plugin_costs"]}
    assert set(costs) == {"PodTopologySpread", "InterPodAffinity", "DefaultPreemption"}
    assert all(c["scheduled"] == c["pods"] for c in costs.values())
    assert {"PreFilter", "Filter", "Score"} <= set(costs["PodTopologySpread"]["us_per_pod"])
    assert "PostFilter" in costs["DefaultPreemption"]["us_per_pod"]

    text = doc.read_text()
    again = subprocess.run(
        [sys.executable, "-m", "bench", "render", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.split(BEGIN, 1)[1].split(END, 1)[0] in text  # the same Markdown again
    assert "## Reading watch events" in text
    assert text.count(BEGIN) == 1 and END in text
    for heading in (
        "### Targets",
        "### SchedulingBasic, 4 nodes / 8 pods (backlog)",
        "### In memory",
        "### The plugins that look at other pods",
    ):
        assert heading in text
