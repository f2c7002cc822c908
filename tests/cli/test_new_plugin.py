"""``kubesched new-plugin`` end to end, and the example plugin installed on its own.

A plugin is scaffolded into a temporary directory, pip-installed (editable) into a fresh
virtualenv next to a wheel of the core, its generated tests run there, ``kubesched plugins``
lists it, a profile enables it, and ``simulate`` and ``explain`` show its effect. The core's
dependencies come from this interpreter's site-packages through a .pth file (as in
tests/install/test_third_party_plugin.py), so nothing but the build backend is downloaded.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from kubesched import KubeschedError
from kubesched.cli.scaffold import POINTS, parse_points, render_plugin, write_plugin
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "node_metric_score"
LABEL = "example.com/gpu-temperature"

CLUSTER = f"""
apiVersion: v1
kind: List
items:
- {{apiVersion: v1, kind: Node, metadata: {{name: cold, labels: {{{LABEL}: "20"}}}},
   status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}}}
- {{apiVersion: v1, kind: Node, metadata: {{name: hot, labels: {{{LABEL}: "90"}}}},
   status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}}}
- {{apiVersion: v1, kind: Node, metadata: {{name: unlabelled}},
   status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}}}
- {{apiVersion: v1, kind: Pod, metadata: {{name: a, namespace: default}},
   spec: {{schedulerName: custom-scheduler, containers: [{{name: c, image: nginx}}]}}}}
- {{apiVersion: v1, kind: Pod, metadata: {{name: b, namespace: default}},
   spec: {{schedulerName: custom-scheduler, containers: [{{name: c, image: nginx}}]}}}}
"""


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


class Env:
    """A fresh virtualenv with a wheel of the core installed (``PYTHONPATH`` not inherited)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")
        self.environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def pip_install(self, *args: str) -> str:
        command = [sys.executable, "-m", "pip", "--python", self.python, "install", "-q"]
        return ok(run([*command, "--no-deps", *args], env=self.environ))

    def kubesched(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return run([str(self.path / "bin" / "kubesched"), *args], cwd=cwd, env=self.environ)

    def pytest(self, directory: Path) -> subprocess.CompletedProcess[str]:
        command = [self.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        return run(command, cwd=directory, env=self.environ)


def make_env(base: Path) -> Env:
    """A venv seeing this interpreter's packages (for the core's dependencies and pytest),
    with the core installed from a wheel built from this checkout."""
    wheels = base / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels)]
    ok(run([*command, str(ROOT)]))
    venv.EnvBuilder(with_pip=False).create(base / "venv")
    env = Env(base / "venv")
    purelib = ok(run([env.python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]))
    deps = [p for p in {*site.getsitepackages(), site.getusersitepackages()} if Path(p).is_dir()]
    lines = [f"import site; site.addsitedir({d!r})" for d in deps]
    Path(purelib.strip(), "_kubesched_test_deps.pth").write_text("\n".join(lines) + "\n")
    env.pip_install("--ignore-installed", *map(str, wheels.glob("kubesched-*.whl")))
    return env


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Env:
    return make_env(tmp_path_factory.mktemp("new-plugin"))


def readme_profile(readme: str) -> str:
    [block] = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    return block


def test_scaffold_install_test_list_enable_simulate(env, tmp_path):
    plugin = tmp_path / "gpu-temperature"
    made = env.kubesched(
        "new-plugin", "GpuTemperature", "--points", "filter,score", "--dir", str(plugin)
    )
    assert f"wrote plugin GpuTemperature (kubesched-gpu-temperature) to {plugin}" in ok(made)

    env.pip_install("-e", str(plugin))
    tested = env.pytest(plugin)
    assert re.search(r"\b14 passed\b", ok(tested)), tested.stdout  # 13 + sign_pod

    listed = {p["name"]: p for p in json.loads(ok(env.kubesched("plugins", "-o", "json")))}
    assert listed["GpuTemperature"]["distribution"] == "kubesched-gpu-temperature"
    assert listed["GpuTemperature"]["extension_points"] == ["filter", "score"]

    profile = tmp_path / "profile.yaml"
    profile.write_text(readme_profile((plugin / "README.md").read_text()))
    assert "valid (1 profile(s): custom-scheduler)" in ok(
        env.kubesched("config", "validate", str(profile))
    )
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    files = [str(cluster), "--config", str(profile)]
    placed = json.loads(ok(env.kubesched("simulate", *files, "-o", "json")))
    assert {p["name"]: p["node"] for p in placed["pods"]} == {"a": "hot", "b": "hot"}

    explained = ok(env.kubesched("explain", "a", "--cluster", *files))
    assert "Scheduled on hot: highest total score" in explained
    row = next(line for line in explained.splitlines() if line.startswith("  unlabelled "))
    assert f"node(s) didn't have label {LABEL}" in row
    detail = json.loads(ok(env.kubesched("simulate", *files, "--explain", "-o", "json")))
    attempt = detail["pods"][0]["attempts"][0]
    assert {"name": "GpuTemperature", "weight": 1} in attempt["scorePlugins"]
    hot = next(n for n in attempt["nodes"] if n["name"] == "hot")
    assert {
        "plugin": "GpuTemperature",
        "weight": 1,
        "raw": 90,
        "normalized": 90,
        "weighted": 90,
    } in (hot["score"])


