"""DynamicResources through the scheduler: kube's plugin cases (dynamicresources_test.go) that a
user sees, the claim written at PreBind, the queue's events and the args."""

from __future__ import annotations

import pytest
from dra_builders import (
    CLASS_A,
    DEVICE_1,
    DEVICE_2,
    DRIVER_A,
    NODE_1,
    NODE_2,
    POOL_1,
    REQ_0,
    claim,
    device,
    device_class,
    first_available,
    local_selector,
    request,
    resource_slice,
    result,
    sub_request,
)
from kubesched_dynamic_resources import (
    FINALIZER,
    NAME,
    REASON_CANNOT_ALLOCATE,
    REASON_DEALLOCATED,
    REASON_NOT_AVAILABLE,
    DynamicResources,
)

from kubesched import ConfigError, CycleState, QueueingHint, Status, hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_scheduler


def pod_with(name: str, *claim_names: str, uid: str = ""):
    builder = make_pod(name).uid(uid or f"uid-{name}")
    return builder.spec(
        resourceClaims=[
            {"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claim_names)
        ]
    )


def harness(*objects_by_kind, nodes=(NODE_1,), slices=None):
    objects = {
        "DeviceClass": [device_class(CLASS_A, DRIVER_A)],
        "ResourceSlice": slices
        if slices is not None
        else [resource_slice("slice-1", device(DEVICE_1), node=NODE_1)],
        "ResourceClaim": [],
    }
    for kind, items in objects_by_kind:
        objects.setdefault(kind, []).extend(items)
    return Harness.for_plugin(
        DynamicResources, nodes=[make_node(n) for n in nodes], objects=objects
    )


def stored_claim(h: Harness, name: str, namespace: str = "default"):
    for obj in h.backend.objects["ResourceClaim"]:
        if obj["metadata"]["name"] == name and obj["metadata"]["namespace"] == namespace:
            return obj
    raise AssertionError(f"no claim {name}")


def test_pod_lands_where_a_device_is_free_and_its_claim_is_allocated_and_reserved():
    with harness(("ResourceClaim", [claim("gpu")]), nodes=(NODE_1, NODE_2)) as h:
        report = h.schedule(pod_with("p", "gpu"))
        assert report.result == "Scheduled" and h.node_of("p") == NODE_1
        stored = stored_claim(h, "gpu")
        allocation = stored["status"]["allocation"]
        assert allocation["devices"]["results"] == [result(REQ_0, DRIVER_A, POOL_1, DEVICE_1)]
        assert allocation["nodeSelector"] == local_selector(NODE_1)
        assert "allocationTimestamp" in allocation
        assert stored["status"]["reservedFor"] == [
            {"resource": "pods", "name": "p", "uid": "uid-p"}
        ]
        assert FINALIZER in stored["metadata"]["finalizers"]
        # kube: "2 cannot allocate all claims" would be wrong for node-2; it has no slice.
        assert report.nodes[NODE_2].message == REASON_CANNOT_ALLOCATE


def test_second_pod_waits_with_kubes_message_until_the_device_is_free():
    with harness(("ResourceClaim", [claim("gpu"), claim("gpu-2")])) as h:
        h.schedule(pod_with("first", "gpu"))
        report = h.schedule(pod_with("second", "gpu-2"))
        assert h.node_of("second") is None
        assert report.message == f"0/1 nodes are available: 1 {REASON_CANNOT_ALLOCATE}."
        # The resourceclaim controller deallocates the first claim once its pod is gone.
        h.backend.delete_pod(h.backend.pod("default", "first"))
        gone = stored_claim(h, "gpu")
        h.backend.update_object("ResourceClaim", {**gone, "status": {}}, subresource="status")
        h.run()
        assert h.node_of("second") == NODE_1


def test_the_device_reserved_for_one_pod_is_not_handed_to_the_next_in_the_same_batch():
    with harness(("ResourceClaim", [claim("a"), claim("b")])) as h:
        h.add_pod(pod_with("p1", "a"), pod_with("p2", "b"))
        h.run()
        placed = [h.node_of("p1"), h.node_of("p2")]
        assert placed.count(NODE_1) == 1 and placed.count(None) == 1


# -- devices in use and answers kept across cycles ---------------------------------------------
def two_device_harness(*claims):
    slices = [resource_slice("slice-1", device(DEVICE_1), device(DEVICE_2), node=NODE_1)]
    return harness(("ResourceClaim", list(claims)), slices=slices)


def test_pods_asking_alike_take_the_devices_one_by_one_then_get_kubes_message():
    with two_device_harness(claim("a"), claim("b"), claim("c")) as h:
        for name in ("a", "b"):
            assert h.schedule(pod_with(name, name)).result == "Scheduled"
        devices = [
            stored_claim(h, n)["status"]["allocation"]["devices"]["results"][0]["device"]
            for n in ("a", "b")
        ]
        assert devices == [DEVICE_1, DEVICE_2]
        report = h.schedule(pod_with("c", "c"))
        assert report.message == f"0/1 nodes are available: 1 {REASON_CANNOT_ALLOCATE}."


def test_a_deleted_claim_frees_its_device_for_the_next_pod():
    with two_device_harness(claim("a"), claim("b"), claim("c")) as h:
        h.schedule(pod_with("a", "a"))
        h.schedule(pod_with("b", "b"))
        assert h.schedule(pod_with("c", "c")).result != "Scheduled"
        h.backend.delete_pod(h.backend.pod("default", "a"))
        h.backend.delete_object("ResourceClaim", "default", "a")
        h.run()
        assert h.node_of("c") == NODE_1
        results = stored_claim(h, "c")["status"]["allocation"]["devices"]["results"]
        assert results[0]["device"] == DEVICE_1


def test_a_claim_created_allocated_takes_its_device_from_the_next_pod():
    taken = claim("taken")
    taken["status"] = {
        "allocation": {"devices": {"results": [result(REQ_0, DRIVER_A, POOL_1, DEVICE_2)]}}
    }
    with two_device_harness(claim("a"), claim("b")) as h:
        assert h.schedule(pod_with("a", "a")).result == "Scheduled"
        h.add_object("ResourceClaim", taken)
        report = h.schedule(pod_with("b", "b"))
        assert report.message == f"0/1 nodes are available: 1 {REASON_CANNOT_ALLOCATE}."


def test_pods_sharing_a_claim_go_where_it_is_allocated():
    with harness(
        ("ResourceClaim", [claim("shared")]),
        nodes=(NODE_1, NODE_2),
    ) as h:
        h.schedule(pod_with("p1", "shared"))
        report = h.schedule(pod_with("p2", "shared"))
        assert h.node_of("p2") == NODE_1
        assert report.nodes[NODE_2].message == REASON_NOT_AVAILABLE
        assert [r["name"] for r in stored_claim(h, "shared")["status"]["reservedFor"]] == [
            "p1",
            "p2",
        ]


def test_missing_claim_gates_the_pod_until_it_is_created():
    with harness() as h:
        pod = pod_with("p", "later")
        h.add_pod(pod)
        h.run()
        gated = [i for i in h.scheduler.queue.parked() if i.pod.uid == "uid-p"]
        assert gated and gated[0].gating_plugin == NAME
        assert gated[0].gating_message == 'resourceclaim.resource.k8s.io "later" not found'
        h.add_object("ResourceClaim", claim("later"))
        h.run()
        assert h.node_of("p") == NODE_1


def test_a_claim_from_a_template_waits_for_the_controller():
    with harness() as h:
        pod = (
            make_pod("p")
            .uid("uid-p")
            .spec(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
        )
        h.add_pod(pod)
        h.run()
        gated = next(i for i in h.scheduler.queue.parked() if i.pod.uid == "uid-p")
        assert gated.gating_message == 'pod "default/p": ResourceClaim not created yet'


def test_generated_claim_must_be_owned_by_the_pod():
    generated = claim("p-gpu-abc")
    generated["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}
    ]
    with harness(("ResourceClaim", [generated])) as h:
        pod = (
            make_pod("p")
            .uid("uid-p")
            .spec(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
            .obj()
        )
        pod.raw.setdefault("status", {})["resourceClaimStatuses"] = [
            {"name": "gpu", "resourceClaimName": "p-gpu-abc"}
        ]
        h.schedule(pod)
        assert h.node_of("p") == NODE_1


def test_unknown_device_class_is_unresolvable_with_kubes_message():
    with harness(("ResourceClaim", [claim("c", request(REQ_0, "no-such-class"))])) as h:
        report = h.schedule(pod_with("p", "c"))
        assert report.result == "Unschedulable"
        assert report.message == (
            "0/1 nodes are available: request req-0: device class no-such-class does not exist."
        )


def test_a_failing_selector_is_the_pods_scheduling_error_not_a_crash():
    bad = claim("c", request(REQ_0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].model == "x"'))
    with harness(("ResourceClaim", [bad])) as h:
        report = h.schedule(pod_with("p", "c"))
        assert report.result == "SchedulerError"
        assert "selector #0 on device driver-a/pool-1/device-1: CEL runtime error: " in (
            report.message
        )
        assert "no such key: model" in report.message


def test_first_available_scores_the_node_with_the_preferred_subrequest():
    slices = [
        resource_slice("big", device("big-1", {"size": {"string": "big"}}), node=NODE_1),
        resource_slice("small", device("small-1", {"size": {"string": "small"}}), node=NODE_2,
                       pool="pool-2"),
    ]  # fmt: skip
    big = f'device.attributes["{DRIVER_A}"].size == "big"'
    wanted = claim(
        "c",
        first_available(
            REQ_0,
            sub_request("big", CLASS_A, selectors=[{"cel": {"expression": big}}]),
            sub_request("any", CLASS_A),
        ),
    )
    with harness(("ResourceClaim", [wanted]), nodes=(NODE_2, NODE_1), slices=slices) as h:
        h.schedule(pod_with("p", "c"))
        assert h.node_of("p") == NODE_1
        results = stored_claim(h, "c")["status"]["allocation"]["devices"]["results"]
        assert results[0]["request"] == f"{REQ_0}/big"


def test_score_is_skipped_for_a_pod_it_gives_zero_everywhere():
    """Without a ``firstAvailable`` claim every node scores 0: PreScore says Skip, and the
    pod still lands; with one, Score runs (the test above shows it choosing)."""
    slices = [
        resource_slice("one", device("dev-1"), device("dev-1b"), node=NODE_1),
        resource_slice("two", device("dev-2"), device("dev-2b"), node=NODE_2, pool="pool-2"),
    ]  # two devices a node: both nodes stay feasible for every pod
    wanted = claim("c", first_available(REQ_0, sub_request("any", CLASS_A)))
    with harness(
        ("ResourceClaim", [claim("gpu"), wanted]), nodes=(NODE_1, NODE_2), slices=slices
    ) as h:
        plain = h.schedule(make_pod("plain").uid("uid-plain"))
        claimed = h.schedule(pod_with("p", "gpu"))
        listing = h.schedule(pod_with("q", "c"))
    for report, code in ((plain, "Skip"), (claimed, "Skip"), (listing, "Success")):
        assert report.result == "Scheduled"
        assert [(v.plugin, v.code) for v in report.points["PreScore"]] == [
            ("DynamicResources", code)
        ]


def test_post_filter_deallocates_a_claim_that_keeps_the_pod_off_every_node():
    allocated = claim("c")
    allocated["status"] = {
        "allocation": {
            "devices": {"results": [result(REQ_0, DRIVER_A, POOL_1, DEVICE_1)]},
            "nodeSelector": local_selector("gone-node"),
        }
    }
    with harness(("ResourceClaim", [allocated])) as h:
        report = h.schedule(pod_with("p", "c"))
        assert report.message.startswith(f"0/1 nodes are available: 1 {REASON_NOT_AVAILABLE}.")
        assert REASON_DEALLOCATED in report.message
        assert "allocation" not in stored_claim(h, "c")["status"]
        h.run()  # the deallocation is a claim event: the pod is retried and fits now
        assert h.node_of("p") == NODE_1


@pytest.mark.parametrize(
    ("pre_filter_ran", "pod", "want"),
    [
        # kube's PostFilter reads the state PreFilter wrote; when an earlier plugin's PreFilter
        # rejected the pod, this one's never ran: "not found" is an Error, which ends PostFilter
        # (no preemption) and becomes the message's tail.
        pytest.param(False, make_pod("plain").obj(), Status.error("not found"), id="no PreFilter"),
        pytest.param(True, make_pod("plain").obj(), None, id="no claims"),
        pytest.param(True, pod_with("p", "absent").obj(), None, id="PreFilter rejected it"),
    ],
)
def test_post_filter_without_the_pre_filter_state(pre_filter_ran, pod, want):
    from kubesched import CycleState

    plugin = _plugin([])
    state = CycleState()
    if pre_filter_ran:
        plugin.pre_filter(state, pod)
    got = plugin.post_filter(state, pod)
    if want is None:
        assert got is None
    else:
        assert (got.code, got.message()) == (want.code, want.message())


def test_post_filter_of_a_profile_without_the_pre_filter_goes_on_to_preemption():
    scheduler, _backend = make_scheduler(
        {NAME: DynamicResources},
        {
            "plugins": {
                "multiPoint": {"enabled": [{"name": NAME}]},
                "preFilter": {"disabled": [{"name": NAME}]},
            }
        },
    )
    from kubesched import CycleState

    plugin = scheduler.frameworks["custom-scheduler"].plugins[NAME]
    assert plugin.post_filter(CycleState(), make_pod("plain").obj()) is None


def test_pods_without_claims_skip_the_plugin():
    with harness() as h:
        report = h.schedule(make_pod("plain"))
        assert report.result == "Scheduled"


# -- TestIsSchedulableAfterClaimChange -----------------------------------------------------------
def _plugin(claims):
    scheduler, _backend = make_scheduler(
        {NAME: DynamicResources},
        {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}},
        objects={"ResourceClaim": claims},
    )
    return scheduler.frameworks["custom-scheduler"].plugins[NAME]


def _allocated(obj):
    out = {**obj, "status": {"allocation": {"devices": {"results": []}}}}
    return out


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, claim("c"), QueueingHint.QUEUE, id="queue-on-add"),
        pytest.param(None, claim("other"), QueueingHint.SKIP, id="skip-other-claim"),
        pytest.param(claim("c"), claim("c"), QueueingHint.SKIP, id="skip-no-status-change"),
        pytest.param(claim("c"), _allocated(claim("c")), QueueingHint.QUEUE, id="queue-status"),
        pytest.param(
            _allocated(claim("other")), claim("other"), QueueingHint.QUEUE, id="deallocated"
        ),
        pytest.param(claim("c"), None, QueueingHint.SKIP, id="skip-deleted-unallocated"),
        pytest.param(_allocated(claim("c")), None, QueueingHint.QUEUE, id="queue-deleted-alloc"),
    ],
)
def test_hint_claim_change(old, new, want):
    plugin = _plugin([claim("c"), claim("other")])
    assert plugin._hint_claim_change(pod_with("p", "c").obj(), old, new) is want


