"""VolumeRestrictions: kube-scheduler's table cases (volume_restrictions_test.go: the GCE, AWS,
RBD and iSCSI disk conflicts, TestAccessModeConflicts, the queueing hints), preemption's
what-ifs, and the plugin in a profile."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_volume_restrictions import (
    NAME,
    REASON_DISK_CONFLICT,
    REASON_RWOP_CONFLICT,
    VolumeRestrictions,
)

from kubesched import ArgsError, Code, CycleState, NodeInfo, Pod, QueueingHint
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FakeCluster, Harness, new_plugin


def pod(name: str = "p", *volumes: dict[str, Any], node: str = "") -> Pod:
    builder = make_pod(name)
    for i, source in enumerate(volumes):
        builder.volume(f"v{i}", **source)
    if node:
        builder.node(node)
    return builder.obj()


def check_disk(volume_a: dict, volume_b: dict, conflict: bool) -> None:
    incoming = pod("incoming", volume_a)
    existing = pod("existing", volume_b, node="n1")
    cluster = FakeCluster([make_node("n1")], [existing])
    plugin = new_plugin(VolumeRestrictions, cluster=cluster)
    state = CycleState()
    assert plugin.pre_filter(state, incoming) is None
    status = plugin.filter(state, incoming, cluster.node_info("n1"))
    if conflict:
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == (REASON_DISK_CONFLICT,)
    else:
        assert status is None


GCE_FOO = {"gcePersistentDisk": {"pdName": "foo"}}
GCE_BAR = {"gcePersistentDisk": {"pdName": "bar"}}
EBS_FOO = {"awsElasticBlockStore": {"volumeID": "foo"}}
EBS_BAR = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD_AB = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD_CD = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI_1 = {
    "iscsi": {
        "targetPortal": "127.0.0.1:3260",
        "iqn": "iqn.2016-12.server:storage.target01",
        "lun": 0,
        "fsType": "ext4",
    }
}
ISCSI_2 = {
    "iscsi": {
        "targetPortal": "127.0.0.1:3260",
        "iqn": "iqn.2017-12.server:storage.target01",
        "lun": 0,
        "fsType": "ext4",
    }
}


@pytest.mark.parametrize(
    ("volume_a", "volume_b", "conflict"),
    [
        pytest.param(GCE_FOO, GCE_FOO, True, id="gce same state"),
        pytest.param(GCE_BAR, GCE_FOO, False, id="gce different state"),
        pytest.param(
            {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
            {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
            False,
            id="gce both read-only",
        ),
        pytest.param(EBS_FOO, EBS_FOO, True, id="aws same state"),
        pytest.param(EBS_BAR, EBS_FOO, False, id="aws different state"),
        pytest.param(RBD_AB, RBD_AB, True, id="rbd same state"),
        pytest.param(RBD_CD, RBD_AB, False, id="rbd different monitors"),
        pytest.param(ISCSI_1, ISCSI_1, True, id="iscsi same state"),
        pytest.param(ISCSI_2, ISCSI_1, False, id="iscsi different iqn"),
    ],
)
def test_disk_conflicts(volume_a, volume_b, conflict):
    check_disk(volume_a, volume_b, conflict)


def test_pod_without_restricted_volumes_is_skipped():
    plugin = new_plugin(VolumeRestrictions)
    assert plugin.pre_filter(CycleState(), pod("p", {"hostPath": {"path": "/x"}})).is_skip()
    assert plugin.pre_filter(CycleState(), pod("p")).is_skip()


def claim(name: str, *modes: str) -> dict[str, Any]:
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"accessModes": list(modes)},
    }


RWOP1, RWOP2 = (
    claim("claim-with-rwop-1", "ReadWriteOncePod"),
    claim("claim-with-rwop-2", "ReadWriteOncePod"),
)
RWX = claim("claim-with-rwx", "ReadWriteMany")


def with_claims(name: str, *claims: str, node: str = "") -> Pod:
    builder = make_pod(name)
    for c in claims:
        builder.pvc(c)
    if node:
        builder.node(node)
    return builder.obj()


@pytest.mark.parametrize(
    ("incoming", "existing", "claims", "want_pre", "want_filter"),
    [
        pytest.param(
            with_claims("p", "claim-with-rwop-1"),
            [with_claims("q", "claim-with-rwx", node="n1")],
            [RWOP1, RWX],
            "skip",
            None,
            id="nothing",
        ),
        pytest.param(
            with_claims("p", "claim-with-rwop-1"),
            [],
            [],
            'persistentvolumeclaim "claim-with-rwop-1" not found',
            None,
            id="failed to get PVC",
        ),
        pytest.param(
            with_claims("p", "claim-with-rwop-1"),
            [with_claims("q", "claim-with-rwx", node="n1")],
            [RWOP1, RWX],
            "skip",
            None,
            id="no access mode conflict",
        ),
        pytest.param(
            with_claims("p", "claim-with-rwop-1", "claim-with-rwx"),
            [
                with_claims("q", "claim-with-rwop-1", node="n1"),
                with_claims("r", "claim-with-rwx", node="n1"),
            ],
            [RWOP1, RWX],
            None,
            REASON_RWOP_CONFLICT,
            id="access mode conflict, unschedulable",
        ),
        pytest.param(
            with_claims("p", "claim-with-rwop-1", "claim-with-rwop-2"),
            [with_claims("q", "claim-with-rwop-1", "claim-with-rwop-2", node="n1")],
            [RWOP1, RWOP2],
            None,
            REASON_RWOP_CONFLICT,
            id="two conflicts, unschedulable",
        ),
    ],
)
def test_access_mode_conflicts(incoming, existing, claims, want_pre, want_filter):
    cluster = FakeCluster(
        [make_node("n1"), make_node("n2")], existing, objects={"PersistentVolumeClaim": claims}
    )
    plugin = new_plugin(VolumeRestrictions, cluster=cluster)
    state = CycleState()
    pre = plugin.pre_filter(state, incoming)
    if want_pre == "skip":
        assert pre.is_skip()
        return
    if want_pre is not None:
        assert pre.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert pre.reasons == (want_pre,)
        return
    assert pre is None
    # Every node is refused, not only the one holding the claim.
    for name in ("n1", "n2"):
        status = plugin.filter(state, incoming, cluster.node_info(name))
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == (want_filter,)


def test_preemption_what_if_removing_the_user_frees_the_claim():
    user = with_claims("q", "claim-with-rwop-1", node="n1")
    cluster = FakeCluster([make_node("n1")], [user], objects={"PersistentVolumeClaim": [RWOP1]})
    plugin = new_plugin(VolumeRestrictions, cluster=cluster)
    incoming = with_claims("p", "claim-with-rwop-1")
    state = CycleState()
    assert plugin.pre_filter(state, incoming) is None
    info = cluster.node_info("n1")
    what_if = state.clone()
    plugin.pre_filter_remove_pod(what_if, incoming, user, info)
    assert plugin.filter(what_if, incoming, NodeInfo(info.node)) is None
    assert plugin.filter(state, incoming, info).reasons == (REASON_RWOP_CONFLICT,)
    plugin.pre_filter_add_pod(what_if, incoming, user, info)
    assert plugin.filter(what_if, incoming, info).reasons == (REASON_RWOP_CONFLICT,)


def hint(resource: str):
    plugin = new_plugin(VolumeRestrictions)
    return next(e.hint for e in plugin.events_to_register() if e.event.resource.value == resource)


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(pod("q", GCE_FOO, node="n1"), QueueingHint.QUEUE, id="pod with the same disk"),
        pytest.param(pod("q", GCE_BAR, node="n1"), QueueingHint.SKIP, id="pod with another disk"),
        pytest.param(
            with_claims("q", "claim-with-rwop-1", node="n1"),
            QueueingHint.QUEUE,
            id="pod with the same claim",
        ),
        pytest.param(
            with_claims("q", "other", node="n1"), QueueingHint.SKIP, id="pod with another claim"
        ),
    ],
)
def test_hint_pod_deleted(deleted, want):
    target = make_pod("p").volume("d", **GCE_FOO).pvc("claim-with-rwop-1").obj()
    assert hint("Pod")(target, deleted, None) is want


def test_hint_claim_added():
    target = with_claims("p", "claim-with-rwop-1")
    assert hint("PersistentVolumeClaim")(target, None, RWOP1) is QueueingHint.QUEUE
    assert hint("PersistentVolumeClaim")(target, None, RWX) is QueueingHint.SKIP
    other = {**RWOP1, "metadata": {"name": "claim-with-rwop-1", "namespace": "other"}}
    assert hint("PersistentVolumeClaim")(target, None, other) is QueueingHint.SKIP


def test_args_are_refused():
    with pytest.raises(ArgsError):
        new_plugin(VolumeRestrictions, {"x": 1})


def test_in_a_profile_the_second_user_waits_until_the_first_is_gone():
    objects = {"PersistentVolumeClaim": [RWOP1]}
    with Harness.for_plugin(VolumeRestrictions, nodes=[make_node("n1")], objects=objects) as h:
        h.schedule(with_claims("first", "claim-with-rwop-1"))
        assert h.node_of("first") == "n1"
        report = h.schedule(with_claims("second", "claim-with-rwop-1"))
        # kube-scheduler v1.37's words (volume_restrictions.go, ErrReasonReadWriteOncePodConflict).
        assert report.message == (
            "0/1 nodes are available: 1 node(s) unavailable due to PersistentVolumeClaim with "
            "ReadWriteOncePod access mode already in-use by another pod."
        )
        assert REASON_RWOP_CONFLICT in report.message
        h.backend.delete_pod(h.backend.pod("default", "first"))
        h.run()
        assert h.node_of("second") == "n1"
        assert NAME == "VolumeRestrictions"
