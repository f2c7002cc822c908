"""ImageLocality: kube-scheduler's table cases (image_locality_test.go) and the plugin in a
running scheduler."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from kubesched_image_locality import (
    MAX_NODE_SCORE,
    MB,
    NAME,
    ImageLocality,
    calculate_priority,
    normalized_image_name,
)

from kubesched import ConfigError, CycleState, InMemoryBackend, Node, NodeInfo, Pod, Snapshot
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def pod_spec(
    containers: list[str], init: list[str] = (), volumes: list[str] = ()
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(containers)]
    }
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    if volumes:
        spec["volumes"] = [
            {"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)
        ]
    return spec


def pod(spec: dict[str, Any]) -> Pod:
    return Pod({"metadata": {"name": "p", "namespace": "default"}, "spec": spec})


def image_node(name: str, images: list[tuple[list[str], int]]) -> Node:
    return Node(
        {
            "metadata": {"name": name},
            "status": {"images": [{"names": names, "sizeBytes": size} for names, size in images]},
        }
    )


TEST_40_250 = pod_spec(["gcr.io/40", "gcr.io/250"])
TEST_40_300 = pod_spec(["gcr.io/40", "gcr.io/300"])
TEST_MIN_MAX = pod_spec(["gcr.io/10", "gcr.io/4000"])
TEST_300_600_900 = pod_spec(["gcr.io/300", "gcr.io/600", "gcr.io/900"])
TEST_30_40 = pod_spec(["gcr.io/30", "gcr.io/40"])
TEST_IMAGE_VOLUME = pod_spec(["gcr.io/30"], volumes=["gcr.io/300"])
TEST_30_300_AS_CONTAINERS = pod_spec(["gcr.io/30", "gcr.io/300"])
TEST_30_INIT_300 = pod_spec(["gcr.io/30"], init=["gcr.io/300"])

NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/40:latest"], 40 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_300_600_900 = [
    (["gcr.io/300:latest"], 300 * MB),
    (["gcr.io/600:latest"], 600 * MB),
    (["gcr.io/900:latest"], 900 * MB),
]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [
    (["gcr.io/20:latest"], 20 * MB),
    (["gcr.io/30:latest"], 30 * MB),
    (["gcr.io/40:latest"], 40 * MB),
]
NO_IMAGES: list[tuple[list[str], int]] = []


# --- TestImageLocalityPriority ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "nodes", "expected"),
    [
        pytest.param(
            TEST_40_250,
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            {"node1": 0, "node2": 5},
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            TEST_40_300,
            [("node1", NODE_40_300_2000), ("node2", NODE_250_10)],
            {"node1": 7, "node2": 0},
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            TEST_MIN_MAX,
            [("node1", NODE_4000_30), ("node2", NODE_250_10)],
            {"node1": MAX_NODE_SCORE, "node2": 0},
            id="if exceed limit, use limit",
        ),
        pytest.param(
            TEST_MIN_MAX,
            [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
            {"node1": 66, "node2": 0, "node3": 0},
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            TEST_300_600_900,
            [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
            {"node1": 32, "node2": 36, "node3": 0},
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            TEST_30_40,
            [("node1", NODE_20_30_40), ("node2", NODE_4000_30)],
            {"node1": 1, "node2": 0},
            id="pod with multiple small images",
        ),
        pytest.param(
            TEST_IMAGE_VOLUME,
            [("node1", NODE_300_600_900), ("node2", NODE_4000_30)],
            {"node1": 6, "node2": 0},
            id="pod with ImageVolume",
        ),
        pytest.param(
            TEST_30_300_AS_CONTAINERS,
            [("node1", NODE_300_600_900), ("node2", NODE_4000_30)],
            {"node1": 6, "node2": 0},
            id="same images as ImageVolume pod but as regular container images",
        ),
        pytest.param(
            TEST_30_INIT_300,
            [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)],
            {"node1": 6, "node2": 0},
            id="include InitContainers: two images spread on two nodes, prefer the larger image "
            "one",
        ),
        pytest.param(
            pod_spec(["nginx"]),
            [("node1", [(["docker.io/library/nginx:latest"], 900 * MB)]), ("node2", NO_IMAGES)],
            {"node1": 0, "node2": 0},
            id="no registry normalization: nginx is not docker.io/library/nginx:latest",
        ),
        pytest.param(
            pod_spec(["nginx"]),
            [("node1", [(["nginx:latest"], 900 * MB)]), ("node2", NO_IMAGES)],
            {"node1": 43, "node2": 0},
            id="an untagged reference matches the node's :latest name",
        ),
    ],
)
def test_score(spec, nodes, expected):
    infos = [NodeInfo(image_node(name, images)) for name, images in nodes]
    snapshot = Snapshot(infos)
    plugin = ImageLocality({}, Handle("test", InMemoryBackend(), lambda: snapshot))
    test_pod = pod(spec)
    got = {info.name: plugin.score(CycleState(), test_pod, info) for info in snapshot}
    assert got == expected


def test_score_follows_a_changed_node():
    node = image_node("node1", [(["gcr.io/300:latest"], 300 * MB)])
    snapshot = Snapshot([NodeInfo(node)])
    plugin = ImageLocality({}, Handle("test", InMemoryBackend(), lambda: snapshot))
    test_pod = pod(pod_spec(["gcr.io/300"]))
    assert plugin.score(CycleState(), test_pod, snapshot.get("node1")) == 28
    snapshot = Snapshot([NodeInfo(image_node("node1", NO_IMAGES))])
    assert plugin.score(CycleState(), test_pod, snapshot.get("node1")) == 0


def test_a_pod_without_images_scores_zero():
    assert calculate_priority(0, 0) == 0


# --- TestNormalizedImageName --------------------------------------------------------------------


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(
            "root@" + fake_digest("root"), "root@" + fake_digest("root"), id="keep it as is 2"
        ),
    ],
)
def test_normalized_image_name(name, want):
    assert normalized_image_name(name) == want


def test_args_are_refused():
    profile = {
        "plugins": {"score": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"threshold": 1}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: ImageLocality}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.threshold: unknown field; {NAME} takes no args"
    ]


# --- Through the scheduler ----------------------------------------------------------------------


def test_pods_go_where_their_image_already_is():
    image = "registry.k8s.io/pause:3.10"  # the builders' container image
    nodes = [make_node("cold").obj(), make_node("warm").images(image, size=900 * MB).obj()]
    pods = [make_pod(f"p{i}").obj() for i in range(4)]
    profile = {"plugins": {"score": {"enabled": [{"name": NAME, "weight": 1}]}}}
    scheduler, backend = make_scheduler({NAME: ImageLocality}, profile, nodes, pods, seed=7)
    run_until_idle(scheduler)
    assert {backend.pod("default", f"p{i}").node_name for i in range(4)} == {"warm"}
