"""Label selectors and node selectors with Kubernetes' matching and validation rules.

Shared by every plugin that selects nodes or pods by labels, so that they all agree with
kube-scheduler on the corner cases:

- :class:`LabelSelector` is ``metav1.LabelSelector`` (``matchLabels`` + ``matchExpressions`` with
  In/NotIn/Exists/DoesNotExist), read as ``metav1.LabelSelectorAsSelector`` reads it: a missing
  selector (``None``) matches **nothing**, an empty one (``{}``) matches **everything**. Plugins
  that give a missing selector another meaning (e.g. "no constraint") decide that before calling.
- :class:`NodeSelector` is ``v1.NodeSelector``: terms are ORed; inside a term the
  ``matchExpressions`` (In, NotIn, Exists, DoesNotExist, Gt, Lt on labels) and the
  ``matchFields`` (In/NotIn on ``metadata.name``, the only field a node has) are ANDed; a term
  with neither matches nothing, and so does a selector without terms.
- :class:`PreferredSchedulingTerms` scores a node by the summed weights of the terms it matches.
- :class:`RequiredNodeAffinity` is a pod's ``spec.nodeSelector`` AND its required node affinity
  (``k8s.io/component-helpers/scheduling/corev1/nodeaffinity.GetRequiredNodeAffinity``).

Validation reports every problem as a :class:`~kubesched.FieldError` whose path and message
follow Kubernetes' (``nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "a b": …``);
:class:`SelectorError` carries them all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched.errors import FieldError

if TYPE_CHECKING:  # selectors read objects; objects validate their terms with selectors
    from kubesched.api.objects import Node, Pod

__all__ = [
    "DOES_NOT_EXIST",
    "EQUALS",
    "EVERYTHING",
    "EXISTS",
    "GT",
    "IN",
    "LABEL_SELECTOR_OPERATORS",
    "LT",
    "NODE_FIELD_SELECTOR_OPERATORS",
    "NODE_SELECTOR_OPERATORS",
    "NOTHING",
    "NOT_IN",
    "OBJECT_NAME_FIELD",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "PreferredSchedulingTerms",
    "RequiredNodeAffinity",
    "Requirement",
    "SelectorError",
    "label_key_errors",
    "label_value_errors",
]

IN = "In"
NOT_IN = "NotIn"
EXISTS = "Exists"
DOES_NOT_EXIST = "DoesNotExist"
GT = "Gt"
LT = "Lt"
#: ``key=value`` (``matchLabels`` and ``spec.nodeSelector`` entries); matches like In.
EQUALS = "="
#: The operators of ``metav1.LabelSelectorRequirement``.
LABEL_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
#: The operators of ``v1.NodeSelectorRequirement`` in ``matchExpressions``.
NODE_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
#: The operators allowed in ``matchFields``.
NODE_FIELD_SELECTOR_OPERATORS = (IN, NOT_IN)
#: The one field ``matchFields`` can select a node by.
OBJECT_NAME_FIELD = "metadata.name"


# --- Kubernetes' label key / value rules (k8s.io/apimachinery/pkg/api/validate/content) ---------

_LABEL_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_LABEL_NAME_FMT})?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = rf"{_DNS1123_LABEL_FMT}(\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_LABEL_NAME = re.compile(_LABEL_NAME_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_LABEL_MAX_LENGTH = 63
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_INT64 = re.compile(r"[+-]?[0-9]+")


def _regex_error(message: str, regex: str, *examples: str) -> str:
    # Kubernetes' RegexError, double spaces included ("'MyName',  or 'my.name', ...").
    text = message + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{regex}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def _too_long(value: str, length: int) -> bool:
    return len(value.encode()) > length


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errors = []
    if _too_long(value, _DNS1123_SUBDOMAIN_MAX_LENGTH):
        errors.append(_max_len_error(_DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def label_key_errors(key: str) -> list[str]:
    """Why ``key`` is not a label key (``[prefix/]name``); empty when it is one."""
    errors: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + msg for msg in _dns1123_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_NAME_MSG, _LABEL_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif _too_long(name, _LABEL_MAX_LENGTH):
        errors.append("name part " + _max_len_error(_LABEL_MAX_LENGTH))
    if not _LABEL_NAME.fullmatch(name):
        errors.append(
            "name part "
            + _regex_error(_LABEL_NAME_MSG, _LABEL_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why ``value`` is not a label value; empty when it is one (``""`` is valid)."""
    errors = []
    if _too_long(value, _LABEL_MAX_LENGTH):
        errors.append(_max_len_error(_LABEL_MAX_LENGTH))
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(
            _regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")
        )
    return errors


