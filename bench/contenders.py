"""The three contenders, each a process of its own started for one run and stopped after it.

1. ``ceiling``: :mod:`bench.ceiling`, a loop that only POSTs Bindings;
2. ``reference``: the upstream kube-scheduler built with the control plane;
3. ``kubesched``: ``python -m kubesched run``.

Every one authenticates as ``system:kube-scheduler`` (the apiserver's bootstrap RBAC gives that
user the scheduler's roles), has its own ``schedulerName``, leader election off and, for the two
schedulers, the same client QPS/burst and the same profile: kube-scheduler's defaults (every one
of them, volumes and DRA included, now that kubesched has them all; :data:`DISABLED_PLUGINS` is
where any left out would be named). :func:`profile_check` proves the two profiles enable the
same plugins with the same score weights.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kubesched.testing import _procs
from kubesched.testing.controlplane import Cluster

__all__ = [
    "CONTENDERS",
    "DISABLED_PLUGINS",
    "QPS",
    "Running",
    "profile_check",
    "scheduler_config",
    "start_contender",
]

ROOT = Path(__file__).resolve().parents[1]
SCHEDULER_USER = "system:kube-scheduler"
#: Client QPS/burst of both schedulers: high enough that the client limiter is not measured.
QPS = 5000
#: kube-scheduler v1.37 defaults left out of both profiles (none: kubesched has them all).
DISABLED_PLUGINS: tuple[str, ...] = ()
CONTENDERS = ("ceiling", "reference", "kubesched")


def scheduler_name(contender: str) -> str:
    return f"bench-{contender}"


def scheduler_config(contender: str, kubeconfig: Path | None = None) -> dict[str, Any]:
    """The KubeSchedulerConfiguration both schedulers run (only the profile's name differs)."""
    config: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"qps": QPS, "burst": QPS},
        "profiles": [
            {
                "schedulerName": scheduler_name(contender),
                **(
                    {
                        "plugins": {
                            "multiPoint": {"disabled": [{"name": n} for n in DISABLED_PLUGINS]}
                        }
                    }
                    if DISABLED_PLUGINS
                    else {}
                ),
            }
        ],
    }
    if kubeconfig is not None:
        config["clientConnection"]["kubeconfig"] = str(kubeconfig)
    return config


@dataclass
class Running:
    """A started contender: its process, where it logs, and how to read its metrics."""

    name: str
    pid: int
    log_path: Path
    stop: Callable[[], None]
    startup_seconds: float
    metrics: Callable[[], str] | None = None

    def attempts(self) -> dict[str, float]:
        """``scheduler_schedule_attempts_total`` by result (schedulers only)."""
        if self.metrics is None:
            return {}
        try:
            text = self.metrics()
        except OSError:
            return {}
        totals: dict[str, float] = {}
        for line in text.splitlines():
            if line.startswith("scheduler_schedule_attempts_total{"):
                labels, _, value = line.rpartition(" ")
                result = labels.split('result="', 1)[1].split('"', 1)[0]
                totals[result] = totals.get(result, 0.0) + float(value)
        return totals


def _read(url: str, context: Any = None) -> str:
    with urllib.request.urlopen(url, timeout=10, context=context) as response:
        return response.read().decode()


