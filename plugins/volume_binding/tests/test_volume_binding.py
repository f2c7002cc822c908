"""VolumeBinding: kube-scheduler's table cases (volume_binding_test.go's TestVolumeBinding, the
binder's FindPodVolumes cases for bound claims, static binding and provisioning, the capacity
score), args validation, Reserve/Unreserve's assumptions, PreBind's writes and wait, and the
plugin in a simulated cluster (the claim ends bound, the next pod sees the PV taken)."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_volume_binding import (
    NAME,
    REASON_BIND_CONFLICT,
    REASON_NODE_CONFLICT,
    REASON_NOT_ENOUGH_SPACE,
    REASON_PV_NOT_EXIST,
    REASON_UNBOUND_IMMEDIATE,
    VolumeBinding,
    VolumeBindingArgs,
)

from kubesched import ArgsError, Code, CycleState, InMemoryBackend, Node, Pod, QueueingHint
from kubesched.api.storage import ANN_BIND_COMPLETED, ANN_SELECTED_NODE
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FakeCluster, Harness, make_snapshot, new_plugin

WAIT = "wait-sc"
IMMEDIATE = "immediate-sc"
PROVISION = "provision-sc"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def storage_class(
    name: str, mode: str, provisioner: str = "kubernetes.io/no-provisioner", **extra: Any
) -> dict:
    return {
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
        **extra,
    }


CLASSES = [
    storage_class(WAIT, "WaitForFirstConsumer"),
    storage_class(IMMEDIATE, "Immediate"),
    storage_class(PROVISION, "WaitForFirstConsumer", "example.com/csi"),
]


def pvc(
    name: str,
    *,
    sc: str = WAIT,
    volume: str = "",
    bound: bool = False,
    size: str = "1Gi",
    modes=("ReadWriteOnce",),
    **annotations: str,
) -> dict:
    m: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if bound:
        annotations = {ANN_BIND_COMPLETED: "yes", **annotations}
    if annotations:
        m["annotations"] = dict(annotations)
    spec: dict[str, Any] = {
        "storageClassName": sc,
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
    }
    if volume:
        spec["volumeName"] = volume
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": m,
        "spec": spec,
        "status": {"phase": "Bound" if bound else "Pending"},
    }


def pv(
    name: str,
    *,
    sc: str = WAIT,
    size: str = "1Gi",
    nodes: tuple[str, ...] = (),
    zone: str = "",
    claim: str = "",
    phase: str = "Available",
    modes=("ReadWriteOnce",),
) -> dict:
    spec: dict[str, Any] = {
        "storageClassName": sc,
        "capacity": {"storage": size},
        "accessModes": list(modes),
    }
    expressions = []
    if nodes:
        expressions.append({"key": HOSTNAME, "operator": "In", "values": list(nodes)})
    if zone:
        expressions.append({"key": ZONE, "operator": "In", "values": [zone]})
    if expressions:
        spec["nodeAffinity"] = {
            "required": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": spec,
        "status": {"phase": phase},
    }


def node(name: str, zone: str = "") -> Node:
    builder = make_node(name).label(HOSTNAME, name)
    if zone:
        builder = builder.zone(zone)
    return builder.obj()


def claim_pod(name: str, *claims: str) -> Pod:
    builder = make_pod(name)
    for c in claims:
        builder.pvc(c)
    return builder.obj()


def cluster(nodes, pvs=(), pvcs=(), **objects) -> FakeCluster:
    return FakeCluster(
        nodes,
        objects={
            "PersistentVolume": list(pvs),
            "PersistentVolumeClaim": list(pvcs),
            "StorageClass": CLASSES,
            **objects,
        },
    )


def run_filter(c: FakeCluster, pod: Pod, node_name: str, args: dict | None = None):
    plugin = new_plugin(VolumeBinding, args, cluster=c)
    state = CycleState()
    pre = plugin.pre_filter(state, pod)
    if isinstance(pre, type(None)) or not hasattr(pre, "code"):
        return plugin, state, pre, plugin.filter(state, pod, c.node_info(node_name))
    return plugin, state, pre, None


# --- TestVolumeBinding (PreFilter and Filter) ---


def test_pod_without_claims_is_skipped():
    _, _, pre, _ = run_filter(cluster([node("n1")]), make_pod("p").obj(), "n1")
    assert pre.is_skip()


@pytest.mark.parametrize(
    ("pvcs", "claims", "reason"),
    [
        pytest.param(
            [], ("pvc-a",), 'persistentvolumeclaim "pvc-a" not found', id="PVC does not exist"
        ),
        pytest.param(
            [pvc("pvc-a", volume="pv-a", bound=True)],
            ("pvc-a", "pvc-b"),
            'persistentvolumeclaim "pvc-b" not found',
            id="Part of PVCs do not exist",
        ),
        pytest.param(
            [pvc("pvc-a", sc=IMMEDIATE)],
            ("pvc-a",),
            REASON_UNBOUND_IMMEDIATE,
            id="immediate claims not bound",
        ),
        pytest.param(
            [pvc("pvc-a", sc=WAIT, volume="pv-a")],
            ("pvc-a",),
            REASON_UNBOUND_IMMEDIATE,
            id="prebound claim waits for the PV controller",
        ),
    ],
)
def test_pre_filter_rejections(pvcs, claims, reason):
    _, _, pre, _ = run_filter(
        cluster([node("n1")], [pv("pv-a", claim="pvc-a", phase="Bound")], pvcs),
        claim_pod("p", *claims),
        "n1",
    )
    assert pre.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert pre.reasons == (reason,)


def test_ephemeral_claim_not_created_yet():
    pod = make_pod("p").volume("data", ephemeral={"volumeClaimTemplate": {}}).obj()
    _, _, pre, _ = run_filter(cluster([node("n1")]), pod, "n1")
    assert pre.reasons == (
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-data"',
    )


@pytest.mark.parametrize(
    ("pvs", "pvcs", "node_zone", "reasons"),
    [
        pytest.param(
            [pv("pv-a", claim="pvc-a", phase="Bound", nodes=("n1",))],
            [pvc("pvc-a", volume="pv-a", bound=True)],
            "",
            (),
            id="all bound",
        ),
        pytest.param(
            [pv("pv-a", claim="pvc-a", phase="Bound", zone="b")],
            [pvc("pvc-a", volume="pv-a", bound=True)],
            "a",
            (REASON_NODE_CONFLICT,),
            id="bound claim, PV node affinity conflict",
        ),
        pytest.param(
            [],
            [pvc("pvc-a", volume="pv-a", bound=True)],
            "a",
            (REASON_PV_NOT_EXIST,),
            id="bound claim, PV not found",
        ),
        pytest.param(
            [pv("pv-b", zone="b")],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="unbound claims no matches",
        ),
        pytest.param(
            [pv("pv-a", claim="pvc-a", phase="Bound", zone="b"), pv("pv-c", zone="b")],
            [pvc("pvc-a", volume="pv-a", bound=True), pvc("pvc-b")],
            "a",
            (REASON_NODE_CONFLICT, REASON_BIND_CONFLICT),
            id="bound and unbound unsatisfied",
        ),
        pytest.param(
            [pv("pv-a", zone="a")],
            [pvc("pvc-a")],
            "a",
            (),
            id="unbound claim, static PV in the node's zone",
        ),
        pytest.param(
            [pv("pv-a", zone="a", size="500Mi")],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="PV too small",
        ),
        pytest.param(
            [pv("pv-a", zone="a", modes=("ReadOnlyMany",))],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="access modes differ",
        ),
        pytest.param(
            [pv("pv-a", zone="a", phase="Released")],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="PV not Available",
        ),
        pytest.param(
            [pv("pv-a", zone="a", sc=IMMEDIATE)],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="PV of another class",
        ),
        pytest.param(
            [pv("pv-a", zone="a", claim="other")],
            [pvc("pvc-a")],
            "a",
            (REASON_BIND_CONFLICT,),
            id="PV claimed by another claim",
        ),
    ],
)
def test_filter(pvs, pvcs, node_zone, reasons):
    c = cluster([node("n1", node_zone)], pvs, pvcs)
    _, _, pre, status = run_filter(c, claim_pod("p", *(p["metadata"]["name"] for p in pvcs)), "n1")
    assert pre is None or not hasattr(pre, "code") or pre.code is Code.SUCCESS
    if not reasons:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == reasons


def test_local_pvs_do_not_narrow_the_nodes_at_pre_filter():
    # kube-scheduler v1.37's PreFilter returns no node subset (GetEligibleNodes is gone):
    # the other nodes are each rejected by Filter, and counted under its reason.
    c = cluster(
        [node("n1"), node("n2")],
        [pv("pv-a", claim="pvc-a", phase="Bound", nodes=("n2",))],
        [pvc("pvc-a", volume="pv-a", bound=True)],
    )
    _, _, pre, _ = run_filter(c, claim_pod("p", "pvc-a"), "n2")
    assert pre is None


def test_a_bound_local_pv_on_another_node_reads_as_kube_scheduler_says():
    objects = {
        "PersistentVolume": [pv("local-b", claim="data", phase="Bound", nodes=("b",))],
        "PersistentVolumeClaim": [pvc("data", volume="local-b", bound=True)],
        "StorageClass": CLASSES,
    }
    with Harness.for_plugin(VolumeBinding, nodes=[node("a"), node("c")], objects=objects) as h:
        report = h.schedule(claim_pod("web", "data"))
    assert report.message == (
        "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity."
    )


def test_a_bound_pv_whose_affinity_or_existence_changes_is_read_again_in_the_next_cycle():
    """PreFilter looks the bound claims' PVs up once for the cycle's nodes (and answers every
    node at once while they have no node affinity); the next cycle must see a PV pinned to a
    node, moved to another, then deleted."""
    c = cluster(
        [node("n1"), node("n2")],
        [pv("pv-a", claim="pvc-a", phase="Bound")],
        [pvc("pvc-a", volume="pv-a", bound=True)],
    )
    handle = c.handle()
    plugin = VolumeBinding({}, handle)
    pod, n1 = claim_pod("p", "pvc-a"), c.node_info("n1")

    def cycle():
        state = CycleState()
        assert plugin.pre_filter(state, pod) is None
        status = plugin.filter(state, pod, n1)
        return None if status is None else status.reasons

    def pin(*nodes: str) -> None:
        moved = pv("pv-a", claim="pvc-a", phase="Bound", nodes=nodes)
        del moved["metadata"]["resourceVersion"]
        handle.backend.update_object("PersistentVolume", moved)

    assert cycle() is None
    pin("n1")
    assert cycle() is None
    pin("n2")
    assert cycle() == (REASON_NODE_CONFLICT,)
    handle.backend.delete_object("PersistentVolume", "", "pv-a")
    assert cycle() == (REASON_PV_NOT_EXIST,)


def test_the_smallest_fitting_pv_is_chosen_and_claims_get_distinct_pvs():
    pvs = [pv("pv-5g", size="5Gi"), pv("pv-1g", size="1Gi"), pv("pv-2g", size="2Gi")]
    c = cluster(
        [node("n1")],
        pvs,
        [pvc("small", size="1Gi"), pvc("medium", size="2Gi"), pvc("big", size="1Gi")],
    )
    _, state, _, status = run_filter(c, claim_pod("p", "big", "medium", "small"), "n1")
    assert status is None
    chosen = {
        b.pvc["metadata"]["name"]: b.pv["metadata"]["name"]
        for b in state.get("PreFilterVolumeBinding").by_node["n1"].static_bindings
    }
    assert chosen == {"big": "pv-1g", "small": "pv-2g", "medium": "pv-5g"} or chosen == {
        "small": "pv-1g",
        "big": "pv-2g",
        "medium": "pv-5g",
    }


# --- provisioning ---


CSI_DRIVER = {
    "kind": "CSIDriver",
    "metadata": {"name": "example.com/csi"},
    "spec": {"storageCapacity": True},
}


def capacity(name: str, zone: str, size: str, sc: str = PROVISION) -> dict:
    return {
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name, "namespace": "kube-system"},
        "storageClassName": sc,
        "nodeTopology": {"matchLabels": {ZONE: zone}},
        "capacity": size,
    }


@pytest.mark.parametrize(
    ("classes", "objects", "node_zone", "annotations", "reasons"),
    [
        pytest.param(CLASSES, {}, "a", {}, (), id="provisioning without capacity tracking"),
        pytest.param(
            [
                storage_class(
                    PROVISION,
                    "WaitForFirstConsumer",
                    "example.com/csi",
                    allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["b"]}]}],
                )
            ],
            {},
            "a",
            {},
            (REASON_BIND_CONFLICT,),
            id="allowed topologies exclude the node",
        ),
        pytest.param(
            CLASSES,
            {"CSIDriver": [CSI_DRIVER], "CSIStorageCapacity": [capacity("c", "a", "10Gi")]},
            "a",
            {},
            (),
            id="enough capacity",
        ),
        pytest.param(
            CLASSES,
            {"CSIDriver": [CSI_DRIVER], "CSIStorageCapacity": [capacity("c", "a", "500Mi")]},
            "a",
            {},
            (REASON_NOT_ENOUGH_SPACE,),
            id="not enough capacity",
        ),
        pytest.param(
            CLASSES,
            {"CSIDriver": [CSI_DRIVER], "CSIStorageCapacity": [capacity("c", "b", "10Gi")]},
            "a",
            {},
            (REASON_NOT_ENOUGH_SPACE,),
            id="capacity in another zone",
        ),
        pytest.param(
            CLASSES,
            {},
            "a",
            {ANN_SELECTED_NODE: "n2"},
            (REASON_BIND_CONFLICT,),
            id="claim selected for another node",
        ),
        pytest.param(
            [storage_class(PROVISION, "WaitForFirstConsumer")],
            {},
            "a",
            {},
            (REASON_BIND_CONFLICT,),
            id="class that does not provision",
        ),
    ],
)
def test_provisioning(classes, objects, node_zone, annotations, reasons):
    c = FakeCluster(
        [node("n1", node_zone)],
        objects={
            "PersistentVolumeClaim": [pvc("pvc-a", sc=PROVISION, **annotations)],
            "StorageClass": classes,
            **objects,
        },
    )
    _, _, _, status = run_filter(c, claim_pod("p", "pvc-a"), "n1")
    if not reasons:
        assert status is None
    else:
        assert status.reasons == reasons


# --- Score ---


def test_score_prefers_free_capacity_by_default():
    objects = {
        "PersistentVolumeClaim": [pvc("pvc-a", sc=PROVISION, size="50Gi")],
        "StorageClass": CLASSES,
        "CSIDriver": [CSI_DRIVER],
        "CSIStorageCapacity": [capacity("a", "a", "100Gi"), capacity("b", "b", "200Gi")],
    }
    c = FakeCluster([node("n1", "a"), node("n2", "b")], objects=objects)
    plugin = new_plugin(VolumeBinding, cluster=c)
    state = CycleState()
    plugin.pre_filter(state, claim_pod("p", "pvc-a"))
    for name in ("n1", "n2"):
        assert plugin.filter(state, claim_pod("p", "pvc-a"), c.node_info(name)) is None
    assert plugin.pre_score(state, claim_pod("p", "pvc-a"), []) is None
    # 50% used → 50; 25% used → 75 (shape {0: 10, 100: 0}, scaled to 0..100).
    assert plugin.score(state, claim_pod("p", "pvc-a"), c.node_info("n1")) == 50
    assert plugin.score(state, claim_pod("p", "pvc-a"), c.node_info("n2")) == 75


def test_score_with_a_shape_and_static_bindings():
    pvs = [pv("pv-2g", size="2Gi", nodes=("n1",)), pv("pv-4g", size="4Gi", nodes=("n2",))]
    c = cluster([node("n1"), node("n2")], pvs, [pvc("pvc-a", size="2Gi")])
    plugin = new_plugin(
        VolumeBinding,
        {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
        cluster=c,
    )
    state = CycleState()
    pod = claim_pod("p", "pvc-a")
    plugin.pre_filter(state, pod)
    for name in ("n1", "n2"):
        assert plugin.filter(state, pod, c.node_info(name)) is None
    assert plugin.score(state, pod, c.node_info("n1")) == 100
    assert plugin.score(state, pod, c.node_info("n2")) == 50


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        pytest.param({"bindTimeoutSeconds": -1}, ["bindTimeoutSeconds"], id="negative timeout"),
        pytest.param({"shape": []}, ["shape"], id="empty shape"),
        pytest.param(
            {"shape": [{"utilization": 50, "score": 1}, {"utilization": 10, "score": 2}]},
            ["shape[1].utilization"],
            id="unsorted shape",
        ),
        pytest.param(
            {"shape": [{"utilization": 101, "score": 11}]},
            ["shape[0].utilization", "shape[0].score"],
            id="out of range",
        ),
        pytest.param({"bogus": 1}, ["bogus"], id="unknown field"),
    ],
)
def test_args_validation(args, errors):
    with pytest.raises(ArgsError) as caught:
        VolumeBindingArgs.parse(args)
    assert [e.path for e in caught.value.errors] == errors


def test_args_defaults():
    args = VolumeBindingArgs.parse({})
    assert args.bind_timeout_seconds == 600
    assert args.shape == ((0, 10), (100, 0))


# --- Reserve / Unreserve / PreBind ---


def test_reserve_assumes_the_pv_so_the_next_pod_cannot_take_it_and_unreserve_frees_it():
    c = cluster([node("n1")], [pv("pv-a")], [pvc("pvc-a"), pvc("pvc-b")])
    plugin = new_plugin(VolumeBinding, cluster=c)
    first, second = claim_pod("first", "pvc-a"), claim_pod("second", "pvc-b")
    state = CycleState()
    plugin.pre_filter(state, first)
    assert plugin.filter(state, first, c.node_info("n1")) is None
    assert plugin.reserve(state, first, "n1") is None
    other = CycleState()
    plugin.pre_filter(other, second)
    assert plugin.filter(other, second, c.node_info("n1")).reasons == (REASON_BIND_CONFLICT,)
    plugin.unreserve(state, first, "n1")
    plugin.unreserve(state, first, "n1")  # idempotent
    again = CycleState()
    plugin.pre_filter(again, second)
    assert plugin.filter(again, second, c.node_info("n1")) is None


class SlowCluster(InMemoryBackend):
    """A cluster whose PV controller never comes (not ``synchronous``)."""

    synchronous = False


def test_pre_bind_waits_at_most_bind_timeout_and_reverts():
    n1 = node("n1")
    backend = SlowCluster(
        [n1],
        [],
        {
            "PersistentVolume": [pv("pv-a")],
            "PersistentVolumeClaim": [pvc("pvc-a")],
            "StorageClass": CLASSES,
        },
    )
    pod = claim_pod("p", "pvc-a")
    backend.add_pod(pod)
    handle = Handle("test", backend, lambda: make_snapshot([n1]))
    plugin = VolumeBinding({"bindTimeoutSeconds": 5}, handle)
    now = [0.0]
    plugin.clock = lambda: now[0]
    plugin.sleep = lambda s: now.__setitem__(0, now[0] + s)
    state = CycleState()
    plugin.pre_filter(state, pod)
    assert plugin.filter(state, pod, make_snapshot([n1]).get("n1")) is None
    plugin.reserve(state, pod, "n1")
    status = plugin.pre_bind(state, pod, "n1")
    assert status.code is Code.ERROR
    assert status.reasons == ("binding volumes: context deadline exceeded",)
    assert 4 <= now[0] <= 5
    # The claimRef was written (kube's PreBind write) even though nobody completed the binding.
    stored = backend.lister("PersistentVolume")()[0]
    assert stored["spec"]["claimRef"]["name"] == "pvc-a"
    assert stored["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"


def test_pre_bind_fails_when_provisioning_is_given_up():
    n1 = node("n1")
    backend = SlowCluster(
        [n1], [], {"PersistentVolumeClaim": [pvc("pvc-a", sc=PROVISION)], "StorageClass": CLASSES}
    )
    pod = claim_pod("p", "pvc-a")
    backend.add_pod(pod)
    plugin = VolumeBinding({}, Handle("test", backend, lambda: make_snapshot([n1])))
    plugin.sleep = lambda s: backend.patch_object(
        "PersistentVolumeClaim",
        "default",
        "pvc-a",
        {"metadata": {"annotations": {ANN_SELECTED_NODE: None}}},
    )
    state = CycleState()
    plugin.pre_filter(state, pod)
    plugin.filter(state, pod, make_snapshot([n1]).get("n1"))
    plugin.reserve(state, pod, "n1")
    status = plugin.pre_bind(state, pod, "n1")
    assert status.reasons == ('binding volumes: provisioning failed for PVC "pvc-a"',)


# --- in a simulated cluster ---


def test_static_binding_in_a_simulation_binds_the_claim_and_takes_the_pv():
    pvs = [pv("local-a", nodes=("a",)), pv("local-b", nodes=("b",))]
    objects = {
        "PersistentVolume": pvs,
        "PersistentVolumeClaim": [pvc("data-0"), pvc("data-1"), pvc("data-2")],
        "StorageClass": CLASSES,
    }
    with Harness.for_plugin(VolumeBinding, nodes=[node("a"), node("b")], objects=objects) as h:
        h.schedule(claim_pod("web-0", "data-0"))
        h.schedule(claim_pod("web-1", "data-1"))
        placed = {h.node_of("web-0"), h.node_of("web-1")}
        assert placed == {"a", "b"}
        claims = {c["metadata"]["name"]: c for c in h.backend.lister("PersistentVolumeClaim")()}
        assert claims["data-0"]["spec"]["volumeName"] == f"local-{h.node_of('web-0')}"
        assert claims["data-0"]["status"]["phase"] == "Bound"
        report = h.schedule(claim_pod("web-2", "data-2"))
        assert report.message == f"0/2 nodes are available: 2 {REASON_BIND_CONFLICT}."
        # A new PV on b wakes it.
        h.add_object("PersistentVolume", pv("local-b2", nodes=("b",)))
        h.run()
        assert h.node_of("web-2") == "b"


def test_provisioning_in_a_simulation_makes_a_pv_in_the_nodes_topology():
    sc = storage_class(
        PROVISION,
        "WaitForFirstConsumer",
        "example.com/csi",
        allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["b"]}]}],
    )
    objects = {"PersistentVolumeClaim": [pvc("data", sc=PROVISION)], "StorageClass": [sc]}
    with Harness.for_plugin(
        VolumeBinding, nodes=[node("a", "a"), node("b", "b")], objects=objects
    ) as h:
        h.schedule(claim_pod("db", "data"))
        assert h.node_of("db") == "b"
        (made,) = h.backend.lister("PersistentVolume")()
        terms = made["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["b"]}]}]
        (claim,) = h.backend.lister("PersistentVolumeClaim")()
        assert claim["metadata"]["annotations"][ANN_SELECTED_NODE] == "b"
        assert claim["spec"]["volumeName"] == made["metadata"]["name"]
        # The next pod using the now bound claim follows its PV.
        h.schedule(claim_pod("db-reader", "data"))
        assert h.node_of("db-reader") == "b"


def test_an_immediate_claim_waits_for_the_pv_controller():
    objects = {
        "PersistentVolume": [pv("pv-a", sc=IMMEDIATE)],
        "PersistentVolumeClaim": [pvc("data", sc=IMMEDIATE)],
        "StorageClass": CLASSES,
    }
    with Harness.for_plugin(VolumeBinding, nodes=[node("a")], objects=objects) as h:
        report = h.schedule(claim_pod("p", "data"))
        assert REASON_UNBOUND_IMMEDIATE in report.message
        h.backend.patch_object(
            "PersistentVolumeClaim",
            "default",
            "data",
            {
                "metadata": {"annotations": {ANN_BIND_COMPLETED: "yes"}},
                "spec": {"volumeName": "pv-a"},
            },
        )
        h.run()
        assert h.node_of("p") == "a"
        assert NAME == "VolumeBinding"


def test_hints():
    plugin = new_plugin(VolumeBinding)
    hints = {e.event.resource.value: e.hint for e in plugin.events_to_register()}
    pod = claim_pod("p", "data")
    assert hints["PersistentVolumeClaim"](pod, None, pvc("data")) is QueueingHint.QUEUE
    assert hints["PersistentVolumeClaim"](pod, None, pvc("other")) is QueueingHint.SKIP
    assert hints["StorageClass"](pod, None, CLASSES[0]) is QueueingHint.QUEUE
    assert hints["StorageClass"](pod, CLASSES[0], dict(CLASSES[0])) is QueueingHint.SKIP
    assert (
        hints["CSIStorageCapacity"](pod, capacity("c", "a", "1Gi"), capacity("c", "a", "2Gi"))
        is QueueingHint.QUEUE
    )
    assert (
        hints["CSIStorageCapacity"](pod, capacity("c", "a", "1Gi"), capacity("c", "a", "1Gi"))
        is QueueingHint.SKIP
    )
    assert hints["PersistentVolume"] is None


def test_without_pre_filter_the_later_points_do_nothing():
    """The seed's profile disables every default PreFilter; the pod is still bound."""
    plugin = new_plugin(VolumeBinding)
    pod = claim_pod("p", "data")
    assert plugin.reserve(CycleState(), pod, "n1") is None
    assert plugin.pre_bind(CycleState(), pod, "n1") is None
    assert plugin.pre_score(CycleState(), pod, []).is_skip()
    plugin.unreserve(CycleState(), pod, "n1")


