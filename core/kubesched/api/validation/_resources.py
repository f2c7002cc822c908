"""``validateResourceRequirements`` and ``ValidateResourceQuantityValue``: requests, limits."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kubesched.api.quantity import InvalidQuantity, parse_quantity
from kubesched.api.selectors import label_key_errors
from kubesched.api.validation._fields import as_mapping, forbidden, invalid, required_value

_HUGEPAGES = "hugepages-"
#: ``helper.IsStandardContainerResourceName`` (besides ``hugepages-*``).
_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
#: ``standardIntegerResources``: counted in whole units.
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
#: ``helper.IsStandardResourceName`` (besides ``hugepages-*`` and ``requests.hugepages-*``).
_STANDARD_RESOURCES = _INTEGER_RESOURCES | {
    *(
        f"{prefix}{name}"
        for prefix in ("", "requests.", "limits.")
        for name in _CONTAINER_RESOURCES
    ),
    "storage",
    "requests.storage",
}


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    """``helper.IsExtendedResourceName``: a qualified name outside ``kubernetes.io``."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return not label_key_errors("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not name.startswith(_HUGEPAGES)


def _resource_name_errors(name: str, path: str, container: bool) -> list[str]:
    """``validateResourceName`` and, for containers, ``validateContainerResourceName``."""
    errors = [invalid(path, name, message) for message in label_key_errors(name)]
    single = "/" not in name
    if (
        not errors
        and single
        and not (
            name in _STANDARD_RESOURCES
            or name.startswith(_HUGEPAGES)
            or name.startswith("requests." + _HUGEPAGES)
        )
    ):
        errors.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if not container:
        return errors
    if single:
        if not (name in _CONTAINER_RESOURCES or name.startswith(_HUGEPAGES)):
            errors.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errors.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errors


def parse_amount(raw: Any) -> Decimal | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    try:
        return parse_quantity(raw)
    except InvalidQuantity:
        return None  # the object parser names it


def _shown(raw: Any) -> str:
    """The quantity as the manifest wrote it (Go prints ``Quantity.String()``, its canonical
    form; a manifest's own spelling is nearly always that form already)."""
    return str(raw)


def quantity_errors(name: str, raw: Any, value: Decimal, path: str) -> list[str]:
    """``ValidateResourceQuantityValue``: not negative; whole units for integer resources."""
    errors = []
    if value < 0:
        errors.append(invalid(path, _shown(raw), "must be greater than or equal to 0"))
    if (name in _INTEGER_RESOURCES or _is_extended(name)) and value != value.to_integral_value():
        errors.append(f"{path}: Invalid value: {_shown(raw)}: must be an integer")
    return errors


def _resource_list(
    values: Mapping[Any, Any], path: str, container: bool, errors: list[str]
) -> dict[str, tuple[Any, Decimal]]:
    """Each name and quantity of ``requests`` or ``limits`` checked; the readable ones, by name,
    as (what the manifest wrote, the amount)."""
    parsed = {}
    for key, raw in values.items():
        name, item = str(key), f"{path}[{key}]"
        errors += _resource_name_errors(name, item, container)
        value = parse_amount(raw)
        if value is not None:
            errors += quantity_errors(name, raw, value, item)
            parsed[name] = (raw, value)
    return parsed


def requirements_errors(resources: Any, path: str, container: bool) -> list[str]:
    """``validateResourceRequirements`` for one container (or the pod-level resources)."""
    if not isinstance(resources, Mapping):
        return []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    errors: list[str] = []
    limit_values, request_values = (
        as_mapping(resources.get("limits")),
        as_mapping(resources.get("requests")),
    )
    limits = _resource_list(limit_values, lim_path, container, errors)
    requests = _resource_list(request_values, req_path, container, errors)
    for name, (raw, value) in requests.items():
        if name in limit_values:
            if name not in limits:
                continue  # an unreadable limit, reported above
            limit_text, limit = _shown(limits[name][0]), limits[name][1]
            if value != limit and not _overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit_text}"
            elif value > limit:
                detail = f"must be less than or equal to {name} limit of {limit_text}"
            else:
                continue
            errors.append(invalid(req_path, _shown(raw), detail))
        elif not _overcommit_allowed(name):
            errors.append(
                required_value(lim_path, "Limit must be set for non overcommitable resources")
            )
    names = {str(name) for name in [*limit_values, *request_values]}
    if any(n.startswith(_HUGEPAGES) for n in names) and not names & {"cpu", "memory"}:
        errors.append(forbidden(path, "HugePages require cpu or memory"))
    return errors
