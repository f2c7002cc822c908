"""Status codes as kube-scheduler names them (metrics labels, explain's verdicts)."""

from __future__ import annotations

import pytest

from kubesched import Code


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (Code.SUCCESS, "Success"),
        (Code.ERROR, "Error"),
        (Code.UNSCHEDULABLE, "Unschedulable"),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable"),
        (Code.WAIT, "Wait"),
        (Code.SKIP, "Skip"),
        (Code.PENDING, "Pending"),
    ],
)
def test_codes_are_named_as_kube_scheduler_names_them(code: Code, name: str) -> None:
    assert code.kube_name == name
