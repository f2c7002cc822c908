"""Objects kube-apiserver refuses on create are refused in a cluster file too, one line each in
the apiserver's wording (``pkg/apis/core/validation``), naming file, document, object and field;
``validate=False`` (``--no-validate``) reads them as a snapshot of stored objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.manifests import parse_cluster, with_api_defaults
from kubesched.api.validation import node_errors, pod_errors
from kubesched.errors import ManifestError
from kubesched.testing.builders import make_node, make_pod

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
TERMS = f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms"
C0 = "spec.containers[0].resources"
FOO = "example.com/foo"


def _pod(**spec: Any) -> dict[str, Any]:
    manifest = make_pod("p").manifest()
    manifest["spec"].update(spec)
    return manifest


def _resources(**resources: Any) -> dict[str, Any]:
    return _pod(containers=[{"name": "app", "image": "pause", "resources": resources}])


def _required(*terms: Any) -> dict[str, Any]:
    return _pod(affinity={"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}})


def _fields(*values: str, key: str = "metadata.name", operator: str = "In") -> dict[str, Any]:
    return _required({"matchFields": [{"key": key, "operator": operator, "values": list(values)}]})


def _expression(operator: str, *values: str, key: str = "zone") -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return _required({"matchExpressions": [expression]})


def _toleration(**toleration: Any) -> dict[str, Any]:
    return _pod(tolerations=[toleration])


def _spread(*constraints: dict[str, Any]) -> dict[str, Any]:
    return _pod(topologySpreadConstraints=list(constraints))


SPREAD = {
    "maxSkew": 1,
    "topologyKey": "zone",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}},
}
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
    "[A-Za-z0-9])?')"
)

#: name -> (pod manifest, the lines refused, in order)
PODS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "extended-request-without-limit": (
        _resources(requests={FOO: "1"}),
        [f"{C0}.limits: Required value: Limit must be set for non overcommitable resources"],
    ),
    "extended-request-not-equal-to-limit": (
        _resources(requests={FOO: "1"}, limits={FOO: "2"}),
        [f'{C0}.requests: Invalid value: "1": must be equal to {FOO} limit of 2'],
    ),
    "extended-not-an-integer": (
        _resources(limits={FOO: "500m"}),  # the request defaults to the limit, then both fail
        [
            f"{C0}.limits[{FOO}]: Invalid value: 500m: must be an integer",
            f"{C0}.requests[{FOO}]: Invalid value: 500m: must be an integer",
        ],
    ),
    "hugepages-request-without-limit": (
        _resources(requests={"hugepages-2Mi": "2Mi", "memory": "1Gi"}),
        [f"{C0}.limits: Required value: Limit must be set for non overcommitable resources"],
    ),
    "hugepages-without-cpu-or-memory": (
        _resources(limits={"hugepages-2Mi": "2Mi"}),
        [f"{C0}: Forbidden: HugePages require cpu or memory"],
    ),
    "cpu-request-above-limit": (
        _resources(requests={"cpu": "2"}, limits={"cpu": "1"}),
        [f'{C0}.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ),
    "negative-init-container-request": (
        _pod(
            initContainers=[
                {"name": "init", "image": "pause", "resources": {"requests": {"memory": "-1"}}}
            ]
        ),
        [
            'spec.initContainers[0].resources.requests[memory]: Invalid value: "-1": must be '
            "greater than or equal to 0"
        ],
    ),
    "not-a-container-resource": (
        _resources(requests={"pods": "1"}),
        [f'{C0}.requests[pods]: Invalid value: "pods": must be a standard resource for containers'],
    ),
    "pod-level-request-above-limit": (
        _pod(resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}),
        [
            'spec.resources.requests: Invalid value: "2Gi": must be less than or equal to memory '
            "limit of 1Gi"
        ],
    ),
    "match-fields-two-values": (
        _fields("n1", "n2"),
        [
            f"{TERMS}[0].matchFields[0].values: Required value: must be only one value when "
            "`operator` is 'In' or 'NotIn' for node field selector"
        ],
    ),
    "match-fields-not-metadata-name": (
        _fields("n1", key="metadata.uid"),
        [
            f'{TERMS}[0].matchFields[0].key: Invalid value: "metadata.uid": not a valid field '
            "selector key"
        ],
    ),
    "match-fields-exists": (
        _fields("n1", operator="Exists"),
        [
            f'{TERMS}[0].matchFields[0].operator: Invalid value: "Exists": not a valid selector '
            "operator"
        ],
    ),
    "no-node-selector-terms": (
        _required(),
        [f"{TERMS}: Required value: must have at least one node selector term"],
    ),
    "in-without-values": (
        _expression("In"),
        [
            f"{TERMS}[0].matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'"
        ],
    ),
    "exists-with-values": (
        _expression("Exists", "a"),
        [
            f"{TERMS}[0].matchExpressions[0].values: Forbidden: may not be specified when "
            "`operator` is 'Exists' or 'DoesNotExist'"
        ],
    ),
    "gt-two-values": (
        _expression("Gt", "1", "2"),
        [
            f"{TERMS}[0].matchExpressions[0].values: Required value: must be specified single "
            "value when `operator` is 'Lt' or 'Gt'"
        ],
    ),
    "unknown-operator": (
        _expression("Near", "a"),
        [
            f'{TERMS}[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector '
            "operator"
        ],
    ),
    "required-bad-label-value": (
        _expression("In", "a b"),
        [f'{TERMS}[0].matchExpressions[0].values[0]: Invalid value: "a b": {LABEL_VALUE}'],
    ),
    "preferred-weight-zero": (
        _pod(
            affinity={
                "nodeAffinity": {
                    PREF: [
                        {
                            "weight": 0,
                            "preference": {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a b"]}
                                ]
                            },
                        }
                    ]
                }
            }
        ),
        # a preferred term may hold any value: only the weight is refused
        [
            f"spec.affinity.nodeAffinity.{PREF}[0].weight: Invalid value: 0: must be in the range "
            "1-100"
        ],
    ),
    "node-selector-bad-value": (
        _pod(nodeSelector={"zone": "a b"}),
        [f'spec.nodeSelector: Invalid value: "a b": {LABEL_VALUE}'],
    ),
    "toleration-exists-with-value": (
        _toleration(key="k", operator="Exists", value="v"),
        [
            'spec.tolerations[0].operator: Invalid value: "v": value must be empty when '
            "`operator` is 'Exists'"
        ],
    ),
    "toleration-empty-key-equal": (
        _toleration(operator="Equal", value="v"),
        [
            'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
            '`key` is empty, which means "match all values and all keys"'
        ],
    ),
    "toleration-seconds-without-no-execute": (
        _toleration(key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=5),
        [
            "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' "
            "when `tolerationSeconds` is set"
        ],
    ),
    "toleration-unknown-effect": (
        _toleration(key="k", operator="Exists", effect="Never"),
        [
            'spec.tolerations[0].effect: Unsupported value: "Never": supported values: '
            '"NoSchedule", "PreferNoSchedule", "NoExecute"'
        ],
    ),
    "toleration-unknown-operator": (
        _toleration(key="k", operator="Gte", value="1"),
        [
            'spec.tolerations[0].operator: Unsupported value: "Gte": supported values: "Equal", '
            '"Exists"'
        ],
    ),
    "spread-max-skew-zero": (
        _spread({**SPREAD, "maxSkew": 0}),
        ["spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"],
    ),
    "spread-no-topology-key": (
        _spread({**SPREAD, "topologyKey": ""}),
        ["spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty"],
    ),
    "spread-unknown-action": (
        _spread({**SPREAD, "whenUnsatisfiable": "Never"}),
        [
            'spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": '
            'supported values: "DoNotSchedule", "ScheduleAnyway"'
        ],
    ),
    "spread-duplicate": (
        _spread(SPREAD, SPREAD),
        [
            "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "
            '"{zone, DoNotSchedule}"'
        ],
    ),
    "spread-min-domains-schedule-anyway": (
        _spread({**SPREAD, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}),
        [
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use "
            "minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
        ],
    ),
    "spread-unknown-policy": (
        _spread({**SPREAD, "nodeTaintsPolicy": "Always"}),
        [
            'spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: "Always": '
            'supported values: "Honor", "Ignore"'
        ],
    ),
    "spread-match-label-keys-in-selector": (
        _spread({**SPREAD, "matchLabelKeys": ["app"]}),
        [
            'spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "app": exists in '
            "both matchLabelKeys and labelSelector"
        ],
    ),
    "pod-affinity-no-topology-key": (
        _pod(affinity={"podAffinity": {REQ: [{"labelSelector": {"matchLabels": {"a": "b"}}}]}}),
        [f"spec.affinity.podAffinity.{REQ}[0].topologyKey: Required value: can not be empty"],
    ),
}

NODES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "taint-without-effect": (
        make_node("n").taint("k", "v", effect="").manifest(),
        ["spec.taints[0].effect: Required value"],
    ),
    "duplicate-taint": (
        make_node("n").taint("k", "a").taint("k", "b").manifest(),
        [
            'spec.taints[1]: Duplicate value: core.Taint{Key:"k", Value:"b", Effect:"NoSchedule", '
            "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"
        ],
    ),
    "fractional-extended-capacity": (
        make_node("n").capacity(**{"example.com/foo": "1500m"}).manifest(),
        [
            "status.capacity.example.com/foo: Invalid value: 1500m: must be an integer",
            "status.allocatable.example.com/foo: Invalid value: 1500m: must be an integer",
        ],
    ),
}


@pytest.mark.parametrize("case", list(PODS))
def test_pod_refused_as_the_apiserver_refuses_it(case: str) -> None:
    manifest, lines = PODS[case]
    assert pod_errors(with_api_defaults(manifest)) == lines


@pytest.mark.parametrize("case", list(NODES))
def test_node_refused_as_the_apiserver_refuses_it(case: str) -> None:
    manifest, lines = NODES[case]
    assert node_errors(manifest) == lines


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(_resources(limits={FOO: "2"}), id="extended-limit-only"),
        pytest.param(_resources(requests={FOO: "2"}, limits={FOO: "2"}), id="extended-equal"),
        pytest.param(_resources(requests={"cpu": "500m"}, limits={"cpu": "1"}), id="cpu-below"),
        pytest.param(_fields("n1"), id="match-fields-one-value"),
        pytest.param(_toleration(operator="Exists"), id="tolerate-everything"),
        pytest.param(_spread(SPREAD, {**SPREAD, "topologyKey": "host"}), id="two-spreads"),
        pytest.param(make_pod("ok").manifest(), id="plain"),
    ],
)
def test_valid_pods_pass(manifest: dict[str, Any]) -> None:
    assert pod_errors(with_api_defaults(manifest)) == []


def _file(tmp_path: Path, *objects: dict[str, Any]) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(list(objects), sort_keys=False))
    return path


def test_every_refusal_of_a_file_is_listed(tmp_path: Path) -> None:
    text = yaml.safe_dump_all([NODES["duplicate-taint"][0], PODS["spread-duplicate"][0]])
    with pytest.raises(ManifestError) as caught:
        parse_cluster(text, "c.yaml")
    assert [line.split(": ", 3)[2] for line in str(caught.value).splitlines()] == [
        "Node n",
        "Pod default/p",
    ]
