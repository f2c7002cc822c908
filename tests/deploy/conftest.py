"""Fixtures for the deployment tests: the image's install, and the cluster as custom-scheduler.

The control-plane fixtures are the integration tests' own (``tests/integration/conftest.py``,
loaded by path: test folders are not packages); tests here that use them are marked
``integration`` and skip, or fail under ``CI=true``, the same way when no control plane can be
had. ``installed`` runs ``deploy/install-kubesched.sh`` once per session, as the image's build
stage does.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from kubernetes import client

from kubesched.testing.controlplane import (
    ControlPlaneError,
    ControlPlaneUnavailable,
    find_binaries,
)

_HERE = Path(__file__).parent
_INTEGRATION = _HERE.parent / "integration"

sys.path.insert(0, str(_INTEGRATION))  # kubesched_process, as the integration tests import it
from deploy_support import (  # noqa: E402
    DEPLOY,
    REPORT_KEY,
    ROOT,
    Installed,
    ServiceAccountCredentials,
    cluster_ca_pem,
    plugin_wheel,
    run,
)
from kubesched_process import SA_NAME, SA_NAMESPACE, apply_rbac  # noqa: E402


def _load_integration_fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kubesched_integration_fixtures", _INTEGRATION / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_integration = _load_integration_fixtures()
binaries = _integration.binaries
control_plane = _integration.control_plane
admin_client = _integration.admin_client
client_for = _integration.client_for
core_v1 = _integration.core_v1
namespace = _integration.namespace
nodes = _integration.nodes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs a real kube-apiserver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests here that need the control plane skip (or fail in CI) as the integration tests do."""
    missing = None if _integration.IN_CI else _integration._what_is_missing()
    for item in items:
        if _HERE not in item.path.parents:
            continue
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for text in config.stash.get(REPORT_KEY, []):
        terminalreporter.write_line(text)


# -- the image's install -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """deploy/install-kubesched.sh into a fresh prefix, with a third-party plugin given as the
    image's PLUGINS build argument gives it, and another added as a derived image adds it."""
    base = tmp_path_factory.mktemp("image")
    by_build_arg = plugin_wheel(base, "AcmeZone", "acme-kubesched-zone", "acme.example/zone")
    by_derived_image = plugin_wheel(base, "AcmeRack", "acme-kubesched-rack", "acme.example/rack")
    prefix = base / "opt" / "kubesched"
    env = {**os.environ, "PYTHON": sys.executable}
    script = run(
        ["bash", str(DEPLOY / "install-kubesched.sh"), str(ROOT), str(prefix), str(by_build_arg)],
        env=env,
    )
    assert script.returncode == 0, f"install-kubesched.sh failed:\n{script.stdout}\n{script.stderr}"
    # The derived image's `RUN pip install ...`, with the image's PATH and PIP_CONSTRAINT.
    derived = run(
        ["pip", "install", "-q", "--disable-pip-version-check", str(by_derived_image)],
        env={
            **os.environ,
            "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}",
            "PIP_CONSTRAINT": str(prefix / "constraints.txt"),
        },
    )
    assert derived.returncode == 0, derived.stderr
    return Installed(
        prefix=prefix,
        log=script.stdout + script.stderr,
        extra_plugins=(
            ("AcmeZone", "acme-kubesched-zone", "PLUGINS build argument"),
            ("AcmeRack", "acme-kubesched-rack", "derived image"),
        ),
    )


@pytest.fixture(scope="session")
def kubectl() -> str:
    """kubectl built with the control plane from the same Kubernetes module
    (tests/controlplane/build.sh), else the one on PATH outside CI; missing, the test skips (or
    fails under ``CI=true``)."""
    try:
        built = find_binaries(build_script=_integration.BUILD_SCRIPT).directory / "kubectl"
        problem = "" if os.access(built, os.X_OK) else f"{built} is missing"
    except (ControlPlaneError, ControlPlaneUnavailable) as exc:
        built, problem = None, str(exc)
    if not problem:
        return str(built)
    if _integration.IN_CI:
        pytest.fail(f"CI=true and no kubectl from the control-plane build: {problem}", False)
    if on_path := shutil.which("kubectl"):
        return on_path
    pytest.skip(f"no kubectl: {problem}, and none on PATH")


# -- the cluster, as custom-scheduler ----------------------------------------------------------


@pytest.fixture(scope="session")
def service_account(admin_client: client.ApiClient) -> str:
    """deploy/manifests/rbac.yaml applied: the ServiceAccount, its roles and bindings."""
    apply_rbac(admin_client)
    return f"system:serviceaccount:{SA_NAMESPACE}:{SA_NAME}"


@pytest.fixture(scope="session")
def sa_credentials(
    control_plane: Any,
    admin_client: client.ApiClient,
    service_account: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> ServiceAccountCredentials:
    """A TokenRequest token for custom-scheduler and the cluster's CA, as a pod would have them."""
    request = {"spec": {"expirationSeconds": 3600}}
    answer = client.CoreV1Api(admin_client).create_namespaced_service_account_token(
        SA_NAME, SA_NAMESPACE, request
    )
    directory = tmp_path_factory.mktemp("serviceaccount")
    (directory / "token").write_text(answer.status.token)
    (directory / "ca.crt").write_bytes(cluster_ca_pem(Path(control_plane.admin_kubeconfig)))
    (directory / "namespace").write_text(SA_NAMESPACE)
    server = urlsplit(control_plane.server)
    assert server.hostname is not None
    return ServiceAccountCredentials(directory, server.hostname, str(server.port or 443))


@pytest.fixture(scope="session")
def sa_client(sa_credentials: ServiceAccountCredentials) -> Iterator[client.ApiClient]:
    """An ``ApiClient`` that authenticates with custom-scheduler's own token."""
    configuration = client.Configuration()
    configuration.host = f"https://{sa_credentials.host}:{sa_credentials.port}"
    configuration.ssl_ca_cert = str(sa_credentials.ca_path)
    configuration.api_key = {"BearerToken": f"Bearer {sa_credentials.token}"}
    api = client.ApiClient(configuration)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def other_scheduler_lease(admin_client: client.ApiClient) -> str:
    """kube-scheduler's Lease, held and fresh, as in a cluster where it runs."""
    coordination = client.CoordinationV1Api(admin_client)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body = {
        "metadata": {"name": "kube-scheduler", "namespace": SA_NAMESPACE},
        "spec": {
            "holderIdentity": "kube-scheduler-0",
            "leaseDurationSeconds": 3600,
            "acquireTime": now,
            "renewTime": now,
        },
    }
    try:
        coordination.create_namespaced_lease(SA_NAMESPACE, body)
    except client.ApiException as exc:
        if exc.status != 409:
            raise
    return "kube-scheduler"
