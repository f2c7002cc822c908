"""NodeVolumeLimits: kube-scheduler's TestCSILimits cases (csi_test.go: CSI volumes against the
CSINode's limits, shared volumes counted once, unbound claims counted through their class,
in-tree volumes under migration, ephemeral volumes), VolumeAttachments, the hints, and the
plugin in a profile."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_node_volume_limits import NAME, REASON_MAX_VOLUME_COUNT, NodeVolumeLimits

from kubesched import ArgsError, Code, CycleState, Pod, QueueingHint
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FakeCluster, Harness, new_plugin

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"


def csi_pv(name: str, driver: str = EBS, handle: str = "") -> dict[str, Any]:
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"csi": {"driver": driver, "volumeHandle": handle or name}},
    }


def pvc(name: str, volume: str = "", storage_class: str = "", owner: str = "") -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "namespace": "default"}
    if owner:
        m["ownerReferences"] = [{"kind": "Pod", "name": "x", "uid": owner, "controller": True}]
    spec: dict[str, Any] = {}
    if volume:
        spec["volumeName"] = volume
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"kind": "PersistentVolumeClaim", "metadata": m, "spec": spec}


def csi_node(limits: dict[str, int | None], migrated: str = "") -> dict[str, Any]:
    drivers = []
    for driver, count in limits.items():
        entry: dict[str, Any] = {"name": driver, "nodeID": "n1"}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    m: dict[str, Any] = {"name": "n1"}
    if migrated:
        m["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return {"kind": "CSINode", "metadata": m, "spec": {"drivers": drivers}}


def with_claims(name: str, *claims: str, node: str = "") -> Pod:
    builder = make_pod(name)
    for c in claims:
        builder.pvc(c)
    if node:
        builder.node(node)
    return builder.obj()


CLASSES = [
    {"kind": "StorageClass", "metadata": {"name": "csi-sc"}, "provisioner": EBS},
    {
        "kind": "StorageClass",
        "metadata": {"name": "gce-intree"},
        "provisioner": "kubernetes.io/gce-pd",
    },
]
PVS = [csi_pv(f"csi-ebs.csi.aws.com-{i}") for i in range(4)] + [
    csi_pv("gce-0", GCE),
    {
        "kind": "PersistentVolume",
        "metadata": {"name": "intree-gce"},
        "spec": {"gcePersistentDisk": {"pdName": "disk-1"}},
    },
]
PVCS = [pvc(f"csi-{i}", f"csi-ebs.csi.aws.com-{i}") for i in range(4)] + [
    pvc("gce-0", "gce-0"),
    pvc("pending", storage_class="csi-sc"),
    pvc("pending-2", storage_class="csi-sc"),
    pvc("bad-pv-good-sc", "missing-pv", "csi-sc"),
    pvc("bad-pv-bad-sc", "missing-pv", "missing-sc"),
    pvc("intree", "intree-gce"),
    pvc("intree-pending", storage_class="gce-intree"),
]


def run(
    incoming: Pod,
    existing: list[Pod],
    node_limits: dict,
    migrated: str = "",
    extra: dict | None = None,
):
    objects = {
        "PersistentVolume": PVS,
        "PersistentVolumeClaim": PVCS,
        "StorageClass": CLASSES,
        "CSINode": [csi_node(node_limits, migrated)],
        **(extra or {}),
    }
    cluster = FakeCluster([make_node("n1")], existing, objects=objects)
    plugin = new_plugin(NodeVolumeLimits, cluster=cluster)
    state = CycleState()
    pre = plugin.pre_filter(state, incoming)
    if pre is not None:
        return pre
    return plugin.filter(state, incoming, cluster.node_info("n1"))


FULL = (Code.UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT)


@pytest.mark.parametrize(
    ("incoming", "existing", "limits", "migrated", "want"),
    [
        pytest.param(
            with_claims("p", "csi-0", "csi-1"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 4},
            "",
            None,
            id="fits when node volume limit >= new pods CSI volume",
        ),
        pytest.param(
            with_claims("p", "csi-0", "csi-1"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 2},
            "",
            FULL,
            id="doesn't when node volume limit <= pods CSI volume",
        ),
        pytest.param(
            with_claims("p", "csi-0", "csi-1"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: None},
            "",
            None,
            id="should when driver does not support volume limits",
        ),
        pytest.param(
            with_claims("p", "csi-0"),
            [with_claims("e", "csi-0", "csi-1", node="n1")],
            {EBS: 2},
            "",
            None,
            id="a volume shared with a pod on the node counts once",
        ),
        pytest.param(
            with_claims("p", "pending"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 2},
            "",
            FULL,
            id="count pending PVCs towards volume limit <= pods CSI volume",
        ),
        pytest.param(
            with_claims("p", "pending"),
            [with_claims("e", "csi-2", "pending-2", node="n1")],
            {EBS: 3},
            "",
            None,
            id="count multiple pending pvcs towards volume limit >= pods CSI volume",
        ),
        pytest.param(
            with_claims("p", "bad-pv-good-sc"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 2},
            "",
            FULL,
            id="should count PVCs with invalid PV name but valid SC",
        ),
        pytest.param(
            with_claims("p", "bad-pv-bad-sc"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 2},
            "",
            None,
            id="should not count PVCs with invalid PV name and invalid SC",
        ),
        pytest.param(
            with_claims("p", "gce-0"),
            [with_claims("e", "csi-2", "csi-3", node="n1")],
            {EBS: 2, GCE: 1},
            "",
            None,
            id="should not limit pod if volume used does not report limits",
        ),
        pytest.param(
            with_claims("p", "intree"),
            [with_claims("e", "gce-0", node="n1")],
            {GCE: 1},
            "kubernetes.io/gce-pd",
            FULL,
            id="should count in-tree volumes if migration is enabled",
        ),
        pytest.param(
            with_claims("p", "intree"),
            [with_claims("e", "gce-0", node="n1")],
            {GCE: 1},
            "",
            None,
            id="should not count in-tree volume if migration is disabled",
        ),
        pytest.param(
            with_claims("p", "intree-pending"),
            [with_claims("e", "gce-0", node="n1")],
            {GCE: 1},
            "kubernetes.io/gce-pd",
            FULL,
            id="should count unbound in-tree volumes if migration is enabled",
        ),
        pytest.param(
            make_pod("p").volume("d", gcePersistentDisk={"pdName": "inline"}).obj(),
            [with_claims("e", "gce-0", node="n1")],
            {GCE: 1},
            "kubernetes.io/gce-pd",
            FULL,
            id="should count in-tree inline volumes if migration is enabled",
        ),
        pytest.param(
            with_claims("p", "missing"),
            [],
            {EBS: 2},
            "",
            (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC default/missing: persistentvolumeclaim "missing" not found',
            ),
            id="missing claim",
        ),
    ],
)
def test_csi_limits(incoming, existing, limits, migrated, want):
    status = run(incoming, existing, limits, migrated)
    if want is None:
        assert status is None
    else:
        assert (status.code, status.reasons) == (want[0], (want[1],))


def ephemeral_pod() -> Pod:
    raw = make_pod("abc").volume("xyz", ephemeral={"volumeClaimTemplate": {}}).obj().raw
    return Pod({**raw, "metadata": {**raw["metadata"], "uid": "12345"}})


@pytest.mark.parametrize(
    ("claim", "limits", "want"),
    [
        pytest.param(
            None,
            {EBS: 4},
            (
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                'looking up PVC default/abc-xyz: persistentvolumeclaim "abc-xyz" not found',
            ),
            id="ephemeral volume missing",
        ),
        pytest.param(
            pvc("abc-xyz", storage_class="csi-sc", owner="other"),
            {EBS: 4},
            (
                Code.ERROR,
                "PVC default/abc-xyz was not created for pod default/abc (pod is not owner)",
            ),
            id="ephemeral volume not owned",
        ),
        pytest.param(
            pvc("abc-xyz", storage_class="csi-sc", owner="12345"),
            {EBS: 2},
            FULL,
            id="ephemeral volume unbound",
        ),
        pytest.param(
            pvc("abc-xyz", storage_class="csi-sc", owner="12345"),
            {EBS: 3},
            None,
            id="ephemeral volume fits",
        ),
    ],
)
def test_ephemeral_volumes(claim, limits, want):
    extra_pvcs = [claim] if claim else []
    objects = {"PersistentVolumeClaim": [*PVCS, *extra_pvcs]}
    status = run(
        ephemeral_pod(), [with_claims("e", "csi-2", "csi-3", node="n1")], limits, extra=objects
    )
    if want is None:
        assert status is None
    else:
        assert (status.code, status.reasons) == (want[0], (want[1],))


def test_volume_attachments_take_slots():
    attachment = {
        "kind": "VolumeAttachment",
        "metadata": {"name": "va"},
        "spec": {
            "attacher": EBS,
            "nodeName": "n1",
            "source": {"persistentVolumeName": "csi-ebs.csi.aws.com-2"},
        },
    }
    incoming = with_claims("p", "csi-0")
    assert run(incoming, [], {EBS: 1}, extra={"VolumeAttachment": [attachment]}).reasons == (
        REASON_MAX_VOLUME_COUNT,
    )
    assert run(incoming, [], {EBS: 1}) is None


def test_pods_without_counted_volumes_are_skipped():
    plugin = new_plugin(NodeVolumeLimits)
    assert plugin.pre_filter(CycleState(), make_pod("p").obj()).is_skip()
    assert plugin.pre_filter(CycleState(), make_pod("p").volume("c", emptyDir={}).obj()).is_skip()


def hint(resource: str):
    plugin = new_plugin(NodeVolumeLimits)
    return next(e.hint for e in plugin.events_to_register() if e.event.resource.value == resource)


def test_hints():
    target = with_claims("p", "csi-0")
    assert hint("Pod")(target, with_claims("e", "csi-1", node="n1"), None) is QueueingHint.QUEUE
    assert hint("Pod")(target, make_pod("e").node("n1").obj(), None) is QueueingHint.SKIP
    assert hint("Pod")(target, with_claims("e", "csi-1"), None) is QueueingHint.SKIP
    assert hint("PersistentVolumeClaim")(target, None, pvc("csi-0")) is QueueingHint.QUEUE
    assert hint("PersistentVolumeClaim")(target, None, pvc("other")) is QueueingHint.SKIP
    assert hint("CSINode") is None


def test_args_are_refused():
    with pytest.raises(ArgsError):
        new_plugin(NodeVolumeLimits, {"x": 1})


def test_in_a_profile_a_full_node_is_avoided():
    objects = {
        "PersistentVolume": PVS,
        "PersistentVolumeClaim": PVCS,
        "CSINode": [csi_node({EBS: 1}), {**csi_node({EBS: 1}), "metadata": {"name": "n2"}}],
    }
    with Harness.for_plugin(
        NodeVolumeLimits,
        nodes=[make_node("n1"), make_node("n2")],
        pods=[with_claims("e", "csi-3", node="n1")],
        objects=objects,
    ) as h:
        h.schedule(with_claims("a", "csi-0"))
        assert h.node_of("a") == "n2"
        report = h.schedule(with_claims("b", "csi-1"))
        assert report.message == f"0/2 nodes are available: 2 {REASON_MAX_VOLUME_COUNT}."
        assert NAME == "NodeVolumeLimits"


def test_one_cycle_counts_the_pods_volumes_per_node_by_its_migration() -> None:
    """The pod's own volumes are worked out once per cycle and kind of CSINode: an in-tree
    volume counts on the node whose CSINode says its plugin migrated, not on the other."""
    migrated = csi_node({GCE: 1}, "kubernetes.io/gce-pd")
    plain = csi_node({GCE: 1})
    plain["metadata"]["name"] = "n2"
    objects = {
        "PersistentVolume": PVS,
        "PersistentVolumeClaim": PVCS,
        "StorageClass": CLASSES,
        "CSINode": [migrated, plain],
    }
    existing = [with_claims("e1", "gce-0", node="n1"), with_claims("e2", "gce-0", node="n2")]
    cluster = FakeCluster([make_node("n1"), make_node("n2")], existing, objects=objects)
    plugin = new_plugin(NodeVolumeLimits, cluster=cluster)
    incoming = with_claims("p", "intree")
    state = CycleState()
    assert plugin.pre_filter(state, incoming) is None
    for _ in range(2):  # the second round is answered from the cycle's own counts
        full = plugin.filter(state, incoming, cluster.node_info("n1"))
        assert full is not None and (full.code, full.message()) == FULL
        assert plugin.filter(state, incoming, cluster.node_info("n2")) is None


ATTACHMENT = {
    "kind": "VolumeAttachment",
    "metadata": {"name": "va"},
    "spec": {"attacher": EBS, "nodeName": "n1", "source": {"persistentVolumeName": "csi-2"}},
}


def _update(kind: str, obj: dict[str, Any]):
    return lambda backend: backend.update_object(kind, obj)


@pytest.mark.parametrize(
    ("existing_claim", "incoming_claim", "limits", "migrated", "change", "before", "after"),
    [
        pytest.param(
            "csi-1",
            "csi-0",
            {EBS: 1},
            "",
            _update("PersistentVolume", csi_pv("csi-ebs.csi.aws.com-1", GCE)),
            FULL,
            None,
            id="the node's pod's PV moved to another driver",
        ),
        pytest.param(
            "csi-1",
            "csi-0",
            {EBS: 1},
            "",
            _update("PersistentVolumeClaim", pvc("csi-1", "gce-0")),
            FULL,
            None,
            id="the node's pod's claim bound to another driver's PV",
        ),
        pytest.param(
            "csi-1",
            "csi-0",
            {EBS: 1},
            "",
            lambda backend: backend.delete_object("PersistentVolumeClaim", "default", "csi-1"),
            FULL,
            None,
            id="the node's pod's claim deleted",
        ),
        pytest.param(
            "pending",
            "csi-0",
            {EBS: 1},
            "",
            _update(
                "StorageClass",
                {"kind": "StorageClass", "metadata": {"name": "csi-sc"}, "provisioner": GCE},
            ),
            FULL,
            None,
            id="the class of the node's pod's unbound claim provisions another driver",
        ),
        pytest.param(
            "csi-1",
            "csi-0",
            {EBS: 1},
            "",
            _update("CSINode", csi_node({EBS: 2})),
            FULL,
            None,
            id="the CSINode allows more volumes",
        ),
        pytest.param(
            "intree",
            "gce-0",
            {GCE: 1},
            "",
            _update("CSINode", csi_node({GCE: 1}, "kubernetes.io/gce-pd")),
            None,
            FULL,
            id="the CSINode migrated the node's pod's in-tree plugin",
        ),
        pytest.param(
            "",
            "csi-0",
            {EBS: 1},
            "",
            lambda backend: backend.create_object("VolumeAttachment", ATTACHMENT),
            None,
            FULL,
            id="a VolumeAttachment holds a volume on the node",
        ),
    ],
)
def test_a_change_of_what_the_node_holds_is_counted_in_the_next_cycle(
    existing_claim, incoming_claim, limits, migrated, change, before, after
):
    """The volumes a node's pods hold are kept while the node (its NodeInfo) is unchanged:
    a change of a PV, PVC, StorageClass, CSINode or VolumeAttachment must still count."""
    pvs = [*PVS, csi_pv("csi-2")]
    objects = {
        "PersistentVolume": pvs,
        "PersistentVolumeClaim": PVCS,
        "StorageClass": CLASSES,
        "CSINode": [csi_node(limits, migrated)],
    }
    existing = [with_claims("e", existing_claim, node="n1")] if existing_claim else []
    cluster = FakeCluster([make_node("n1")], existing, objects=objects)
    handle = cluster.handle()
    plugin = NodeVolumeLimits({}, handle)
    info = cluster.node_info("n1")  # the same NodeInfo, generation unchanged, in both cycles
    incoming = with_claims("p", incoming_claim)

    def cycle():
        state = CycleState()
        assert plugin.pre_filter(state, incoming) is None
        status = plugin.filter(state, incoming, info)
        return None if status is None else (status.code, status.message())

    assert cycle() == before
    assert cycle() == before
    change(handle.backend)
    assert cycle() == after
