"""kubesched.api.selectors: tables ported from component-helpers' nodeaffinity_test.go and
apimachinery's labels selector / LabelSelectorAsSelector tests, plus our own edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import FieldError, Node, Pod
from kubesched.api.selectors import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    LabelSelector,
    NodeSelector,
    PreferredSchedulingTerms,
    RequiredNodeAffinity,
    Requirement,
    SelectorError,
    label_key_errors,
    label_value_errors,
)

NAME_PART_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

EMPTY_IN = "for 'in', 'notin' operators, values set can't be empty"
MUST_BE_EMPTY = "values set must be empty for exists and does not exist"
NOT_INTEGER = "for 'Gt', 'Lt' operators, the value must be an integer"
ONE_VALUE = "for 'Gt', 'Lt' operators, exactly one value is required"


def node(name: str = "test-node", **labels: str) -> Node:
    return Node({"metadata": {"name": name, "labels": labels}})


def labelled(labels: dict[str, str], name: str = "test-node") -> Node:
    return Node({"metadata": {"name": name, "labels": labels}})


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def pod(spec: dict[str, Any]) -> Pod:
    return Pod({"metadata": {"name": "p"}, "spec": spec})


def required(*terms: dict[str, Any] | None, nil_terms: bool = False) -> dict[str, Any]:
    selector: dict[str, Any] = {} if nil_terms else {"nodeSelectorTerms": list(terms)}
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}
    }


# --- nodeaffinity_test.go: TestNodeSelectorMatch ------------------------------------------------


def test_node_selector_match_nil_node():
    assert NodeSelector.parse({"nodeSelectorTerms": []}).matches(None) is False


def test_node_selector_reports_every_parse_error_with_its_path():
    data = {
        "nodeSelectorTerms": [
            {"matchFields": [name_in("host_1", "host_2")]},
            {
                "matchExpressions": [expr("label_1", IN, "label_1_val")],
                "matchFields": [name_in("host_1")],
            },
            {"matchExpressions": [expr("invalid key", IN, "label_value")]},
        ]
    }
    with pytest.raises(SelectorError) as caught:
        NodeSelector.parse(data)
    assert caught.value.errors == [
        FieldError(
            "nodeSelectorTerms[0].matchFields[0].values",
            'Invalid value: []string{"host_1", "host_2"}: must have one element',
        ),
        FieldError(
            "nodeSelectorTerms[2].matchExpressions[0].key",
            f'Invalid value: "invalid key": {NAME_PART_REGEX}',
        ),
    ]
    # Kubernetes' aggregate message: "[err1, err2]".
    assert str(caught.value).startswith("[nodeSelectorTerms[0].matchFields[0].values: Invalid")


@pytest.mark.parametrize(
    ("terms", "the_node", "want"),
    [
        (
            [
                {
                    "matchExpressions": [expr("label_1", IN, "label_1_val")],
                    "matchFields": [name_in("host_1")],
                }
            ],
            node("host_1"),
            False,
        ),
        (
            [
                {
                    "matchExpressions": [expr("label_1", IN, "label_1_val")],
                    "matchFields": [name_in("host_1")],
                }
            ],
            node("host_1", label_1="label_1_val"),
            True,
        ),
        (
            [
                {"matchExpressions": [expr("label_1", IN, "label_1_val")]},
                {"matchFields": [name_in("host_1")]},
            ],
            node("host_1"),
            True,
        ),
    ],
    ids=[
        "node matches field selector, but not labels",
        "node matches field selector and label selector",
        "second term matches",
    ],
)
def test_node_selector_match(terms, the_node, want):
    assert NodeSelector.parse({"nodeSelectorTerms": terms}).matches(the_node) is want


def test_lazy_node_selector_keeps_errors_and_valid_terms_still_match():
    data = {
        "nodeSelectorTerms": [
            {"matchExpressions": [expr("invalid key", IN, "v")]},
            {"matchExpressions": [expr("zone", IN, "a")]},
        ]
    }
    selector = NodeSelector.parse(data, lazy=True)
    assert [e.path for e in selector.errors] == ["nodeSelectorTerms[0].matchExpressions[0].key"]
    assert selector.matches(node(zone="a")) is True
    assert selector.matches(node(zone="b")) is False


@pytest.mark.parametrize(
    "data",
    [{}, {"nodeSelectorTerms": None}, {"nodeSelectorTerms": []}, {"nodeSelectorTerms": [{}]}],
    ids=["no-terms-field", "nil-terms", "empty-terms", "only-an-empty-term"],
)
def test_selector_without_terms_matches_nothing(data):
    assert NodeSelector.parse(data).matches(node()) is False


def test_empty_term_matches_nothing_but_other_terms_count():
    selector = NodeSelector.parse(
        {"nodeSelectorTerms": [{"matchExpressions": []}, {"matchExpressions": [expr("a", EXISTS)]}]}
    )
    assert selector.matches(node(a="1")) is True
    assert selector.matches(node()) is False


# --- nodeaffinity_test.go: TestPreferredSchedulingTermsScore ------------------------------------


def test_preferred_terms_report_every_error_with_list_relative_paths():
    data = [
        {"weight": 1, "preference": {"matchFields": [name_in("host_1", "host_2")]}},
        {
            "weight": 1,
            "preference": {
                "matchExpressions": [expr("label_1", IN, "label_1_val")],
                "matchFields": [name_in("host_1")],
            },
        },
        {"weight": 1, "preference": {"matchExpressions": [expr("invalid key", IN, "label_value")]}},
    ]
    with pytest.raises(SelectorError) as caught:
        PreferredSchedulingTerms.parse(data)
    assert [(e.path, e.message) for e in caught.value.errors] == [
        (
            "[0].matchFields[0].values",
            'Invalid value: []string{"host_1", "host_2"}: must have one element',
        ),
        ("[2].matchExpressions[0].key", f'Invalid value: "invalid key": {NAME_PART_REGEX}'),
    ]


def test_preferred_term_with_zero_weight_is_not_parsed():
    terms = PreferredSchedulingTerms.parse(
        [{"weight": 0, "preference": {"matchFields": [name_in("host_1", "host_2")]}}]
    )
    assert terms.score(node("host_1")) == 0


def test_preferred_terms_score_first_and_third_term_match():
    terms = PreferredSchedulingTerms.parse(
        [
            {"weight": 5, "preference": {"matchFields": [name_in("host_1")]}},
            {
                "weight": 7,
                "preference": {
                    "matchExpressions": [expr("unknown_label", IN, "unknown_label_val")]
                },
            },
            {
                "weight": 11,
                "preference": {"matchExpressions": [expr("label_1", IN, "label_1_val")]},
            },
        ]
    )
    assert terms.score(node("host_1", label_1="label_1_val")) == 16


def test_preferred_terms_paths_are_prefixed():
    with pytest.raises(SelectorError) as caught:
        PreferredSchedulingTerms.parse(
            [{"weight": 2, "preference": {"matchExpressions": [expr("a", "Foo", "b")]}}],
            path="addedAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        )
    assert [str(e) for e in caught.value.errors] == [
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0]"
        '.operator: Unsupported value: "Foo": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    ]


# --- nodeaffinity_test.go: TestNodeSelectorRequirementsAsSelector ------------------------------


def terms_of(expressions: list[dict[str, Any]]) -> tuple[Requirement, ...] | None:
    selector = NodeSelector.parse({"nodeSelectorTerms": [{"matchExpressions": expressions}]})
    return selector.terms[0].labels


@pytest.mark.parametrize(
    ("expressions", "want"),
    [
        ([expr("foo", IN, "bar", "baz")], (Requirement("foo", IN, ("bar", "baz")),)),
        ([expr("foo", GT, "1")], (Requirement("foo", GT, ("1",)),)),
        ([expr("bar", LT, "7")], (Requirement("bar", LT, ("7",)),)),
    ],
    ids=["in", "gt", "lt"],
)
def test_node_selector_requirements(expressions, want):
    assert terms_of(expressions) == want


def test_exists_with_values_is_an_error():
    with pytest.raises(SelectorError) as caught:
        NodeSelector.parse(
            {"nodeSelectorTerms": [{"matchExpressions": [expr("foo", EXISTS, "bar", "baz")]}]},
            path="root",
        )
    assert caught.value.errors == [
        FieldError(
            "root.nodeSelectorTerms[0].matchExpressions[0].values",
            'Invalid value: []string{"bar", "baz"}: values set must be empty for exists and '
            "does not exist",
        )
    ]


# --- nodeaffinity_test.go: TestPodMatchesNodeSelectorAndAffinityTerms ---------------------------

POD_MATCH_CASES = [
    ("no selector", {}, {}, "", True),
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "", False),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", True),
    (
        "node labels are superset",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "",
        True,
    ),
    (
        "node labels are subset",
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with matchExpressions using In operator that matches the existing node",
        required({"matchExpressions": [expr("foo", IN, "bar", "value2")]}),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using Gt operator that matches the existing node",
        required({"matchExpressions": [expr("kernel-version", GT, "0204")]}),
        {"kernel-version": "0206"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using NotIn operator that matches the existing node",
        required({"matchExpressions": [expr("mem-type", NOT_IN, "DDR", "DDR2")]}),
        {"mem-type": "DDR3"},
        "",
        True,
    ),
    (
        "Pod with matchExpressions using Exists operator that matches the existing node",
        required({"matchExpressions": [expr("GPU", EXISTS)]}),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "Pod with affinity that don't match node's labels won't schedule onto the node",
        required({"matchExpressions": [expr("foo", IN, "value1", "value2")]}),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and "
        "won't schedule onto the node",
        required(nil_terms=True),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and "
        "won't schedule onto the node",
        required(),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with empty MatchExpressions is not a valid value will match no objects and won't "
        "schedule onto the node",
        required({"matchExpressions": []}),
        {"foo": "bar"},
        "",
        False,
    ),
    ("Pod with no Affinity will schedule onto a node", {}, {"foo": "bar"}, "", True),
    (
        "Pod with Affinity but nil NodeSelector will schedule onto a node",
        {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}},
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that matches the existing node",
        required({"matchExpressions": [expr("GPU", EXISTS), expr("GPU", NOT_IN, "AMD", "INTER")]}),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        True,
    ),
    (
        "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
        required({"matchExpressions": [expr("GPU", EXISTS), expr("GPU", IN, "AMD", "INTER")]}),
        {"GPU": "NVIDIA-GRID-K1"},
        "",
        False,
    ),
    (
        "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and "
        "will schedule onto the node",
        required(
            {"matchExpressions": [expr("foo", IN, "bar", "value2")]},
            {"matchExpressions": [expr("diffkey", IN, "wrong", "value2")]},
        ),
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) "
        "both are satisfied, will schedule onto the node",
        {"nodeSelector": {"foo": "bar"}, **required({"matchExpressions": [expr("foo", EXISTS)]})},
        {"foo": "bar"},
        "",
        True,
    ),
    (
        "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing "
        "that we are deprecating) is not satisfied, won't schedule onto the node",
        {"nodeSelector": {"foo": "bar"}, **required({"matchExpressions": [expr("foo", EXISTS)]})},
        {"foo": "barrrrrr"},
        "",
        False,
    ),
    (
        "Pod with an invalid value in Affinity term won't be scheduled onto the node",
        required({"matchExpressions": [expr("foo", NOT_IN, "invalid value: ___@#$%^")]}),
        {"foo": "bar"},
        "",
        False,
    ),
    (
        "Pod with matchFields using In operator that matches the existing node",
        required({"matchFields": [name_in("node_1")]}),
        {},
        "node_1",
        True,
    ),
    (
        "Pod with matchFields using In operator that does not match the existing node",
        required({"matchFields": [name_in("node_1")]}),
        {},
        "node_2",
        False,
    ),
    (
        "Pod with two terms: matchFields does not match, but matchExpressions matches",
        required(
            {"matchFields": [name_in("node_1")]}, {"matchExpressions": [expr("foo", IN, "bar")]}
        ),
        {"foo": "bar"},
        "node_2",
        True,
    ),
    (
        "Pod with one term: matchFields does not match, but matchExpressions matches",
        required(
            {"matchFields": [name_in("node_1")], "matchExpressions": [expr("foo", IN, "bar")]}
        ),
        {"foo": "bar"},
        "node_2",
        False,
    ),
    (
        "Pod with one term: both matchFields and matchExpressions match",
        required(
            {"matchFields": [name_in("node_1")], "matchExpressions": [expr("foo", IN, "bar")]}
        ),
        {"foo": "bar"},
        "node_1",
        True,
    ),
    (
        "Pod with two terms: both matchFields and matchExpressions do not match",
        required(
            {"matchFields": [name_in("node_1")]},
            {"matchExpressions": [expr("foo", IN, "not-match-to-bar")]},
        ),
        {"foo": "bar"},
        "node_2",
        False,
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "want"),
    [case[1:] for case in POD_MATCH_CASES],
    ids=[case[0] for case in POD_MATCH_CASES],
)
def test_pod_matches_node_selector_and_affinity_terms(spec, labels, node_name, want):
    affinity = RequiredNodeAffinity.from_pod(pod(spec))
    assert affinity.match(labelled(labels, node_name or "test-node")) is want


def test_required_affinity_keeps_parse_errors_without_raising():
    affinity = RequiredNodeAffinity.from_pod(
        pod(required({"matchExpressions": [expr("foo", NOT_IN, "invalid value: ___@#$%^")]}))
    )
    assert [e.path for e in affinity.errors] == [
        "nodeSelectorTerms[0].matchExpressions[0].values[0][foo]"
    ]
    assert affinity.errors[0].message == (
        f'Invalid value: "invalid value: ___@#$%^": {LABEL_VALUE_REGEX}'
    )


# --- matchFields details -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "name", "want"),
    [
        ({"key": "metadata.name", "operator": NOT_IN, "values": ["node_1"]}, "node_1", False),
        ({"key": "metadata.name", "operator": NOT_IN, "values": ["node_1"]}, "node_2", True),
        # Only metadata.name exists: another key reads as an empty field.
        ({"key": "metadata.uid", "operator": IN, "values": ["x"]}, "node_1", False),
        ({"key": "metadata.uid", "operator": NOT_IN, "values": ["x"]}, "node_1", True),
    ],
    ids=["notin-same-name", "notin-other-name", "unknown-field-in", "unknown-field-notin"],
)
def test_match_fields(field, name, want):
    selector = NodeSelector.parse({"nodeSelectorTerms": [{"matchFields": [field]}]})
    assert selector.matches(node(name)) is want


def test_match_fields_operator_must_be_in_or_notin():
    with pytest.raises(SelectorError) as caught:
        NodeSelector.parse(
            {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}
                ]
            }
        )
    assert [str(e) for e in caught.value.errors] == [
        'nodeSelectorTerms[0].matchFields[0].operator: Unsupported value: "Exists": '
        'supported values: "In", "NotIn"'
    ]


# --- Gt / Lt ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operator", "bound", "label", "want"),
    [
        (GT, "5", "6", True),
        (GT, "5", "5", False),
        (LT, "5", "4", True),
        (LT, "5", "5", False),
        (GT, "-3", "-2", True),
        (GT, "5", "abc", False),
        (GT, "5", " 6", False),
        (GT, "5", "6_0", False),
        (LT, "5", "+4", True),
        (GT, "5", "99999999999999999999", False),
    ],
    ids=[
        "gt",
        "gt-equal",
        "lt",
        "lt-equal",
        "negative",
        "label-not-a-number",
        "label-with-space",
        "label-with-underscore",
        "label-with-plus-sign",
        "label-beyond-int64",
    ],
)
def test_gt_lt_compare_label_values_as_int64(operator, bound, label, want):
    assert Requirement("k", operator, (bound,)).matches({"k": label}) is want
    assert Requirement("k", operator, (bound,)).matches({}) is False


@pytest.mark.parametrize(
    ("values", "errors"),
    [
        (
            ["1", "2"],
            [
                "values: Invalid value: []string{\"1\", \"2\"}: for 'Gt', 'Lt' operators, "
                "exactly one value is required"
            ],
        ),
        (
            ["a"],
            [f'values[0]: Invalid value: "a": {NOT_INTEGER}'],
        ),
        (
            ["-1"],
            # An integer, but not a label value.
            [f'values[0][k]: Invalid value: "-1": {LABEL_VALUE_REGEX}'],
        ),
    ],
    ids=["two-values", "not-an-integer", "negative-is-not-a-label-value"],
)
def test_gt_lt_validation(values, errors):
    with pytest.raises(SelectorError) as caught:
        NodeSelector.parse({"nodeSelectorTerms": [{"matchExpressions": [expr("k", GT, *values)]}]})
    prefix = "nodeSelectorTerms[0].matchExpressions[0]."
    assert [str(e) for e in caught.value.errors] == [prefix + e for e in errors]


# --- apimachinery labels: NewRequirement and Requirement.Matches ----------------------------------


@pytest.mark.parametrize(
    ("key", "operator", "values", "errors"),
    [
        (
            "x1",
            IN,
            None,
            [f"values: Invalid value: []string(nil): {EMPTY_IN}"],
        ),
        (
            "x2",
            NOT_IN,
            [],
            [f"values: Invalid value: []string{{}}: {EMPTY_IN}"],
        ),
        ("x3", IN, ["foo"], []),
        ("x4", NOT_IN, ["foo"], []),
        ("x6", EXISTS, None, []),
        ("x7", DOES_NOT_EXIST, None, []),
        (
            "x8",
            EXISTS,
            ["foo"],
            [f'values: Invalid value: []string{{"foo"}}: {MUST_BE_EMPTY}'],
        ),
        ("x9", IN, ["bar"], []),
        ("x10", IN, ["bar"], []),
        ("1foo", IN, ["bar"], []),
        ("1234", IN, ["bar"], []),
        ("y", GT, ["1"], []),
        ("z", LT, ["6"], []),
        (
            "foo",
            GT,
            ["1.1"],
            [f'values[0]: Invalid value: "1.1": {NOT_INTEGER}'],
        ),
        (
            "bar",
            LT,
            ["foo"],
            [f'values[0]: Invalid value: "foo": {NOT_INTEGER}'],
        ),
        (
            "barz",
            LT,
            ["1", "2"],
            [f'values: Invalid value: []string{{"1", "2"}}: {ONE_VALUE}'],
        ),
        (
            "barz",
            GT,
            ["1", "2"],
            [f'values: Invalid value: []string{{"1", "2"}}: {ONE_VALUE}'],
        ),
        ("strange@key", IN, ["bar"], [f'key: Invalid value: "strange@key": {NAME_PART_REGEX}']),
        (
            "x11",
            IN,
            ["A" * 64],
            ['values[0][x11]: Invalid value: "' + "A" * 64 + '": must be no more than 63 bytes'],
        ),
        (
            "x12",
            IN,
            ["strange@value"],
            [f'values[0][x12]: Invalid value: "strange@value": {LABEL_VALUE_REGEX}'],
        ),
    ],
)
def test_requirement_constructor(key, operator, values, errors):
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values is not None:
        expression["values"] = values
    data = {"nodeSelectorTerms": [{"matchExpressions": [expression]}]}
    prefix = "nodeSelectorTerms[0].matchExpressions[0]."
    if errors:
        with pytest.raises(SelectorError) as caught:
            NodeSelector.parse(data)
        assert [str(e) for e in caught.value.errors] == [prefix + e for e in errors]
    else:
        assert NodeSelector.parse(data).terms[0].errors == []


@pytest.mark.parametrize(
    ("requirement", "labels", "want"),
    [
        (Requirement("x", IN, ("foo",)), {"x": "foo"}, True),
        (Requirement("x", IN, ("foo",)), {"x": "bar"}, False),
        (Requirement("x", IN, ("foo",)), {}, False),
        (Requirement("x", NOT_IN, ("foo",)), {"x": "bar"}, True),
        (Requirement("x", NOT_IN, ("foo",)), {}, True),
        (Requirement("x", NOT_IN, ("foo",)), {"x": "foo"}, False),
        (Requirement("x", EXISTS), {"x": ""}, True),
        (Requirement("x", EXISTS), {"y": "z"}, False),
        (Requirement("x", DOES_NOT_EXIST), {"y": "z"}, True),
        (Requirement("x", DOES_NOT_EXIST), {"x": ""}, False),
        (Requirement("x", EQUALS, ("",)), {"x": ""}, True),
        (Requirement("x", IN, ("foo", "bar")), {"x": "bar"}, True),
        (Requirement("x", "Unknown", ("foo",)), {"x": "foo"}, False),
    ],
    ids=[
        "in",
        "in-other-value",
        "in-absent",
        "notin",
        "notin-absent",
        "notin-same-value",
        "exists-empty-value",
        "exists-absent",
        "doesnotexist",
        "doesnotexist-present",
        "equals-empty-value",
        "in-several-values",
        "unknown-operator",
    ],
)
def test_requirement_matches(requirement, labels, want):
    assert requirement.matches(labels) is want


# --- metav1.LabelSelector (LabelSelectorAsSelector) ----------------------------------------------


@pytest.mark.parametrize(
    ("data", "labels", "want"),
    [
        (None, {"a": "b"}, False),
        (None, {}, False),
        ({}, {"a": "b"}, True),
        ({}, {}, True),
        ({"matchLabels": {}, "matchExpressions": []}, {}, True),
        ({"matchLabels": {"foo": "bar"}}, {"foo": "bar", "x": "y"}, True),
        ({"matchLabels": {"foo": "bar"}}, {"foo": "baz"}, False),
        (
            {"matchLabels": {"foo": "bar"}, "matchExpressions": [expr("baz", IN, "qux", "norf")]},
            {"foo": "bar", "baz": "norf"},
            True,
        ),
        (
            {"matchLabels": {"foo": "bar"}, "matchExpressions": [expr("baz", IN, "qux", "norf")]},
            {"foo": "bar"},
            False,
        ),
        ({"matchExpressions": [expr("baz", NOT_IN, "qux")]}, {}, True),
        ({"matchExpressions": [expr("baz", EXISTS)]}, {"baz": ""}, True),
        ({"matchExpressions": [expr("baz", DOES_NOT_EXIST)]}, {"baz": ""}, False),
    ],
    ids=[
        "nil-matches-nothing",
        "nil-matches-nothing-even-no-labels",
        "empty-matches-everything",
        "empty-matches-no-labels",
        "empty-lists-match-everything",
        "match-labels",
        "match-labels-other-value",
        "labels-and-expressions",
        "labels-and-expressions-missing-key",
        "notin-absent-key",
        "exists",
        "doesnotexist",
    ],
)
def test_label_selector_matches(data, labels, want):
    assert LabelSelector.parse(data).matches(labels) is want


def test_label_selector_string_is_kube_style_and_sorted_by_key():
    selector = LabelSelector.parse(
        {"matchLabels": {"foo": "bar"}, "matchExpressions": [expr("baz", IN, "qux", "norf")]}
    )
    assert str(selector) == "baz in (norf,qux),foo=bar"
    assert LabelSelector.parse({}).is_empty()
    assert not LabelSelector.parse(None).is_empty()


def test_label_selector_reports_every_error_at_once():
    data = {
        "matchLabels": {"bad key!": "v", "ok": "-bad-"},
        "matchExpressions": [
            expr("k", GT, "1"),
            expr("k2", IN),
            {"key": "k3", "operator": "Exists", "values": ["x"]},
        ],
    }
    with pytest.raises(SelectorError) as caught:
        LabelSelector.parse(data, path="spec.selector")
    assert [str(e) for e in caught.value.errors] == [
        f'spec.selector.matchLabels[bad key!]: Invalid value: "bad key!": {NAME_PART_REGEX}',
        f'spec.selector.matchLabels[ok]: Invalid value: "-bad-": {LABEL_VALUE_REGEX}',
        'spec.selector.matchExpressions[0].operator: Unsupported value: "Gt": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist"',
        "spec.selector.matchExpressions[1].values: Invalid value: []string(nil): for 'in', "
        "'notin' operators, values set can't be empty",
        'spec.selector.matchExpressions[2].values: Invalid value: []string{"x"}: values set must '
        "be empty for exists and does not exist",
    ]


def test_label_selector_rejects_non_mappings():
    with pytest.raises(SelectorError) as caught:
        LabelSelector.parse(["a"], path="selector")  # type: ignore[arg-type]
    assert caught.value.errors[0].path == "selector"


def test_from_set_is_not_validated_and_empty_selects_everything():
    assert LabelSelector.from_set({"bad key!": "x"}).matches({"bad key!": "x"})
    assert LabelSelector.from_set({}).matches({"anything": "at all"})


# --- label key / value rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "errors"),
    [
        ("simple", []),
        ("example.com/name", []),
        ("a/b/c", ["a valid label key "]),
        ("/name", ["prefix part must be non-empty"]),
        ("Example.com/name", ["prefix part a lowercase RFC 1123 subdomain"]),
        ("example.com/", ["name part must be non-empty", "name part must consist"]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("-name", ["name part must consist"]),
        ("a" * 254 + "/b", ["prefix part must be no more than 253 bytes"]),
    ],
    ids=[
        "simple",
        "prefixed",
        "two-slashes",
        "empty-prefix",
        "uppercase-prefix",
        "empty-name",
        "long-name",
        "name-starts-with-dash",
        "long-prefix",
    ],
)
def test_label_key_errors(key, errors):
    got = label_key_errors(key)
    assert len(got) == len(errors)
    for message, start in zip(got, errors, strict=True):
        assert message.startswith(start)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("", True),
        ("a", True),
        ("a.b_c-d", True),
        ("-a", False),
        ("a" * 63, True),
        ("a" * 64, False),
    ],
)
def test_label_value_errors(value, valid):
    assert (label_value_errors(value) == []) is valid
