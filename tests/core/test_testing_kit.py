"""kubesched.testing: the builders, the fake cluster, the harness and the pytest fixtures."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    Handle,
    NodeInfo,
    Pod,
    Status,
    hookimpl,
)
from kubesched.api.manifests import load_cluster
from kubesched.engine.explain_recorder import EXCLUDED, FEASIBLE, NOT_EVALUATED, REJECTED
from kubesched.testing.builders import (
    REGION_LABEL,
    ZONE_LABEL,
    make_node,
    make_pod,
)
from kubesched.testing.harness import (
    TEST_BINDER,
    FakeCluster,
    Harness,
    make_snapshot,
    new_plugin,
    plugin_profile,
)

pytest_plugins = ["pytester"]

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


# -- builders ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("builder", "path", "expected"),
    [
        (
            make_pod("p").toleration_exists("gpu", "NoSchedule"),
            ("spec", "tolerations"),
            [{"key": "gpu", "operator": "Exists", "value": "", "effect": "NoSchedule"}],
        ),
        (
            make_pod("p").toleration("k", "v", "NoExecute", seconds=30),
            ("spec", "tolerations"),
            [
                {
                    "key": "k",
                    "operator": "Equal",
                    "value": "v",
                    "effect": "NoExecute",
                    "tolerationSeconds": 30,
                }
            ],
        ),
        (
            make_pod("p").node_affinity_in("zone", "a", "b").node_affinity("gpu", "Exists", term=1),
            ("spec", "affinity", "nodeAffinity", REQUIRED, "nodeSelectorTerms"),
            [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
                {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
            ],
        ),
        (
            make_pod("p")
            .node_affinity_not_in("zone", "c")
            .node_affinity("metadata.name", "In", "n1", fields=True),
            ("spec", "affinity", "nodeAffinity", REQUIRED, "nodeSelectorTerms"),
            [
                {
                    "matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["c"]}],
                    "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}],
                }
            ],
        ),
        (
            make_pod("p").preferred_node_affinity(40, "disk", "In", "ssd"),
            ("spec", "affinity", "nodeAffinity", PREFERRED),
            [
                {
                    "weight": 40,
                    "preference": {
                        "matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]
                    },
                }
            ],
        ),
        (
            make_pod("p").pod_affinity_in("app", ZONE_LABEL, "db"),
            ("spec", "affinity", "podAffinity", REQUIRED),
            [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]
                    },
                    "topologyKey": ZONE_LABEL,
                }
            ],
        ),
        (
            make_pod("p").pod_anti_affinity_exists("app", "kubernetes.io/hostname", weight=10),
            ("spec", "affinity", "podAntiAffinity", PREFERRED),
            [
                {
                    "weight": 10,
                    "podAffinityTerm": {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app", "operator": "Exists"}]
                        },
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }
            ],
        ),
        (
            make_pod("p").pod_anti_affinity(ZONE_LABEL, {"app": "web"}, namespaces=["team"]),
            ("spec", "affinity", "podAntiAffinity", REQUIRED),
            [
                {
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "topologyKey": ZONE_LABEL,
                    "namespaces": ["team"],
                }
            ],
        ),
        (
            make_pod("p").spread_constraint(
                1, ZONE_LABEL, match_labels={"app": "web"}, minDomains=2
            ),
            ("spec", "topologySpreadConstraints"),
            [
                {
                    "maxSkew": 1,
                    "topologyKey": ZONE_LABEL,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 2,
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
        ),
        (
            make_pod("p").pvc("data").image_volume("model", "registry.example/model:v1"),
            ("spec", "volumes"),
            [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {
                    "name": "model",
                    "image": {
                        "reference": "registry.example/model:v1",
                        "pullPolicy": "IfNotPresent",
                    },
                },
            ],
        ),
        (
            make_pod("p").host_port(8080, host_ip="10.0.0.1", container_port=80),
            ("spec", "containers", 0, "ports"),
            [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP", "hostIP": "10.0.0.1"}],
        ),
        (
            make_pod("p").host_port(53, "UDP"),
            ("spec", "containers", 0, "ports"),
            [{"containerPort": 53, "hostPort": 53, "protocol": "UDP"}],
        ),
        (make_pod("p").phase("Running"), ("status", "phase"), "Running"),
        (
            make_pod("p").owner("ReplicaSet", "web-1"),
            ("metadata", "ownerReferences", 0, "kind"),
            "ReplicaSet",
        ),
        (
            make_pod("p").annotations(team="a").annotation("example.com/x", "1"),
            ("metadata", "annotations"),
            {"team": "a", "example.com/x": "1"},
        ),
        (
            make_node("n").zone("a").region("r"),
            ("metadata", "labels"),
            {"kubernetes.io/hostname": "n", ZONE_LABEL: "a", REGION_LABEL: "r"},
        ),
        (
            make_node("n").condition("Ready", "False"),
            ("status", "conditions"),
            [{"type": "Ready", "status": "False"}],
        ),
        (
            make_node("n").image("nginx:1", "nginx@sha256:0", size=10),
            ("status", "images"),
            [{"names": ["nginx:1", "nginx@sha256:0"], "sizeBytes": 10}],
        ),
    ],
    ids=[
        "toleration-exists",
        "toleration-seconds",
        "node-affinity-terms-are-ored",
        "node-affinity-expressions-and-fields",
        "preferred-node-affinity",
        "pod-affinity-in",
        "preferred-pod-anti-affinity-exists",
        "pod-anti-affinity-labels-namespaces",
        "spread-constraint",
        "pvc-and-image-volume",
        "host-port-with-host-ip",
        "host-port-unchanged",
        "phase",
        "owner",
        "annotations",
        "zone-and-region",
        "condition-replaced",
        "image-with-aliases",
    ],
)
def test_builder_writes_the_manifest_field(builder, path, expected):
    value: Any = builder.manifest()
    for step in path:
        value = value[step]
    assert value == expected
    builder.obj()  # and the core can read it


def test_built_objects_read_back_as_the_scheduler_sees_them():
    pod = (
        make_pod("web", "team")
        .req(cpu="500m", memory="1Gi")
        .limits(cpu="1")
        .image("nginx:1.27")
        .init_container("setup", image="busybox", cpu="2")
        .init_container("proxy", sidecar=True, cpu="100m")
        .overhead(cpu="10m")
        .host_port(8080, host_ip="10.0.0.1")
        .toleration_exists("gpu")
        .priority(7)
        .preemption_policy("Never")
        .nominated("n2")
        .terminating()
        .obj()
    )
    assert (pod.key, pod.priority, pod.preemption_policy) == ("team/web", 7, "Never")
    assert pod.containers[0].image == "nginx:1.27"
    assert [(c.name, c.is_sidecar) for c in pod.init_containers] == [
        ("setup", False),
        ("proxy", True),
    ]
    assert pod.overhead == {"cpu": 10}
    port = pod.containers[0].host_ports[0]
    assert (port.host_ip, port.protocol, port.host_port) == ("10.0.0.1", "TCP", 8080)
    assert pod.tolerations[0].operator == "Exists"
    assert (pod.nominated_node_name, pod.deletion_timestamp) == ("n2", "2025-01-01T00:00:00Z")
    node = make_node("n1").allocatable(cpu="3500m").annotation("example.com/temp", "60").obj()
    assert node.allocatable["cpu"] == 3500
    assert node.annotations == {"example.com/temp": "60"}
    assert make_pod("p").phase("Succeeded").obj().is_terminated


def test_existing_builder_defaults_are_unchanged():
    manifest = make_pod("p").req(cpu="1").host_port(80).manifest()
    assert manifest["metadata"] == {"name": "p", "namespace": "default", "uid": "default-p-uid"}
    assert manifest["spec"]["schedulerName"] == "custom-scheduler"
    assert manifest["spec"]["containers"] == [
        {
            "name": "app",
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": "1"}},
            "ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}],
        }
    ]
    node = make_node("n1").manifest()
    assert node["status"]["allocatable"] == {"cpu": "4", "memory": "32Gi", "pods": "110"}


def test_clone_is_independent():
    base = make_pod("p").labels(app="web")
    varied = base.clone().labels(tier="db")
    assert base.obj().labels == {"app": "web"}
    assert varied.obj().labels == {"app": "web", "tier": "db"}


# -- the fake cluster ----------------------------------------------------------------------------
class RequiresZone:
    """A test Filter: nodes must carry the zone label named by args (every node by default)."""

    name = "RequiresZone"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.zone = args.get("zone")
        self.handle = handle

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.zone is None or node_info.node.labels.get(ZONE_LABEL) == self.zone:
            return None
        return Status.unresolvable(f"node(s) not in zone {self.zone}")

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ALL))]


class FewestPods:
    """A test Score plugin: fewer pods is better (raw = pod count, normalized and inverted)."""

    name = "FewestPods"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return len(node_info.pods)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: dict[str, int]) -> None:
        highest = max(scores.values()) or 1
        for node, value in scores.items():
            scores[node] = 100 - value * 100 // highest


def test_fake_cluster_counts_bound_pods_on_their_nodes(tmp_path):
    cluster = FakeCluster([make_node("n1"), make_node("n2").zone("a")])
    cluster.add(make_pod("a").req(cpu="1").node("n1"), make_pod("b").node("gone"), make_pod("c"))
    info = cluster.node_info("n1")
    assert list(info.pods) == ["default-a-uid"]
    assert info.requested["cpu"] == 1000
    assert [i.name for i in cluster.snapshot()] == ["n1", "n2"]
    with pytest.raises(KeyError, match="no node 'n9' in the fake cluster"):
        cluster.node_info("n9")
    written = load_cluster(cluster.write(tmp_path / "cluster.yaml"))
    assert [n.name for n in written.nodes] == ["n1", "n2"]
    assert [p.name for p in written.pods] == ["a", "b", "c"]


def test_new_plugin_gets_a_handle_over_the_cluster():
    cluster = FakeCluster([make_node("n1")])
    plugin = new_plugin(RequiresZone, {"zone": "a"}, cluster)
    assert plugin.zone == "a"
    assert [i.name for i in plugin.handle.snapshot()] == ["n1"]
    cluster.add(make_node("n2"))
    assert len(plugin.handle.snapshot()) == 2  # the handle shows the cluster as it is now
    assert len(make_snapshot([make_node("x")], [make_pod("p").node("x")]).get("x").pods) == 1


# -- the harness ---------------------------------------------------------------------------------
def test_plugin_profile_enables_every_point_the_plugin_implements():
    assert plugin_profile(RequiresZone, {"zone": "a"}) == {
        "plugins": {"filter": {"enabled": [{"name": "RequiresZone"}]}},
        "pluginConfig": [{"name": "RequiresZone", "args": {"zone": "a"}}],
    }
    assert plugin_profile(FewestPods, weight=3)["plugins"] == {
        "score": {"enabled": [{"name": "FewestPods", "weight": 3}]}
    }

    class Binder:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
            return Status.skip()

    assert plugin_profile(Binder)["plugins"]["bind"] == {
        "enabled": [{"name": "Binder"}, {"name": TEST_BINDER}]
    }
    with Harness.for_plugin(Binder, nodes=[make_node("n1")]) as harness:
        assert harness.schedule(make_pod("p")).node == "n1"  # Skip hands over to TestBinder


def test_harness_for_one_plugin_reports_each_node():
    nodes = [make_node("n1"), make_node("n2").zone("a"), make_node("n3").zone("b")]
    with Harness.for_plugin(RequiresZone, {"zone": "a"}, nodes=nodes) as harness:
        report = harness.schedule(make_pod("p"))
        assert (report.result, report.node) == ("Scheduled", "n2")
        assert report.message == "Successfully assigned default/p to n2"
        assert report.verdict("n1", "RequiresZone").reasons == ("node(s) not in zone a",)
        # No Score plugin: the search stops at the first fit, so n3 is never looked at.
        assert report.rejected() == {"n1": "node(s) not in zone a"}
        assert report.nodes["n3"].outcome == NOT_EVALUATED
        assert harness.node_of("p") == "n2"


def test_harness_profile_scores_raw_normalized_weighted():
    plugins = {"RequiresZone": RequiresZone, "FewestPods": FewestPods}
    profile = {
        "plugins": {
            "filter": {"enabled": [{"name": "RequiresZone"}]},
            "score": {"enabled": [{"name": "FewestPods", "weight": 2}]},
        }
    }
    pods = [make_pod("x").node("busy"), make_pod("y").node("busy"), make_pod("z").node("calm")]
    nodes = [make_node("busy"), make_node("calm"), make_node("idle")]
    with Harness(plugins, profile, nodes=nodes, pods=pods) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.node == "idle"
    details = {n: report.score(n, "FewestPods") for n in ("busy", "calm", "idle")}
    assert {n: (d.raw, d.normalized, d.weighted) for n, d in details.items()} == {
        "busy": (2, 0, 0),
        "calm": (1, 50, 100),
        "idle": (0, 100, 200),
    }
    assert report.totals() == {"busy": 0, "calm": 100, "idle": 200}
    assert report.why == "highest total score 200 (next: calm with 100)"


def test_harness_run_retries_after_an_event():
    with Harness.for_plugin(RequiresZone, {"zone": "a"}, nodes=[make_node("n1")]) as harness:
        first = harness.schedule(make_pod("p"))
        assert first.result == "Unschedulable"
        assert first.message == "0/1 nodes are available: 1 node(s) not in zone a."
        assert first.nodes["n1"].outcome == REJECTED
        harness.add_node(make_node("n2").zone("a"))
        retried = harness.run()
        assert [(r.attempt, r.node) for r in retried] == [(2, "n2")]
        assert [r.attempt for r in harness.reports("default/p")] == [1, 2]


def test_harness_schedule_names_why_a_pod_had_no_cycle():
    class Gate:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def pre_enqueue(self, pod: Pod) -> Status:
            return Status.unresolvable("held for the test")

    with Harness.for_plugin(Gate, nodes=[make_node("n1")]) as harness:
        with pytest.raises(LookupError, match="gated by Gate: held for the test"):
            harness.schedule(make_pod("p"))
        with pytest.raises(LookupError, match="no profile named 'other'"):
            harness.schedule(make_pod("q").scheduler("other"))


def test_report_outcomes_for_prefilter_subsets():
    from kubesched import PreFilterResult

    class OnlyN2:
        def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
            pass

        @hookimpl
        def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]):
            return PreFilterResult({"n2"})

    nodes = [make_node("n1"), make_node("n2")]
    with Harness.for_plugin(OnlyN2, nodes=nodes) as harness:
        report = harness.schedule(make_pod("p"))
    assert report.nodes["n1"].outcome == EXCLUDED
    assert report.nodes["n1"].message == "node(s) didn't satisfy plugin(s) [OnlyN2]"
    assert report.nodes["n2"].outcome == FEASIBLE
    assert report.points["PreFilter"][0].reasons == ("only nodes: n2",)


# -- the pytest plugin ---------------------------------------------------------------------------
def test_fixtures_need_no_boilerplate(pytester):
    pytester.makepyfile(
        textwrap.dedent(
            """
            from kubesched import CycleState, Status, hookimpl


            class AvoidGpu:
                def __init__(self, args, handle):
                    self.key = args.get("key", "gpu")

                @hookimpl
                def filter(self, state, pod, node_info):
                    if self.key in node_info.node.labels:
                        return Status.unschedulable("node(s) had a gpu")
                    return None


            def test_direct_call(new_plugin, cycle_state, make_pod, fake_cluster, make_node):
                fake_cluster.add(make_node("g").labels(gpu="1"))
                plugin = new_plugin(AvoidGpu, {"key": "gpu"})
                node_info = fake_cluster.node_info("g")
                status = plugin.filter(cycle_state, make_pod("p").obj(), node_info)
                assert status.reasons == ("node(s) had a gpu",)
                assert isinstance(cycle_state, CycleState)


            def test_harness(scheduler_harness, fake_cluster, make_pod, make_node):
                fake_cluster.add(make_node("g").labels(gpu="1"), make_node("plain"))
                report = scheduler_harness(AvoidGpu).schedule(make_pod("p"))
                assert report.node == "plain"
                profile = {"plugins": {"filter": {"enabled": [{"name": "AvoidGpu"}]}}}
                harness = scheduler_harness({"AvoidGpu": AvoidGpu}, profile)
                assert harness.schedule(make_pod("q")).node == "plain"
            """
        )
    )
    result = pytester.runpytest("-p", "no:kubesched", "-p", "kubesched.testing.pytest_plugin")
    result.assert_outcomes(passed=2)