def test_args_are_validated_all_at_once():
    profile = {
        "plugins": {"multiPoint": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [
            {"name": NAME, "args": {"filterTimeout": "-1s", "bindingTimeout": "5", "x": 1}}
        ],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: DynamicResources}, profile)
    assert [str(e) for e in caught.value.errors] == [
        "profiles[0].pluginConfig[0].args.x: unknown field; allowed: filterTimeout, bindingTimeout",
        "profiles[0].pluginConfig[0].args.filterTimeout: must be zero or positive, got '-1s'",
        "profiles[0].pluginConfig[0].args.bindingTimeout: must be a duration such as '10s', "
        "got '5'",
    ]


# -- simulate: DRA objects from manifests, allocations seen by the next pod -----------------------
CLUSTER_YAML = f"""
apiVersion: v1
kind: Node
metadata: {{name: {NODE_1}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {{name: {CLASS_A}}}
spec:
  selectors: [{{cel: {{expression: 'device.driver == "{DRIVER_A}"'}}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: slice-1}}
spec:
  driver: {DRIVER_A}
  nodeName: {NODE_1}
  pool: {{name: {POOL_1}, generation: 1, resourceSliceCount: 1}}
  devices: [{{name: {DEVICE_1}}}]
"""


def _claim_and_pod(name: str) -> str:
    return f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}-claim, namespace: default, uid: uid-{name}-claim}}
