"""NodeResourcesFit's args: kube-scheduler's v1 defaulting and its validation messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubesched import ArgsError, FieldError
from kubesched.api.selectors import label_key_errors

from .scoring import (
    CPU,
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MEMORY,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGY_TYPES,
    ResourceSpec,
    UtilizationShapePoint,
)

__all__ = ["DEFAULT_RESOURCES", "NodeResourcesFitArgs", "ScoringStrategy"]

#: ``scoringStrategy.resources`` when none are given.
DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {_quote(value)}: {detail}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class ScoringStrategy:
    """``scoringStrategy``: how Score ranks the feasible nodes."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    #: ``requestedToCapacityRatio.shape`` (RequestedToCapacityRatio only).
    shape: tuple[UtilizationShapePoint, ...] | None = None


@dataclass(frozen=True)
class NodeResourcesFitArgs:
    """``pluginConfig[].args`` of NodeResourcesFit, defaulted as kube-scheduler's v1 API is."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> NodeResourcesFitArgs:
        """Default and validate ``args``; raises :class:`ArgsError` listing every bad field."""
        errors = [
            FieldError(
                key,
                "unknown field; allowed: ignoredResources, ignoredResourceGroups, scoringStrategy",
            )
            for key in args
            if key not in ("ignoredResources", "ignoredResourceGroups", "scoringStrategy")
        ]
        ignored = _string_list(args.get("ignoredResources"), "ignoredResources", errors)
        for i, name in enumerate(ignored):
            errors.extend(
                _invalid(f"ignoredResources[{i}]", name, m) for m in label_key_errors(name)
            )
        groups = _string_list(args.get("ignoredResourceGroups"), "ignoredResourceGroups", errors)
        for i, group in enumerate(groups):
            if "/" in group:
                errors.append(
                    _invalid(
                        f"ignoredResourceGroups[{i}]",
                        group,
                        "resource group name can't contain '/'",
                    )
                )
            errors.extend(
                _invalid(f"ignoredResourceGroups[{i}]", group, m) for m in label_key_errors(group)
            )
        strategy = _parse_strategy(args.get("scoringStrategy"), errors)
        if errors:
            raise ArgsError(errors)
        return cls(tuple(ignored), tuple(groups), strategy)


def _string_list(value: Any, path: str, errors: list[FieldError]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        errors.append(FieldError(path, "must be a list of strings"))
        return []
    return list(value)


def _parse_strategy(data: Any, errors: list[FieldError]) -> ScoringStrategy:
    path = "scoringStrategy"
    if data is None:
        return ScoringStrategy()
    if not isinstance(data, Mapping):
        errors.append(
            FieldError(path, "must be an object with type, resources, requestedToCapacityRatio")
        )
        return ScoringStrategy()
    errors.extend(
        FieldError(
            f"{path}.{key}", "unknown field; allowed: type, resources, requestedToCapacityRatio"
        )
        for key in data
        if key not in ("type", "resources", "requestedToCapacityRatio")
    )
    kind = data.get("type") or ""
    if kind not in SCORING_STRATEGY_TYPES:
        quoted = ", ".join(f'"{t}"' for t in sorted(SCORING_STRATEGY_TYPES))
        errors.append(
            FieldError(
                f"{path}.type", f"Unsupported value: {_quote(kind)}: supported values: {quoted}"
            )
        )
    resources = _parse_resources(data.get("resources"), f"{path}.resources", errors)
    ratio = data.get("requestedToCapacityRatio")
    shape = None
    ratio_path = f"{path}.requestedToCapacityRatio"
    if kind == REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            errors.append(
                FieldError(
                    ratio_path,
                    "Required value: must be specified when type is RequestedToCapacityRatio",
                )
            )
        elif not isinstance(ratio, Mapping):
            errors.append(FieldError(ratio_path, "must be an object with a shape"))
        else:
            shape = _parse_shape(ratio.get("shape"), f"{ratio_path}.shape", errors)
    elif ratio is not None:
        errors.append(
            FieldError(
                ratio_path, "Forbidden: must be nil when type is not RequestedToCapacityRatio"
            )
        )
    return ScoringStrategy(kind, resources, shape)


def _parse_resources(data: Any, path: str, errors: list[FieldError]) -> tuple[ResourceSpec, ...]:
    if not data:
        return DEFAULT_RESOURCES
    if not isinstance(data, list | tuple):
        errors.append(FieldError(path, "must be a list of {name, weight}"))
        return DEFAULT_RESOURCES
    resources = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            errors.append(FieldError(f"{path}[{i}]", "must be an object with a name and a weight"))
            continue
        weight = item.get("weight") or 1  # an unset or zero weight defaults to 1
        if not _is_int(weight):
            errors.append(_invalid(f"{path}[{i}].weight", weight, "must be an integer"))
            continue
        if weight <= 0 or weight > 100:
            errors.append(
                _invalid(
                    f"{path}[{i}].weight",
                    weight,
                    f"resource weight of {item['name']} not in valid range (0, 100]",
                )
            )
        resources.append(ResourceSpec(item["name"], weight))
    return tuple(resources)


def _parse_shape(
    data: Any, path: str, errors: list[FieldError]
) -> tuple[UtilizationShapePoint, ...]:
    if not data:
        errors.append(FieldError(path, "Required value: at least one point must be specified"))
        return ()
    if not isinstance(data, list | tuple) or not all(
        isinstance(p, Mapping) and _is_int(p.get("utilization", 0)) and _is_int(p.get("score", 0))
        for p in data
    ):
        errors.append(FieldError(path, "must be a list of {utilization, score} integer points"))
        return ()
    points = [UtilizationShapePoint(p.get("utilization", 0), p.get("score", 0)) for p in data]
    for i in range(1, len(points)):
        if points[i - 1].utilization >= points[i].utilization:
            errors.append(
                _invalid(
                    f"{path}[{i}].utilization",
                    points[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(points):
        if not 0 <= point.utilization <= 100:
            errors.append(
                _invalid(
                    f"{path}[{i}].utilization", point.utilization, "not in valid range [0, 100]"
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                _invalid(
                    f"{path}[{i}].score",
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return tuple(points)