# --- field errors worded as k8s.io/apimachinery/pkg/util/validation/field words them ----------


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _go_value(value: Any) -> str:
    """A bad value as Go's ``field.Error`` prints it (``%q`` strings, ``%#v`` string slices)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            return "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "}"
        return json.dumps(list(value), default=str)
    return json.dumps(value, default=str)


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {_go_value(value)}: {detail}")


def _not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    quoted = ", ".join(json.dumps(v) for v in supported)
    return FieldError(path, f"Unsupported value: {_go_value(value)}: supported values: {quoted}")


class SelectorError(ValueError):
    """A selector that cannot be read; ``errors`` lists every bad field with its path.

    The message is Kubernetes' aggregate of the errors: the error itself when there is one,
    ``[e1, e2]`` otherwise.
    """

    def __init__(self, errors: Iterable[FieldError]) -> None:
        self.errors = _dedup(errors)
        texts = [str(e) for e in self.errors]
        super().__init__(texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]")


def _dedup(errors: Iterable[FieldError]) -> list[FieldError]:
    seen: set[str] = set()
    out = []
    for error in errors:
        if str(error) not in seen:
            seen.add(str(error))
            out.append(error)
    return out


# --- requirements ------------------------------------------------------------------------------


def _parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: digits with an optional sign, in range."""
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


class Requirement:
    """One ``key operator values`` condition on a set of labels."""

    __slots__ = ("_bound", "_set", "key", "operator", "values")

    def __init__(self, key: str, operator: str, values: Sequence[str] = ()) -> None:
        self.key = key
        self.operator = operator
        self.values: tuple[str, ...] = tuple(values)
        self._set = frozenset(self.values)
        self._bound = _parse_int64(self.values[0]) if len(self.values) == 1 else None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Kubernetes' ``Requirement.Matches``: NotIn and DoesNotExist match an absent key."""
        op = self.operator
        if op in (IN, EQUALS):
            return self.key in labels and labels[self.key] in self._set
        if op == NOT_IN:
            return self.key not in labels or labels[self.key] not in self._set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GT, LT):
            if self.key not in labels or self._bound is None:
                return False
            value = _parse_int64(labels[self.key])
            if value is None:
                return False
            return value > self._bound if op == GT else value < self._bound
        return False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))

    def __str__(self) -> str:
        op, values = self.operator, ",".join(sorted(self.values))
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        if op == GT:
            return f"{self.key}>{values}"
        if op == LT:
            return f"{self.key}<{values}"
        if op == NOT_IN:
            return f"{self.key} notin ({values})"
        if op == EQUALS:
            return f"{self.key}={values}"
        return f"{self.key} in ({values})"

    def __repr__(self) -> str:
        return f"Requirement({self})"