spec:
  devices:
    requests: [{{name: {REQ_0}, exactly: {{deviceClassName: {CLASS_A}}}}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, uid: uid-{name}}}
spec:
  schedulerName: custom-scheduler
  containers: [{{name: c, image: busybox}}]
  resourceClaims: [{{name: gpu, resourceClaimName: {name}-claim}}]
"""


def test_simulate_reads_dra_objects_and_the_next_pod_sees_the_allocation():
    from kubesched.api.manifests import parse_cluster
    from kubesched.service.simulate import simulate
    from kubesched.testing.harness import make_config

    text = CLUSTER_YAML + _claim_and_pod("first") + _claim_and_pod("second")
    cluster = parse_cluster(text, "cluster.yaml")
    assert sorted(cluster.objects) == ["DeviceClass", "ResourceClaim", "ResourceSlice"]
    config, registry = make_config(
        {NAME: DynamicResources}, {"plugins": {"multiPoint": {"enabled": [{"name": NAME}]}}}
    )
    outcome = {p.name: (p.node, p.message) for p in simulate(cluster, config, registry).pods}
    assert outcome["first"] == (NODE_1, "")
    assert outcome["second"] == (
        None,
        f"0/1 nodes are available: 1 {REASON_CANNOT_ALLOCATE}.",
    )


def test_a_generated_claim_in_the_pod_status_is_its_own_update_action():
    from kubesched import ActionType
    from kubesched.engine.event_handlers import pod_update_actions

    old = make_pod("p").uid("uid-p").obj()
    new = make_pod("p").uid("uid-p").obj()
    new.raw.setdefault("status", {})["resourceClaimStatuses"] = [
        {"name": "gpu", "resourceClaimName": "p-gpu-x"}
    ]
    assert pod_update_actions(old, new) == ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM


def test_the_generated_claim_moves_the_gated_pod_to_the_queue():
    generated = claim("p-gpu-abc")
    generated["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p", "controller": True}
    ]
    with harness(("ResourceClaim", [generated])) as h:
        entries = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
        pending = make_pod("p").uid("uid-p").spec(resourceClaims=entries).obj()
        h.add_pod(pending)
        h.run()
        assert h.node_of("p") is None
        updated = make_pod("p").uid("uid-p").spec(resourceClaims=entries).obj()
        updated.raw.setdefault("status", {})["resourceClaimStatuses"] = [
            {"name": "gpu", "resourceClaimName": "p-gpu-abc"}
        ]
        h.backend.add_pod(updated)  # same uid: an update
        h.run()
        assert h.node_of("p") == NODE_1


class _RejectAtReserve:
    """A Reserve plugin that turns every pod away (so DynamicResources' Unreserve runs)."""

    def __init__(self, args, handle) -> None:
        pass

    @hookimpl
    def reserve(self, state, pod, node_name):
        return Status.unschedulable("rejected at reserve")


def test_unreserve_releases_the_devices_held_for_a_pod_that_did_not_bind():
    profile = {
        "plugins": {
            "multiPoint": {"enabled": [{"name": NAME}]},
            "reserve": {"enabled": [{"name": "RejectAtReserve"}]},
        }
    }
    objects = {
        "DeviceClass": [device_class(CLASS_A, DRIVER_A)],
        "ResourceSlice": [resource_slice("slice-1", device(DEVICE_1), node=NODE_1)],
        "ResourceClaim": [claim("a"), claim("b")],
    }
    with Harness(
        {NAME: DynamicResources, "RejectAtReserve": _RejectAtReserve},
        profile,
        nodes=[make_node(NODE_1)],
        objects=objects,
    ) as h:
        report = h.schedule(pod_with("p1", "a"))
        assert report.result == "Unschedulable"
        plugin = h.scheduler.frameworks["custom-scheduler"].plugins[NAME]
        assert plugin._in_flight == {}
        assert "allocation" not in (stored_claim(h, "a").get("status") or {})
        # The device is free again: another pod's Filter allocates it on the node.
        second = h.schedule(pod_with("p2", "b"))
        assert second.nodes[NODE_1].outcome == "feasible"


# -- PreBindPreFlight and the nominated node (kube's NominatedNodeNameForExpectation) ------------
def record_writes(h: Harness) -> list[tuple[str, str]]:
    """The backend's pod-status and claim writes, in order: ``(what, name)``."""
    writes: list[tuple[str, str]] = []
    backend = h.backend
    patch_pod_status, update_object = backend.patch_pod_status, backend.update_object

    def patch(pod, **fields):
        writes.append((f"nominatedNodeName={fields.get('nominated_node_name')}", pod.name))
        return patch_pod_status(pod, **fields)

    def update(kind, obj, **kwargs):
        sub = kwargs.get("subresource") or ""
        writes.append((f"{kind}{'/' + sub if sub else ''}", obj["metadata"]["name"]))
        return update_object(kind, obj, **kwargs)

    backend.patch_pod_status = patch  # type: ignore[method-assign]
    backend.update_object = update  # type: ignore[method-assign]
    return writes


def test_a_pod_with_a_claim_is_nominated_to_its_node_before_the_claim_is_written():
    with harness(("ResourceClaim", [claim("gpu")])) as h:
        writes = record_writes(h)
        h.schedule(pod_with("p", "gpu"))
        assert writes == [
            (f"nominatedNodeName={NODE_1}", "p"),
            ("ResourceClaim", "gpu"),  # the finalizer
            ("ResourceClaim/status", "gpu"),  # allocation and reservedFor
        ]
        assert h.backend.nominations["default/p"] == NODE_1
        bound = h.backend.pod("default", "p")
        # Bound: the apiserver clears the nomination, as kube-apiserver v1.37 does.
        assert bound.node_name == NODE_1 and "nominatedNodeName" not in bound.raw["status"]


def test_a_pod_with_a_claim_already_reserved_for_it_is_nominated_too():
    """kube's PreBindPreFlight answers Success for any pod with claims."""
    reserved = claim("gpu")
    reserved["status"] = {
        "allocation": {"devices": {"results": [result(REQ_0, DRIVER_A, POOL_1, DEVICE_1)]}},
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "uid-p"}],
    }
    with harness(("ResourceClaim", [reserved])) as h:
        writes = record_writes(h)
        h.schedule(pod_with("p", "gpu"))
        assert h.node_of("p") == NODE_1
        assert writes == [(f"nominatedNodeName={NODE_1}", "p")]


