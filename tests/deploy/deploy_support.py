"""Helpers for the deployment tests (imported by their conftest and by the tests)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
MANIFESTS = DEPLOY / "manifests"
REPORT_KEY = pytest.StashKey[list[str]]()


def report(config: pytest.Config, text: str) -> None:
    """Show ``text`` in the run's terminal summary (and print it, for ``-s``)."""
    print(text)
    config.stash.setdefault(REPORT_KEY, []).append(text)


def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kwargs)


@dataclass(frozen=True)
class Installed:
    """kubesched as the image holds it: a virtualenv made by deploy/install-kubesched.sh."""

    prefix: Path
    #: The script's output.
    log: str
    #: Third-party plugins: (profile name, distribution, how it went in).
    extra_plugins: tuple[tuple[str, str, str], ...]

    def bin(self, name: str) -> Path:
        return self.prefix / "bin" / name


PLUGIN_MODULE = '''\
"""{name}: a third-party Filter plugin that keeps nodes labelled {label}."""
from kubesched import Status, hookimpl


class {name}:
    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        if "{label}" not in node_info.node.labels:
            return Status.unresolvable("node(s) didn't have label {label}")
        return None
'''


def plugin_wheel(directory: Path, name: str, dist: str, label: str) -> Path:
    """A wheel of a one-module third-party plugin, written directly (no build backend needed)."""
    module = dist.replace("-", "_")
    info = f"{module}-1.0.0.dist-info"
    files = {
        f"{module}.py": PLUGIN_MODULE.format(name=name, label=label),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0.0\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: kubesched-tests\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
        f"{info}/entry_points.txt": f"[kubesched.plugins]\n{name} = {module}:{name}\n",
    }
    record = []
    for path, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{path},sha256={encoded},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = directory / f"{module}-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            # A fixed timestamp: the same wheel each run, so an image build's cache holds.
            archive.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return wheel


@dataclass(frozen=True)
class ServiceAccountCredentials:
    """What the kubelet would mount for custom-scheduler, and where the apiserver is."""

    directory: Path  # holds token and ca.crt
    host: str
    port: str

    @property
    def token(self) -> str:
        return (self.directory / "token").read_text()

    @property
    def ca_path(self) -> Path:
        return self.directory / "ca.crt"

    def in_cluster_env(self) -> dict[str, str]:
        """The variables a pod has, and ours for the token directory; no kubeconfig."""
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        env.update(
            KUBERNETES_SERVICE_HOST=self.host,
            KUBERNETES_SERVICE_PORT=self.port,
            KUBESCHED_SERVICEACCOUNT_DIR=str(self.directory),
        )
        return env


def cluster_ca_pem(kubeconfig: Path) -> bytes:
    """The CA certificate a kubeconfig's current cluster is verified with."""
    document = yaml.safe_load(kubeconfig.read_text())
    contexts = {c["name"]: c["context"] for c in document.get("contexts") or []}
    cluster_name = contexts[document["current-context"]]["cluster"]
    cluster = {c["name"]: c["cluster"] for c in document["clusters"]}[cluster_name]
    if data := cluster.get("certificate-authority-data"):
        return base64.b64decode(data)
    if path := cluster.get("certificate-authority"):
        return (kubeconfig.parent / path).read_bytes()
    reason = f"{kubeconfig}: the cluster has no CA certificate to give the service account"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


# -- kubesched as the pod runs it --------------------------------------------------------------

#: Where the Deployment mounts the ConfigMap (and the image keeps its default config).
CONFIG_DIR = "/etc/kubesched"


def image_entrypoint() -> list[str]:
    """deploy/Dockerfile's ENTRYPOINT (exec form)."""
    lines = (DEPLOY / "Dockerfile").read_text().splitlines()
    (entrypoint,) = [line for line in lines if line.startswith("ENTRYPOINT ")]
    return list(json.loads(entrypoint.removeprefix("ENTRYPOINT ")))


def deployment_container() -> dict[str, Any]:
    deployment = yaml.safe_load((MANIFESTS / "deployment.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def configmap_data() -> dict[str, str]:
    configmap = yaml.safe_load((MANIFESTS / "configmap.yaml").read_text())
    return dict(configmap["data"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def https_get(port: int, path: str, token: str | None = None) -> tuple[int, str]:
    """GET ``https://127.0.0.1:port/path`` (with ``token`` as a bearer token); (0, "") while
    nothing answers. The self-signed serving certificate is accepted, as the kubelet's probes
    accept it (they do not verify)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    request = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def metric_value(text: str, name: str, /, **labels: str) -> float:
    """The one sample of ``name`` with exactly ``labels`` in a text exposition."""
    from prometheus_client.parser import text_string_to_metric_families

    found = [
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == name and s.labels == labels
    ]
    assert len(found) == 1, f"{name}{labels}: {len(found)} samples in\n{text[:3000]}"
    return float(found[0])


def pod_command(installed: Installed, config_dir: Path, port: int) -> list[str]:
    """The container's command: the image's entrypoint and the Deployment's args, with the
    ConfigMap's mount at ``config_dir`` and the secure port on ``127.0.0.1:port``."""
    entrypoint = image_entrypoint()
    local = {"--bind-address": "127.0.0.1", "--secure-port": str(port)}
    args = []
    for arg in deployment_container()["args"]:
        flag, _, value = arg.partition("=")
        args.append(f"{flag}={local.get(flag, value)}")
    return [
        str(installed.bin(entrypoint[0])),
        *(part.replace(CONFIG_DIR, str(config_dir)) for part in entrypoint[1:]),
        *args,
    ]


class PodProcess:
    """The container's command, run from an install-kubesched.sh prefix: the image's entrypoint
    and the Deployment's args, with the ConfigMap's files in ``config_dir`` and the secure
    port on a free loopback port instead of 0.0.0.0:10259."""

    def __init__(
        self,
        installed: Installed,
        config_dir: Path,
        env: dict[str, str],
        workdir: Path,
        config_data: dict[str, str] | None = None,
    ) -> None:
        config_dir.mkdir(parents=True, exist_ok=True)
        for key, text in (config_data or configmap_data()).items():
            (config_dir / key).write_text(text)
        self.port = free_port()
        self.command = pod_command(installed, config_dir, self.port)
        self.log = workdir / "kubesched.log"
        self._log_file = self.log.open("w")
        self.proc = subprocess.Popen(
            self.command,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env={**env, "HOME": str(workdir), "PYTHONDONTWRITEBYTECODE": "1"},
        )

    def get(self, path: str, token: str | None = None) -> tuple[int, str]:
        """GET over HTTPS, as the Deployment's probes do (and a scrape, with ``token``)."""
        return https_get(self.port, path, token)

    def output(self) -> str:
        return self.log.read_text()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"kubesched exited with {self.proc.returncode}:\n{self.output()[-3000:]}"
                )
            if self.get("/readyz")[0] == 200:
                return
            time.sleep(0.2)
        raise AssertionError(f"kubesched not ready in {timeout}s:\n{self.output()[-3000:]}")

    def terminate(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self._log_file.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._log_file.close()


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
