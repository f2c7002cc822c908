"""Device selectors: kube's CEL cases (cel/compile_test.go) and the failure contract."""

from __future__ import annotations

import pytest
from cel_cases import CASES
from kubesched_dynamic_resources.cel import CELError, compile_selector, device_input


@pytest.mark.parametrize(
    ("expression", "driver", "attributes", "capacity", "want"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_kube_selector_cases(expression, driver, attributes, capacity, want):
    device = device_input(driver, attributes, capacity)
    if isinstance(want, str):
        with pytest.raises(CELError) as caught:
            compile_selector(expression).matches(device)
        assert want.removeprefix("error: ") in str(caught.value)
    else:
        assert compile_selector(expression).matches(device) is want


def test_compiled_once_per_expression():
    assert compile_selector("device.driver == 'a'") is compile_selector("device.driver == 'a'")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        pytest.param("1", "must evaluate to bool or the unknown type, not int", id="int output"),
        pytest.param("?!", "compilation failed: ERROR: <input>:1:1: Syntax error", id="syntax"),
        pytest.param('quantity("x") == quantity("1")', "invalid quantity", id="bad quantity"),
        pytest.param('semver("x").major() == 1', "could not parse 'x' as semver", id="bad semver"),
        pytest.param(
            'device.attributes["d"].name', "CEL result of type string could not be", id="string"
        ),
    ],
)
def test_failures_are_cel_errors_with_the_message(expression, message):
    device = device_input("d", {"name": {"string": "x"}}, {})
    with pytest.raises(CELError) as caught:
        compile_selector(expression).matches(device)
    assert message in str(caught.value)


def test_bad_device_values_are_cel_errors():
    with pytest.raises(CELError, match="attribute v: parse semantic version"):
        device_input("d", {"v": {"version": "not-a-version"}}, {})
    with pytest.raises(CELError, match="capacity memory"):
        device_input("d", {}, {"memory": {"value": "lots"}})


def test_quantity_arithmetic_and_accessors():
    device = device_input("d", {}, {"memory": {"value": "1536Mi"}})
    for expression in [
        'device.capacity["d"].memory.add(quantity("512Mi")) == quantity("2Gi")',
        'device.capacity["d"].memory.sub(quantity("512Mi")).isLessThan(quantity("1025Mi"))',
        'device.capacity["d"].memory.asInteger() == 1610612736',
        'device.capacity["d"].memory.isInteger() && device.capacity["d"].memory.sign() == 1',
        'isQuantity("1.5Gi") && !isQuantity("1.5 Gi")',
        'semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
    ]:
        assert compile_selector(expression).matches(device), expression
