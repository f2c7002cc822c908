"""Fixtures for the image tests: an engine, a base, the image built once, and the cluster.

The cluster fixtures (control plane, admin client, nodes, the ServiceAccount and its TokenRequest
token) are the deployment tests' own, loaded by path. Without a container engine the tests skip
saying what is missing, and fail under ``CI=true``; so do those that need a control plane.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

_HERE = Path(__file__).parent
sys.path.insert(0, str(_HERE.parent / "deploy"))
sys.path.insert(0, str(_HERE.parent / "integration"))

from deploy_support import REPORT_KEY, report  # noqa: E402
from image_support import (  # noqa: E402
    IN_CI,
    WHEELHOUSE_PLUGIN,
    Base,
    Build,
    Engine,
    EngineUnavailable,
    base_image,
    build_context,
    build_image,
    build_settings,
    find_engine,
)


def _load_deploy_fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kubesched_deploy_fixtures", _HERE.parent / "deploy" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_deploy = _load_deploy_fixtures()
binaries = _deploy.binaries
control_plane = _deploy.control_plane
admin_client = _deploy.admin_client
core_v1 = _deploy.core_v1
namespace = _deploy.namespace
nodes = _deploy.nodes
service_account = _deploy.service_account
sa_credentials = _deploy.sa_credentials
_integration = _deploy._integration


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs a real kube-apiserver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = None if IN_CI else _integration._what_is_missing()
    for item in items:
        if _HERE in item.path.parents and "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    for text in config.stash.get(REPORT_KEY, []):
        terminalreporter.write_line(text)


def unavailable(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"CI=true and no container engine can be had: {reason}", pytrace=False)
    pytest.skip(f"no container engine: {reason}")


# -- engine, base, build -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    problem = ""
    try:
        found, notes = find_engine(tmp_path_factory.mktemp("engine"))
    except EngineUnavailable as exc:
        problem = str(exc)
    if problem:
        unavailable(problem)
    for note in notes:
        report(request.config, note)
    return found


@pytest.fixture(scope="session")
def base(request: pytest.FixtureRequest, engine: Engine) -> Base:
    problem = ""
    try:
        chosen = base_image(engine)
    except EngineUnavailable as exc:
        problem = str(exc)
    if problem:
        unavailable(problem)
    for note in chosen.notes:
        report(request.config, note)
    return chosen


@pytest.fixture(scope="session")
def build(
    request: pytest.FixtureRequest,
    engine: Engine,
    base: Base,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Build]:
    """Both targets, built once, with the wheelhouse plugin in PLUGINS and the host's pip
    settings as build-stage-only arguments and secret."""
    context = build_context(tmp_path_factory.mktemp("context"))
    settings = build_settings(tmp_path_factory.mktemp("secrets"))
    tag = f"localhost/kubesched-test/custom-scheduler:{uuid.uuid4().hex[:8]}"
    args = [
        *settings.args(),
        "--build-arg",
        f"PYTHON_IMAGE={base.reference}",
        "--build-arg",
        f"PLUGINS={WHEELHOUSE_PLUGIN[1]}",
    ]
    started = time.monotonic()
    built = Build(tag, f"{tag}-dev", base, settings)
    try:
        build_image(engine, context, built.runtime, *args)
        build_image(engine, context, built.dev, *args, "--target", "dev")
        seconds = time.monotonic() - started
        report(
            request.config,
            f"built {tag} and its -dev target on {base.reference} in {seconds:.0f}s",
        )
        yield built
    finally:
        engine.run("rmi", "-f", built.runtime, built.dev, timeout=300)
