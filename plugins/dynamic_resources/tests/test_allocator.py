"""The structured allocator: cases ported from kube's allocator tests
(k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting, v1.37), by name."""

from __future__ import annotations

import pytest
from dra_builders import (
    CLASS_A,
    CLASS_B,
    DEVICE_1,
    DEVICE_2,
    DEVICE_3,
    DRIVER_A,
    DRIVER_B,
    NODE_1,
    NODE_2,
    POOL_1,
    POOL_2,
    REQ_0,
    REQ_1,
    all_devices,
    allocation,
    claim,
    consumes,
    counter_slice,
    device,
    device_class,
    device_config,
    first_available,
    local_selector,
    request,
    resource_slice,
    result,
    sub_request,
)
from kubesched_dynamic_resources.allocator import AllocationError, Allocator, PoolCache, SearchCache

from kubesched.testing.builders import make_node

CLASSES = {CLASS_A: device_class(CLASS_A, DRIVER_A), CLASS_B: device_class(CLASS_B, DRIVER_B)}
NODE = make_node(NODE_1).label("region", "region-1").obj()
MEM_1GI = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("1Gi")) >= 0'
MEM_2GI = f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("2Gi")) >= 0'
ATTRS = {
    "driverVersion": {"version": "1.0.0"},
    "numa": {"int": 1},
    "stringAttribute": {"string": "stringAttributeValue"},
    "boolAttribute": {"bool": True},
}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value", "effect": "NoExecute"}
TOLERATE_NO_EXECUTE = {
    "key": "taint-key",
    "operator": "Equal",
    "value": "taint-value",
    "effect": "NoExecute",
}


def allocate(claims, slices, *, node=NODE, allocated=(), classes=CLASSES):
    return Allocator(classes, slices, allocated).allocate(node, claims)


def one_device_slice(name="slice-1", node=NODE_1, pool=POOL_1, driver=DRIVER_A):
    return resource_slice(name, device(DEVICE_1), node=node, pool=pool, driver=driver)


