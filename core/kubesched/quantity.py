"""Kubernetes resource quantities (``500m``, ``1Gi``, ``2e3``) as integers the scheduler adds up.

kube-scheduler keeps cpu in millicores and every other resource as its integer value rounded up
(``Quantity.MilliValue()`` / ``Quantity.Value()``); so do we. Parsing is cached: a cluster repeats
the same few quantity strings on thousands of pods.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["InvalidQuantity", "parse_quantity", "to_int", "to_milli"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?$")


class InvalidQuantity(ValueError):
    """A string that is not a Kubernetes quantity; the message quotes it."""


@functools.lru_cache(maxsize=4096)
def parse_quantity(text: str | int | float) -> Decimal:
    """The exact value of a quantity; raises :class:`InvalidQuantity` when it is not one."""
    if isinstance(text, bool):
        raise InvalidQuantity(f"invalid quantity {text!r}")
    if isinstance(text, int | float):
        return Decimal(str(text))
    match = _QUANTITY.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise InvalidQuantity(f"invalid quantity {text!r}: expected a number with an optional "
                              "suffix (m, k, M, G, Ki, Mi, Gi, …)")
    try:
        number = Decimal(match.group(1))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise InvalidQuantity(f"invalid quantity {text!r}") from exc
    suffix = match.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _DECIMAL[suffix]


def to_milli(text: str | int | float) -> int:
    """The quantity in thousandths, rounded up (``Quantity.MilliValue``): how cpu is counted."""
    return math.ceil(parse_quantity(text) * 1000)


def to_int(text: str | int | float) -> int:
    """The quantity rounded up to a whole number (``Quantity.Value``): memory, storage, pods."""
    return math.ceil(parse_quantity(text))
