"""The parity suite's session: a real control plane, one reference kube-scheduler, the settings.

The control plane is the integration tests' (``kubesched.testing.controlplane``): our own etcd
and kube-apiserver, or the cluster that ``KUBESCHED_TEST_KUBECONFIG`` names, which must then have
no nodes of its own. The reference kube-scheduler runs for the whole session with
:data:`parity_profile.PROFILE`; scenarios go through it one after another.

Settings (environment): ``KUBESCHED_PARITY_SCENARIOS`` (default 200) scenarios generated from
``KUBESCHED_PARITY_SEED`` (default 0); a mismatch is shrunk for at most
``KUBESCHED_PARITY_SHRINK_SECONDS`` (default 60), at most ``KUBESCHED_PARITY_SHRINK_MAX``
mismatching scenarios per session (default 5; the others are reported as generated);
``KUBESCHED_PARITY_REPORT_DIR`` keeps each mismatch's files and the session's summary.

With ``CI=true`` a control plane that cannot be had fails every scenario loudly; elsewhere,
without Go and without ``KUBESCHED_TEST_KUBECONFIG``, the scenarios skip with one line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from kubernetes import client
from parity_profile import PROFILE
from parity_reference import ReferenceRunner, RunError
from parity_resources import PROVISIONERS
from parity_stats import ParitySettings, ParityStats
from replay import MediumStats

from kubesched.framework.registry import Registry
from kubesched.testing.controlplane import (
    KUBECONFIG_ENV,
    Binaries,
    Cluster,
    ControlPlane,
    ControlPlaneError,
    ControlPlaneUnavailable,
    ExistingCluster,
    find_binaries,
    new_api_client,
    what_is_missing,
)
from kubesched.testing.provisioner import TestProvisioner

IN_CI = os.environ.get("CI") == "true"
_HERE = Path(__file__).parent
BUILD_SCRIPT = _HERE.parent / "controlplane" / "build.sh"
_SKIPPED_KEY = pytest.StashKey[str]()
_STATS_KEY = pytest.StashKey["ParityStats"]()
#: The medium-scale tests' tally (``test_parity_medium.py``), when they ran.
MEDIUM_STATS_KEY = pytest.StashKey["MediumStats"]()


# -- collection -----------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "parity: runs the reference kube-scheduler")
    try:
        settings = ParitySettings.from_environment()
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    config.stash[_STATS_KEY] = ParityStats(settings)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario_index" in metafunc.fixturenames:
        settings = metafunc.config.stash[_STATS_KEY].settings
        indexes = range(settings.scenarios)
        metafunc.parametrize(
            "scenario_index", indexes, ids=[f"seed{settings.seed}-{i}" for i in indexes]
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [
        item
        for item in items
        if _HERE in item.path.parents and "reference_runner" in getattr(item, "fixturenames", ())
    ]
    missing = None if IN_CI else _what_is_missing()
    for item in ours:
        item.add_marker(pytest.mark.parity)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))
    if missing and ours:
        config.stash[_SKIPPED_KEY] = f"{len(ours)} parity scenarios skipped: {missing}"


def _what_is_missing() -> str | None:
    return what_is_missing(BUILD_SCRIPT)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if line := config.stash.get(_SKIPPED_KEY, None):
        terminalreporter.write_line(line)
    stats = config.stash[_STATS_KEY]
    if stats.scenarios:
        terminalreporter.write_line(stats.summary())
        if stats.settings.report_dir is not None:
            stats.settings.report_dir.mkdir(parents=True, exist_ok=True)
            summary = stats.settings.report_dir / "summary.json"
            summary.write_text(json.dumps(stats.to_dict(), indent=2) + "\n")
    if medium := config.stash.get(MEDIUM_STATS_KEY, None):
        for line in medium.summary():
            terminalreporter.write_line(line)


def unavailable(reason: str) -> NoReturn:
    """Skip naming what is missing, or fail loudly under CI."""
    if IN_CI:
        pytest.fail(f"CI=true and no control plane can be had: {reason}", pytrace=False)
    pytest.skip(f"no control plane: {reason}")


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def parity_stats(pytestconfig: pytest.Config) -> ParityStats:
    return pytestconfig.stash[_STATS_KEY]


@pytest.fixture(scope="session")
def medium_stats(pytestconfig: pytest.Config) -> MediumStats:
    return pytestconfig.stash.setdefault(MEDIUM_STATS_KEY, MediumStats())


@pytest.fixture(scope="session")
def parity_settings(parity_stats: ParityStats) -> ParitySettings:
    return parity_stats.settings


@pytest.fixture(scope="session")
def binaries() -> Binaries:
    """etcd, kube-apiserver and kube-scheduler, built or reused (skip, or fail under CI)."""
    problem: ControlPlaneError | ControlPlaneUnavailable
    try:
        return find_binaries(build_script=BUILD_SCRIPT)
    except (ControlPlaneError, ControlPlaneUnavailable) as e:
        problem = e
    if isinstance(problem, ControlPlaneUnavailable):
        unavailable(str(problem))
    pytest.fail(f"the control plane could not be built: {problem}", pytrace=False)


@pytest.fixture(scope="session")
def control_plane(request: pytest.FixtureRequest, binaries: Binaries) -> Iterator[Cluster]:
    """Our own etcd + kube-apiserver, or the nodeless cluster of ``$KUBESCHED_TEST_KUBECONFIG``."""
    cluster: Cluster
    if kubeconfig := os.environ.get(KUBECONFIG_ENV):
        cluster = ExistingCluster(Path(kubeconfig), binaries=binaries)
    else:
        cluster = ControlPlane(binaries)
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
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def admin_client(control_plane: Cluster) -> Iterator[client.ApiClient]:
    api = new_api_client(control_plane.admin_kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture(scope="session")
def reference_runner(
    control_plane: Cluster, admin_client: client.ApiClient
) -> Iterator[ReferenceRunner]:
    """A runner over the session's cluster, with the reference kube-scheduler started once."""
    runner = ReferenceRunner(admin_client, Registry.installed())
    try:
        runner.prepare_cluster()
    except RunError as e:
        pytest.fail(str(e), pytrace=False)
    scheduler = control_plane.start_reference_scheduler(PROFILE)
    # The PV controller binds claims (pre-bound ones, and those the scheduler chose a volume
    # for), and a provisioner per CSI driver makes the volumes for the claims it annotated; the
    # resourceclaim controller makes pods' ResourceClaims from their templates.
    try:
        pv_controller = control_plane.start_controller_manager(
            ("persistentvolume-binder-controller", "resourceclaim-controller")
        )
    except (ControlPlaneError, ControlPlaneUnavailable) as e:
        scheduler.stop()
        unavailable(f"kube-controller-manager: {e}")
    provisioners = [
        TestProvisioner(admin_client, name, interval=0.5).start() for name in PROVISIONERS
    ]
    try:
        yield runner
    finally:
        for provisioner in provisioners:
            provisioner.stop()
        pv_controller.stop()
        scheduler.stop()
        runner.delete_run_nodes()