def test_the_per_cycle_plan_picks_what_find_matching_volume_picks():
    """PreFilter's ClaimPlan (candidates indexed by pinned hostname) against kube's plain scan
    over every PV, on random PVs, claims and nodes."""
    import random

    from kubesched_volume_binding.binder import ClaimPlan, find_matching_volume

    rng = random.Random(7)
    for _ in range(200):
        nodes_ = [node(f"n{i}", rng.choice(["a", "b"])) for i in range(4)]
        pvs = []
        for i in range(rng.randint(0, 8)):
            kind = rng.random()
            pvs.append(
                pv(
                    f"pv-{i}",
                    size=rng.choice(["1Gi", "2Gi", "5Gi"]),
                    nodes=tuple(rng.sample([n.name for n in nodes_], rng.randint(1, 2)))
                    if kind < 0.5
                    else (),
                    zone=rng.choice(["a", "b"]) if 0.5 <= kind < 0.8 else "",
                    claim=rng.choice(["", "", "pvc-a", "other"]),
                    phase=rng.choice(["Available", "Available", "Bound"]),
                    modes=rng.choice([("ReadWriteOnce",), ("ReadOnlyMany",)]),
                )
            )
        claim = pvc("pvc-a", size=rng.choice(["1Gi", "2Gi"]))
        plan = ClaimPlan(claim, pvs)
        excluded = {p["metadata"]["name"]: p for p in pvs if rng.random() < 0.2}
        for n in nodes_:
            want = find_matching_volume(claim, pvs, n, excluded)
            got = plan.match(n, excluded)
            assert (got or {}).get("metadata") == (want or {}).get("metadata")


