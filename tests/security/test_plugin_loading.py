"""Plugin loading: only plugins a profile names are imported, and a plugin that fails to import
stops start-up with one clear line (exit 2) before anything connects: no half-configured
scheduler. The plugins are fake distributions (a module and its ``.dist-info`` with an entry
point) on PYTHONPATH, seen by the real entry-point machinery of a ``kubesched`` process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

TRIPWIRE = """
import os, pathlib
pathlib.Path(os.environ["KUBESCHED_TRIPWIRE"]).write_text("imported")
from kubesched import hookimpl

class Tripwire:
    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, pod, node_info):
        return None
"""
BROKEN = """
raise ImportError("libacme.so.3: cannot open shared object file")
"""


def _dist(site: Path, name: str, module: str, source: str, plugin: str) -> None:
    (site / f"{module}.py").write_text(source)
    info = site / f"{name.replace('-', '_')}-1.2.3.dist-info"  # the wheel's spelling
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[kubesched.plugins]\n{plugin} = {module}:{plugin}\n")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    _dist(site, "acme-tripwire", "acme_tripwire", TRIPWIRE, "Tripwire")
    _dist(site, "acme-broken", "acme_broken", BROKEN, "AcmeBroken")
    return site


def _profile(tmp_path: Path, extra_filters: list[str]) -> Path:
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": "custom-scheduler",
                "plugins": {"filter": {"enabled": [{"name": n} for n in extra_filters]}},
            }
        ],
    }
    path = tmp_path / f"config-{len(extra_filters)}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _kubesched(site: Path, tmp_path: Path, *args: str, timeout: float = 60):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "KUBESCHED_TRIPWIRE": str(tmp_path / "tripwire"),
    }
    return subprocess.run(
        [sys.executable, "-m", "kubesched", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_the_fake_plugins_are_seen_as_installed(site, tmp_path):
    done = _kubesched(site, tmp_path, "config", "validate", str(_profile(tmp_path, ["Tripwire"])))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "tripwire").exists(), "the profile names Tripwire: it must be imported"


@pytest.mark.parametrize(
    "command",
    [["config", "validate"], ["simulate", "--config"], ["config", "show"]],
    ids=["validate", "simulate", "show"],
)
def test_plugins_no_profile_names_are_not_imported(site, tmp_path, command):
    config = str(_profile(tmp_path, []))
    done = _kubesched(site, tmp_path, *command, config)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "tripwire").exists(), "an unnamed plugin was imported"
    assert "libacme" not in done.stderr, "an unnamed broken plugin was imported"


def test_a_plugin_that_fails_to_import_fails_validation_in_one_line(site, tmp_path):
    done = _kubesched(site, tmp_path, "config", "validate", str(_profile(tmp_path, ["AcmeBroken"])))
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    line = next(line for line in done.stderr.splitlines() if "acme_broken:AcmeBroken" in line)
    for part in ("acme-broken", "1.2.3", "acme_broken:AcmeBroken", "ImportError", "libacme.so.3"):
        assert part in line, (part, line)


def test_run_with_a_plugin_that_fails_to_import_stops_before_connecting(site, tmp_path):
    """Exit 2 with the one line, before any request to the cluster and before the health
    endpoint is served: nothing half-configured ever answers /readyz."""
    with socket.socket() as listener:  # a cluster that records whether anyone came
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.1)
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "c",
                            "cluster": {"server": f"http://127.0.0.1:{listener.getsockname()[1]}"},
                        }
                    ],
                    "users": [{"name": "u", "user": {"token": "not-a-real-token"}}],
                    "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "c",
                }
            )
        )
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            health_port = probe.getsockname()[1]
        began = time.monotonic()
        done = _kubesched(
            site,
            tmp_path,
            "run",
            "--config",
            str(_profile(tmp_path, ["AcmeBroken"])),
            "--kubeconfig",
            str(kubeconfig),
            "--bind-address",
            "127.0.0.1",
            "--port",
            str(health_port),
            timeout=60,
        )
        took = time.monotonic() - began
        try:
            listener.accept()
            contacted = True
        except TimeoutError:
            contacted = False
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr
    assert "AcmeBroken" in done.stderr and "ImportError" in done.stderr
    assert not contacted, "kubesched reached the cluster with a broken profile"
    assert took < 30
