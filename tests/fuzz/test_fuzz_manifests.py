"""Fuzzing the manifest parser, the Pod and Node readers and ``simulate``: random and mutated
objects give objects or a clear error (ManifestError, ObjectError); generated clusters give a
correct decision for every pod (a node that exists and has room), never a crash or a hang."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from fuzz_support import check_clear_error, mutated, time_limit, values
from hypothesis import given
from hypothesis import strategies as st

from kubesched import ManifestError, Node, ObjectError, Pod, pod_requests
from kubesched.api.manifests import parse_cluster
from kubesched.config import default_config
from kubesched.framework.registry import Registry
from kubesched.service.simulate import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "core" / "kubesched" / "examples" / "cluster.yaml"
CLUSTER = yaml.safe_load(EXAMPLE.read_text())
NODE = CLUSTER["items"][0]
POD = CLUSTER["items"][4]
FULL_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "full",
        "namespace": "ns",
        "uid": "u-1",
        "labels": {"app": "a"},
        "annotations": {"k": "v"},
    },
    "spec": {
        "schedulerName": "custom-scheduler",
        "priority": 10,
        "nodeSelector": {"zone": "a"},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "schedulingGates": [{"name": "g"}],
        "overhead": {"cpu": "10m"},
        "resources": {"requests": {"cpu": "1"}},
        "initContainers": [{"name": "i", "image": "x", "restartPolicy": "Always", "resources": {}}],
        "containers": [
            {
                "name": "c",
                "image": "x",
                "resources": {"requests": {"cpu": "500m", "memory": "0.5Gi"}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            }
        },
    },
    "status": {"phase": "Pending", "nominatedNodeName": "n"},
}
FULL_NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n", "uid": "n-1", "labels": {"zone": "a"}},
    "spec": {
        "unschedulable": False,
        "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
    },
    "status": {
        "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
        "capacity": {"cpu": "4"},
        "images": [{"names": ["x"], "sizeBytes": 1000}],
    },
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.installed()


def _read(cls, document) -> None:
    try:
        with time_limit():
            obj = cls(document)
    except ObjectError as exc:
        check_clear_error(exc)
        return
    except Exception as exc:
        check_clear_error(exc)  # fails: anything but ObjectError is a crash
        return
    assert obj.name


@given(document=mutated(FULL_POD, max_mutations=5))
def test_mutated_pods(document):
    if isinstance(document, dict):
        _read(Pod, document)


@given(document=mutated(FULL_NODE, max_mutations=5))
def test_mutated_nodes(document):
    if isinstance(document, dict):
        _read(Node, document)


@given(document=st.dictionaries(st.sampled_from(["metadata", "spec", "status", "kind"]), values))
def test_random_pods_and_nodes(document):
    _read(Pod, document)
    _read(Node, document)


def _parse(text: str):
    try:
        with time_limit():
            return parse_cluster(text, "fuzz.yaml")
    except Exception as exc:
        check_clear_error(exc)
        return None


@given(text=st.text(max_size=300))
def test_random_text(text):
    _parse(text)


@given(document=mutated(CLUSTER, max_mutations=6))
def test_mutated_cluster_files(document):
    _parse(yaml.safe_dump(document, allow_unicode=True))


@given(documents=st.lists(mutated(FULL_POD, max_mutations=3), max_size=4))
def test_mutated_multi_document_files(documents):
    text = yaml.safe_dump_all(documents, allow_unicode=True)
    cluster = _parse(text)
    if cluster is not None:
        assert len(cluster.pods) <= len(documents)


# -- simulate on generated clusters -----------------------------------------------------------

quantities_cpu = st.sampled_from(["100m", "250m", "1", "2", "0.5", "1e3m", "1500m", "0"])
quantities_mem = st.sampled_from(["64Mi", "0.5Gi", "1Gi", "100m", "1e9", "128974848", "2G"])
label_keys = st.sampled_from(["zone", "app", "tier", "scheduler.custom/enabled"])
label_values = st.sampled_from(["a", "b", "true", ""])


@st.composite
def nodes(draw: st.DrawFn, index: int) -> dict:
    allocatable = draw(
        st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {
                    "cpu": st.sampled_from(["1", "2", "4", "500m"]),
                    "memory": st.sampled_from(["1Gi", "4Gi", "0.5Gi", "1e9"]),
                    "pods": st.sampled_from(["3", "110", "0"]),
                }
            ),
        )
    )
    node: dict = {
        "kind": "Node",
        "metadata": {
            "name": f"n{index}",
            "labels": draw(st.dictionaries(label_keys, label_values)),
        },
        "spec": {
            "unschedulable": draw(st.booleans()),
            "taints": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "key": label_keys,
                            "value": label_values,
                            "effect": st.sampled_from(
                                ["NoSchedule", "PreferNoSchedule", "NoExecute"]
                            ),
                        }
                    ),
                    max_size=2,
                )
            ),
        },
    }
    if allocatable is not None:
        node["status"] = {"allocatable": allocatable}
    return node


@st.composite
def pods(draw: st.DrawFn, index: int, node_names: list[str]) -> dict:
    requests = draw(
        st.fixed_dictionaries({}, optional={"cpu": quantities_cpu, "memory": quantities_mem})
    )
    pod: dict = {
        "kind": "Pod",
        "metadata": {
            "name": f"p{index}",
            "namespace": "default",
            "labels": draw(st.dictionaries(label_keys, label_values, max_size=2)),
        },
        "spec": {
            "schedulerName": draw(
                st.sampled_from(["custom-scheduler", "custom-scheduler", "other"])
            ),
            "containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}],
            "nodeSelector": draw(st.dictionaries(label_keys, label_values, max_size=1)),
            "tolerations": draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "key": label_keys,
                            "operator": st.sampled_from(["Exists", "Equal"]),
                            "value": label_values,
                        }
                    ),
                    max_size=2,
                )
            ),
            # One priority: no preemption, so every pod placed stays and room can be checked.
            "priority": 0,
        },
    }
    if node_names and draw(st.integers(0, 4)) == 0:
        pod["spec"]["nodeName"] = draw(st.sampled_from(node_names))
    return pod


@st.composite
def clusters(draw: st.DrawFn) -> list[dict]:
    node_list = [draw(nodes(i)) for i in range(draw(st.integers(0, 5)))]
    names = [n["metadata"]["name"] for n in node_list]
    pod_list = [draw(pods(i, names)) for i in range(draw(st.integers(0, 12)))]
    return node_list + pod_list


def _fits(cluster, result) -> None:
    """Each decision is correct: the node exists, is schedulable, and has room for what was
    placed on it (cpu, memory, pod count), unless what was there before already overflowed it."""
    nodes_by_name = {n.name: n for n in cluster.nodes}
    placed: dict[str, list] = {}
    for outcome in result.pods:
        if outcome.node is None:
            assert outcome.message, f"{outcome.name}: unschedulable without a message"
            continue
        node = nodes_by_name.get(outcome.node)
        assert node is not None, f"{outcome.name} placed on unknown node {outcome.node}"
        assert not node.unschedulable, f"{outcome.name} placed on unschedulable {node.name}"
        pod = next(p for p in cluster.pods if p.name == outcome.name)
        placed.setdefault(node.name, []).append(pod)
    for name, new in placed.items():
        node = nodes_by_name[name]
        before = [p for p in cluster.pods if p.node_name == name]
        for resource in ("cpu", "memory"):
            limit = node.allocatable.get(resource, 0)
            used_before = sum(pod_requests(p).get(resource, 0) for p in before)
            used = used_before + sum(pod_requests(p).get(resource, 0) for p in new)
            assert used_before > limit or used <= limit, (name, resource, used, limit)
        if "pods" in node.allocatable:
            assert (
                len(before) >= node.allocatable["pods"]
                or len(before) + len(new) <= (node.allocatable["pods"])
            )


@given(objects=clusters())
def test_simulate_generated_clusters(registry, objects):
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects})
    cluster = _parse(text)
    if cluster is None:
        return
    with time_limit():
        result = simulate(cluster, default_config(registry), registry, seed=1)
    _fits(cluster, result)


@given(document=mutated(CLUSTER, max_mutations=3))
def test_simulate_mutated_example(registry, document):
    cluster = _parse(yaml.safe_dump(document, allow_unicode=True))
    if cluster is None:
        return
    with time_limit():
        simulate(cluster, default_config(registry), registry, seed=1)


def test_the_example_is_parsed(registry):
    cluster = parse_cluster(EXAMPLE.read_text(), str(EXAMPLE))
    assert cluster.nodes and cluster.pods
    Pod(copy.deepcopy(FULL_POD))
    Node(copy.deepcopy(FULL_NODE))
    with pytest.raises(ManifestError):
        parse_cluster("kind: Pod\nmetadata: {}\n")


@pytest.mark.parametrize(
    "text",
    [
        "kind: []\n",
        "kind: {a: b}\n",
        "kind: Pod\nmetadata: {name: [a]}\n",
        "kind: Node\nmetadata: {name: {a: b}}\n",
        "kind: Pod\nmetadata: {name: a, namespace: [x]}\n",
        "kind: Pod\nmetadata: {name: a}\nspec: {nodeName: [n]}\n",
        "kind: Pod\nmetadata: {name: a}\nspec: {schedulerName: {x: 1}}\n",
        "kind: Pod\nmetadata: {name: a, uid: [1]}\n",
    ],
    ids=[
        "kind-list",
        "kind-mapping",
        "pod-name-list",
        "node-name-mapping",
        "namespace-list",
        "nodeName-list",
        "schedulerName-mapping",
        "uid-list",
    ],
)
def test_fields_of_the_wrong_type_are_clear_errors(text):
    """Found by the fuzzer: each must be a ManifestError naming the field."""
    with pytest.raises(ManifestError) as info:
        parse_cluster(text, "bad.yaml")
    assert "bad.yaml: document 1: " in str(info.value)
