"""``ControlPlane.restart_apiserver`` and ``restart_etcd`` refuse to run before ``start()``
(their real runs are tests/reliability/test_controlplane_faults.py and tests/integration)."""

from __future__ import annotations

import pytest

from kubesched.testing.controlplane import ControlPlane, ControlPlaneError


@pytest.mark.parametrize("restart", ["restart_apiserver", "restart_etcd"])
def test_restart_before_start_is_a_clear_error(restart: str) -> None:
    with pytest.raises(ControlPlaneError, match=r"not started; call start\(\) first"):
        getattr(ControlPlane(), restart)(downtime=0)
