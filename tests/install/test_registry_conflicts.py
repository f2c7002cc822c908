"""Installed distributions that clash or misbehave: a plugin name two distributions register, a
plugin module that exits or raises a BaseException at import, a misspelt hook behind an entry
point. Each is one clear error naming the plugin and its distribution, never a silent pick, a
silent exit, or a traceback.

The throwaway distributions are installed as pip lays them out (the package, and a
``<name>-<version>.dist-info`` with ``METADATA``, ``entry_points.txt`` and ``RECORD``) into a
directory put on ``PYTHONPATH``: ``importlib.metadata`` finds them as it finds any installed
distribution, with no wheel build (test_third_party_plugin.py covers building and pip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PLUGIN = """
from kubesched import hookimpl


class {cls}:
    def __init__(self, args, handle):
        pass

    @hookimpl
    def {hook}(self, state, pod, node_info):
        return None
"""


def install(site: Path, dist: str, version: str, modules: dict[str, str], eps: dict[str, str]):
    """Install distribution ``dist`` (``modules``: file path -> source) into ``site``."""
    written = []
    for module, source in modules.items():
        path = site / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
        written.append(path.relative_to(site).as_posix())
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in eps.items())
    (info / "entry_points.txt").write_text(f"[kubesched.plugins]\n{lines}")
    record = [*written, *(f"{info.name}/{f}" for f in ("METADATA", "entry_points.txt", "RECORD"))]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in record))


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    install(
        site,
        "acme-pool",
        "1.0",
        {"acme_pool.py": PLUGIN.format(cls="NodePool", hook="filter")},
        {"NodePool": "acme_pool:NodePool"},
    )
    install(
        site,
        "other-pool",
        "2.3",
        {
            "other_pool/__init__.py": PLUGIN.format(cls="Pool", hook="filter"),
            "other_pool/quits.py": "import sys\nsys.exit(0)\n",
            "other_pool/fails.py": "raise SystemExit('libpool is missing')\n",
            "other_pool/base.py": "raise BaseException('stop')\n",
            "other_pool/typo.py": PLUGIN.format(cls="Typo", hook="filters"),
        },
        {
            "NodePool": "other_pool:Pool",
            "NodeName": "other_pool:Pool",
            "Quits": "other_pool.quits:Quits",
            "Fails": "other_pool.fails:Fails",
            "Base": "other_pool.base:Base",
            "Typo": "other_pool.typo:Typo",
        },
    )
    return site


def kubesched(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )


def profile(site: Path, *filters: str, defaults: bool = False) -> str:
    path = site.parent / f"config-{'-'.join(filters) or 'defaults'}.yaml"
    plugins = (
        ""
        if defaults
        else "\n".join(
            [
                "    plugins:",
                "      multiPoint:",
                "        enabled: [{name: PrioritySort}, {name: DefaultBinder}]",
                "        disabled: [{name: '*'}]",
                "      filter:",
                "        enabled: [" + ", ".join(f"{{name: {f}}}" for f in filters) + "]",
            ]
        )
    )
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        f"profiles:\n  - schedulerName: custom-scheduler\n{plugins}\n"
    )
    return str(path)


POOL_CLASH = (
    'plugin "NodePool" is registered by 2 distributions: acme-pool 1.0 (acme_pool:NodePool), '
    "other-pool 2.3 (other_pool:Pool); uninstall all but one of them"
)
IMPORT_ERRORS = {
    "Quits": 'plugin "Quits" from other-pool 2.3 (other_pool.quits:Quits) failed to import: '
    "it called sys.exit(0)",
    "Fails": 'plugin "Fails" from other-pool 2.3 (other_pool.fails:Fails) failed to import: '
    "it called sys.exit('libpool is missing')",
    "Base": 'plugin "Base" from other-pool 2.3 (other_pool.base:Base) failed to import: '
    "BaseException: stop",
    "Typo": 'plugin "Typo" from other-pool 2.3 (other_pool.typo:Typo): @kubesched.hookimpl '
    'method "filters" is not a kubesched hook; did you mean "filter"?',
}


def test_plugins_lists_each_problem_on_its_row(site):
    result = kubesched(site, "plugins", "-o", "json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["NodePool"]["error"] == POOL_CLASH
    assert rows["NodeName"]["error"].startswith(
        'plugin "NodeName" is registered by 2 distributions: kubesched-node-name 0.1.0 '
        "(kubesched_node_name:NodeName), other-pool 2.3 (other_pool:Pool)"
    )
    assert {name: rows[name]["error"] for name in IMPORT_ERRORS} == IMPORT_ERRORS


def test_a_profile_naming_a_plugin_two_distributions_register_is_an_error(site):
    result = kubesched(site, "config", "validate", profile(site, "NodePool"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"  profiles[0].plugins.filter.enabled[0]: {POOL_CLASH}" in result.stderr.splitlines()


def test_a_default_plugin_another_distribution_also_registers_is_an_error(site):
    result = kubesched(site, "config", "validate", profile(site, defaults=True))
    assert result.returncode == 2, result.stderr
    assert (
        'profiles[0].plugins: plugin "NodeName" is registered by 2 distributions: '
        "kubesched-node-name 0.1.0 (kubesched_node_name:NodeName), other-pool 2.3 "
        "(other_pool:Pool); uninstall all but one of them"
    ) in result.stderr


@pytest.mark.parametrize("name", list(IMPORT_ERRORS))
def test_a_plugin_that_exits_or_raises_at_import_is_a_clear_error(site, name):
    result = kubesched(site, "config", "validate", profile(site, name))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        f"  profiles[0].plugins.filter.enabled[0]: {IMPORT_ERRORS[name]}"
        in result.stderr.splitlines()
    )


def test_profiles_not_naming_a_broken_plugin_still_run(site):
    result = kubesched(site, "config", "validate", profile(site, "NodeUnschedulable"))
    assert result.returncode == 0, result.stderr
