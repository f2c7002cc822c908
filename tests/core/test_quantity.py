"""Quantities parse as kube's ``resource.ParseQuantity`` does and count as MilliValue/Value do.

Cases follow ``k8s.io/apimachinery/pkg/api/resource/quantity_test.go``.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from kubesched.api.quantity import InvalidQuantity, parse_quantity, to_int, to_milli

INT64_MAX = 2**63 - 1

# (text, exact value after parsing)
PARSED = [
    ("0", "0"),
    ("0n", "0"),
    ("0m", "0"),
    ("0Ki", "0"),
    ("0Ti", "0"),
    ("1", "1"),
    # binary suffixes
    ("1Ki", 1024),
    ("8Ki", 8 * 1024),
    ("7Mi", 7 * 2**20),
    ("6Gi", 6 * 2**30),
    ("5Ti", 5 * 2**40),
    ("4Pi", 4 * 2**50),
    ("3Ei", 3 * 2**60),
    ("100Ti", 100 * 2**40),
    # decimal suffixes
    ("5n", "5e-9"),
    ("4u", "4e-6"),
    ("3m", "0.003"),
    ("9", "9"),
    ("8k", "8000"),
    ("50k", "50000"),
    ("7M", "7e6"),
    ("6G", "6e9"),
    ("5T", "5e12"),
    ("2P", "2e15"),
    ("1E", "1e18"),
    ("12E", "12e18"),
    # decimal exponents
    ("1E-3", "0.001"),
    ("1e3", "1000"),
    ("1E6", "1e6"),
    ("1e9", "1e9"),
    ("1E18", "1e18"),
    ("1.2e3", "1200"),
    ("1.3E+6", "1.3e6"),
    ("0.5e-2", "0.005"),
    # things that look like floating point
    ("0.001", "0.001"),
    ("0.0005k", "0.5"),
    ("0.5", "0.5"),
    ("0.50000", "0.5"),
    ("100.035k", "100035"),
    ("10.035M", "10035000"),
    ("7.123456M", "7123456"),
    ("6.987654321G", "6987654321"),
    ("1.01E", "1.01e18"),
    # rounded up to the nano at parse time
    ("3.001n", "4e-9"),
    ("1.1E-9", "2e-9"),
    ("0.0000000001", "1e-9"),
    ("0.5e-9", "1e-9"),
    ("0.9n", "1e-9"),
    ("0.00000012345", "124e-9"),
    # binary amounts are capped at the int64 maximum
    ("9Ei", INT64_MAX),
    ("9223372036854775807Ki", INT64_MAX),
    # fractional binary amounts
    ("100.035Ki", "102435.84"),
    ("0.5Mi", 2**19),
    ("0.05Gi", "53687091.2"),
    ("0.000000000001Ki", "2e-9"),
    # written by trolls, still valid
    (".001", "0.001"),
    (".0001k", "0.1"),
    ("1.", "1"),
    ("1.G", "1e9"),
    ("+1", "1"),
    ("-1.5", "-1.5"),
    ("-3.001n", "-4e-9"),
]


@pytest.mark.parametrize(("text", "value"), PARSED, ids=[t for t, _ in PARSED])
def test_parse_quantity(text: str, value: object) -> None:
    assert parse_quantity(text) == Decimal(value)


INVALID = [
    "",
    " 1",
    "1 ",
    ".",
    "-.",
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    "1e",
    "1e4294967297",
    "1KiB",
    "1 Gi",
    "Infinity",
    "NaN",
]


@pytest.mark.parametrize("text", INVALID, ids=[repr(t) for t in INVALID])
def test_invalid_quantity_names_the_text(text: str) -> None:
    with pytest.raises(InvalidQuantity) as caught:
        parse_quantity(text)
    assert repr(text) in str(caught.value)


NOT_QUANTITIES = [True, False, None, [1], {"cpu": 1}, float("inf"), float("-inf"), float("nan")]


@pytest.mark.parametrize("value", NOT_QUANTITIES, ids=repr)
def test_values_that_are_not_quantities(value: object) -> None:
    with pytest.raises(InvalidQuantity):
        to_int(value)  # type: ignore[arg-type]


def test_true_is_not_one_even_after_one_was_parsed() -> None:
    assert to_int(1) == 1
    with pytest.raises(InvalidQuantity):
        to_int(True)


# (text, MilliValue, Value): both round up, away from zero.
COUNTED = [
    ("0", 0, 0),
    ("1", 1000, 1),
    ("500m", 500, 1),
    ("100m", 100, 1),
    ("1.5", 1500, 2),
    ("0.1", 100, 1),
    ("1n", 1, 1),
    ("1u", 1, 1),
    ("0.0001", 1, 1),
    ("1001u", 2, 1),
    ("1Ki", 1024000, 1024),
    ("1Gi", 2**30 * 1000, 2**30),
    ("2e3", 2_000_000, 2000),
    ("-1.5", -1500, -2),
    ("-0.0001", -1, -1),
    ("9.01", 9010, 10),
    # beyond int64, where Go's MilliValue/Value overflow, the count saturates
    ("1E2147483647", INT64_MAX, INT64_MAX),
    ("1e999999", INT64_MAX, INT64_MAX),
    ("-1e999999", -INT64_MAX, -INT64_MAX),
    ("10E", INT64_MAX, INT64_MAX),
    ("1E", INT64_MAX, 10**18),
]


@pytest.mark.parametrize(("text", "milli", "value"), COUNTED, ids=[t for t, _, _ in COUNTED])
def test_milli_value_and_value_round_up(text: str, milli: int, value: int) -> None:
    assert to_milli(text) == milli
    assert to_int(text) == value


NUMBERS = [
    (1, 1000, 1),
    (0, 0, 0),
    (2.5, 2500, 3),
    (0.1, 100, 1),
    (1e-4, 1, 1),
    (10**30, INT64_MAX, INT64_MAX),
]


@pytest.mark.parametrize(
    ("number", "milli", "value"), NUMBERS, ids=[repr(n) for n, _, _ in NUMBERS]
)
def test_numbers_from_yaml_or_json(number: float, milli: int, value: int) -> None:
    assert to_milli(number) == milli
    assert to_int(number) == value


def test_invalid_quantity_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="expected a number with an optional suffix"):
        to_milli("two")
