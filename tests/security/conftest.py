"""Fixtures for the security tests. Those that need a cluster use the integration tests' control
plane (``tests/integration/conftest.py``, loaded by path) and skip, or fail under ``CI=true``,
as those do; the others run anywhere."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

_HERE = Path(__file__).parent
_INTEGRATION = _HERE.parent / "integration"
sys.path.insert(0, str(_INTEGRATION))  # kubesched_process, as the integration tests import it


def _load_integration_fixtures() -> Any:
    spec = importlib.util.spec_from_file_location(
        "kubesched_security_integration_fixtures", _INTEGRATION / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_integration = _load_integration_fixtures()
binaries = _integration.binaries
control_plane = _integration.control_plane
admin_client = _integration.admin_client
core_v1 = _integration.core_v1
namespace = _integration.namespace
nodes = _integration.nodes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs a real kube-apiserver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = None if _integration.IN_CI else _integration._what_is_missing()
    for item in items:
        if _HERE not in item.path.parents:
            continue
        if "control_plane" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"no control plane: {missing}"))