CASES = [
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [one_device_slice()],
        {},
        [allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1))],
        id="simple",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            one_device_slice("slice-1", NODE_1, POOL_1, DRIVER_B),
            one_device_slice("slice-2", NODE_2, POOL_2, DRIVER_A),
        ],
        {"node": make_node(NODE_2).obj()},
        [allocation(local_selector(NODE_2), result(REQ_0, DRIVER_A, POOL_2, DEVICE_1))],
        id="other-node",
    ),
    pytest.param(
        [
            claim(
                "claim-0", request(REQ_0, CLASS_A, 1, MEM_1GI), request(REQ_1, CLASS_A, 1, MEM_2GI)
            )
        ],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, capacity={"memory": "1Gi"}),
                device(DEVICE_2, capacity={"memory": "2Gi"}),
            )
        ],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                result(REQ_1, DRIVER_A, POOL_1, DEVICE_2),
            )
        ],
        id="small-and-large",
    ),
    pytest.param(
        [
            claim("claim-0", request(REQ_0, CLASS_A, 1, MEM_1GI)),
            claim("claim-1", request(REQ_1, CLASS_A, 1, MEM_2GI)),
        ],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_2, capacity={"memory": "2Gi"}),
                device(DEVICE_1, capacity={"memory": "1Gi"}),
            )
        ],
        {},
        [
            allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1)),
            allocation(local_selector(NODE_1), result(REQ_1, DRIVER_A, POOL_1, DEVICE_2)),
        ],
        id="small-and-large-backtrack-claims",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            resource_slice("slice-1-obsolete", device(DEVICE_1), count=2),
            resource_slice("slice-1-obsolete", device(DEVICE_2), count=2, generation=2),
        ],
        {},
        None,
        id="obsolete-slice",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A)), claim("claim-0", request(REQ_1, CLASS_A))],
        [one_device_slice()],
        {},
        None,
        id="not-enough-suitable-devices",
    ),
    pytest.param(
        [claim("claim-0", all_devices(REQ_0, CLASS_A))],
        [one_device_slice()],
        {},
        [allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1))],
        id="all-devices-single",
    ),
    pytest.param(
        [claim("claim-0", all_devices(REQ_0, CLASS_A, adminAccess=True))],
        [resource_slice("slice-1", device(DEVICE_1), device(DEVICE_2))],
        {"allocated": [(DRIVER_A, POOL_1, DEVICE_1)]},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1, admin=True),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_2, admin=True),
            )
        ],
        id="all-devices-some-allocated-admin-access",
    ),
    pytest.param(
        [claim("claim-0", all_devices(REQ_0, CLASS_A))],
        [resource_slice("slice-1", device(DEVICE_1), device(DEVICE_2))],
        {"allocated": [(DRIVER_A, POOL_1, DEVICE_1)]},
        None,
        id="all-devices-some-allocated",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [one_device_slice()],
        {"allocated": [(DRIVER_A, POOL_1, DEVICE_1), (DRIVER_A, POOL_1, DEVICE_2)]},
        None,
        id="already-allocated-devices",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                request(REQ_0, CLASS_A),
                request(REQ_1, CLASS_A),
                constraints=[
                    {"matchAttribute": f"{DRIVER_A}/numa"},
                    {"matchAttribute": f"{DRIVER_A}/driverVersion"},
                    {"matchAttribute": f"{DRIVER_A}/stringAttribute"},
                    {"matchAttribute": f"{DRIVER_A}/boolAttribute"},
                ],
            )
        ],
        [resource_slice("slice-1", device(DEVICE_1, ATTRS), device(DEVICE_2, ATTRS))],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                result(REQ_1, DRIVER_A, POOL_1, DEVICE_2),
            )
        ],
        id="with-constraint",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                request(REQ_0, CLASS_A, 2),
                constraints=[{"matchAttribute": f"{DRIVER_A}/numa"}],
            )
        ],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, {"numa": {"int": 1}}),
                device(DEVICE_2, {"numa": {"int": 2}}),
            )
        ],
        {},
        None,
        id="with-constraint-not-matching-int-attribute",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                request(REQ_0, CLASS_A, 2),
                constraints=[{"matchAttribute": f"{DRIVER_A}/numa"}],
            )
        ],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, {"numa": {"int": 1}}),
                device(DEVICE_2, {"numa": {"int": 2}}),
                device(DEVICE_3, {"numa": {"int": 1}}),
            )
        ],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_3),
            )
        ],
        id="with-constraint-backtracks-to-a-matching-pair",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1),
                node=None,
                nodeSelector={
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": ["region-1"]}
                            ]
                        }
                    ]
                },
            )
        ],
        {},
        [
            allocation(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "region", "operator": "In", "values": ["region-1"]}
                            ]
                        }
                    ]
                },
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
            )
        ],
        id="network-attached-device",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                first_available(
                    REQ_0, sub_request("subReq-0", CLASS_B), sub_request("subReq-1", CLASS_A)
                ),
            )
        ],
        [one_device_slice()],
        {},
        [
            allocation(
                local_selector(NODE_1), result(f"{REQ_0}/subReq-1", DRIVER_A, POOL_1, DEVICE_1)
            )
        ],
        id="prioritized-list-first-unavailable",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                first_available(
                    REQ_0, sub_request("subReq-0", CLASS_A, 2), sub_request("subReq-1", CLASS_A, 1)
                ),
            )
        ],
        [one_device_slice()],
        {},
        [
            allocation(
                local_selector(NODE_1), result(f"{REQ_0}/subReq-1", DRIVER_A, POOL_1, DEVICE_1)
            )
        ],
        id="prioritized-list-falls-back-to-fewer-devices",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, taints=[TAINT_NO_SCHEDULE]),
                device(DEVICE_2, taints=[TAINT_NO_EXECUTE]),
            )
        ],
        {},
        None,
        id="tainted-two-devices",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A, tolerations=[TOLERATE_NO_EXECUTE]))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, taints=[TAINT_NO_SCHEDULE]),
                device(DEVICE_2, taints=[TAINT_NO_EXECUTE]),
            )
        ],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_2, tolerations=[TOLERATE_NO_EXECUTE]),
            )
        ],
        id="tainted-two-devices-tolerated",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A), request(REQ_1, CLASS_A))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, consumesCounters=consumes("counter-set-1", memory="4Gi")),
                device(DEVICE_2, consumesCounters=consumes("counter-set-1", memory="6Gi")),
                device(DEVICE_3, consumesCounters=consumes("counter-set-1", memory="4Gi")),
                count=2,
            ),
            counter_slice("slice-2", "counter-set-1", memory="8Gi"),
        ],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                result(REQ_1, DRIVER_A, POOL_1, DEVICE_3),
            )
        ],
        id="partitionable-devices-multiple-devices",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, consumesCounters=consumes("counter-set-1", memory="4Gi")),
                device(DEVICE_2, consumesCounters=consumes("counter-set-1", memory="16Gi")),
                count=2,
            ),
            counter_slice("slice-2", "counter-set-1", memory="18Gi"),
        ],
        {"allocated": [(DRIVER_A, POOL_1, DEVICE_2)]},
        None,
        id="partitionable-devices-no-capacity-available",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [one_device_slice()],
        {"classes": {CLASS_A: device_class(CLASS_A, DRIVER_A, config="classAttribute")}},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                config=[{"source": "FromClass", **device_config(DRIVER_A, "classAttribute")}],
            )
        ],
        id="with-class-device-config",
    ),
    pytest.param(
        [
            claim(
                "claim-0",
                request(REQ_0, CLASS_A),
                request(REQ_1, CLASS_A),
                config=[{"requests": [REQ_0], **device_config(DRIVER_A, "claimAttribute")}],
            )
        ],
        [resource_slice("slice-1", device(DEVICE_1), device(DEVICE_2))],
        {},
        [
            allocation(
                local_selector(NODE_1),
                result(REQ_0, DRIVER_A, POOL_1, DEVICE_1),
                result(REQ_1, DRIVER_A, POOL_1, DEVICE_2),
                config=[
                    {
                        "source": "FromClaim",
                        "requests": [REQ_0],
                        **device_config(DRIVER_A, "claimAttribute"),
                    }
                ],
            )
        ],
        id="claim-with-device-config",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A))],
        [
            resource_slice(
                "slice-1",
                device(DEVICE_1, nodeName=NODE_2),
                device(DEVICE_2, nodeName=NODE_1),
                node=None,
                perDeviceNodeSelection=True,
            )
        ],
        {},
        [allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_2))],
        id="partitionable-devices-per-device-node-selection-nodename",
    ),
    pytest.param(
        [claim("claim-0", request(REQ_0, CLASS_A, 32))],
        [resource_slice("slice-1", *[device(f"device-{i}") for i in range(32)])],
        {},
        "match:many",
        id="many-devices-okay",
    ),
]