def test_a_pod_without_claims_is_not_nominated():
    with harness() as h:
        writes = record_writes(h)
        h.schedule(make_pod("plain").uid("uid-plain"))
        assert h.node_of("plain") == NODE_1
        assert writes == [] and "default/plain" not in h.backend.nominations


def test_pre_bind_pre_flight_skips_without_claims_and_says_success_with_them():
    with harness(("ResourceClaim", [claim("gpu")])) as h:
        plugin = h.scheduler.frameworks["custom-scheduler"].plugins[NAME]
        state = CycleState()
        assert plugin.pre_filter(state, make_pod("plain").obj()).is_skip()
        assert plugin.pre_bind_pre_flight(state).is_skip()
        state = CycleState()
        assert plugin.pre_filter(state, pod_with("p", "gpu").obj()) is None
        assert plugin.pre_bind_pre_flight(state) is None


def test_a_failed_claim_write_clears_the_nomination_it_made():
    with harness(("ResourceClaim", [claim("gpu")])) as h:
        writes = record_writes(h)
        update_object = h.backend.update_object

        def refuse_status(kind, obj, **kwargs):
            if kwargs.get("subresource") == "status":
                raise RuntimeError("the apiserver said no")
            return update_object(kind, obj, **kwargs)

        h.backend.update_object = refuse_status  # type: ignore[method-assign]
        report = h.schedule(pod_with("p", "gpu"))
        assert h.node_of("p") is None
        assert writes[0] == (f"nominatedNodeName={NODE_1}", "p")
        assert "the apiserver said no" in report.message
        # kube's handleBindingCycleError reports the failure with clearNominatedNode.
        assert h.backend.nominations["default/p"] == ""