def _new_requirement(
    key: Any, operator: str, values: Any, path: str, errors: list[FieldError]
) -> Requirement | None:
    """``labels.NewRequirement`` with a field path: every problem of one requirement."""
    found: list[FieldError] = []
    if not isinstance(key, str):
        found.append(_invalid(_child(path, "key"), key, "must be a string"))
        key = ""
    else:
        key_errors = label_key_errors(key)
        if key_errors:
            found.append(_invalid(_child(path, "key"), key, "; ".join(key_errors)))
    values_path = _child(path, "values")
    if values is None:
        raw_values: list[Any] = []
        shown: Any = "[]string(nil)"
    elif isinstance(values, list | tuple):
        raw_values = list(values)
        shown = raw_values
    else:
        found.append(_invalid(values_path, values, "must be a list of strings"))
        raw_values, shown = [], None
    strings: list[str] = []
    for i, value in enumerate(raw_values):
        if isinstance(value, str):
            strings.append(value)
        else:
            found.append(_invalid(f"{values_path}[{i}]", value, "must be a string"))

    def bad_values(detail: str) -> FieldError:
        if shown == "[]string(nil)":
            return FieldError(values_path, f"Invalid value: []string(nil): {detail}")
        return _invalid(values_path, shown, detail)

    if operator in (IN, NOT_IN):
        if not raw_values and shown is not None:
            found.append(bad_values("for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if raw_values:
            found.append(bad_values("values set must be empty for exists and does not exist"))
    elif operator in (GT, LT):
        if len(raw_values) != 1 and shown is not None:
            found.append(bad_values("for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, value in enumerate(raw_values):
            if isinstance(value, str) and _parse_int64(value) is None:
                found.append(
                    _invalid(
                        f"{values_path}[{i}]",
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, value in enumerate(raw_values):
        if isinstance(value, str):
            value_errors = label_value_errors(value)
            if value_errors:
                found.append(_invalid(f"{values_path}[{i}][{key}]", value, "; ".join(value_errors)))
    if found:
        errors.extend(_dedup(found))
        return None
    return Requirement(key, operator, strings)


def _parse_expressions(
    expressions: Any, path: str, operators: Sequence[str], errors: list[FieldError]
) -> list[Requirement]:
    if not isinstance(expressions, list | tuple):
        errors.append(_invalid(path, expressions, "must be a list of requirements"))
        return []
    requirements = []
    for i, expression in enumerate(expressions):
        item_path = f"{path}[{i}]"
        if not isinstance(expression, Mapping):
            errors.append(_invalid(item_path, expression, "must be an object"))
            continue
        operator = expression.get("operator")
        if not isinstance(operator, str) or operator not in operators:
            errors.append(_not_supported(_child(item_path, "operator"), operator, operators))
            continue
        requirement = _new_requirement(
            expression.get("key"), operator, expression.get("values"), item_path, errors
        )
        if requirement is not None:
            requirements.append(requirement)
    return requirements


# --- LabelSelector -----------------------------------------------------------------------------


class LabelSelector:
    """A ``metav1.LabelSelector``: ``matchLabels`` and ``matchExpressions``, ANDed.

    ``LabelSelector.parse(None)`` matches nothing and ``LabelSelector.parse({})`` matches
    everything, as ``metav1.LabelSelectorAsSelector`` has it.
    """

    __slots__ = ("matches_nothing", "requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), matches_nothing: bool = False):
        self.requirements: tuple[Requirement, ...] = tuple(
            sorted(requirements, key=lambda r: r.key)
        )
        #: The ``None`` selector: no object is selected whatever its labels.
        self.matches_nothing = matches_nothing

    @classmethod
    def parse(cls, data: Mapping[str, Any] | None, path: str = "") -> LabelSelector:
        """Read a selector from its API form; raises :class:`SelectorError` with every error.

        ``path`` prefixes the field paths of the errors (e.g. ``spec.selector``).
        """
        if data is None:
            return NOTHING
        if not isinstance(data, Mapping):
            raise SelectorError([_invalid(path, data, "must be a label selector object")])
        errors: list[FieldError] = []
        requirements: list[Requirement] = []
        match_labels = data.get("matchLabels") or {}
        labels_path = _child(path, "matchLabels")
        if not isinstance(match_labels, Mapping):
            errors.append(
                _invalid(labels_path, match_labels, "must be a map of label key to value")
            )
            match_labels = {}
        for key, value in match_labels.items():
            where = f"{labels_path}[{key}]"
            found: list[FieldError] = []
            key_errors = label_key_errors(key) if isinstance(key, str) else ["must be a string"]
            if key_errors:
                found.append(_invalid(where, key, "; ".join(key_errors)))
            if not isinstance(value, str):
                found.append(_invalid(where, value, "must be a string"))
            elif value_errors := label_value_errors(value):
                found.append(_invalid(where, value, "; ".join(value_errors)))
            if found:
                errors.extend(found)
            else:
                requirements.append(Requirement(key, EQUALS, (value,)))
        expressions = data.get("matchExpressions")
        if expressions is not None:
            requirements.extend(
                _parse_expressions(
                    expressions,
                    _child(path, "matchExpressions"),
                    LABEL_SELECTOR_OPERATORS,
                    errors,
                )
            )
        if errors:
            raise SelectorError(errors)
        return cls(requirements)

    @classmethod
    def from_set(cls, labels: Mapping[str, str]) -> LabelSelector:
        """Exactly these ``key: value`` pairs (``labels.SelectorFromSet``; not validated).

        An empty mapping selects everything.
        """
        return cls(Requirement(key, EQUALS, (value,)) for key, value in labels.items())

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether an object with these labels is selected."""
        if self.matches_nothing:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)

    def is_empty(self) -> bool:
        """Selects everything (no requirement at all)."""
        return not self.matches_nothing and not self.requirements

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelector):
            return NotImplemented
        return (self.matches_nothing, self.requirements) == (
            other.matches_nothing,
            other.requirements,
        )

    def __hash__(self) -> int:
        return hash((self.matches_nothing, self.requirements))

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        if self.matches_nothing:
            return "LabelSelector(<nothing>)"
        return f"LabelSelector({self})"


#: The selector of a missing (``None``) ``LabelSelector``: selects nothing.
NOTHING = LabelSelector(matches_nothing=True)
#: The empty selector: selects everything.
EVERYTHING = LabelSelector()


# --- NodeSelector ------------------------------------------------------------------------------


def _node_fields(node: Node) -> dict[str, str]:
    return {OBJECT_NAME_FIELD: node.name} if node.name else {}


def _parse_field_requirements(
    fields: Any, path: str, errors: list[FieldError]
) -> list[tuple[str, bool, str]]:
    """``matchFields`` as ``(key, equal, value)``; In and NotIn take exactly one value."""
    if not isinstance(fields, list | tuple):
        errors.append(_invalid(path, fields, "must be a list of requirements"))
        return []
    out = []
    for i, expression in enumerate(fields):
        item_path = f"{path}[{i}]"
        if not isinstance(expression, Mapping):
            errors.append(_invalid(item_path, expression, "must be an object"))
            continue
        operator = expression.get("operator")
        if operator not in NODE_FIELD_SELECTOR_OPERATORS:
            errors.append(
                _not_supported(
                    _child(item_path, "operator"), operator, NODE_FIELD_SELECTOR_OPERATORS
                )
            )
            continue
        values = expression.get("values")
        if not isinstance(values, list | tuple) or len(values) != 1:
            shown = "[]string(nil)" if values is None else _go_value(values)
            errors.append(
                FieldError(
                    _child(item_path, "values"), f"Invalid value: {shown}: must have one element"
                )
            )
            continue
        key = expression.get("key")
        out.append((key if isinstance(key, str) else "", operator == IN, str(values[0])))
    return out


class NodeSelectorTerm:
    """One ``nodeSelectorTerms[]`` entry: its expressions and fields, ANDed.

    A term that could not be parsed (``errors`` is not empty) matches no node.
    """

    __slots__ = ("errors", "fields", "labels")

    def __init__(
        self,
        labels: Sequence[Requirement] | None = None,
        fields: Sequence[tuple[str, bool, str]] | None = None,
        errors: Sequence[FieldError] = (),
    ) -> None:
        #: Label requirements, or ``None`` when the term has no ``matchExpressions``.
        self.labels = tuple(labels) if labels is not None else None
        #: ``(field, equal, value)`` requirements, or ``None`` without ``matchFields``.
        self.fields = tuple(fields) if fields is not None else None
        self.errors: list[FieldError] = list(errors)

    @classmethod
    def parse(cls, data: Mapping[str, Any], path: str = "") -> NodeSelectorTerm:
        """Read a term, keeping its errors in ``errors`` (it then matches nothing)."""
        errors: list[FieldError] = []
        labels = fields = None
        expressions = data.get("matchExpressions")
        if expressions:
            labels = _parse_expressions(
                expressions, _child(path, "matchExpressions"), NODE_SELECTOR_OPERATORS, errors
            )
        match_fields = data.get("matchFields")
        if match_fields:
            fields = _parse_field_requirements(match_fields, _child(path, "matchFields"), errors)
        return cls(labels, fields, errors)

    def matches(self, node: Node) -> bool:
        if self.errors:
            return False
        if self.labels is not None and not all(r.matches(node.labels) for r in self.labels):
            return False
        if self.fields is not None:
            node_fields = _node_fields(node)
            # A nameless node has no fields to select by (kube skips the check then).
            if node_fields and not all(
                (node_fields.get(key, "") == value) == equal for key, equal, value in self.fields
            ):
                return False
        return True

    def __repr__(self) -> str:
        return f"NodeSelectorTerm(labels={self.labels}, fields={self.fields})"


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


class NodeSelector:
    """A ``v1.NodeSelector``: a node matches when any of its terms matches.

    Terms with neither ``matchExpressions`` nor ``matchFields`` are dropped (they match no
    node); a selector without terms matches no node.
    """

    __slots__ = ("errors", "terms")

    def __init__(self, terms: Iterable[NodeSelectorTerm] = ()) -> None:
        self.terms = tuple(terms)
        #: Every term's parse errors (only a ``lazy`` parse keeps a selector that has some).
        self.errors: list[FieldError] = [e for t in self.terms for e in t.errors]

    @classmethod
    def parse(
        cls, data: Mapping[str, Any] | None, path: str = "", *, lazy: bool = False
    ) -> NodeSelector:
        """Read a selector; raises :class:`SelectorError` listing every bad field.

        With ``lazy=True`` nothing is raised: bad terms just never match, and the errors stay
        in ``errors`` (``NewLazyErrorNodeSelector``, which kube-scheduler uses for pods so that
        one broken term does not hide the others). ``None`` is a selector without terms.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            error = _invalid(path, data, "must be a node selector object")
            if lazy:
                selector = cls([NodeSelectorTerm(errors=[error])])
                return selector
            raise SelectorError([error])
        terms_path = _child(path, "nodeSelectorTerms")
        raw_terms = data.get("nodeSelectorTerms") or ()
        terms = []
        if not isinstance(raw_terms, list | tuple):
            terms.append(
                NodeSelectorTerm(errors=[_invalid(terms_path, raw_terms, "must be a list")])
            )
            raw_terms = ()
        for i, term in enumerate(raw_terms):
            if not isinstance(term, Mapping):
                terms.append(
                    NodeSelectorTerm(
                        errors=[_invalid(f"{terms_path}[{i}]", term, "must be an object")]
                    )
                )
                continue
            if _is_empty_term(term):
                continue
            terms.append(NodeSelectorTerm.parse(term, f"{terms_path}[{i}]"))
        selector = cls(terms)
        if selector.errors and not lazy:
            raise SelectorError(selector.errors)
        return selector

    def matches(self, node: Node | None) -> bool:
        """Whether any term matches ``node`` (``None`` matches nothing)."""
        if node is None:
            return False
        return any(term.matches(node) for term in self.terms)

    def __repr__(self) -> str:
        return f"NodeSelector({list(self.terms)!r})"


class PreferredSchedulingTerms:
    """``preferredDuringSchedulingIgnoredDuringExecution``: weighted preferences for nodes.

    Terms with weight 0 or an empty preference are dropped unparsed (as kube does, so their
    errors are not reported either).
    """

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[tuple[int, NodeSelectorTerm]] = ()) -> None:
        #: ``(weight, term)`` pairs.
        self.terms = tuple(terms)

    @classmethod
    def parse(
        cls, data: Sequence[Mapping[str, Any]] | None, path: str = ""
    ) -> PreferredSchedulingTerms:
        """Read the list; raises :class:`SelectorError` listing every bad field.

        Paths start at the list (``[0].matchExpressions[0].key`` when ``path`` is empty).
        """
        if data is None:
            return cls()
        if not isinstance(data, list | tuple):
            raise SelectorError([_invalid(path, data, "must be a list of preferred terms")])
        errors: list[FieldError] = []
        terms = []
        for i, item in enumerate(data):
            item_path = f"{path}[{i}]"
            if not isinstance(item, Mapping):
                errors.append(_invalid(item_path, item, "must be an object"))
                continue
            weight = item.get("weight") or 0
            if not isinstance(weight, int) or isinstance(weight, bool):
                errors.append(_invalid(_child(item_path, "weight"), weight, "must be an integer"))
                continue
            preference = item.get("preference") or {}
            if not isinstance(preference, Mapping):
                errors.append(
                    _invalid(_child(item_path, "preference"), preference, "must be an object")
                )
                continue
            if weight == 0 or _is_empty_term(preference):
                continue
            term = NodeSelectorTerm.parse(preference, item_path)
            if term.errors:
                errors.extend(term.errors)
            else:
                terms.append((weight, term))
        if errors:
            raise SelectorError(errors)
        return cls(terms)

    def score(self, node: Node) -> int:
        """The sum of the weights of the terms ``node`` matches."""
        return sum(weight for weight, term in self.terms if term.matches(node))

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __repr__(self) -> str:
        return f"PreferredSchedulingTerms({list(self.terms)!r})"


class RequiredNodeAffinity:
    """A pod's hard node constraints: ``spec.nodeSelector`` AND required node affinity."""

    __slots__ = ("label_selector", "node_selector")

    def __init__(
        self, label_selector: LabelSelector | None = None, node_selector: NodeSelector | None = None
    ) -> None:
        #: From ``spec.nodeSelector``; ``None`` when the pod has none.
        self.label_selector = label_selector
        #: From ``requiredDuringSchedulingIgnoredDuringExecution``, parsed lazily; ``None`` when
        #: the pod has none.
        self.node_selector = node_selector

    @classmethod
    def from_pod(cls, pod: Pod) -> RequiredNodeAffinity:
        """``GetRequiredNodeAffinity``: never raises; broken terms just match no node."""
        label_selector = LabelSelector.from_set(pod.node_selector) if pod.node_selector else None
        node_affinity = pod.affinity.get("nodeAffinity") if pod.affinity else None
        required = None
        if isinstance(node_affinity, Mapping):
            required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        node_selector = None if required is None else NodeSelector.parse(required, lazy=True)
        return cls(label_selector, node_selector)

    @property
    def errors(self) -> list[FieldError]:
        """Parse errors of the required affinity's terms (paths from ``nodeSelectorTerms``)."""
        return self.node_selector.errors if self.node_selector is not None else []

    def match(self, node: Node) -> bool:
        """Whether the pod may run on ``node`` as far as these constraints go."""
        if self.label_selector is not None and not self.label_selector.matches(node.labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(node)
        return True

    def __repr__(self) -> str:
        return f"RequiredNodeAffinity({self.label_selector!r}, {self.node_selector!r})"
