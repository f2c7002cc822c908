"""Running ``kubesched run`` as a separate process against the test control plane."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, utils

ROOT = Path(__file__).resolve().parents[2]
SA_NAMESPACE = "kube-system"
SA_NAME = "custom-scheduler"
SA_USER = f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"
SA_GROUPS = [
    "system:serviceaccounts",
    f"system:serviceaccounts:{SA_NAMESPACE}",
    "system:authenticated",
]
LABEL = "scheduler.custom/enabled"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def apply_rbac(admin: client.ApiClient) -> None:
    """deploy/manifests/rbac.yaml, created by the admin (existing objects are left as they are)."""
    for doc in yaml.safe_load_all((ROOT / "deploy" / "manifests" / "rbac.yaml").read_text()):
        try:
            utils.create_from_dict(admin, doc)
        except utils.FailToCreateError as exc:
            if any(e.status != 409 for e in exc.api_exceptions):
                raise


def seed_config(
    path: Path,
    *,
    leader_elect: bool = False,
    lease: dict[str, Any] | None = None,
    backoff: tuple[float, float] = (1, 10),
    fit: bool = False,
) -> Path:
    """deploy/scheduler-config.yaml with leader election and backoff set for a test;
    ``fit`` adds NodeResourcesFit to the profile."""
    config = yaml.safe_load((ROOT / "deploy" / "scheduler-config.yaml").read_text())
    if fit:
        points = config["profiles"][0]["plugins"]
        points["filter"]["enabled"].append({"name": "NodeResourcesFit"})
        points["preFilter"] = {
            "enabled": [{"name": "NodeResourcesFit"}],
            "disabled": [{"name": "*"}],
        }
    config["leaderElection"] = {
        "leaderElect": leader_elect,
        "resourceNamespace": SA_NAMESPACE,
        "resourceName": SA_NAME,
        **(lease or {}),
    }
    config["podInitialBackoffSeconds"], config["podMaxBackoffSeconds"] = backoff
    path.write_text(yaml.safe_dump(config))
    return path


class KubeschedProcess:
    """``python -m kubesched run`` with its own health port and log file; ``args`` go after
    the command's own (``--plugin-timeout 1``), ``env`` is added to this process's, and
    ``module`` replaces ``kubesched`` as what ``python -m`` runs (a wrapper of its command
    line)."""

    def __init__(
        self,
        config: Path,
        kubeconfig: Path,
        log: Path,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        module: str = "kubesched",
    ) -> None:
        self.port = free_port()
        self.log = log
        self._log_file = log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                module,
                "--log-format",
                "json",
                "-v",
                "run",
                "--config",
                str(config),
                "--kubeconfig",
                str(kubeconfig),
                "--bind-address",
                "127.0.0.1",
                "--port",
                str(self.port),
                *args,
            ],
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )

    def get(self, path: str, timeout: float = 5) -> tuple[int, str]:
        try:
            url = f"http://127.0.0.1:{self.port}{path}"
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return 0, ""

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"kubesched exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"
                )
            if self.get("/readyz")[0] == 200:
                return
            time.sleep(0.1)
        raise AssertionError(f"kubesched not ready in {timeout}s:\n{self.log.read_text()[-3000:]}")

    def metric(self, name: str, **labels: str) -> float:
        """The value of one sample of /metrics (0 when absent)."""
        status, text = self.get("/metrics")
        if status != 200:
            return 0.0
        total = 0.0
        for line in text.splitlines():
            if not line.startswith(name + "{") and not line.startswith(name + " "):
                continue
            if all(f'{k}="{v}"' in line for k, v in labels.items()):
                total += float(line.rsplit(" ", 1)[1])
        return total

    def terminate(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self._log_file.close()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self._log_file.close()


def connections_to(pid: int, port: int) -> set[int]:
    """The established TCP connections (socket inodes) process ``pid`` holds to ``port`` on
    loopback, from /proc: what the apiserver sees as this client's connections."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    found = set()
    for table in ("tcp", "tcp6"):
        with open(f"/proc/{pid}/net/{table}", encoding="ascii") as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if fields[3] == "01" and remote_port == port and int(fields[9]) in inodes:
                    found.add(int(fields[9]))
    return found


def wait_for(predicate, timeout: float, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def pod_manifest(
    name: str, scheduler: str = "custom-scheduler", cpu: str | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "registry.k8s.io/pause:3.10"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulerName": scheduler, "containers": [container]},
    }
