"""Cluster files: multi-document YAML, lists and JSON in; every problem named by file, document,
object and field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import ManifestError
from kubesched.api.manifests import load_cluster, parse_cluster
from kubesched.testing.builders import make_node, make_pod

SOURCE = "cluster.yaml"


def node(name: str) -> dict[str, Any]:
    return make_node(name).manifest()


def pod(name: str, namespace: str = "default", **requests: str) -> dict[str, Any]:
    builder = make_pod(name, namespace)
    if requests:
        builder = builder.req(**requests)
    return builder.manifest()


def docs(*objects: Any) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def names(text: str) -> tuple[list[str], list[str]]:
    cluster = parse_cluster(text, SOURCE)
    return [n.name for n in cluster.nodes], [p.key for p in cluster.pods]


# -- what is read --------------------------------------------------------------------------------

READ = [
    ("one-node", docs(node("n1")), ["n1"], []),
    ("multi-document", docs(node("n1"), pod("a"), node("n2")), ["n1", "n2"], ["default/a"]),
    ("empty-documents", "---\n" + docs(node("n1")) + "---\n---\n", ["n1"], []),
    ("empty-file", "", [], []),
    (
        "list",
        docs({"apiVersion": "v1", "kind": "List", "items": [node("n1"), pod("a", "shop")]}),
        ["n1"],
        ["shop/a"],
    ),
    (
        "typed-lists",
        docs({"kind": "NodeList", "items": [node("n1")]}, {"kind": "PodList", "items": [pod("a")]}),
        ["n1"],
        ["default/a"],
    ),
    (
        "list-and-documents",
        docs({"kind": "List", "items": [node("n1")]}, pod("a")),
        ["n1"],
        ["default/a"],
    ),
    ("json-object", json.dumps(node("n1")), ["n1"], []),
    (
        "json-list",
        json.dumps({"kind": "List", "items": [node("n1"), pod("a")]}, indent=2),
        ["n1"],
        ["default/a"],
    ),
    ("json-indented-with-tabs", json.dumps(node("n1"), indent="\t"), ["n1"], []),
    ("yaml-flow-style", "{kind: Node, metadata: {name: n1}}", ["n1"], []),
    (
        "same-name-other-namespace",
        docs(pod("a", "one"), pod("a", "two")),
        [],
        ["one/a", "two/a"],
    ),
]


@pytest.mark.parametrize(
    ("text", "node_names", "pod_keys"), [c[1:] for c in READ], ids=[c[0] for c in READ]
)
def test_what_is_read(text: str, node_names: list[str], pod_keys: list[str]) -> None:
    assert names(text) == (node_names, pod_keys)


def test_items_of_typed_lists_need_no_kind() -> None:
    # As the API serves them (GET /api/v1/nodes): the items carry no kind.
    bare_node = {k: v for k, v in node("n1").items() if k not in ("kind", "apiVersion")}
    bare_pod = {k: v for k, v in pod("a").items() if k not in ("kind", "apiVersion")}
    text = json.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [bare_node]}) + "\n"
    assert names(text) == (["n1"], [])
    cluster = parse_cluster(docs({"kind": "PodList", "items": [bare_pod]}), SOURCE)
    assert [p.key for p in cluster.pods] == ["default/a"] and cluster.warnings == []


def test_objects_keep_their_parsed_fields() -> None:
    cluster = parse_cluster(docs(node("n1"), pod("a", cpu="250m")), SOURCE)
    assert cluster.nodes[0].allocatable["cpu"] == 4000
    assert cluster.pods[0].containers[0].requests == {"cpu": 250}


# -- what is skipped -----------------------------------------------------------------------------

SKIPPED = [
    (
        "deployment",
        docs(node("n1"), {"kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}}),
        "cluster.yaml: document 2: skipping Deployment shop/web (not a kind the scheduler reads)",
    ),
    (
        "cluster-scoped",
        docs({"kind": "ClusterRole", "metadata": {"name": "admin"}}),
        "cluster.yaml: document 1: skipping ClusterRole admin (not a kind the scheduler reads)",
    ),
    (
        "list-item",
        docs(
            {
                "kind": "List",
                "items": [node("n1"), {"kind": "ConfigMap", "metadata": {"name": "c"}}],
            }
        ),
        "cluster.yaml: document 1 items[1]: skipping ConfigMap c (not a kind the scheduler reads)",
    ),
    (
        "no-kind",
        docs({"metadata": {"name": "mystery"}}),
        "cluster.yaml: document 1: skipping ? mystery (not a kind the scheduler reads)",
    ),
]


@pytest.mark.parametrize(("text", "warning"), [c[1:] for c in SKIPPED], ids=[c[0] for c in SKIPPED])
def test_other_kinds_are_skipped_with_a_warning(text: str, warning: str) -> None:
    cluster = parse_cluster(text, SOURCE)
    assert cluster.warnings == [warning]
    assert not cluster.pods


def test_kinds_plugins_consult_are_kept_by_kind() -> None:
    pdb = {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"minAvailable": 1},
    }
    namespace = {"kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}}
    cluster = parse_cluster(docs(node("n1"), pdb, namespace), SOURCE)
    assert cluster.warnings == []
    assert cluster.objects == {"PodDisruptionBudget": [pdb], "Namespace": [namespace]}


# -- errors --------------------------------------------------------------------------------------

ERRORS = [
    (
        "invalid-quantity",
        docs(node("n1"), pod("web", "shop", cpu="lots")),
        [
            "cluster.yaml: document 2: Pod shop/web: spec.containers[0].resources.requests.cpu: "
            "invalid quantity 'lots'"
        ],
    ),
    (
        "invalid-quantity-in-list",
        docs({"kind": "List", "items": [node("n1"), pod("web", memory="1 Gi")]}),
        [
            "cluster.yaml: document 1 items[1]: Pod default/web: "
            "spec.containers[0].resources.requests.memory: invalid quantity '1 Gi'"
        ],
    ),
    (
        "invalid-node-allocatable",
        docs({"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "x"}}}),
        ["cluster.yaml: document 1: Node n1: status.allocatable.cpu: invalid quantity 'x'"],
    ),
    (
        "duplicate-node",
        docs(node("n1"), pod("a"), node("n1")),
        ["cluster.yaml: document 3: duplicate Node n1"],
    ),
    (
        "duplicate-pod",
        docs({"kind": "List", "items": [pod("a", "shop"), pod("a", "shop")]}),
        ["cluster.yaml: document 1 items[1]: duplicate Pod shop/a"],
    ),
    (
        "not-an-object",
        docs(node("n1"), "just a string", [1, 2]),
        [
            "cluster.yaml: document 2: expected a Kubernetes object (a mapping), got str",
            "cluster.yaml: document 3: expected a Kubernetes object (a mapping), got list",
        ],
    ),
    (
        "every-problem-at-once",
        docs(pod("a", cpu="x"), {"kind": "Node", "metadata": {}}, pod("b", memory="-1")),
        [
            "cluster.yaml: document 1: Pod default/a: spec.containers[0].resources.requests.cpu",
            "cluster.yaml: document 2: Node: metadata.name: required",
            "cluster.yaml: document 3: Pod default/b: "
            'spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater '
            "than or equal to 0",
        ],
    ),
]


@pytest.mark.parametrize(("text", "lines"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_name_file_document_object_and_field(text: str, lines: list[str]) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_cluster(text, SOURCE)
    reported = str(caught.value).splitlines()
    assert len(reported) == len(lines)
    for line, expected in zip(reported, lines, strict=True):
        assert line.startswith(expected), line


SYNTAX = [
    (
        "bad-indentation",
        "kind: Node\nmetadata:\n  name: n1\n bad: x\n",
        "cluster.yaml:4:2: not valid YAML",
    ),
    ("unclosed-flow", "kind: Node\nmetadata: {name: n1\n", "cluster.yaml:3:1: not valid YAML"),
    ("tab-in-yaml", "kind: Node\nmetadata:\n\tname: n1\n", "cluster.yaml:3:1: not valid YAML"),
    (
        "bad-json",
        '{\n  "kind": "Node"\n  "metadata": {"name": "n1"}\n}',
        "cluster.yaml:3:3: not valid JSON: Expecting ',' delimiter",
    ),
]


@pytest.mark.parametrize(("text", "prefix"), [c[1:] for c in SYNTAX], ids=[c[0] for c in SYNTAX])
def test_syntax_errors_name_line_and_column(text: str, prefix: str) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_cluster(text, SOURCE)
    assert str(caught.value).startswith(prefix), str(caught.value)
    assert "\n" not in str(caught.value)


# -- files ---------------------------------------------------------------------------------------


def test_load_cluster_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(docs(node("n1"), pod("a", cpu="nope")), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"^{path}: document 2: Pod default/a: "):
        load_cluster(path)
    path.write_text(docs(node("n1"), pod("a")), encoding="utf-8")
    cluster = load_cluster(str(path))
    assert [n.name for n in cluster.nodes] == ["n1"] and [p.key for p in cluster.pods] == [
        "default/a"
    ]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.yaml", "cannot read cluster file: No such file or directory"),
        (lambda d: d, "cannot read cluster file: Is a directory"),
        (
            lambda d: (d / "binary.yaml", (d / "binary.yaml").write_bytes(b"\xff\xfe\x00kind"))[0],
            "not a text file (expected YAML or JSON)",
        ),
    ],
    ids=["missing", "directory", "not-text"],
)
def test_unreadable_files(tmp_path: Path, make, message: str) -> None:
    path = make(tmp_path)
    with pytest.raises(ManifestError) as caught:
        load_cluster(path)
    assert str(caught.value) == f"{path}: {message}"


def _pod_with(**spec: Any) -> str:
    manifest = make_pod("p").manifest()
    manifest["spec"].update(spec)
    return yaml.safe_dump(manifest)


REQUESTS_FROM_LIMITS = [
    (
        "limit-only-becomes-request",
        {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}]},
        {"cpu": 2000, "memory": 2**30},
    ),
    (
        "an-explicit-request-stays",
        {
            "containers": [
                {
                    "name": "c",
                    "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}},
                }
            ]
        },
        {"cpu": 500},
    ),
    (
        "init-containers-too",
        {
            "containers": [{"name": "c"}],
            "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "3"}}}],
        },
        {"cpu": 3000},
    ),
    (
        "pod-level-cpu-and-memory",
        {
            "containers": [{"name": "c"}],
            "resources": {"limits": {"cpu": "4", "memory": "2Gi"}},
        },
        {"cpu": 4000, "memory": 2 * 2**30},
    ),
]


@pytest.mark.parametrize(
    ("spec", "requests"),
    [c[1:] for c in REQUESTS_FROM_LIMITS],
    ids=[c[0] for c in REQUESTS_FROM_LIMITS],
)
def test_a_pod_is_read_as_the_apiserver_stores_it(
    spec: dict[str, Any], requests: dict[str, int]
) -> None:
    """kube-apiserver defaults a request from the limit of the same resource; a hand-written
    file is scheduled as the same manifest applied to a cluster would be."""
    from kubesched import pod_requests

    (pod,) = parse_cluster(_pod_with(**spec)).pods
    assert pod_requests(pod) == requests


def test_defaulting_leaves_the_input_alone_and_malformed_resources_to_the_parser() -> None:
    from kubesched.api.manifests import with_api_defaults

    manifest = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]}}
    defaulted = with_api_defaults(manifest)
    assert defaulted["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    assert "requests" not in manifest["spec"]["containers"][0]["resources"]
    # Limits the scheduler never reads: left as they are, no requests made up from them.
    odd_limits = _pod_with(containers=[{"name": "c", "resources": {"limits": "lots"}}])
    (pod,) = parse_cluster(odd_limits).pods
    assert pod.containers[0].requests == {}
    # Malformed requests next to limits: not merged into, reported by the parser.
    broken = _pod_with(
        containers=[{"name": "c", "resources": {"limits": {"cpu": "1"}, "requests": "x"}}]
    )
    with pytest.raises(ManifestError, match=r"spec\.containers\[0\]\.resources\.requests"):
        parse_cluster(broken)
