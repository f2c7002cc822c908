"""Topology spread constraints: the plugin's args, the parsed constraints, and what they count.

The parts of kube-scheduler's ``podtopologyspread`` package (``common.go``, ``plugin.go``, the
args validation of ``validation_pluginargs.go`` and ``helper.DefaultSelector``) that do not
depend on a scheduling cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import ArgsError, FieldError, Node, Pod
from kubesched.api.selectors import (
    LabelSelector,
    RequiredNodeAffinity,
    Requirement,
    label_key_errors,
)
from kubesched.framework.helpers import compile_selector, find_untolerated_taint

__all__ = [
    "DO_NOT_SCHEDULE",
    "HONOR",
    "IGNORE",
    "LIST_DEFAULTING",
    "SCHEDULE_ANYWAY",
    "SPREADING_KINDS",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpreadArgs",
    "SpreadConstraint",
    "SpreadingObjects",
    "compile_selector",
    "default_selector",
    "filter_constraints",
    "node_labels_match_constraints",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

#: kube-scheduler's ``systemDefaultConstraints`` (``defaultingType: System``).
SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE_LABEL, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

#: Lists the raw objects of one kind (``Handle.lister``).
SpreadingObjects = Callable[[], Iterable[Mapping[str, Any]]]

_WHEN_UNSATISFIABLE = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
_POLICIES = (HONOR, IGNORE)
SERVICE = "Service"
REPLICATION_CONTROLLER = "ReplicationController"
REPLICA_SET = "ReplicaSet"
STATEFUL_SET = "StatefulSet"
#: The kinds whose selectors default constraints use (listed through ``Handle.lister``).
SPREADING_KINDS = (SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET)
#: (apiVersion, kind) of a controlling owner reference -> the kind whose selector counts.
_CONTROLLER_KINDS = {
    ("v1", REPLICATION_CONTROLLER): REPLICATION_CONTROLLER,
    ("apps/v1", REPLICA_SET): REPLICA_SET,
    ("apps/v1", STATEFUL_SET): STATEFUL_SET,
}
_ARGS_FIELDS = ("defaultConstraints", "defaultingType")
_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- args ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodTopologySpreadArgs:
    """``pluginConfig[].args`` of PodTopologySpread, validated as kube-scheduler validates them."""

    #: Constraints for pods that have none (``whenUnsatisfiable`` decides Filter or Score).
    default_constraints: tuple[Mapping[str, Any], ...] = ()
    #: ``System`` (kube-scheduler's built-in defaults) or ``List`` (``default_constraints``).
    defaulting_type: str = SYSTEM_DEFAULTING

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> PodTopologySpreadArgs:
        """Validate ``args``; raises :class:`ArgsError` listing every bad field."""
        allowed = ", ".join(_ARGS_FIELDS)
        errors = [
            FieldError(key, f"unknown field; allowed: {allowed}")
            for key in args
            if key not in _ARGS_FIELDS
        ]
        raw_constraints = args.get("defaultConstraints")
        constraints: list[Mapping[str, Any]] = []
        if raw_constraints is not None and not isinstance(raw_constraints, list | tuple):
            errors.append(FieldError("defaultConstraints", "must be a list of constraints"))
        else:
            for i, item in enumerate(raw_constraints or ()):
                if not isinstance(item, Mapping):
                    errors.append(FieldError(f"defaultConstraints[{i}]", "must be an object"))
                    continue
                constraints.append(item)
        defaulting_type = args.get("defaultingType") or SYSTEM_DEFAULTING  # v1 defaulting
        if defaulting_type not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
            errors.append(
                FieldError(
                    "defaultingType",
                    f"Unsupported value: {_quote(defaulting_type)}: supported values: "
                    f'"{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"',
                )
            )
        elif defaulting_type == SYSTEM_DEFAULTING and constraints:
            errors.append(
                FieldError(
                    "defaultingType",
                    f'Invalid value: "{SYSTEM_DEFAULTING}": when .defaultConstraints are not empty',
                )
            )
        for i in range(len(constraints)):
            errors.extend(_constraint_errors(constraints, i))
        if errors:
            raise ArgsError(errors)
        return cls(tuple(constraints), defaulting_type)


def _constraint_errors(constraints: list[Mapping[str, Any]], i: int) -> list[FieldError]:
    """``ValidatePodTopologySpreadArgs`` for ``defaultConstraints[i]``, plus type checks."""
    c = constraints[i]
    path = f"defaultConstraints[{i}]"
    errors = [
        FieldError(f"{path}.{key}", f"unknown field; allowed: {', '.join(_CONSTRAINT_FIELDS)}")
        for key in c
        if key not in _CONSTRAINT_FIELDS
    ]
    max_skew = c.get("maxSkew", 0)
    if not _is_int(max_skew):
        errors.append(FieldError(f"{path}.maxSkew", f"Invalid value: {max_skew!r}: must be an int"))
    elif max_skew <= 0:
        errors.append(
            FieldError(f"{path}.maxSkew", f"Invalid value: {max_skew}: not in valid range (0, inf)")
        )
    key = c.get("topologyKey") or ""
    if not isinstance(key, str):
        errors.append(FieldError(f"{path}.topologyKey", "must be a string"))
    elif not key:
        errors.append(FieldError(f"{path}.topologyKey", "Required value: can not be empty"))
    else:
        errors.extend(
            FieldError(f"{path}.topologyKey", f"Invalid value: {_quote(key)}: {message}")
            for message in label_key_errors(key)
        )
    when = c.get("whenUnsatisfiable") or ""
    if not when:
        errors.append(FieldError(f"{path}.whenUnsatisfiable", "Required value: can not be empty"))
    elif when not in _WHEN_UNSATISFIABLE:
        errors.append(
            FieldError(
                f"{path}.whenUnsatisfiable",
                f"Unsupported value: {_quote(when)}: supported values: "
                f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"',
            )
        )
    if c.get("labelSelector") is not None:
        errors.append(
            FieldError(
                f"{path}.labelSelector",
                "Forbidden: constraint must not define a selector, as they deduced for each pod",
            )
        )
    min_domains = c.get("minDomains")
    if min_domains is not None and not _is_int(min_domains):
        errors.append(
            FieldError(f"{path}.minDomains", f"Invalid value: {min_domains!r}: must be an int")
        )
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        value = c.get(policy)
        if value is not None and value not in _POLICIES:
            errors.append(
                FieldError(
                    f"{path}.{policy}",
                    f'Unsupported value: {_quote(value)}: supported values: "{HONOR}", "{IGNORE}"',
                )
            )
    keys = c.get("matchLabelKeys")
    if keys is not None and not (
        isinstance(keys, list | tuple) and all(isinstance(k, str) for k in keys)
    ):
        errors.append(FieldError(f"{path}.matchLabelKeys", "must be a list of label keys"))
    for other in constraints[:i]:
        if other.get("topologyKey") == key and other.get("whenUnsatisfiable") == when:
            errors.append(
                FieldError(f"defaultConstraints[{i}]", f'Duplicate value: "{{{key}, {when}}}"')
            )
            break
    return errors


# --- constraints ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """kube-scheduler's internal ``topologySpreadConstraint``: a constraint, selector parsed."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE
    #: The cache key of ``selector`` (computed once: strings keep their hash).
    selector_key: str = field(default="", compare=False, repr=False)
    #: ``selector.matches`` specialised for the common shapes (hot loops call it per pod).
    matches: Callable[[Mapping[str, str]], bool] = field(default=bool, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.selector_key:
            prefix = "-" if self.selector.matches_nothing else "+"
            object.__setattr__(self, "selector_key", prefix + str(self.selector))
        object.__setattr__(self, "matches", compile_selector(self.selector))

    def with_selector(self, selector: LabelSelector) -> SpreadConstraint:
        return SpreadConstraint(
            self.max_skew,
            self.topology_key,
            selector,
            self.min_domains,
            self.node_affinity_policy,
            self.node_taints_policy,
        )

    def match_node_inclusion_policies(
        self, pod: Pod, node: Node, required: RequiredNodeAffinity
    ) -> bool:
        """Whether ``node`` counts as a domain under this constraint's inclusion policies."""
        # Broken required terms just match no node: kube ignores the parse errors here too.
        if self.node_affinity_policy == HONOR and not required.match(node):
            return False
        if (
            self.node_taints_policy == HONOR
            and find_untolerated_taint(node.taints, pod.tolerations) is not None
        ):
            return False
        return True


def filter_constraints(
    constraints: Iterable[Mapping[str, Any]],
    pod_labels: Mapping[str, str],
    action: str,
    enable_match_label_keys: bool = True,
    enable_node_inclusion_policy: bool = True,
) -> list[SpreadConstraint]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, parsed.

    ``matchLabelKeys`` add the pod's values of those keys to a non-nil selector; the inclusion
    policies default to ``Honor`` (node affinity) and ``Ignore`` (taints). Raises
    :class:`~kubesched.api.selectors.SelectorError` for a selector that cannot be parsed.
    """
    result = []
    for c in constraints:
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.parse(c.get("labelSelector"))
        keys = c.get("matchLabelKeys")
        if enable_match_label_keys and keys:
            match_labels = {key: pod_labels[key] for key in keys if key in pod_labels}
            if match_labels and not selector.matches_nothing:
                # mergeLabelSetWithSelector: the pod's values first, then the selector's.
                selector = LabelSelector(
                    [*LabelSelector.from_set(match_labels).requirements, *selector.requirements]
                )
        min_domains = c.get("minDomains")
        affinity_policy, taints_policy = HONOR, IGNORE
        if enable_node_inclusion_policy:
            affinity_policy = c.get("nodeAffinityPolicy") or HONOR
            taints_policy = c.get("nodeTaintsPolicy") or IGNORE
        result.append(
            SpreadConstraint(
                max_skew=c.get("maxSkew") or 0,
                topology_key=c.get("topologyKey") or "",
                selector=selector,
                min_domains=1 if min_domains is None else min_domains,
                node_affinity_policy=affinity_policy,
                node_taints_policy=taints_policy,
            )
        )
    return result


def node_labels_match_constraints(
    labels: Mapping[str, str], constraints: Iterable[SpreadConstraint]
) -> bool:
    """Whether the node has every constraint's topology key."""
    return all(c.topology_key in labels for c in constraints)


# --- default constraints' selector ---------------------------------------------------------------


def _controller_of(pod: Pod) -> Mapping[str, Any] | None:
    for ref in (pod.raw.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


def _in_namespace(objects: Iterable[Mapping[str, Any]], namespace: str) -> list[Mapping[str, Any]]:
    return [
        obj
        for obj in objects
        if ((obj.get("metadata") or {}).get("namespace") or "default") == namespace
    ]


def _named(objects: Iterable[Mapping[str, Any]], name: str) -> Mapping[str, Any] | None:
    for obj in objects:
        if (obj.get("metadata") or {}).get("name") == name:
            return obj
    return None


def default_selector(pod: Pod, listers: Mapping[str, SpreadingObjects]) -> LabelSelector:
    """kube-scheduler's ``helper.DefaultSelector``: the selectors of the Services that select the
    pod and of the ReplicationController, ReplicaSet or StatefulSet that controls it, merged.

    ``listers`` maps those kinds to functions listing their raw objects.
    """
    label_set: dict[str, str] = {}
    services = listers.get(SERVICE)
    for service in _in_namespace(services() if services else (), pod.namespace):
        selector = (service.get("spec") or {}).get("selector")
        if selector is None:  # services with nil selectors match nothing, not everything
            continue
        if LabelSelector.from_set(selector).matches(pod.labels):
            label_set.update(selector)
    requirements: list[Requirement] = list(LabelSelector.from_set(label_set).requirements)
    owner = _controller_of(pod)
    kind = None
    if owner is not None:
        kind = _CONTROLLER_KINDS.get((owner.get("apiVersion") or "", owner.get("kind") or ""))
    lister = listers.get(kind) if kind else None
    if kind is None or lister is None:  # not owned by a supported controller
        return LabelSelector(requirements)
    controller = _named(_in_namespace(lister(), pod.namespace), (owner or {}).get("name") or "")
    if controller is None:
        return LabelSelector(requirements)
    spec_selector = (controller.get("spec") or {}).get("selector")
    if kind == REPLICATION_CONTROLLER:
        label_set.update(spec_selector or {})
        return LabelSelector.from_set(label_set)
    try:
        other = LabelSelector.parse(spec_selector)
    except ValueError:
        return LabelSelector(requirements)
    if other.matches_nothing:
        return LabelSelector(requirements)
    return LabelSelector([*requirements, *other.requirements])
