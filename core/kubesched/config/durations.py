"""Go duration strings ("15s", "1m30s", "500ms") as the configuration writes them.

A module of its own: the config's decoder and its extenders' decoder both read durations.
"""

from __future__ import annotations

import re

__all__ = ["parse_duration"]

_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "\u00b5s": 1e-6,
    "\u03bcs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration string ("15s", "1m30s", "500ms", "-2h"); ``None`` if invalid."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    total, pos = 0.0, 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if pos == 0 or pos != len(body):
        return None
    return -total if text.startswith("-") else total