def test_new_plugin_mistakes_are_one_line_each(env, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("mine")
    cases = [
        (["gpu_temp"], "plugin name 'gpu_temp': use the name a profile will write"),
        (["GpuTemp", "--points", "filter,sorce"], "--points: unknown extension point(s): sorce"),
        (["GpuTemp", "--dir", str(tmp_path / "taken")], "already exists and is not empty"),
    ]
    for argv, message in cases:
        result = env.kubesched("new-plugin", *argv)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr
        assert "Traceback" not in result.stderr
    assert (tmp_path / "taken" / "file").read_text() == "mine"


def test_the_example_plugin_installs_and_works_on_its_own(env, tmp_path):
    example = shutil.copytree(EXAMPLE, tmp_path / "example")  # building writes into the tree
    env.pip_install(str(example))
    listed = {p["name"]: p for p in json.loads(ok(env.kubesched("plugins", "-o", "json")))}
    assert listed["NodeMetricScore"]["extension_points"] == ["filter", "preScore", "score"]
    assert re.search(r"\b\d+ passed\b", ok(env.pytest(example)))
    demo = example / "demo"
    config = ["--config", str(demo / "scheduler-config.yaml")]
    placed = json.loads(
        ok(env.kubesched("simulate", str(demo / "cluster.yaml"), *config, "-o", "json"))
    )
    assert [(p["name"], p["node"]) for p in placed["pods"]] == [("trainer", "gpu-cool")]
    explained = ok(
        env.kubesched("explain", "trainer", "--cluster", str(demo / "cluster.yaml"), *config)
    )
    assert "node(s) had example.com/gpu-temperature above 85" in explained


# -- the generated code, for every extension point ------------------------------------------------
COMBINATIONS = [",".join(POINTS), *POINTS]


@pytest.mark.parametrize("points", COMBINATIONS, ids=["all", *POINTS])
def test_generated_tests_pass_for_every_point(tmp_path, points):
    target = write_plugin("Acme", parse_points(points), tmp_path / "acme")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), *sys.path])}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "no:kubesched", "-p", "kubesched.testing.pytest_plugin"]
    result = run(command, cwd=target, env=environ)
    assert result.returncode == 0, result.stdout + result.stderr
    if shutil.which("ruff"):
        assert ok(run(["ruff", "check", "-q", "."], cwd=target)) == ""
        assert run(["ruff", "format", "--check", "-q", "."], cwd=target).returncode == 0


def test_a_generated_pre_bind_skips_the_status_write_for_pods_it_has_no_work_for(tmp_path):
    """The template's PreBind plugin answers Skip at PreBindPreFlight for a pod without the
    label (as kube's plugins do when their PreBind has nothing to do), so that pod is bound
    without first writing its status.nominatedNodeName; a labelled pod is nominated first."""
    target = write_plugin("PreBound", ["preBind"], tmp_path / "pre-bound")
    sys.path.insert(0, str(target))
    try:
        module = importlib.import_module("kubesched_pre_bound")
    finally:
        sys.path.remove(str(target))
        sys.modules.pop("kubesched_pre_bound", None)
    labelled = make_pod("labelled").label(module.DEFAULT_LABEL, "yes")
    with Harness.for_plugin(module.PreBound, nodes=[make_node("n1")]) as harness:
        assert harness.schedule(make_pod("plain")).node == "n1"
        assert harness.schedule(labelled).node == "n1"
        assert harness.backend.nominations == {"default/labelled": "n1"}


def test_points_are_read_loosely_and_in_run_order():
    assert parse_points("Score, pre-filter,FILTER") == ["preFilter", "filter", "score"]
    assert parse_points("normalize_score") == ["score", "normalizeScore"]
    with pytest.raises(KubeschedError, match="no points"):
        parse_points(" , ")


def test_rendered_package_has_every_file():
    files = render_plugin("GpuTemperature", ["filter"])
    assert sorted(files) == [
        ".gitignore",
        "README.md",
        "kubesched_gpu_temperature/__init__.py",
        "kubesched_gpu_temperature/py.typed",
        "pyproject.toml",
        "tests/test_gpu_temperature.py",
        "tox.ini",
    ]
    assert 'GpuTemperature = "kubesched_gpu_temperature:GpuTemperature"' in files["pyproject.toml"]
    assert "def events_to_register" in files["kubesched_gpu_temperature/__init__.py"]
    assert (
        "def events_to_register"
        not in render_plugin("Only", ["score"])["kubesched_only/__init__.py"]
    )
