"""Node selectors and affinity, tolerations, taints, topology spread: the apiserver's checks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubesched.api.selectors import (
    LabelSelector,
    SelectorError,
    _dns1123_subdomain_errors,
    label_value_errors,
)
from kubesched.api.validation._fields import (
    as_list,
    duplicate_value,
    each_mapping,
    each_value_errors,
    forbidden,
    invalid,
    label_name_errors,
    not_supported,
    required_value,
)

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
_NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


# -- node selectors and affinity ----------------------------------------------------------------
def _node_selector_requirement(expr: Mapping[str, Any], path: str, check_values: bool) -> list[str]:
    """``ValidateNodeSelectorRequirement``."""
    errors: list[str] = []
    operator, values = expr.get("operator"), as_list(expr.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(
                required_value(
                    f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(
                forbidden(
                    f"{path}.values",
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(
                required_value(
                    f"{path}.values",
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errors += label_name_errors(expr.get("key") or "", f"{path}.key")
    if check_values:
        errors += each_value_errors(values, f"{path}.values", label_value_errors)
    return errors


def _node_field_requirement(expr: Mapping[str, Any], path: str) -> list[str]:
    """``ValidateNodeFieldSelectorRequirement``: ``metadata.name``, In/NotIn, one value."""
    errors: list[str] = []
    operator, values = expr.get("operator"), as_list(expr.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errors.append(
                required_value(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector",
                )
            )
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = expr.get("key")
    if key != "metadata.name":
        errors.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        errors += each_value_errors(values, f"{path}.values", _dns1123_subdomain_errors)
    return errors


def _node_selector_term(term: Mapping[str, Any], path: str, check_values: bool) -> list[str]:
    errors: list[str] = []
    for index, expr in each_mapping(term.get("matchExpressions")):
        errors += _node_selector_requirement(
            expr, f"{path}.matchExpressions[{index}]", check_values
        )
    for index, expr in each_mapping(term.get("matchFields")):
        errors += _node_field_requirement(expr, f"{path}.matchFields[{index}]")
    return errors


def node_affinity_errors(node_affinity: Any, path: str) -> list[str]:
    """``validateNodeAffinity``: ``ValidateNodeSelector``, ``ValidatePreferredSchedulingTerms``."""
    if not isinstance(node_affinity, Mapping):
        return []
    errors: list[str] = []
    required = node_affinity.get(_REQUIRED)
    if isinstance(required, Mapping):
        terms_path = f"{path}.{_REQUIRED}.nodeSelectorTerms"
        terms = required.get("nodeSelectorTerms")
        if not terms:
            errors.append(required_value(terms_path, "must have at least one node selector term"))
        for index, term in each_mapping(terms):
            errors += _node_selector_term(term, f"{terms_path}[{index}]", check_values=True)
    for index, term in each_mapping(node_affinity.get(_PREFERRED)):
        item = f"{path}.{_PREFERRED}[{index}]"
        weight = term.get("weight") or 0
        if isinstance(weight, int) and not isinstance(weight, bool) and not 0 < weight <= 100:
            errors.append(invalid(f"{item}.weight", weight, "must be in the range 1-100"))
        preference = term.get("preference")
        if isinstance(preference, Mapping):
            # Invalid label values are allowed here: such a term can still match.
            errors += _node_selector_term(preference, f"{item}.preference", check_values=False)
    return errors


def node_selector_errors(selector: Any) -> list[str]:
    """``ValidateLabels(spec.nodeSelector)``: every error at ``spec.nodeSelector`` itself."""
    if not isinstance(selector, Mapping):
        return []
    errors: list[str] = []
    for key, value in selector.items():
        errors += label_name_errors(key, "spec.nodeSelector")
        if isinstance(value, str):
            errors += [
                invalid("spec.nodeSelector", value, message)
                for message in label_value_errors(value)
            ]
    return errors


# -- tolerations and taints ---------------------------------------------------------------------
def _effect_errors(effect: Any, path: str, allow_empty: bool) -> list[str]:
    """``validateTaintEffect``."""
    if not effect:
        return [] if allow_empty else [required_value(path)]
    if effect not in _TAINT_EFFECTS:
        return [not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def toleration_errors(tolerations: Any) -> list[str]:
    """``ValidateTolerations``."""
    errors: list[str] = []
    for index, toleration in each_mapping(tolerations):
        path = f"spec.tolerations[{index}]"
        key = toleration.get("key") or ""
        operator = toleration.get("operator") or ""
        value = toleration.get("value") or ""
        effect = toleration.get("effect") or ""
        if key:
            errors += label_name_errors(key, f"{path}.key")
        if not key and operator != "Exists":
            errors.append(
                invalid(
                    f"{path}.operator",
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                invalid(
                    f"{path}.effect",
                    effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if operator in ("Equal", ""):
            if isinstance(value, str) and (problems := label_value_errors(value)):
                errors.append(invalid(f"{path}.operator", value, ";".join(problems)))
        elif operator == "Exists":
            if value:
                errors.append(
                    invalid(
                        f"{path}.operator", value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errors.append(not_supported(f"{path}.operator", operator, _TOLERATION_OPERATORS))
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


def taint_errors(taints: Any) -> list[str]:
    """``validateNodeTaints``. The apiserver names these ``metadata.taints[i]`` (its path is
    built from ``metadata``); here they are named where they are, ``spec.taints[i]``."""
    errors: list[str] = []
    seen: set[tuple[str, str]] = set()
    for index, taint in each_mapping(taints):
        path = f"spec.taints[{index}]"
        key = taint.get("key")
        errors += label_name_errors(key if isinstance(key, str) else "", f"{path}.key")
        value = taint.get("value") or ""
        if isinstance(value, str) and (problems := label_value_errors(value)):
            errors.append(invalid(f"{path}.value", value, ";".join(problems)))
        effect = taint.get("effect") or ""
        errors += _effect_errors(effect, f"{path}.effect", allow_empty=False)
        pair = (str(key or ""), str(effect))
        if pair in seen:
            errors.append(
                duplicate_value(
                    path, _go_taint(taint), "taints must be unique by key and effect pair"
                )
            )
        seen.add(pair)
    return errors


# -- topology spread ----------------------------------------------------------------------------
def _selector_keys(selector: Any) -> set[str]:
    if not isinstance(selector, Mapping):
        return set()
    keys = {str(k) for k in (selector.get("matchLabels") or {}) if isinstance(k, str)}
    keys |= {
        str(e.get("key")) for _, e in each_mapping(selector.get("matchExpressions")) if e.get("key")
    }
    return keys


def spread_errors(constraints: Any) -> list[str]:
    """``validateTopologySpreadConstraints``."""
    errors: list[str] = []
    items = list(each_mapping(constraints))
    for position, (index, constraint) in enumerate(items):
        path = f"spec.topologySpreadConstraints[{index}]"
        max_skew = constraint.get("maxSkew") or 0
        if isinstance(max_skew, int) and not isinstance(max_skew, bool) and max_skew <= 0:
            errors.append(invalid(f"{path}.maxSkew", max_skew, "must be greater than zero"))
        topology_key = constraint.get("topologyKey") or ""
        if not topology_key:
            errors.append(required_value(f"{path}.topologyKey", "can not be empty"))
        action = constraint.get("whenUnsatisfiable") or ""
        if action not in _SCHEDULE_ACTIONS:
            errors.append(not_supported(f"{path}.whenUnsatisfiable", action, _SCHEDULE_ACTIONS))
        for _, later in items[position + 1 :]:
            if (later.get("topologyKey") or "") == topology_key and (
                later.get("whenUnsatisfiable") or ""
            ) == action:
                errors.append(
                    duplicate_value(
                        f"{path}.{{topologyKey, whenUnsatisfiable}}",
                        json.dumps(f"{{{topology_key}, {action}}}"),
                    )
                )
                break
        min_domains = constraint.get("minDomains")
        if isinstance(min_domains, int) and not isinstance(min_domains, bool):
            if min_domains <= 0:
                errors.append(
                    invalid(f"{path}.minDomains", min_domains, "must be greater than zero")
                )
            if action != "DoNotSchedule":
                errors.append(
                    invalid(
                        f"{path}.minDomains",
                        min_domains,
                        f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}",
                    )
                )
        for policy_field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(policy_field)
            if policy is not None and policy not in _NODE_INCLUSION_POLICIES:
                errors.append(
                    not_supported(f"{path}.{policy_field}", policy, _NODE_INCLUSION_POLICIES)
                )
        selector = constraint.get("labelSelector")
        match_label_keys = as_list(constraint.get("matchLabelKeys"))
        if match_label_keys:
            keys_path = f"{path}.matchLabelKeys"
            if selector is None:
                errors.append(
                    forbidden(keys_path, "must not be specified when labelSelector is not set")
                )
            in_selector = _selector_keys(selector)
            for key_index, key in enumerate(match_label_keys):
                errors += label_name_errors(key, f"{keys_path}[{key_index}]")
                if key in in_selector:
                    errors.append(
                        invalid(
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