@pytest.mark.parametrize(("claims", "slices", "kwargs", "want"), CASES)
def test_allocate(claims, slices, kwargs, want):
    got = allocate(claims, slices, **kwargs)
    if want == "match:many":
        assert len(got[0]["devices"]["results"]) == 32
        return
    assert got == want


@pytest.mark.parametrize(
    ("claims", "slices", "message"),
    [
        pytest.param(
            [claim("claim-0", request(REQ_0, "unknown-class"))],
            [one_device_slice()],
            "claim default/claim-0, request req-0: could not retrieve device class unknown-class",
            id="unknown-class",
        ),
        pytest.param(
            [claim("claim-0", all_devices(REQ_0, CLASS_A))],
            [resource_slice("slice-1", device(DEVICE_1), count=2)],
            "claim default/claim-0, request req-0: asks for all devices, but resource pool "
            "driver-a/pool-1 is currently being updated",
            id="all-devices-of-the-incomplete-pool",
        ),
        pytest.param(
            [claim("claim-0", request(REQ_0, CLASS_A, 1, "noSuchVar"))],
            [one_device_slice()],
            "claim default/claim-0: selector #0: CEL compile error: compilation failed: ERROR: "
            "<input>:1:1: undeclared reference to 'noSuchVar'",
            id="invalid-CEL-one-device",
        ),
        pytest.param(
            [
                claim(
                    "claim-0",
                    request(REQ_0, CLASS_A, 1, f'device.attributes["{DRIVER_A}"].model == "x"'),
                )
            ],
            [one_device_slice()],
            "claim default/claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime "
            "error: no such key: model",
            id="CEL-runtime-error-names-the-device",
        ),
        pytest.param(
            [claim("claim-0", request(REQ_0, CLASS_A, 33))],
            [one_device_slice()],
            "claim default/claim-0, request req-0: adding 33 devices exceeds the claim limit of 32",
            id="too-many-devices-single-request",
        ),
        pytest.param(
            [claim("claim-0", request(REQ_0, CLASS_A), constraints=[{"other": {}}])],
            [one_device_slice()],
            "claim default/claim-0, constraint #0: empty constraint (unsupported constraint type?)",
            id="unknown-constraint",
        ),
        pytest.param(
            [claim("claim-0", request(REQ_0, CLASS_A, allocationMode="Some"))],
            [one_device_slice()],
            "claim default/claim-0, request req-0: unsupported count mode Some",
            id="unknown-allocation-mode",
        ),
    ],
)
def test_errors(claims, slices, message):
    with pytest.raises(AllocationError) as caught:
        allocate(claims, slices)
    assert str(caught.value).startswith(message)