# --- PreBindPreFlight and the nominated node (kube's NominatedNodeNameForExpectation) ---


def record_writes(h: Harness) -> list[tuple[str, str]]:
    """The backend's pod-status and object writes, in order: ``(what, name)``."""
    writes: list[tuple[str, str]] = []
    backend = h.backend
    patch_pod_status, update_object = backend.patch_pod_status, backend.update_object

    def patch(pod, **fields):
        writes.append((f"nominatedNodeName={fields.get('nominated_node_name')}", pod.name))
        return patch_pod_status(pod, **fields)

    def update(kind, obj, **kwargs):
        writes.append((kind, obj["metadata"]["name"]))
        return update_object(kind, obj, **kwargs)

    backend.patch_pod_status = patch  # type: ignore[method-assign]
    backend.update_object = update  # type: ignore[method-assign]
    return writes


def test_a_pod_whose_claim_must_be_bound_is_nominated_before_the_pv_is_written():
    objects = {
        "PersistentVolume": [pv("local-a", nodes=("a",))],
        "PersistentVolumeClaim": [pvc("data")],
        "StorageClass": CLASSES,
    }
    with Harness.for_plugin(VolumeBinding, nodes=[node("a")], objects=objects) as h:
        writes = record_writes(h)
        h.schedule(claim_pod("web", "data"))
        assert h.node_of("web") == "a"
        assert writes[0] == ("nominatedNodeName=a", "web")
        assert ("PersistentVolume", "local-a") in writes[1:]
        assert h.backend.nominations["default/web"] == "a"
        assert "nominatedNodeName" not in h.backend.pod("default", "web").raw.get("status", {})


def test_a_pod_whose_claims_are_all_bound_is_not_nominated():
    objects = {
        "PersistentVolume": [pv("pv-a", sc=IMMEDIATE)],
        "PersistentVolumeClaim": [pvc("data", sc=IMMEDIATE, volume="pv-a", bound=True)],
        "StorageClass": CLASSES,
    }
    with Harness.for_plugin(VolumeBinding, nodes=[node("a")], objects=objects) as h:
        writes = record_writes(h)
        h.schedule(claim_pod("p", "data"))
        assert h.node_of("p") == "a"
        assert writes == [] and "default/p" not in h.backend.nominations


def test_pre_bind_pre_flight():
    plugin = new_plugin(VolumeBinding)
    pod = claim_pod("p", "data")
    assert plugin.pre_bind_pre_flight(CycleState(), "n1").is_skip()  # PreFilter disabled
    state = CycleState()
    assert plugin.pre_filter(state, make_pod("plain").obj()).is_skip()
    assert plugin.reserve(state, pod, "n1") is None
    assert plugin.pre_bind_pre_flight(state, "n1").is_skip()
