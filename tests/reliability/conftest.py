"""Fixtures for the fault tests: a control plane of their own, the scheduler's identity, the
fault proxy, and the figures each scenario reports.

The control plane is this suite's own (the tests restart its apiserver and etcd, which must not
disturb other suites); its binaries and the skip rules are the integration tests' own
(``tests/integration/conftest.py``, loaded by path: test folders are not packages). Every
scenario prints one line of figures in the run's summary; ``KUBESCHED_RELIABILITY_FIGURES=PATH``
also writes them to PATH as JSON (docs/reliability.md quotes them).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

_HERE = Path(__file__).parent
_INTEGRATION = _HERE.parent / "integration"
sys.path.insert(0, str(_INTEGRATION))  # kubesched_process, as the integration tests import it

from faultproxy import FaultProxy  # noqa: E402
from kubesched_process import SA_GROUPS, SA_USER, apply_rbac  # noqa: E402
from reliability_support import Figure, Scenario  # noqa: E402

from kubesched.testing.controlplane import ControlPlane, new_api_client  # noqa: E402

FIGURES_ENV = "KUBESCHED_RELIABILITY_FIGURES"
_FIGURES = pytest.StashKey[list[Figure]]()


def _load_integration_fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kubesched_reliability_integration_fixtures", _INTEGRATION / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_integration = _load_integration_fixtures()
binaries = _integration.binaries


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs a real kube-apiserver")
    config.stash[_FIGURES] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = None if _integration.IN_CI else _integration._what_is_missing()
    for item in items:
        if _HERE not in item.path.parents:
            continue
        item.add_marker(pytest.mark.integration)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    figures = config.stash.get(_FIGURES, [])
    if not figures:
        return
    terminalreporter.write_sep("-", "reliability figures")
    for figure in figures:
        terminalreporter.write_line(figure.line())
    if path := os.environ.get(FIGURES_ENV):
        Path(path).write_text(json.dumps([f.as_dict() for f in figures], indent=2) + "\n")
        terminalreporter.write_line(f"figures written to {path}")


@pytest.fixture
def figure(request: pytest.FixtureRequest) -> Iterator[Figure]:
    """The test's figures; reported in the summary when the test fills in ``scenario``."""
    result = Figure(scenario="")
    yield result
    if result.scenario:
        request.config.stash[_FIGURES].append(result)


@pytest.fixture(scope="session")
def cluster(binaries: Any) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver for this suite alone, with deploy/'s RBAC applied."""
    with ControlPlane(binaries) as cp:
        admin = new_api_client(cp.admin_kubeconfig)
        try:
            apply_rbac(admin)
        finally:
            admin.close()
        yield cp


@pytest.fixture(scope="session")
def admin(cluster: ControlPlane) -> Iterator[client.ApiClient]:
    api = new_api_client(cluster.admin_kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture(scope="session")
def sa_kubeconfig(cluster: ControlPlane) -> Path:
    """The scheduler's own least-privilege identity (deploy/manifests/rbac.yaml)."""
    return cluster.kubeconfig_for(SA_USER, SA_GROUPS)


@pytest.fixture
def proxy(sa_kubeconfig: Path) -> Iterator[FaultProxy]:
    """A fault proxy in front of the apiserver, as the scheduler's identity."""
    with FaultProxy(sa_kubeconfig) as p:
        yield p


@pytest.fixture
def scenario(
    request: pytest.FixtureRequest, cluster: ControlPlane, admin: client.ApiClient, tmp_path: Path
) -> Iterator[Scenario]:
    """A namespace, nodes and kubesched processes for one test; all removed afterwards."""
    s = Scenario(cluster, admin, tmp_path)
    try:
        yield s
    finally:
        s.cleanup()
