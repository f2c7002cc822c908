"""A third-party plugin, built as a wheel and pip-installed into a fresh virtualenv.

Proves the promise to plugin authors: nothing in the core changes, ``kubesched plugins`` lists
the plugin, a profile that enables it runs it, and it is never imported when no profile names it.
A plugin that fails to import is reported in one line and breaks only the profiles that use it.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLUGIN_MODULE = '''
"""NodePool: pods run only on nodes of the acme pool (a third-party Filter plugin)."""
import os
import pathlib

_marker = os.environ.get("ACME_IMPORT_MARKER")
if _marker:
    pathlib.Path(_marker).write_text("imported")

from kubesched import Status, hookimpl  # noqa: E402

NAME = "NodePool"


class NodePool:
    def __init__(self, args, handle):
        self.pool = args.get("pool", "acme")

    @hookimpl
    def filter(self, state, pod, node_info):
        if node_info.node.labels.get("pool") != self.pool:
            return Status.unresolvable(f"node(s) not in pool {self.pool}")
        return None
'''

PLUGIN_PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-kubesched-nodepool"
version = "1.2.3"
dependencies = []

[project.entry-points."kubesched.plugins"]
NodePool = "acme_nodepool:NodePool"
Broken = "acme_nodepool.broken:Broken"

[tool.setuptools]
packages = ["acme_nodepool"]
"""

CLUSTER = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: plain},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: pooled, labels: {pool: acme}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: default},
   spec: {schedulerName: custom-scheduler, containers: [{name: c, image: nginx}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: default},
   spec: {schedulerName: custom-scheduler, containers: [{name: c, image: nginx}]}}
"""


def profile_yaml(filters: list[str]) -> str:
    enabled = "".join(f"\n          - name: {name}" for name in filters) or " []"
    return (
        textwrap.dedent("""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
          - schedulerName: custom-scheduler
            plugins:
              multiPoint:
                enabled:
                  - name: PrioritySort
                  - name: DefaultBinder
              filter:
                enabled:""")
        + enabled
        + "\n"
    )


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def venv_with_plugin(tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv holding wheels of the core and the third-party plugin.

    The core's dependencies come from this interpreter's site-packages (through a .pth file) so
    the test needs no network; the core and the plugin are pip-installed from wheels.
    """
    base = tmp_path_factory.mktemp("third-party")
    source = base / "src"
    (source / "acme_nodepool").mkdir(parents=True)
    (source / "pyproject.toml").write_text(PLUGIN_PYPROJECT)
    (source / "acme_nodepool" / "__init__.py").write_text(PLUGIN_MODULE)
    (source / "acme_nodepool" / "broken.py").write_text(
        "raise ImportError('libacme.so: cannot open shared object file')\n"
    )
    wheels = base / "wheels"
    for project in (ROOT, source):
        built = run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "-q",
                "-w",
                str(wheels),
                str(project),
            ]
        )
        assert built.returncode == 0, built.stderr
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    deps = [p for p in {*site.getsitepackages(), site.getusersitepackages()} if Path(p).is_dir()]
    # addsitedir (not a bare path) so editable installs among the dependencies work too.
    lines = [f"import site; site.addsitedir({d!r})" for d in deps]
    Path(purelib.stdout.strip(), "_kubesched_test_deps.pth").write_text("\n".join(lines) + "\n")
    installed = run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--ignore-installed",
            "-q",
            *map(str, sorted(wheels.glob("*.whl"))),
        ]
    )
    assert installed.returncode == 0, installed.stderr
    (base / "cluster.yaml").write_text(CLUSTER)
    return env_dir, base


def kubesched(env_dir: Path, *args: str, marker: Path | None = None):
    env = {**os.environ, "ACME_IMPORT_MARKER": str(marker) if marker else ""}
    return run([str(env_dir / "bin" / "kubesched"), *args], env=env)


def test_installed_plugin_is_listed_with_its_distribution(venv_with_plugin):
    env_dir, _ = venv_with_plugin
    listed = kubesched(env_dir, "plugins", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    plugins = {p["name"]: p for p in json.loads(listed.stdout)}
    assert plugins["NodePool"]["distribution"] == "acme-kubesched-nodepool"
    assert plugins["NodePool"]["version"] == "1.2.3"
    assert plugins["NodePool"]["extension_points"] == ["filter"]
    broken = plugins["Broken"]["error"]
    assert broken == (
        'plugin "Broken" from acme-kubesched-nodepool 1.2.3 '
        "(acme_nodepool.broken:Broken) failed to import: ImportError: "
        "libacme.so: cannot open shared object file"
    )


def test_enabled_plugin_runs(venv_with_plugin):
    env_dir, base = venv_with_plugin
    config = base / "with-nodepool.yaml"
    config.write_text(profile_yaml(["NodePool"]))
    marker = base / "imported-when-enabled"
    result = kubesched(
        env_dir,
        "simulate",
        str(base / "cluster.yaml"),
        "--config",
        str(config),
        "-o",
        "json",
        marker=marker,
    )
    assert result.returncode == 0, result.stderr
    placed = {p["name"]: p["node"] for p in json.loads(result.stdout)["pods"]}
    assert placed == {"a": "pooled", "b": "pooled"}
    assert marker.exists()


def test_plugin_is_never_imported_when_no_profile_names_it(venv_with_plugin):
    env_dir, base = venv_with_plugin
    config = base / "without-nodepool.yaml"
    config.write_text(profile_yaml([]))
    marker = base / "imported-when-not-named"
    result = kubesched(
        env_dir,
        "simulate",
        str(base / "cluster.yaml"),
        "--config",
        str(config),
        "-o",
        "json",
        marker=marker,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"] == {
        "scheduled": 2,
        "unschedulable": 0,
        "leftAlone": {},
    }
    assert not marker.exists()


def test_a_broken_plugin_named_by_a_profile_is_one_clear_error(venv_with_plugin):
    env_dir, base = venv_with_plugin
    config = base / "with-broken.yaml"
    config.write_text(profile_yaml(["Broken"]))
    result = kubesched(env_dir, "simulate", str(base / "cluster.yaml"), "--config", str(config))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        'profiles[0].plugins.filter.enabled[0]: plugin "Broken" from acme-kubesched-nodepool '
        "1.2.3 (acme_nodepool.broken:Broken) failed to import: ImportError: libacme.so: "
        "cannot open shared object file"
    ) in result.stderr