def test_class_selectors_and_a_failing_class_selector():
    classes = {CLASS_A: device_class(CLASS_A, DRIVER_A)}
    classes[CLASS_A]["spec"]["selectors"].append({"cel": {"expression": "1 +"}})
    with pytest.raises(AllocationError, match=r"^class class-a: selector #1: CEL compile error"):
        allocate([claim("claim-0", request(REQ_0, CLASS_A))], [one_device_slice()], classes=classes)


def test_admin_access_devices_may_be_in_use_but_not_twice_in_one_claim():
    slices = [resource_slice("slice-1", device(DEVICE_1))]
    claims = [claim("claim-0", request(REQ_0, CLASS_A, adminAccess=True))]
    got = allocate(claims, slices, allocated=[(DRIVER_A, POOL_1, DEVICE_1)])
    assert got == [
        allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1, admin=True))
    ]
    claims = [claim("claim-0", request(REQ_0, CLASS_A, 2, adminAccess=True))]
    assert allocate(claims, slices) is None


# -- pools kept across cycles (PoolCache) ---------------------------------------------------------


def test_a_kept_pool_answers_until_a_slice_changes():
    pools = PoolCache()
    claims = [claim("claim-0", request(REQ_0, CLASS_A, 1, MEM_2GI))]
    small = resource_slice("slice-1", device(DEVICE_1, capacity={"memory": "1Gi"}), node=NODE_1)
    assert Allocator(CLASSES, [small], (), pools).allocate(NODE, claims) is None
    assert Allocator(CLASSES, [small], (), pools).allocate(NODE, claims) is None
    # The lister hands out a new object for a changed slice: its devices are read again.
    large = resource_slice("slice-1", device(DEVICE_2, capacity={"memory": "2Gi"}), node=NODE_1)
    assert Allocator(CLASSES, [large], (), pools).allocate(NODE, claims) == [
        allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_2))
    ]


def test_a_kept_device_answers_each_selector_for_itself():
    pools = PoolCache()
    slices = [resource_slice("slice-1", device(DEVICE_1, capacity={"memory": "1Gi"}), node=NODE_1)]
    fits = [claim("claim-0", request(REQ_0, CLASS_A, 1, MEM_1GI))]
    too_small = [claim("claim-1", request(REQ_0, CLASS_A, 1, MEM_2GI))]
    assert Allocator(CLASSES, slices, (), pools).allocate(NODE, fits) is not None
    assert Allocator(CLASSES, slices, (), pools).allocate(NODE, too_small) is None
    assert Allocator(CLASSES, slices, (), pools).allocate(NODE, fits) is not None


def test_search_builds_the_allocation_only_when_asked():
    claims = [claim("claim-0", request(REQ_0, CLASS_A))]
    found = Allocator(CLASSES, [one_device_slice()], ()).search(NODE, claims)
    assert found is not None
    assert found.results() is found.results()
    assert found.results() == [
        allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1))
    ]


# -- answers kept across cycles and pods (SearchCache) -------------------------------------------


def renamed(claims):
    """The same claims under other names (another pod's, asking the same thing)."""
    return [
        {**c, "metadata": {**c["metadata"], "name": f"other-{c['metadata']['name']}"}}
        for c in claims
    ]


def kept_search(claims, slices, *, node=NODE, allocated=(), classes=CLASSES, caches=None):
    pools, answers = caches or (PoolCache(), SearchCache())
    found = Allocator(classes, slices, allocated, pools, answers).search(node, claims)
    return found.results() if found is not None else None


@pytest.mark.parametrize(("claims", "slices", "kwargs", "want"), CASES)
def test_a_kept_answer_is_the_searchs_answer(claims, slices, kwargs, want):
    caches = (PoolCache(), SearchCache())
    fresh = allocate(claims, slices, **kwargs)
    for asked in (claims, claims, renamed(claims)):
        assert kept_search(asked, slices, caches=caches, **kwargs) == fresh


