"""Kubernetes resource quantities (``500m``, ``1Gi``, ``2e3``) as integers the scheduler adds up.

kube-scheduler keeps cpu in millicores and every other resource as its integer value rounded up
(``Quantity.MilliValue()`` / ``Quantity.Value()``); so do we. As ``resource.ParseQuantity`` does,
a quantity is rounded up (away from zero) to a whole nano when parsed, and the counted values
saturate at the int64 limits (where Go's would overflow), so an absurd quantity such as
``1e999999`` is neither an error deep in the arithmetic nor a million-digit integer. Parsing is
cached: a cluster repeats the same few quantity strings on thousands of pods.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from decimal import Decimal

__all__ = ["InvalidQuantity", "parse_quantity", "to_int", "to_milli"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXPONENT = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
# No surrounding whitespace: kube's ParseQuantity rejects " 1" and "1 " too.
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?")
#: kube stores a decimal exponent in an int32 and refuses the rest (``1e4294967297``).
_MAX_EXPONENT = 2**31 - 1
_NANO = Decimal("1e-9")
_INT64_MAX = 2**63 - 1
#: The largest BinarySI amount kube keeps (``9Ei`` parses as this).
_MAX_BINARY = Decimal(_INT64_MAX)


class InvalidQuantity(ValueError):
    """A string that is not a Kubernetes quantity; the message quotes it."""


def _exact(digits: int) -> decimal.Context:
    """A context wide enough for ``digits`` significant digits; rounds magnitudes up if ever not."""
    return decimal.Context(
        prec=digits + 40,
        rounding=decimal.ROUND_CEILING,
        Emax=decimal.MAX_EMAX,
        Emin=decimal.MIN_EMIN,
    )


def _text(quantity: object) -> str:
    """The quantity as text, checked before any cache: a cache would take True for 1 (equal
    hashes) and fail on unhashable values."""
    if isinstance(quantity, str):
        return quantity
    if isinstance(quantity, bool) or not isinstance(quantity, int | float):
        raise InvalidQuantity(
            f"invalid quantity {quantity!r}: expected a string such as '500m' or a number"
        )
    if isinstance(quantity, float) and not math.isfinite(quantity):
        raise InvalidQuantity(f"invalid quantity {quantity!r}: must be a finite number")
    return str(quantity)


def parse_quantity(text: str | int | float) -> Decimal:
    """The value of a quantity; raises :class:`InvalidQuantity` when it is not one."""
    return _parse(_text(text))


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Decimal:
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise InvalidQuantity(
            f"invalid quantity {text!r}: expected a number with an optional "
            "suffix (m, k, M, G, Ki, Mi, Gi, …)"
        )
    number = Decimal(match.group(1))
    suffix = match.group(2) or ""
    if suffix[:1] in ("e", "E") and suffix not in _BINARY and len(suffix) > 1:
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise InvalidQuantity(f"invalid quantity {text!r}: exponent out of range")
    else:
        exponent = _DECIMAL_EXPONENT.get(suffix, 0)
    context = _exact(len(text))
    magnitude = number.copy_abs().scaleb(exponent, context=context)
    if suffix in _BINARY:
        magnitude = context.multiply(magnitude, _BINARY[suffix])
        magnitude = min(magnitude, _MAX_BINARY)
    if magnitude.as_tuple().exponent < -9:  # type: ignore[operator]  # finite here
        magnitude = magnitude.quantize(_NANO, context=context)  # rounds up to 1n
    return -magnitude if number.is_signed() else magnitude


def _count(value: Decimal) -> int:
    """Rounded up, away from zero (as ``Quantity.ScaledValue``), saturated at the int64 limits."""
    if value.copy_abs() >= _INT64_MAX:
        return -_INT64_MAX if value < 0 else _INT64_MAX
    return -math.ceil(-value) if value < 0 else math.ceil(value)


def to_milli(text: str | int | float) -> int:
    """The quantity in thousandths, rounded up (``Quantity.MilliValue``): how cpu is counted."""
    return _milli(_text(text))


def to_int(text: str | int | float) -> int:
    """The quantity rounded up to a whole number (``Quantity.Value``): memory, storage, pods."""
    return _value(_text(text))


@functools.lru_cache(maxsize=4096)
def _milli(text: str) -> int:
    value = _parse(text)
    return _count(value.scaleb(3, context=_exact(len(text))))


@functools.lru_cache(maxsize=4096)
def _value(text: str) -> int:
    return _count(_parse(text))
