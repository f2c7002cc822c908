"""The custom-scheduler image: built from deploy/Dockerfile by a container engine, and run the way
deploy/manifests/deployment.yaml runs it, against the real apiserver.

The container gets what the pod gets: the image's entrypoint and the Deployment's args, its user
and group, a read-only root filesystem, every capability dropped, no privilege escalation, the
ConfigMap's files at its mount path and a size-limited ``/tmp``, and what the kubelet adds: a
service-account directory (a TokenRequest token, the cluster's CA, the namespace) at
``/var/run/secrets/kubernetes.io/serviceaccount`` and ``KUBERNETES_SERVICE_HOST``/``PORT``. It
runs on the host's network to reach the test apiserver on loopback, so the secure port, the one
arg that differs, is a free port instead of 10259; it is probed over HTTPS as the Deployment's
probes do, and /metrics is scraped with the ServiceAccount's token. Resource limits and the
probes' timing are left to the kubelet: they are not the image's.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_support import (
    DEPLOY,
    MANIFESTS,
    configmap_data,
    free_port,
    https_get,
    metric_value,
    plugin_wheel,
    report,
    wait_for,
)
from image_support import (
    DERIVED_PLUGIN,
    WHEELHOUSE_PLUGIN,
    Build,
    Engine,
    build_image,
    image_config,
    image_files,
    image_history,
    image_size,
)
from kubernetes import client

LABEL = "scheduler.custom/enabled"
LEASE = ("kube-system", "custom-scheduler")
SERVICEACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: The default target's size budget on the stand-in base (deploy/README.md, "Size").
SIZE_LIMIT_MB = 250
BUNDLED = sorted(p.name for p in (DEPLOY.parent / "plugins").iterdir() if p.is_dir())


# -- the health endpoint: the one place that knows how it is reached ------------------------------

#: The Deployment's container port the probes use, by name.
HEALTH_PORT_NAME = "https"


def health_url(port: int, path: str) -> str:
    """The URL of ``path`` on the scheduler's health server, in the probes' scheme."""
    probe = deployment_container()["livenessProbe"]["httpGet"]
    scheme = str(probe.get("scheme", "HTTP")).lower()
    return f"{scheme}://127.0.0.1:{port}{path}"


def health_get(port: int, path: str, token: str | None = None) -> tuple[int, str]:
    """GET ``path`` as the probes do (HTTPS, the self-signed certificate accepted), with
    ``token`` as a bearer token; (0, "") while nothing answers."""
    url = health_url(port, path)
    assert url.startswith("https://"), f"the probes' scheme is not HTTPS: {url}"
    return https_get(port, path, token)


# -- the pod, as a container ---------------------------------------------------------------------


def deployment() -> dict[str, Any]:
    return dict(yaml.safe_load((MANIFESTS / "deployment.yaml").read_text()))


def deployment_container() -> dict[str, Any]:
    (container,) = deployment()["spec"]["template"]["spec"]["containers"]
    return dict(container)


def container_args(port: int) -> list[str]:
    """The Deployment's args, the health port (by its value) replaced by ``port``."""
    (health,) = [p for p in deployment_container()["ports"] if p["name"] == HEALTH_PORT_NAME]
    args = []
    for arg in deployment_container()["args"]:
        flag, equals, value = arg.partition("=")
        args.append(f"{flag}={port}" if equals and value == str(health["containerPort"]) else arg)
    return args