def test_a_kept_fit_is_searched_again_once_a_device_of_the_pool_is_in_use():
    caches = (PoolCache(), SearchCache())
    slices = [resource_slice("slice-1", device(DEVICE_1), device(DEVICE_2), node=NODE_1)]
    claims = [claim("claim-0", request(REQ_0, CLASS_A))]
    taken = (DRIVER_A, POOL_1, DEVICE_1)
    assert kept_search(claims, slices, caches=caches) == [
        allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_1))
    ]
    assert kept_search(claims, slices, allocated=[taken], caches=caches) == [
        allocation(local_selector(NODE_1), result(REQ_0, DRIVER_A, POOL_1, DEVICE_2))
    ]
    both = [taken, (DRIVER_A, POOL_1, DEVICE_2)]
    assert kept_search(claims, slices, allocated=both, caches=caches) is None
    # A device of another pool in use changes nothing here: the kept "no" is the answer.
    elsewhere = [*both, (DRIVER_B, POOL_2, DEVICE_1)]
    assert kept_search(claims, slices, allocated=elsewhere, caches=caches) is None
    assert kept_search(claims, slices, caches=caches) is not None


def test_a_device_of_another_node_consuming_the_pools_counters_counts_as_in_use():
    counters = counter_slice("counters", "counter-set-1", memory="8Gi")
    counters["spec"]["pool"]["resourceSliceCount"] = 3
    here = resource_slice(
        "here",
        device(DEVICE_1, consumesCounters=consumes("counter-set-1", memory="6Gi")),
        node=NODE_1,
        count=3,
    )
    there = resource_slice(
        "there",
        device(DEVICE_2, consumesCounters=consumes("counter-set-1", memory="6Gi")),
        node=NODE_2,
        count=3,
    )
    slices = [counters, here, there]
    claims = [claim("claim-0", request(REQ_0, CLASS_A))]
    caches = (PoolCache(), SearchCache())
    assert kept_search(claims, slices, caches=caches) is not None
    in_use_there = [(DRIVER_A, POOL_1, DEVICE_2)]
    assert allocate(claims, slices, allocated=in_use_there) is None
    assert kept_search(claims, slices, allocated=in_use_there, caches=caches) is None


def test_kept_answers_are_dropped_when_a_class_changes():
    caches = (PoolCache(), SearchCache())
    slices = [one_device_slice()]
    claims = [claim("claim-0", request(REQ_0, CLASS_A))]
    assert kept_search(claims, slices, caches=caches) is not None
    narrowed = device_class(CLASS_A, DRIVER_A)
    narrowed["spec"]["selectors"] = [{"cel": {"expression": 'device.driver == "other"'}}]
    assert (
        kept_search(claims, slices, classes={**CLASSES, CLASS_A: narrowed}, caches=caches) is None
    )


def test_claims_asking_differently_get_their_own_answers():
    caches = (PoolCache(), SearchCache())
    slices = [one_device_slice()]
    one = [claim("claim-0", request(REQ_0, CLASS_A))]
    two = [claim("claim-1", request(REQ_0, CLASS_A, 2))]
    assert kept_search(one, slices, caches=caches) is not None
    assert kept_search(two, slices, caches=caches) is None
    assert kept_search(one, slices, caches=caches) is not None


def test_pods_given_one_kept_fit_share_no_allocation_object():
    pools, answers = PoolCache(), SearchCache()
    claims = [claim("claim-0", request(REQ_0, CLASS_A))]
    allocator = Allocator(CLASSES, [one_device_slice()], (), pools, answers)
    first, second = allocator.search(NODE, claims), allocator.search(NODE, renamed(claims))
    assert first is not None and second is not None
    assert first.results() == second.results()
    first.results()[0]["nodeSelector"]["nodeSelectorTerms"].clear()
    assert second.results()[0]["nodeSelector"] == local_selector(NODE_1)


def test_a_search_past_its_timeout_raises_and_nothing_is_kept():
    devices = [device(f"device-{i}") for i in range(40)]
    slices = [resource_slice("slice-1", *devices, node=NODE_1)]
    # Every device of class A is tried with the request of class B, which none serves.
    claims = [claim("claim-0", request(REQ_0, CLASS_A), request(REQ_1, CLASS_B))]
    pools, answers = PoolCache(), SearchCache()
    allocator = Allocator(CLASSES, slices, (), pools, answers)
    with pytest.raises(TimeoutError):
        allocator.search(NODE, claims, timeout=0.0)
    assert allocator.search(NODE, claims, timeout=60.0) is None
