"""kube-apiserver's validation of the Pod and Node fields the scheduler reads.

A cluster file is scheduled as the same objects applied to a cluster would be, so what the
apiserver refuses on create (``ValidatePodCreate``, ``ValidateNode`` in
``pkg/apis/core/validation``) is refused here too, worded as the apiserver words it
(``spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable
resources``). Covered: container and pod-level requests and limits, ``spec.nodeSelector``, node
affinity terms (``matchExpressions``, ``matchFields``, preferred weights), tolerations, topology
spread constraints, inter-pod (anti-)affinity (:func:`kubesched.objects.pod_affinity_errors`),
node taints and node capacity/allocatable.

The functions take the raw mapping (after the API's defaulting, ``manifests.with_api_defaults``)
and never raise: a part that is not shaped as the API says is left to the object parser, which
names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from .objects import pod_affinity_errors
from .quantity import InvalidQuantity, parse_quantity
from .selectors import (
    LabelSelector,
    SelectorError,
    _dns1123_subdomain_errors,
    label_key_errors,
    label_value_errors,
)

__all__ = ["node_errors", "pod_errors"]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
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
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


# -- field.Error as k8s.io/apimachinery/pkg/util/validation/field prints it ---------------------
def _value(value: Any) -> str:
    """A bad value as ``field.Error.ErrorBody`` prints it: strings quoted, numbers bare."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, default=str, ensure_ascii=False)


def _invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_value(value)}: {detail}"