def run_options(config_dir: Path, serviceaccount: Path) -> list[str]:
    """`run` options for the pod's security context and volumes, read from the Deployment."""
    pod = deployment()["spec"]["template"]["spec"]
    container = deployment_container()
    pod_security, security = pod["securityContext"], container["securityContext"]
    options = ["--user", f"{pod_security['runAsUser']}:{pod_security['runAsGroup']}"]
    if security.get("readOnlyRootFilesystem"):
        options.append("--read-only")
    for capability in security["capabilities"]["drop"]:
        options += ["--cap-drop", capability]
    if security.get("allowPrivilegeEscalation") is False:
        options += ["--security-opt", "no-new-privileges"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "configMap" in volume:
            suffix = ":ro" if mount.get("readOnly") else ""
            options += ["-v", f"{config_dir}:{mount['mountPath']}{suffix}"]
        elif "emptyDir" in volume:
            size = str(volume["emptyDir"].get("sizeLimit", "")).removesuffix("Mi")
            options += [
                "--tmpfs",
                f"{mount['mountPath']}:size={size}m" if size else mount["mountPath"],
            ]
        else:
            raise AssertionError(f"no container equivalent for volume {volume}")
    # What the kubelet adds for the pod's ServiceAccount.
    options += ["-v", f"{serviceaccount}:{SERVICEACCOUNT_DIR}:ro"]
    return options


def readable_copy(source: dict[str, bytes], directory: Path) -> Path:
    """Files the container's user can read (pytest's temporary directories are private)."""
    directory.mkdir(parents=True)
    directory.chmod(0o755)
    for name, data in source.items():
        (directory / name).write_bytes(data)
        (directory / name).chmod(0o644)
    return directory


@dataclass
class Pod:
    engine: Engine
    name: str
    port: int

    def logs(self) -> str:
        result = self.engine.run("logs", self.name, timeout=60)
        return result.stdout + result.stderr

    def running(self) -> bool:
        state = self.engine.run("inspect", "--format", "{{.State.Running}}", self.name)
        return state.stdout.strip() == "true"

    def exec(self, *command: str) -> subprocess.CompletedProcess[str]:
        return self.engine.run("exec", self.name, *command, timeout=60)

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise AssertionError(f"the container exited:\n{self.logs()[-3000:]}")
            if health_get(self.port, "/readyz")[0] == 200:
                return
            time.sleep(0.5)
        raise AssertionError(f"not ready in {timeout}s:\n{self.logs()[-3000:]}")

    def terminate(self, timeout: float = 60) -> int:
        """SIGTERM, as the kubelet stops a container, and its exit code."""
        self.engine.run("kill", "--signal", "TERM", self.name, check=True)
        waited = self.engine.run("wait", self.name, timeout=timeout, check=True)
        return int(waited.stdout.strip().splitlines()[-1])


@pytest.fixture
def start_pod(
    sa_credentials: Any, engine: Engine, build: Build, tmp_path: Path
) -> Iterator[Callable[[], Pod]]:
    """``start()``: a container of the image, run as the Deployment's pod (the cluster is
    requested first, so that a missing control plane skips before the build)."""
    started: list[Pod] = []

    def start() -> Pod:
        config = readable_copy(
            {k: v.encode() for k, v in configmap_data().items()}, tmp_path / "config"
        )
        serviceaccount = readable_copy(
            {f.name: f.read_bytes() for f in sa_credentials.directory.iterdir()},
            tmp_path / "serviceaccount",
        )
        pod = Pod(engine, f"custom-scheduler-{uuid.uuid4().hex[:8]}", free_port())
        engine.run(
            "run",
            "-d",
            "--name",
            pod.name,
            "--network",
            "host",
            *run_options(config, serviceaccount),
            # Podman's --read-only also mounts tmpfs on /run, /tmp and /var/tmp; a pod has none.
            *(["--read-only-tmpfs=false"] if engine.is_podman else []),
            "-e",
            f"KUBERNETES_SERVICE_HOST={sa_credentials.host}",
            "-e",
            f"KUBERNETES_SERVICE_PORT={sa_credentials.port}",
            build.runtime,
            *container_args(pod.port),
            check=True,
        )
        started.append(pod)
        return pod

    yield start
    for pod in started:
        engine.run("rm", "-f", pod.name, timeout=120)


def test_the_image_schedules_the_seed_test_pod_as_the_deployment_runs_it(
    start_pod, sa_credentials, core_v1, namespace, nodes
):
    suffix = uuid.uuid4().hex[:6]
    nodes(f"plain-{suffix}")
    target = f"target-{suffix}"
    nodes(target, labels={LABEL: "true"})

    pod = start_pod()
    pod.wait_ready()
    assert health_url(pod.port, "/healthz").startswith("https://")
    assert health_get(pod.port, "/healthz")[0] == 200
    assert health_get(pod.port, "/livez")[0] == 200
    assert "credentials in-cluster" in pod.logs()

    # The process is the pod's: uid/gid 65532, no capabilities, no new privileges, read-only root.
    status = dict(
        line.split(":\t", 1) for line in pod.exec("cat", "/proc/1/status").stdout.splitlines()
    )
    assert status["Uid"].split()[:2] == ["65532", "65532"]
    assert status["Gid"].split()[:2] == ["65532", "65532"]
    assert status["CapEff"].strip() == status["CapBnd"].strip() == "0000000000000000"
    assert status["NoNewPrivs"].strip() == "1"
    mounts = {}  # mount point -> options, from /proc/1/mountinfo
    for line in pod.exec("cat", "/proc/1/mountinfo").stdout.splitlines():
        fields = line.split()
        mounts[fields[4]] = fields[5].split(",")
    # (/var/run is a link to /run in Debian, so the token's mount point is under /run.)
    for read_only in ("/", "/etc/kubesched", SERVICEACCOUNT_DIR.replace("/var/run/", "/run/")):
        assert "ro" in mounts[read_only], (read_only, mounts)
    refused = pod.exec("touch", "/var/tmp/scratch")  # world-writable, but on the root
    assert "Read-only file system" in refused.stderr, refused
    assert pod.exec("touch", "/tmp/scratch").returncode == 0

    # The seed's test pod lands on the labelled node, recorded as kube-scheduler records it.
    core_v1.create_namespaced_pod(namespace, yaml.safe_load((DEPLOY / "test-pod.yaml").read_text()))
    bound = wait_for(
        lambda: core_v1.read_namespaced_pod("test-pod", namespace).spec.node_name,
        60,
        "test-pod bound",
    )
    assert bound == target
    events = client.EventsV1Api(core_v1.api_client)
    scheduled = wait_for(
        lambda: [
            e
            for e in events.list_namespaced_event(namespace).items
            if e.reason == "Scheduled" and e.regarding.name == "test-pod"
        ],
        30,
        "Scheduled event",
    )
    assert scheduled[0].note == f"Successfully assigned {namespace}/test-pod to {target}"
    assert scheduled[0].reporting_controller == "custom-scheduler"

    coordination = client.CoordinationV1Api(core_v1.api_client)
    lease = coordination.read_namespaced_lease(LEASE[1], LEASE[0])
    assert lease.spec.holder_identity
    assert f"successfully acquired lease {LEASE[0]}/{LEASE[1]}" in pod.logs()

    assert health_get(pod.port, "/metrics")[0] == 401  # no token
    code, metrics = health_get(pod.port, "/metrics", sa_credentials.token)
    assert code == 200, metrics
    scheduled = {"result": "scheduled", "profile": "custom-scheduler"}
    assert metric_value(metrics, "scheduler_schedule_attempts_total", **scheduled) == 1

    assert pod.terminate() == 0, pod.logs()[-3000:]
    released = coordination.read_namespaced_lease(LEASE[1], LEASE[0])
    assert not released.spec.holder_identity
    log = pod.logs()
    # A 403 status, not a port or a count that happens to hold the digits (port 40367 did).
    refused = re.search(r"(?<!\d)403(?!\d)|[Ff]orbidden|Traceback", log)
    assert refused is None, f"{refused.group() if refused else ''!r} in the log:\n{log[-3000:]}"


# -- what the images hold ------------------------------------------------------------------------


def installed_plugins(engine: Engine, image: str) -> dict[str, dict[str, Any]]:
    listed = engine.run(
        "run", "--rm", "--entrypoint", "kubesched", image, "plugins", "-o", "json", check=True
    )
    return {p["name"]: p for p in json.loads(listed.stdout)}


def present(engine: Engine, image: str, modules: list[str]) -> list[str]:
    """Which of ``modules`` the image's python can import."""
    code = (
        "import importlib.util as u, json; "
        f"print(json.dumps([m for m in {modules!r} if u.find_spec(m)]))"
    )
    found = engine.run("run", "--rm", "--entrypoint", "python", image, "-c", code, check=True)
    return list(json.loads(found.stdout))


def test_the_runtime_image_holds_what_the_scheduler_runs_and_no_more(request, engine, build):
    sizes = {
        "base": image_size(engine, build.base.reference),
        "runtime (default target)": image_size(engine, build.runtime),
        "dev target": image_size(engine, build.dev),
    }
    report(
        request.config,
        "image sizes: " + ", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in sizes.items()),
    )
    plugins = installed_plugins(engine, build.runtime)
    assert not [p for p in plugins.values() if "error" in p]
    assert len(plugins) == len(BUNDLED) + 1 and WHEELHOUSE_PLUGIN[0] in plugins
    optional = ["pip", "setuptools", "kubernetes.aio", "aiohttp"]
    assert present(engine, build.runtime, optional) == []
    assert present(engine, build.dev, optional) == optional, "dev keeps all, for derived images"
    if not build.base.pinned:
        assert sizes["runtime (default target)"] <= SIZE_LIMIT_MB * 1e6, sizes


@pytest.mark.parametrize("target", ["runtime", "dev"])
def test_build_stage_pip_settings_reach_neither_image(engine, build, target):
    image = getattr(build, target)
    settings = build.settings
    env = dict(e.split("=", 1) for e in image_config(engine, image).get("Env") or [])
    assert {"PIP_INDEX_URL", "PIP_DEFAULT_TIMEOUT", "PIP_CERT", "PIP_FIND_LINKS"}.isdisjoint(env)
    history = image_history(engine, image)
    assert settings.index_url not in history
    assert "pip-cert" not in history and "PLUGINS" not in history
    marker = settings.cert_marker.encode()
    wheel = WHEELHOUSE_PLUGIN[1].replace("-", "_")
    leaked = []
    for path, data in image_files(engine, image):
        path = path.removeprefix("./")
        if (
            path.startswith(("src/", "run/secrets/", "opt/runtime/"))
            or path.endswith("pip.conf")
            or (path.endswith(".whl") and Path(path).name.startswith(wheel))
            or marker in data
        ):
            leaked.append(path)
    assert not leaked, f"build-stage files in the {target} image: {leaked[:20]}"


def test_a_derived_image_adds_a_plugin_from_a_build_mount(engine, build, tmp_path):
    """deploy/README.md's derived image: on the dev target, a wheel from a bind mount."""
    name, dist, label = DERIVED_PLUGIN
    (tmp_path / "wheels").mkdir()
    plugin_wheel(tmp_path / "wheels", name, dist, label)
    (tmp_path / "Dockerfile").write_text(
        f"FROM {build.dev}\n"
        "USER root\n"
        "RUN --mount=type=bind,source=wheels,target=/wheels \\\n"
        f"    pip install --no-index --find-links /wheels {dist}\n"
        "USER 65532:65532\n"
    )
    tag = f"{build.runtime}-derived"
    try:
        build_image(engine, tmp_path, tag, dockerfile=tmp_path / "Dockerfile")
        plugins = installed_plugins(engine, tag)
        assert plugins[name]["distribution"] == dist
        assert WHEELHOUSE_PLUGIN[0] in plugins and not [p for p in plugins.values() if "error" in p]
        assert image_config(engine, tag)["User"] == "65532:65532"
    finally:
        engine.run("rmi", "-f", tag, timeout=300)
