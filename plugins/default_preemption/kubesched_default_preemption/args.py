"""``DefaultPreemptionArgs``: kube's v1 defaults and ``ValidateDefaultPreemptionArgs``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched import ArgsError, FieldError

__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DefaultPreemptionArgs",
]

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100
_PERCENTAGE = "minCandidateNodesPercentage"
_ABSOLUTE = "minCandidateNodesAbsolute"
_INT32 = range(-(2**31), 2**31)


@dataclass(frozen=True)
class DefaultPreemptionArgs:
    """``pluginConfig[].args`` of DefaultPreemption."""

    #: Dry-run preemption on at least this share of the nodes where it might help...
    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    #: ...and on at least this many of them (both bounded by the number of such nodes).
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> DefaultPreemptionArgs:
        """Default and validate ``args``; raises :class:`ArgsError` listing every bad field."""
        errors = [
            FieldError(key, f"unknown field; allowed: {_PERCENTAGE}, {_ABSOLUTE}")
            for key in args
            if key not in (_PERCENTAGE, _ABSOLUTE)
        ]
        values: dict[str, int | None] = {}
        for key, default in (
            (_PERCENTAGE, DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE),
            (_ABSOLUTE, DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE),
        ):
            value = args.get(key)
            if value is None:  # unset or null: the v1 default, as kube's pointer fields
                values[key] = default
            elif isinstance(value, bool) or not isinstance(value, int) or value not in _INT32:
                errors.append(FieldError(key, f"Invalid value: {value!r}: must be an int32"))
                values[key] = None
            else:
                values[key] = value
        percentage, absolute = values[_PERCENTAGE], values[_ABSOLUTE]
        if percentage is not None and not 0 <= percentage <= 100:
            errors.append(
                FieldError(_PERCENTAGE, f"Invalid value: {percentage}: not in valid range [0, 100]")
            )
        if absolute is not None and absolute < 0:
            errors.append(
                FieldError(_ABSOLUTE, f"Invalid value: {absolute}: not in valid range [0, inf)")
            )
        if percentage == 0 and absolute == 0:
            errors += [
                FieldError(
                    _PERCENTAGE, f"Invalid value: 0: cannot be zero at the same time as {_ABSOLUTE}"
                ),
                FieldError(
                    _ABSOLUTE, f"Invalid value: 0: cannot be zero at the same time as {_PERCENTAGE}"
                ),
            ]
        if errors or percentage is None or absolute is None:
            raise ArgsError(errors)
        return cls(percentage, absolute)