def _required(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def _forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def _not_supported(path: str, value: Any, supported: tuple[str, ...]) -> str:
    quoted = ", ".join(json.dumps(v) for v in supported)
    return f"{path}: Unsupported value: {_value(value)}: supported values: {quoted}"


def _duplicate(path: str, shown: str, detail: str = "") -> str:
    return f"{path}: Duplicate value: {shown}" + (f": {detail}" if detail else "")


def _label_name(key: Any, path: str) -> Iterator[str]:
    """``ValidateLabelName``: one error per way ``key`` is not a qualified name."""
    if isinstance(key, str):
        for message in label_key_errors(key):
            yield _invalid(path, key, message)


def _mappings(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, Mapping):
                yield index, item


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# -- resources ---------------------------------------------------------------------------------
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
    errors = [_invalid(path, name, message) for message in label_key_errors(name)]
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
        errors.append(_invalid(path, name, "must be a standard resource type or fully qualified"))
    if not container:
        return errors
    if single:
        if not (name in _CONTAINER_RESOURCES or name.startswith(_HUGEPAGES)):
            errors.append(_invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errors.append(_invalid(path, name, "doesn't follow extended resource name standard"))
    return errors


def _quantity(raw: Any) -> Decimal | None:
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


def _quantity_errors(name: str, raw: Any, value: Decimal, path: str) -> list[str]:
    """``ValidateResourceQuantityValue``: not negative; whole units for integer resources."""
    errors = []
    if value < 0:
        errors.append(_invalid(path, _shown(raw), "must be greater than or equal to 0"))
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
        value = _quantity(raw)
        if value is not None:
            errors += _quantity_errors(name, raw, value, item)
            parsed[name] = (raw, value)
    return parsed


def _requirements_errors(resources: Any, path: str, container: bool) -> list[str]:
    """``validateResourceRequirements`` for one container (or the pod-level resources)."""
    if not isinstance(resources, Mapping):
        return []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    errors: list[str] = []
    limit_values, request_values = (
        _mapping(resources.get("limits")),
        _mapping(resources.get("requests")),
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
            errors.append(_invalid(req_path, _shown(raw), detail))
        elif not _overcommit_allowed(name):
            errors.append(_required(lim_path, "Limit must be set for non overcommitable resources"))
    names = {str(name) for name in [*limit_values, *request_values]}
    if any(n.startswith(_HUGEPAGES) for n in names) and not names & {"cpu", "memory"}:
        errors.append(_forbidden(path, "HugePages require cpu or memory"))
    return errors


# -- node selectors and affinity ----------------------------------------------------------------
def _node_selector_requirement(expr: Mapping[str, Any], path: str, check_values: bool) -> list[str]:
    """``ValidateNodeSelectorRequirement``."""
    errors: list[str] = []
    operator, values = expr.get("operator"), _strings(expr.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(
                _required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(
                _forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(
                _required(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errors.append(_invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errors += _label_name(expr.get("key") or "", f"{path}.key")
    if check_values:
        errors += _each_value(values, f"{path}.values", label_value_errors)
    return errors


def _each_value(values: list[Any], path: str, check: Callable[[str], list[str]]) -> list[str]:
    """One Invalid error per problem ``check`` finds in each string of ``values``."""
    return [
        _invalid(f"{path}[{index}]", value, message)
        for index, value in enumerate(values)
        if isinstance(value, str)
        for message in check(value)
    ]


def _node_field_requirement(expr: Mapping[str, Any], path: str) -> list[str]:
    """``ValidateNodeFieldSelectorRequirement``: ``metadata.name``, In/NotIn, one value."""
    errors: list[str] = []
    operator, values = expr.get("operator"), _strings(expr.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errors.append(
                _required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        errors.append(_invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = expr.get("key")
    if key != "metadata.name":
        errors.append(_invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        errors += _each_value(values, f"{path}.values", _dns1123_subdomain_errors)
    return errors


def _node_selector_term(term: Mapping[str, Any], path: str, check_values: bool) -> list[str]:
    errors: list[str] = []
    for index, expr in _mappings(term.get("matchExpressions")):
        errors += _node_selector_requirement(
            expr, f"{path}.matchExpressions[{index}]", check_values
        )
    for index, expr in _mappings(term.get("matchFields")):
        errors += _node_field_requirement(expr, f"{path}.matchFields[{index}]")
    return errors


def _node_affinity_errors(node_affinity: Any, path: str) -> list[str]:
    """``validateNodeAffinity``: ``ValidateNodeSelector``, ``ValidatePreferredSchedulingTerms``."""
    if not isinstance(node_affinity, Mapping):
        return []
    errors: list[str] = []
    required = node_affinity.get(_REQUIRED)
    if isinstance(required, Mapping):
        terms_path = f"{path}.{_REQUIRED}.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms")
        if not terms:
            errors.append(_required(terms_path, "must have at least one node selector term"))
        for index, term in _mappings(terms):
            errors += _node_selector_term(term, f"{terms_path}[{index}]", check_values=True)
    for index, term in _mappings(node_affinity.get(_PREFERRED)):
        item = f"{path}.{_PREFERRED}[{index}]"
        weight = term.get("weight") or 0
        if isinstance(weight, int) and not isinstance(weight, bool) and not 0 < weight <= 100:
            errors.append(_invalid(f"{item}.weight", weight, "must be in the range 1-100"))
        preference = term.get("preference")
        if isinstance(preference, Mapping):
            # Invalid label values are allowed here: such a term can still match.
            errors += _node_selector_term(preference, f"{item}.preference", check_values=False)
    return errors


def _node_selector_errors(selector: Any) -> list[str]:
    """``ValidateLabels(spec.nodeSelector)``: every error at ``spec.nodeSelector`` itself."""
    if not isinstance(selector, Mapping):
        return []
    errors: list[str] = []
    for key, value in selector.items():
        errors += _label_name(key, "spec.nodeSelector")
        if isinstance(value, str):
            errors += [
                _invalid("spec.nodeSelector", value, message)
                for message in label_value_errors(value)
            ]
    return errors


# -- tolerations and taints ---------------------------------------------------------------------
def _effect_errors(effect: Any, path: str, allow_empty: bool) -> list[str]:
    """``validateTaintEffect``."""
    if not effect:
        return [] if allow_empty else [_required(path)]
    if effect not in _TAINT_EFFECTS:
        return [_not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def _toleration_errors(tolerations: Any) -> list[str]:
    """``ValidateTolerations``."""
    errors: list[str] = []
    for index, toleration in _mappings(tolerations):
        path = f"spec.tolerations[{index}]"
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or ""
        value = toleration.get("value") or ""
        effect = toleration.get("effect") or ""
        if key:
            errors += _label_name(key, f"{path}.key")
        if not key and operator != "Exists":
            errors.append(
                _invalid(
                    f"{path}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                _invalid(
                    f"{path}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            if isinstance(value, str) and (problems := label_value_errors(value)):
                errors.append(_invalid(f"{path}.operator", value, ";".join(problems)))
        elif operator == "Exists":
            if value:
                errors.append(
                    _invalid(
                        f"{path}.operator", value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errors.append(_not_supported(f"{path}.operator", operator, _TOLERATION_OPERATORS))
        errors += _effect_errors(effect, f"{path}.effect", allow_empty=True)
    return errors


def _go_taint(taint: Mapping[str, Any]) -> str:
    """A taint as Go's ``%#v`` prints the internal type in a Duplicate error."""

    def quoted(field: str) -> str:
        value = taint.get(field)
        return json.dumps(value if isinstance(value, str) else "")

    added = taint.get("timeAdded")
    shown_added = "(*v1.Time)(nil)" if not added else json.dumps(str(added))
    return (
        f"core.Taint{{Key:{quoted('key')}, Value:{quoted('value')}, Effect:{quoted('effect')}, "
        f"TimeAdded:{shown_added}}}"
    )


def _taint_errors(taints: Any) -> list[str]:
    """``validateNodeTaints``. The apiserver names these ``metadata.taints[i]`` (its path is
    built from ``metadata``); here they are named where they are, ``spec.taints[i]``."""
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()
    for index, taint in _mappings(taints):
        path = f"spec.taints[{index}]"
        key = taint.get("key")
        errors += _label_name(key if isinstance(key, str) else "", f"{path}.key")
        value = taint.get("value") or ""
        if isinstance(value, str) and (problems := label_value_errors(value)):
            errors.append(_invalid(f"{path}.value", value, ";".join(problems)))
        effect = taint.get("effect") or ""
        errors += _effect_errors(effect, f"{path}.effect", allow_empty=False)
        pair = (str(key or ""), str(effect))
        if pair in seen:
            errors.append(
                _duplicate(path, _go_taint(taint), "taints must be unique by key and effect pair")
            )
        seen.add(pair)
    return errors


# -- topology spread ----------------------------------------------------------------------------
def _selector_keys(selector: Any) -> set[str]:
    if not isinstance(selector, Mapping):
        return set()
    keys = {str(k) for k in (selector.get("matchLabels") or {}) if isinstance(k, str)}
    keys |= {
        str(e.get("key")) for _, e in _mappings(selector.get("matchExpressions")) if e.get("key")
    }
    return keys


def _spread_errors(constraints: Any) -> list[str]:
    """``validateTopologySpreadConstraints``."""
    errors: list[str] = []
    items = list(_mappings(constraints))
    for position, (index, constraint) in enumerate(items):
        path = f"spec.topologySpreadConstraints[{index}]"
        max_skew = constraint.get("maxSkew") or 0
        if isinstance(max_skew, int) and not isinstance(max_skew, bool) and max_skew <= 0:
            errors.append(_invalid(f"{path}.maxSkew", max_skew, "must be greater than zero"))
        topology_key = constraint.get("topologyKey") or ""
        if not topology_key:
            errors.append(_required(f"{path}.topologyKey", "can not be empty"))
        action = constraint.get("whenUnsatisfiable") or ""
        if action not in _SCHEDULE_ACTIONS:
            errors.append(_not_supported(f"{path}.whenUnsatisfiable", action, _SCHEDULE_ACTIONS))
        for _, later in items[position + 1 :]:
            if (later.get("topologyKey") or "") == topology_key and (
                later.get("whenUnsatisfiable") or ""
            ) == action:
                errors.append(
                    _duplicate(
                        f"{path}.{{topologyKey, whenUnsatisfiable}}",
                        json.dumps(f"{{{topology_key}, {action}}}"),
                    )
                )
                break
        min_domains = constraint.get("minDomains")
        if isinstance(min_domains, int) and not isinstance(min_domains, bool):
            if min_domains <= 0:
                errors.append(
                    _invalid(f"{path}.minDomains", min_domains, "must be greater than zero")
                )
            if action != "DoNotSchedule":
                errors.append(
                    _invalid(
                        f"{path}.minDomains",
                        min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for policy_field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(policy_field)
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errors.append(
                    _not_supported(f"{path}.{policy_field}", policy, _NODE_INCLUSION_POLICIES)
                )
        selector = constraint.get("labelSelector")
        match_label_keys = _strings(constraint.get("matchLabelKeys"))
        if match_label_keys:
            keys_path = f"{path}.matchLabelKeys"
            if selector is None:
                errors.append(
                    _forbidden(keys_path, "must not be specified when labelSelector is not set")
                )
            in_selector = _selector_keys(selector)
            for key_index, key in enumerate(match_label_keys):
                errors += _label_name(key, f"{keys_path}[{key_index}]")
                if key in in_selector:
                    errors.append(
                        _invalid(
                            f"{keys_path}[{key_index}]",
                            key,
                            "exists in both matchLabelKeys and labelSelector",
                        )
                    )
        if selector is not None:
            try:
                LabelSelector.parse(selector, f"{path}.labelSelector")
            except SelectorError as exc:
                errors += [str(error) for error in exc.errors]
    return errors


# -- objects ------------------------------------------------------------------------------------
def pod_errors(pod: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver refuses in the scheduling fields of ``pod`` (already defaulted), each
    as ``field.path: problem`` in its wording; empty when it would accept them."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return []
    errors: list[str] = []
    for field in ("containers", "initContainers"):
        for index, container in _mappings(spec.get(field)):
            errors += _requirements_errors(
                container.get("resources"), f"spec.{field}[{index}].resources", container=True
            )
    errors += _requirements_errors(spec.get("resources"), "spec.resources", container=False)
    errors += _node_selector_errors(spec.get("nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, Mapping):
        errors += _node_affinity_errors(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
        if all(
            isinstance(affinity.get(k), Mapping | None) for k in ("podAffinity", "podAntiAffinity")
        ):
            errors += pod_affinity_errors(affinity)  # else the parser names the bad part
    errors += _toleration_errors(spec.get("tolerations"))
    errors += _spread_errors(spec.get("topologySpreadConstraints"))
    return errors


def node_errors(node: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver refuses in the scheduling fields of ``node``: taints, and the
    quantities of its capacity and allocatable (``ValidateNodeResources``)."""
    errors: list[str] = []
    spec = node.get("spec")
    if isinstance(spec, Mapping):
        errors += _taint_errors(spec.get("taints"))
    status = node.get("status")
    if isinstance(status, Mapping):
        for field in ("capacity", "allocatable"):
            resources = status.get(field)
            if not isinstance(resources, Mapping):
                continue
            for name, raw in resources.items():
                value = _quantity(raw)
                if value is not None:
                    errors += _quantity_errors(str(name), raw, value, f"status.{field}.{name}")
    return errors
