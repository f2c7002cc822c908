"""A real control plane for the integration tests.

By default the session starts etcd and kube-apiserver (RBAC on) from the binaries that
``tests/controlplane/build.sh`` builds or reuses; ``KUBESCHED_TEST_KUBECONFIG=<path>`` points the
tests at an existing cluster instead. With ``CI=true`` a control plane that cannot be had fails
every test loudly; elsewhere, without Go and without ``KUBESCHED_TEST_KUBECONFIG``, the tests
skip with one line saying what is missing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from kubernetes import client

from kubesched.testing.controlplane import (
    KUBECONFIG_ENV,
    Binaries,
    Cluster,
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    ExistingCluster,
    create_ready_node,
    find_binaries,
    new_api_client,
    ready_node,
    what_is_missing,
)

IN_CI = os.environ.get("CI") == "true"
_HERE = Path(__file__).parent
# This checkout's build script, also when kubesched is installed elsewhere (as tox does).
BUILD_SCRIPT = _HERE.parent / "controlplane" / "build.sh"
_SUMMARY_KEY = pytest.StashKey[str]()

ClientFor = Callable[..., client.ApiClient]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs a real kube-apiserver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if _HERE in item.path.parents]
    missing = None if IN_CI else _what_is_missing()
    for item in ours:
        item.add_marker(pytest.mark.integration)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))
    if missing and ours:
        config.stash[_SUMMARY_KEY] = f"{len(ours)} integration tests skipped: {missing}"


def _what_is_missing() -> str | None:
    return what_is_missing(BUILD_SCRIPT)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if line := config.stash.get(_SUMMARY_KEY, None):
        terminalreporter.write_line(line)


def unavailable(reason: str) -> NoReturn:
    """Skip naming what is missing, or fail loudly under CI."""
    if IN_CI:
        pytest.fail(f"CI=true and no control plane can be had: {reason}", pytrace=False)
    pytest.skip(f"no control plane: {reason}")


@pytest.fixture(scope="session")
def binaries() -> Binaries:
    """The control-plane binaries, built or reused (skip, or fail under CI, without them)."""
    problem: ControlPlaneError | ControlPlaneUnavailable
    try:
        return find_binaries(build_script=BUILD_SCRIPT)
    except (ControlPlaneError, ControlPlaneUnavailable) as e:
        problem = e
    # Outside the except block, so that the report is the one line, not a chained traceback.
    if isinstance(problem, ControlPlaneUnavailable):
        unavailable(str(problem))
    pytest.fail(f"the control plane could not be built: {problem}", pytrace=False)


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The session's cluster: our own etcd + kube-apiserver, or ``$KUBESCHED_TEST_KUBECONFIG``."""
    cluster: Cluster
    if kubeconfig := os.environ.get(KUBECONFIG_ENV):
        cluster = ExistingCluster(Path(kubeconfig))
    else:
        cluster = ControlPlane(request.getfixturevalue("binaries"))
    problem: ControlPlaneError | ControlPlaneUnavailable | None = None
    try:
        cluster.start()
    except (ControlPlaneError, ControlPlaneUnavailable) as e:
        problem = e
    except BaseException:
        cluster.stop()
        raise
    if problem is not None:
        cluster.stop()
        if isinstance(problem, ControlPlaneUnavailable):
            unavailable(str(problem))
        pytest.fail(f"the control plane did not start: {problem}", pytrace=False)
    if isinstance(cluster, ControlPlane):
        request.config.stash[_SUMMARY_KEY] = (
            f"control plane: etcd + kube-apiserver ready in {cluster.startup_seconds:.1f}s "
            f"at {cluster.server}"
        )
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def admin_client(control_plane: Cluster) -> Iterator[client.ApiClient]:
    """An ``ApiClient`` for the cluster admin (``system:masters``: RBAC does not apply)."""
    api = new_api_client(control_plane.admin_kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture(scope="session")
def client_for(control_plane: Cluster) -> Iterator[ClientFor]:
    """``client_for(user, groups=())``: an ``ApiClient`` authenticated as that identity."""
    clients: dict[tuple[str, tuple[str, ...]], client.ApiClient] = {}

    def make(user: str, groups: tuple[str, ...] | list[str] = ()) -> client.ApiClient:
        key = (user, tuple(groups))
        if key not in clients:
            clients[key] = new_api_client(control_plane.kubeconfig_for(user, list(groups)))
        return clients[key]

    try:
        yield make
    finally:
        for api in clients.values():
            api.close()


@pytest.fixture
def core_v1(admin_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(admin_client)


@pytest.fixture
def namespace(core_v1: client.CoreV1Api) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards (best effort: with no
    controller-manager it stays Terminating until the control plane goes)."""
    name = f"it-{uuid.uuid4().hex[:8]}"
    core_v1.create_namespace({"metadata": {"name": name}})
    yield name
    try:
        core_v1.delete_namespace(name)
    except client.ApiException:
        pass


@pytest.fixture
def nodes(core_v1: client.CoreV1Api) -> Iterator[Callable[..., client.V1Node]]:
    """``nodes(name=None, **ready_node_kwargs)``: a Ready node, deleted after the test."""
    created: list[str] = []

    def make(name: str | None = None, **kwargs: Any) -> client.V1Node:
        name = name or f"node-{uuid.uuid4().hex[:8]}"
        created.append(name)
        return create_ready_node(core_v1.api_client, ready_node(name, **kwargs))

    yield make
    for name in created:
        try:
            core_v1.delete_node(name)
        except client.ApiException:
            pass