def start_contender(name: str, cluster: Cluster, workdir: Path, namespace: str) -> Running:
    """Start contender ``name`` and return once it is ready (its caches filled)."""
    kubeconfig = cluster.kubeconfig_for(SCHEDULER_USER)
    directory = workdir / f"{name}-{time.monotonic_ns()}"
    directory.mkdir(parents=True)
    began = time.monotonic()
    if name == "reference":
        reference = cluster.start_reference_scheduler(scheduler_config(name), timeout=120)
        import ssl

        insecure = ssl._create_unverified_context()
        return Running(
            name,
            reference.child.pid,
            reference.log_path,
            reference.stop,
            time.monotonic() - began,
            lambda: _read(reference.metrics_url, insecure),
        )
    if name == "kubesched":
        config_path = directory / "config.yaml"
        config_path.write_text(yaml.safe_dump(scheduler_config(name, kubeconfig)))
        (port,) = _procs.free_ports(1)
        args = [
            sys.executable,
            "-m",
            "kubesched",
            "run",
            "--config",
            str(config_path),
            "--leader-elect",
            "false",
            "--bind-address",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        child = _procs.Child("kubesched", args, directory / "kubesched.log", cwd=ROOT)
        base = f"http://127.0.0.1:{port}"
        _wait(child, lambda: _procs.http_get(f"{base}/readyz") == 200, 120)
        return Running(
            name,
            child.pid,
            child.log_path,
            child.stop,
            time.monotonic() - began,
            lambda: _read(f"{base}/metrics"),
        )
    if name == "ceiling":
        ready = directory / "ready"
        args = [
            sys.executable,
            "-m",
            "bench.ceiling",
            "--kubeconfig",
            str(kubeconfig),
            "--scheduler-name",
            scheduler_name(name),
            "--namespace",
            namespace,
            "--ready-file",
            str(ready),
        ]
        child = _procs.Child("ceiling", args, directory / "ceiling.log", cwd=ROOT)
        _wait(child, ready.exists, 60)
        return Running(name, child.pid, child.log_path, child.stop, time.monotonic() - began)
    raise ValueError(f"unknown contender {name!r}; known: {', '.join(CONTENDERS)}")


def _wait(child: _procs.Child, ready: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.alive():
            raise RuntimeError(
                f"{child.name} exited with {child.process.returncode} before it was ready; "
                f"{child.log_path} ends with:\n{child.log_tail()}"
            )
        if ready():
            return
        time.sleep(0.05)
    child.stop()
    raise RuntimeError(f"{child.name} not ready after {timeout:.0f}s; see {child.log_path}")


def _reference_plugins(binary: Path, config: dict[str, Any], workdir: Path) -> dict[str, int]:
    """Plugin -> score weight (0: not a Score plugin) as kube-scheduler resolves ``config``."""
    workdir.mkdir(parents=True, exist_ok=True)
    source, written = workdir / "reference-in.yaml", workdir / "reference-effective.yaml"
    source.write_text(yaml.safe_dump(config))
    subprocess.run(
        [str(binary), f"--config={source}", f"--write-config-to={written}"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    profile = yaml.safe_load(written.read_text())["profiles"][0]["plugins"]
    disabled = {p["name"] for p in profile["multiPoint"].get("disabled") or ()}
    plugins = {
        p["name"]: int(p.get("weight") or 0)
        for p in profile["multiPoint"].get("enabled") or ()
        if p["name"] not in disabled
    }
    for point, entries in profile.items():
        if point != "multiPoint" and (entries or {}).get("enabled"):
            raise RuntimeError(f"unexpected plugins at {point}: {entries}")
    return plugins


def _kubesched_plugins(config: dict[str, Any]) -> dict[str, int]:
    from kubesched.config import parse_config
    from kubesched.framework.registry import Registry

    parsed = parse_config(config, Registry.installed(), source="bench profile")
    plugins: dict[str, int] = {}
    for point, refs in parsed.profiles[0].plugins.items():
        for ref in refs:
            weight = ref.weight if point == "score" else 0
            plugins[ref.name] = max(plugins.get(ref.name, 0), weight)
    return plugins


def profile_check(cluster: Cluster, binary: Path, workdir: Path) -> str:
    """One line saying both schedulers enable the same plugins with the same score weights;
    raises ``RuntimeError`` listing the differences otherwise."""
    kubeconfig = cluster.kubeconfig_for(SCHEDULER_USER)
    reference = _reference_plugins(binary, scheduler_config("reference", kubeconfig), workdir)
    ours = _kubesched_plugins(scheduler_config("kubesched", kubeconfig))
    # kube-scheduler's framework runs a Score plugin whose configured weight is 0 with weight 1
    # (VolumeBinding's default entry has none); kubesched resolves it to 1 at parse time.
    for name, weight in reference.items():
        if weight == 0 and ours.get(name) == 1:
            reference[name] = 1
    if reference != ours:
        only_ref = sorted(set(reference) - set(ours))
        only_ours = sorted(set(ours) - set(reference))
        weights = sorted(
            f"{n}: {reference[n]} vs {ours[n]}"
            for n in set(reference) & set(ours)
            if reference[n] != ours[n]
        )
        raise RuntimeError(
            f"profiles differ: only kube-scheduler {only_ref}, only kubesched {only_ours}, "
            f"score weights {weights}"
        )
    scored = ", ".join(f"{n} ({w})" for n, w in reference.items() if w)
    return (
        f"both schedulers run the same {len(reference)} plugins: "
        f"{', '.join(reference)}; Score weights {scored}"
    )
