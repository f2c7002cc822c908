"""VolumeZone: kube-scheduler's table cases (volume_zone_test.go: TestSingleZone, TestMultiZone,
TestWithBinding, the queueing hints) and the plugin in a profile."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_volume_zone import (
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    NAME,
    REASON_CONFLICT,
    REASON_NO_PV,
    REASON_NO_PV_NO_CLASS,
    VolumeZone,
)

from kubesched import ArgsError, Code, CycleState, Node, NodeInfo, QueueingHint
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FakeCluster, Harness, new_plugin


def pv(name: str, **labels: str) -> dict[str, Any]:
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": labels}, "spec": {}}


def pvc(name: str, volume: str = "", storage_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def node(**labels: str) -> Node:
    raw = make_node("host1").obj().raw
    return Node({**raw, "metadata": {**raw["metadata"], "labels": labels}})


def pod_with(claim: str):
    return make_pod("pod_1").pvc(claim).obj()


SINGLE_PVS = [
    pv("Vol_1", **{LABEL_BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{LABEL_BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", **{LABEL_BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", **{LABEL_ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{LABEL_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", **{LABEL_ZONE: "us-west1-a", LABEL_REGION: "us-west1-a"}),
]
SINGLE_PVCS = [
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
    pvc("PVC_Stable_3", "Vol_Stable_3"),
]
USELESS = {"uselessLabel": "none"}


def run(pods_pvs, pods_pvcs, classes, pod, node_obj):
    cluster = FakeCluster(
        objects={
            "PersistentVolume": pods_pvs,
            "PersistentVolumeClaim": pods_pvcs,
            "StorageClass": classes,
        }
    )
    plugin = new_plugin(VolumeZone, cluster=cluster)
    state = CycleState()
    pre = plugin.pre_filter(state, pod)
    return pre, plugin.filter(state, pod, NodeInfo(node_obj))


def check(status, want_code, want_reason):
    if want_code is None:
        assert status is None
    else:
        assert status is not None
        assert status.code is want_code
        assert status.reasons == (want_reason,)


U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("pod", "labels", "want_pre", "want_filter"),
    [
        pytest.param(
            make_pod("pod_1").obj(),
            {LABEL_BETA_ZONE: "us-west1-a"},
            "skip",
            None,
            id="pod without volume",
        ),
        pytest.param(pod_with("PVC_1"), {}, None, None, id="node without labels"),
        pytest.param(
            pod_with("PVC_1"),
            {LABEL_BETA_ZONE: "us-west1-a", **USELESS},
            None,
            None,
            id="beta zone label matched",
        ),
        pytest.param(
            pod_with("PVC_2"),
            {LABEL_BETA_REGION: "us-west1", **USELESS},
            None,
            None,
            id="beta region label matched",
        ),
        pytest.param(
            pod_with("PVC_2"),
            {LABEL_BETA_REGION: "no_us-west1", **USELESS},
            None,
            REASON_CONFLICT,
            id="beta region label doesn't match",
        ),
        pytest.param(
            pod_with("PVC_1"),
            {LABEL_BETA_ZONE: "no_us-west1-a", **USELESS},
            None,
            REASON_CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            pod_with("PVC_Stable_1"),
            {LABEL_ZONE: "us-west1-a", **USELESS},
            None,
            None,
            id="zone label matched",
        ),
        pytest.param(
            pod_with("PVC_Stable_2"),
            {LABEL_REGION: "us-west1", **USELESS},
            None,
            None,
            id="region label matched",
        ),
        pytest.param(
            pod_with("PVC_Stable_2"),
            {LABEL_REGION: "no_us-west1", **USELESS},
            None,
            REASON_CONFLICT,
            id="region label doesn't match",
        ),
        pytest.param(
            pod_with("PVC_Stable_1"),
            {LABEL_ZONE: "no_us-west1-a", **USELESS},
            None,
            REASON_CONFLICT,
            id="zone label doesn't match",
        ),
        pytest.param(
            pod_with("PVC_Stable_3"),
            {LABEL_ZONE: "us-west1-a"},
            None,
            REASON_CONFLICT,
            id="pv with zone and region, node with only zone",
        ),
        pytest.param(
            pod_with("PVC_Stable_1"),
            {LABEL_BETA_ZONE: "us-west1-a"},
            None,
            REASON_CONFLICT,
            id="pv with zone,node with beta zone",
        ),
        pytest.param(
            pod_with("PVC_1"),
            {LABEL_ZONE: "us-west1-a"},
            None,
            None,
            id="pv with beta label,node with ga label, matched",
        ),
        pytest.param(
            pod_with("PVC_1"),
            {LABEL_ZONE: "us-west1-b"},
            None,
            REASON_CONFLICT,
            id="pv with beta label,node with ga label, don't match",
        ),
    ],
)
def test_single_zone(pod, labels, want_pre, want_filter):
    pre, status = run(SINGLE_PVS, SINGLE_PVCS, [], pod, node(**labels))
    if want_pre == "skip":
        assert pre is not None and pre.is_skip()
    else:
        assert pre is None
    check(status, U if want_filter else None, want_filter)


MULTI_PVS = [
    pv("Vol_1", **{LABEL_BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", **{LABEL_BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", **{LABEL_BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", **{LABEL_ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", **{LABEL_ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_PVCS = [
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_2", "Vol_2"),
    pvc("PVC_3", "Vol_3"),
    pvc("PVC_4", "Vol_not_exist"),
    pvc("PVC_Stable_1", "Vol_Stable_1"),
    pvc("PVC_Stable_2", "Vol_Stable_2"),
]


@pytest.mark.parametrize(
    ("claim", "labels", "want_filter"),
    [
        pytest.param("PVC_3", {}, None, id="node without labels"),
        pytest.param(
            "PVC_3", {LABEL_BETA_ZONE: "us-west1-a", **USELESS}, None, id="beta zone label matched"
        ),
        pytest.param(
            "PVC_1",
            {LABEL_BETA_ZONE: "us-west1-b", **USELESS},
            REASON_CONFLICT,
            id="beta zone label doesn't match",
        ),
        pytest.param(
            "PVC_Stable_2", {LABEL_ZONE: "us-west1-a", **USELESS}, None, id="zone label matched"
        ),
        pytest.param(
            "PVC_Stable_1",
            {LABEL_ZONE: "us-west1-b", **USELESS},
            REASON_CONFLICT,
            id="zone label doesn't match",
        ),
    ],
)
def test_multi_zone(claim, labels, want_filter):
    pre, status = run(MULTI_PVS, MULTI_PVCS, [], pod_with(claim), node(**labels))
    assert pre is None
    check(status, U if want_filter else None, want_filter)


BINDING_CLASSES = [
    {
        "kind": "StorageClass",
        "metadata": {"name": "Class_Immediate"},
        "volumeBindingMode": "Immediate",
    },
    {
        "kind": "StorageClass",
        "metadata": {"name": "Class_Wait"},
        "volumeBindingMode": "WaitForFirstConsumer",
    },
]
BINDING_PVCS = [
    pvc("PVC_1", "Vol_1"),
    pvc("PVC_NoSC", storage_class="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"),
    pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]


@pytest.mark.parametrize(
    ("claim", "want_pre", "want"),
    [
        pytest.param("PVC_1", None, None, id="label zone failure domain matched"),
        pytest.param(
            "PVC_EmptySC", "reject", REASON_NO_PV_NO_CLASS, id="unbound volume empty storage class"
        ),
        # kube's informer lister words it so (its test's fake lister says "storageclasses").
        pytest.param(
            "PVC_NoSC",
            "reject",
            'storageclass.storage.k8s.io "Class_0" not found',
            id="unbound volume no storage class",
        ),
        pytest.param("PVC_WaitSC", "skip", None, id="unbound volume immediate binding mode"),
        pytest.param(
            "PVC_ImmediateSC", "reject", REASON_NO_PV, id="unbound volume wait binding mode"
        ),
        pytest.param(
            "PVC_missing",
            "reject",
            'persistentvolumeclaim "PVC_missing" not found',
            id="claim not found",
        ),
        pytest.param(
            "PVC_4_missing_pv",
            "reject",
            'persistentvolume "Vol_not_exist" not found',
            id="pv not found",
        ),
    ],
)
def test_with_binding(claim, want_pre, want):
    pvcs = [*BINDING_PVCS, pvc("PVC_4_missing_pv", "Vol_not_exist")]
    pvs = [pv("Vol_1", **{LABEL_BETA_ZONE: "us-west1-a"})]
    pre, status = run(
        pvs,
        pvcs,
        BINDING_CLASSES,
        pod_with(claim),
        node(**{LABEL_BETA_ZONE: "us-west1-a", **USELESS}),
    )
    if want_pre == "skip":
        assert pre.is_skip()
    elif want_pre == "reject":
        check(pre, U, want)
    else:
        assert pre is None
    check(status, U if want else None, want)


def hints(kind: str):
    plugin = new_plugin(VolumeZone)
    return next(e.hint for e in plugin.events_to_register() if e.event.resource.value == kind)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(
            None, pvc("PVC_1", "Vol_1"), QueueingHint.QUEUE, id="pvc the pod uses is created"
        ),
        pytest.param(None, pvc("PVC_other"), QueueingHint.SKIP, id="unrelated pvc is created"),
        pytest.param(
            pvc("PVC_1"), pvc("PVC_1", "Vol_1"), QueueingHint.QUEUE, id="pvc the pod uses is bound"
        ),
    ],
)
def test_hint_claim(old, new, want):
    assert hints("PersistentVolumeClaim")(pod_with("PVC_1"), old, new) is want


def test_hint_claim_other_namespace():
    other = {**pvc("PVC_1"), "metadata": {"name": "PVC_1", "namespace": "other"}}
    assert hints("PersistentVolumeClaim")(pod_with("PVC_1"), None, other) is QueueingHint.SKIP


@pytest.mark.parametrize(
    ("new", "want"),
    [
        pytest.param(BINDING_CLASSES[1], QueueingHint.QUEUE, id="wait for first consumer class"),
        pytest.param(BINDING_CLASSES[0], QueueingHint.SKIP, id="immediate class"),
    ],
)
def test_hint_class(new, want):
    assert hints("StorageClass")(pod_with("PVC_1"), None, new) is want


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, pv("Vol_1", **{LABEL_ZONE: "a"}), QueueingHint.QUEUE, id="new pv"),
        pytest.param(
            pv("Vol_1", **{LABEL_ZONE: "a"}),
            pv("Vol_1", **{LABEL_ZONE: "b"}),
            QueueingHint.QUEUE,
            id="zone changed",
        ),
        pytest.param(
            pv("Vol_1", **{LABEL_ZONE: "a"}),
            pv("Vol_1", **{LABEL_ZONE: "a", "other": "x"}),
            QueueingHint.SKIP,
            id="topology unchanged",
        ),
    ],
)
def test_hint_volume(old, new, want):
    assert hints("PersistentVolume")(pod_with("PVC_1"), old, new) is want


def test_args_are_refused():
    with pytest.raises(ArgsError):
        new_plugin(VolumeZone, {"x": 1})


def test_in_a_profile_the_pod_goes_to_its_volumes_zone_and_waits_for_a_relabel():
    zoned = [
        make_node("a").zone("zone-a").obj(),
        make_node("b").zone("zone-b").obj(),
    ]
    objects = {
        "PersistentVolume": [
            pv("pv-b", **{LABEL_ZONE: "zone-b"}),
            pv("pv-c", **{LABEL_ZONE: "zone-c"}),
        ],
        "PersistentVolumeClaim": [pvc("data-b", "pv-b"), pvc("data-c", "pv-c")],
    }
    with Harness.for_plugin(VolumeZone, nodes=zoned, objects=objects) as h:
        h.schedule(make_pod("web").pvc("data-b").obj())
        assert h.node_of("web") == "b"
        report = h.schedule(make_pod("db").pvc("data-c").obj())
        assert report.message == f"0/2 nodes are available: 2 {REASON_CONFLICT}."
        h.add_node(make_node("c").zone("zone-c"))
        h.run()
        assert h.node_of("db") == "c"
        assert NAME == "VolumeZone"


def test_a_relabelled_volume_is_read_again_in_the_next_cycle():
    """The PVs are indexed once and kept while unchanged: a PV's new zone must count."""
    cluster = FakeCluster(
        objects={
            "PersistentVolume": [pv("Vol_1", **{LABEL_ZONE: "zone-a"})],
            "PersistentVolumeClaim": [pvc("PVC_1", "Vol_1")],
        }
    )
    handle = cluster.handle()
    plugin = VolumeZone({}, handle)
    pod, in_a = pod_with("PVC_1"), NodeInfo(node(**{LABEL_ZONE: "zone-a"}))
    state = CycleState()
    assert plugin.pre_filter(state, pod) is None
    assert plugin.filter(state, pod, in_a) is None
    handle.backend.update_object("PersistentVolume", pv("Vol_1", **{LABEL_ZONE: "zone-b"}))
    state = CycleState()
    assert plugin.pre_filter(state, pod) is None
    check(plugin.filter(state, pod, in_a), U, REASON_CONFLICT)
