"""Inter-pod (anti-)affinity terms kube-apiserver would refuse: a cluster file holding them is
refused at loading with one line per problem naming the file, object and field path
(``kubesched simulate`` exits 2, no traceback: tests/cli/test_simulate_bad_affinity.py, where
the default plugins are installed); a pod that reaches the scheduler with them anyway
(``kubesched run``) fails on its own with the same words, before any plugin reads its terms,
while the other pods are scheduled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from kubesched import ManifestError, NodeInfo, ObjectError, Pod, hookimpl
from kubesched.api.manifests import parse_cluster
from kubesched.api.objects import pod_affinity_errors
from kubesched.engine.scheduler import REASON_UNSCHEDULABLE
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
HOST = "kubernetes.io/hostname"
ANTI = f"spec.affinity.podAntiAffinity.{REQUIRED}[0]"
PREF = f"spec.affinity.podAffinity.{PREFERRED}[0]"


def required(term: Any, kind: str = "podAntiAffinity") -> dict[str, Any]:
    return {kind: {REQUIRED: [term]}}


def preferred(term: Any, weight: Any = 10) -> dict[str, Any]:
    return {"podAffinity": {PREFERRED: [{"weight": weight, "podAffinityTerm": term}]}}


def term(**fields: Any) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST, **fields}


def expression(operator: str, *values: str, key: str = "app") -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": operator, "values": list(values)}]}


SUPPORTED = 'supported values: "In", "NotIn", "Exists", "DoesNotExist"'

CASES = {
    "unknown-operator": (
        required(term(labelSelector=expression("Near", "web"))),
        f'{ANTI}.labelSelector.matchExpressions[0].operator: Unsupported value: "Near": '
        + SUPPORTED,
    ),
    "in-without-values": (
        required(term(labelSelector=expression("In"))),
        f"{ANTI}.labelSelector.matchExpressions[0].values: Invalid value: []string{{}}: for "
        "'in', 'notin' operators, values set can't be empty",
    ),
    "exists-with-values": (
        required(term(labelSelector=expression("Exists", "web"))),
        f'{ANTI}.labelSelector.matchExpressions[0].values: Invalid value: []string{{"web"}}: '
        "values set must be empty for exists and does not exist",
    ),
    "bad-namespace-selector": (
        required(term(namespaceSelector=expression("Gt", "1", key="team"))),
        f'{ANTI}.namespaceSelector.matchExpressions[0].operator: Unsupported value: "Gt": '
        + SUPPORTED,
    ),
    "namespace-selector-not-an-object": (
        required(term(namespaceSelector="all")),
        f'{ANTI}.namespaceSelector: Invalid value: "all": must be a label selector object',
    ),
    "missing-topology-key": (
        required({"labelSelector": {"matchLabels": {"app": "web"}}}, "podAffinity"),
        f"spec.affinity.podAffinity.{REQUIRED}[0].topologyKey: Required value: can not be empty",
    ),
    "bad-topology-key": (
        required(term(topologyKey="a/b/c")),
        f'{ANTI}.topologyKey: Invalid value: "a/b/c": a valid label key',
    ),
    "preferred-missing-topology-key": (
        preferred({"labelSelector": {}}),
        f"{PREF}.podAffinityTerm.topologyKey: Required value: can not be empty",
    ),
    "weight-zero": (
        preferred(term(), 0),
        f"{PREF}.weight: Invalid value: 0: must be in the range 1-100",
    ),
    "weight-not-a-number": (
        preferred(term(), "heavy"),
        f"{PREF}.weight: Invalid value: 'heavy': must be in the range 1-100",
    ),
    "namespaces-not-a-list": (
        required(term(namespaces="default")),
        f"{ANTI}.namespaces: expected a list of namespace names",
    ),
    "namespace-not-a-label": (
        required(term(namespaces=["Team_A"])),
        f"{ANTI}.namespaces[0]: Invalid value: 'Team_A': a lowercase RFC 1123 label",
    ),
    "term-not-an-object": (required("web"), f"{ANTI}: expected a pod affinity term (an object)"),
    "terms-not-a-list": (
        {"podAffinity": {REQUIRED: {"topologyKey": HOST}}},
        f"spec.affinity.podAffinity.{REQUIRED}: expected a list, got dict",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_refused_term_is_named_with_its_field_path(case: str) -> None:
    affinity, message = CASES[case]
    errors = pod_affinity_errors(affinity)
    assert len(errors) == 1, errors
    assert errors[0].startswith(message), errors[0]


def test_valid_terms_have_no_errors() -> None:
    pod = (
        make_pod("p")
        .pod_affinity(HOST, {"app": "web"}, namespaces=["default", "team-a"])
        .pod_anti_affinity(HOST, {"app": "db"}, weight=100)
        .obj()
    )
    assert pod.affinity_errors == ()
    assert pod_affinity_errors({}) == []


def _cluster(affinity: Any, *, bound: bool) -> str:
    broken = make_pod("broken").labels(app="web")
    if bound:
        broken = broken.node("n1")
    manifest = broken.manifest()
    manifest["spec"]["affinity"] = affinity
    return yaml.safe_dump_all(
        [make_node("n1").manifest(), manifest, make_pod("fine").manifest()], sort_keys=False
    )


@pytest.mark.parametrize("bound", [False, True], ids=["pending", "bound"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_cluster_file_with_them_is_refused(case: str, bound: bool) -> None:
    affinity, message = CASES[case]
    with pytest.raises(ManifestError) as caught:
        parse_cluster(_cluster(affinity, bound=bound), "cluster.yaml")
    lines = str(caught.value).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"cluster.yaml: document 2: Pod default/broken: {message}")


@pytest.mark.parametrize("value", [[1], "near", 3])
@pytest.mark.parametrize("part", [None, "nodeAffinity", "podAffinity", "podAntiAffinity"])
def test_affinity_that_is_not_an_object_is_an_object_error(part: str | None, value: Any) -> None:
    """The cache and every affinity plugin read these with ``.get``: refused when parsed."""
    manifest = make_pod("p").manifest()
    manifest["spec"]["affinity"] = value if part is None else {part: value}
    field = "spec.affinity" + (f".{part}" if part else "")
    with pytest.raises(ObjectError, match=rf"^Pod default/p: {field}: expected an object, got "):
        Pod(manifest)


class Spy:
    """A Filter that records every pod it is shown."""

    seen: list[str] = []

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
        pass

    @hookimpl
    def filter(self, pod: Pod, node_info: NodeInfo) -> None:
        Spy.seen.append(pod.name)


@pytest.mark.parametrize(
    "case", ["unknown-operator", "missing-topology-key", "weight-not-a-number"]
)
def test_in_the_scheduler_only_that_pod_fails(case: str) -> None:
    """As ``kubesched run`` meets a pod the apiserver should have refused: it alone fails,
    Unschedulable with the field path, and no plugin ever reads its terms."""
    Spy.seen = []
    raw = make_pod("broken").manifest()
    raw["spec"]["affinity"] = CASES[case][0]
    broken, fine = Pod(raw), make_pod("fine").obj()
    scheduler, backend = make_scheduler(
        {"Spy": Spy},
        {"plugins": {"filter": {"enabled": [{"name": "Spy"}]}}},
        nodes=[make_node("n1").obj()],
        pods=[broken, fine],
    )
    try:
        run_until_idle(scheduler)
        attempt = scheduler.attempts[broken.uid]
        assert attempt.node_name is None
        assert attempt.reason == REASON_UNSCHEDULABLE
        assert attempt.message.startswith("parsing pod: " + CASES[case][1])
        assert backend.conditions[broken.key] == (REASON_UNSCHEDULABLE, attempt.message)
        assert backend.pods[fine.uid].node_name == "n1"
        assert Spy.seen == ["fine"]
    finally:
        scheduler.stop()
