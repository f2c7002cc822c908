"""DefaultPreemption: kube-scheduler's default_preemption_test.go tables (TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers,
TestSelectVictimsOnNode, TestPreempt), preemption/util_test.go (TestFilterVictimsWithPDBViolation,
TestPodTerminatingByPreemption) and validation_pluginargs_test.go, for individual pods."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from kubesched_default_preemption import (
    ACTION_PREEMPTING,
    MESSAGE_PREEMPT_NEVER,
    MESSAGE_PREFIX,
    MESSAGE_TERMINATING_VICTIM,
    MESSAGE_WAITING_FOR_PREEMPTION,
    NAME,
    REASON_NO_VICTIMS,
    REASON_NOT_HELPFUL,
    REASON_PREEMPTED,
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    PodDisruptionBudget,
    disruption_target_condition,
    filter_victims_with_pdb_violation,
    fit_error_message,
    message_disruption_target,
    message_found_placement,
    message_preempted,
    pick_one_node_for_preemption,
)
from preemption_support import (
    HIGH,
    LARGE,
    LOW,
    MEDIUM,
    MID,
    NEG,
    NODE_RES,
    ONE_POD,
    PROFILE_NAME,
    SMALL,
    VERY_HIGH,
    VERY_LARGE,
    Env,
    FalseFilter,
    TestFit,
    epoch,
    names,
    node,
    pdb,
    pod,
)

from kubesched import (
    ActionType,
    ClusterEvent,
    Code,
    ConfigError,
    CycleState,
    EventResource,
    Pod,
    PostFilterResult,
    QueueingHint,
    Status,
    WaitingPod,
)
from kubesched.framework.hookspecs import hookimpl
from kubesched.testing.harness import make_scheduler

UNSCHEDULABLE = Status(Code.UNSCHEDULABLE)
UNRESOLVABLE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
DISRUPTION_TARGET = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
}


def terminating(victim: Pod) -> Pod:
    raw = copy.deepcopy(dict(victim.raw))
    raw["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return Pod(raw)


def deleted(env: Env) -> list[str]:
    return [name for call, name in env.api.kinds() if call == "delete"]


def found(node_name: str, victims: int) -> Status:
    return Status(Code.SUCCESS, MESSAGE_PREFIX + message_found_placement(node_name, victims))


def failed(message: str) -> Status:
    return Status(Code.UNSCHEDULABLE, MESSAGE_PREFIX + message)


# --- args --------------------------------------------------------------------------------------


def test_args_default_to_kubes_v1_values():
    args = DefaultPreemptionArgs.parse({})
    assert (args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute) == (10, 100)
    assert DefaultPreemptionArgs.parse(
        {"minCandidateNodesPercentage": None, "minCandidateNodesAbsolute": 3}
    ) == DefaultPreemptionArgs(10, 3)


PCT = "args.minCandidateNodesPercentage"
ABS = "args.minCandidateNodesAbsolute"


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
        (
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
            [f"{PCT}: Invalid value: -1: not in valid range [0, 100]"],
        ),
        (
            {"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
            [f"{PCT}: Invalid value: 900: not in valid range [0, 100]"],
        ),
        (
            {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
            [f"{ABS}: Invalid value: -1: not in valid range [0, inf)"],
        ),
        (
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            [
                f"{PCT}: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute",
                f"{ABS}: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage",
            ],
        ),
        (
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
            [
                f"{PCT}: Invalid value: -1: not in valid range [0, 100]",
                f"{ABS}: Invalid value: -1: not in valid range [0, inf)",
            ],
        ),
        (
            {"minCandidateNodesPercentage": "10%", "minCandidateNodesAbsolute": True, "x": 1},
            [
                "args.x: unknown field; allowed: minCandidateNodesPercentage, "
                "minCandidateNodesAbsolute",
                f"{PCT}: Invalid value: '10%': must be an int32",
                f"{ABS}: Invalid value: True: must be an int32",
            ],
        ),
    ],
    ids=[
        "valid args (default)",
        "negative minCandidateNodesPercentage",
        "minCandidateNodesPercentage over 100",
        "negative minCandidateNodesAbsolute",
        "all zero",
        "both negative",
        "wrong types and unknown field, all at once",
    ],
)
def test_validate_default_preemption_args(args, errors):
    body = {
        "plugins": {"postFilter": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": args}],
    }
    if not errors:
        make_scheduler({NAME: DefaultPreemption}, body)
        return
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: DefaultPreemption}, body)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].{e}" for e in errors
    ]


@pytest.mark.parametrize(
    ("percentage", "absolute", "nodes", "want"),
    [(10, 100, 5, 5), (10, 100, 5000, 500), (40, 1, 5, 2), (40, 2, 5, 2), (5, 0, 10, 0)],
    ids=["defaults-small", "defaults-large", "percentage", "absolute-floor", "may-be-zero"],
)
def test_calculate_num_candidates(percentage, absolute, nodes, want):
    env = Env(
        [node("n1")],
        args={"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute},
    )
    assert env.plugin.calculate_num_candidates(nodes) == want


# --- TestPostFilter ------------------------------------------------------------------------------

POST_FILTER_CASES: list[dict[str, Any]] = [
    dict(
        id="pod with higher priority can be made schedulable",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", on="node1")],
        nodes=[node("node1", **ONE_POD)],
        statuses={"node1": UNSCHEDULABLE},
        want_result=PostFilterResult("node1"),
        want_status=found("node1", 1),
    ),
    dict(
        id="pod with tied priority is still unschedulable",
        pod=pod("p"),
        pods=[pod("p1", on="node1")],
        nodes=[node("node1", **ONE_POD)],
        statuses={"node1": UNSCHEDULABLE},
        want_result=PostFilterResult(""),
        want_status=failed(f"0/1 nodes are available: 1 {REASON_NO_VICTIMS}."),
    ),
    dict(
        id="preemption should respect filteredNodesStatuses",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", on="node1")],
        nodes=[node("node1", **ONE_POD)],
        statuses={"node1": UNRESOLVABLE},
        want_result=PostFilterResult(""),
        want_status=failed(f"0/1 nodes are available: 1 {REASON_NOT_HELPFUL}."),
    ),
    dict(
        id="preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", on="node1")],
        nodes=[node("node1", **ONE_POD)],
        statuses={},
        want_result=PostFilterResult(""),
        want_status=failed(f"0/1 nodes are available: 1 {REASON_NOT_HELPFUL}."),
    ),
    dict(
        id="pod can be made schedulable on one node",
        pod=pod("p", priority=MID),
        pods=[pod("p1", priority=HIGH, on="node1"), pod("p2", priority=LOW, on="node2")],
        nodes=[node("node1", **ONE_POD), node("node2", **ONE_POD)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
        want_result=PostFilterResult("node2"),
        want_status=found("node2", 1),
    ),
    dict(
        id="pod can be made schedulable on minHighestPriority node",
        pod=pod("p", priority=VERY_HIGH),
        pods=[
            pod("p1", labels={"pdb": "non-violating"}, priority=HIGH, on="node1"),
            pod("p2", labels={"pdb": "violating"}, priority=LOW, on="node1"),
            pod("p3", labels={"pdb": "violating"}, priority=MID, on="node2"),
        ],
        pdbs=[
            pdb({"pdb": "violating"}, allowed=0, name="violating-pdb"),
            pdb({"pdb": "non-violating"}, allowed=2**31 - 1, name="non-violating-pdb"),
        ],
        nodes=[node("node1", **ONE_POD), node("node2", **ONE_POD)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
        want_result=PostFilterResult("node2"),
        want_status=found("node2", 1),
    ),
    dict(
        id="no candidate nodes found, no enough resource after removing low priority pods",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", on="node1"), pod("p2", on="node2")],
        nodes=[node("node1", **NODE_RES), node("node2", **NODE_RES)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
        want_result=PostFilterResult(""),
        want_status=failed("0/2 nodes are available: 2 Insufficient cpu."),
    ),
    dict(
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough "
        "CPU resource",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[
            pod("p1", on="node1", priority=HIGH),
            pod("p2", on="node2"),
            pod("p3", on="node3", priority=HIGH),
        ],
        nodes=[node("node1", **ONE_POD), node("node2", **NODE_RES), node("node3", **ONE_POD)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE, "node3": UNSCHEDULABLE},
        want_result=PostFilterResult(""),
        want_status=failed(f"0/3 nodes are available: 1 Insufficient cpu, 2 {REASON_NO_VICTIMS}."),
    ),
    dict(
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
        "and 2 nodes don't have enough CPU resource",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", on="node1"), pod("p2", on="node2")],
        nodes=[node(f"node{i}", **NODE_RES) for i in range(1, 5)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE, "node4": UNRESOLVABLE},
        want_result=PostFilterResult(""),
        want_status=failed(f"0/4 nodes are available: 2 Insufficient cpu, 2 {REASON_NOT_HELPFUL}."),
    ),
    dict(
        id="only one node but failed with TestPlugin",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", on="node1")],
        nodes=[node("node1", {"error": "true"}, **LARGE)],
        statuses={"node1": UNSCHEDULABLE},
        pre_filters=["ErroringExtensions"],
        want_result=None,
        want_status=Status(
            Code.ERROR,
            MESSAGE_PREFIX
            + 'running RemovePod on PreFilter plugin "ErroringExtensions": failed to remove pod: p',
        ),
    ),
    dict(
        id="one failed with TestPlugin and the other pass",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", on="node1"), pod("p2", on="node2", req=MEDIUM)],
        nodes=[node("node1", {"error": "true"}, **LARGE), node("node2", **LARGE)],
        statuses={"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
        pre_filters=["ErroringExtensions"],
        want_result=PostFilterResult("node2"),
        want_status=found("node2", 1),
    ),
]


@pytest.mark.parametrize("case", POST_FILTER_CASES, ids=[c["id"] for c in POST_FILTER_CASES])
def test_post_filter(case):
    env = Env(
        case["nodes"],
        case["pods"],
        pdbs=case.get("pdbs", ()),
        pre_filters=case.get("pre_filters", ()),
    )
    preemptor = case["pod"]
    result, status = env.plugin.run_post_filter(env.state(preemptor), preemptor, case["statuses"])
    assert status == case["want_status"]
    assert result == case["want_result"]


def test_post_filter_hook_returns_kubes_pair():
    env = Env([node("node1", **ONE_POD)], [pod("p1", on="node1")])
    preemptor = pod("p", priority=HIGH)
    assert env.plugin.post_filter(env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE}) == (
        PostFilterResult("node1"),
        found("node1", 1),
    )


# --- TestDryRunPreemption ------------------------------------------------------------------------

DRY_RUN_CASES: list[dict[str, Any]] = [
    dict(
        id="a pod that does not fit on any node",
        filters=["FalseFilter"],
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH)],
        init=[pod("p1", on="node1", priority=MID), pod("p2", on="node2", priority=MID)],
        expected=[{}],
        calls=[2],
    ),
    dict(
        id="a pod that fits with no preemption",
        filters=["TrueFilter"],
        fake_code="UNSCHEDULABLE",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH)],
        init=[pod("p1", on="node1", priority=MID), pod("p2", on="node2", priority=MID)],
        expected=[{}],
        calls=[2],
    ),
    dict(
        id="a pod that fits on one node with no preemption",
        filters=["MatchFilter"],
        fake_code="UNSCHEDULABLE",
        nodes=["node1", "node2"],
        pods=[pod("node1", priority=HIGH)],
        init=[pod("p1", on="node1", priority=MID), pod("p2", on="node2", priority=MID)],
        expected=[{}],
        calls=[2],
    ),
    dict(
        id="a pod that fits on both nodes when lower priority pods are preempted",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1", on="node1", priority=MID, req=LARGE),
            pod("p2", on="node2", priority=MID, req=LARGE),
        ],
        expected=[{"node1": ["p1"], "node2": ["p2"]}],
        calls=[4],
    ),
    dict(
        id="a pod that would fit on the nodes, but other pods running are higher priority, "
        "no preemption would happen",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=LOW, req=LARGE)],
        init=[
            pod("p1", on="node1", priority=MID, req=LARGE),
            pod("p2", on="node2", priority=MID, req=LARGE),
        ],
        expected=[{}],
        calls=[0],
    ),
    dict(
        id="medium priority pod is preempted, but lower priority one stays as it is small",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1.1", on="node1", priority=LOW, req=SMALL),
            pod("p1.2", on="node1", priority=MID, req=LARGE),
            pod("p2", on="node2", priority=MID, req=LARGE),
        ],
        expected=[{"node1": ["p1.2"], "node2": ["p2"]}],
        calls=[5],
    ),
    dict(
        id="mixed priority pods are preempted",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1.1", on="node1", priority=MID, req=SMALL),
            pod("p1.2", on="node1", priority=LOW, req=SMALL),
            pod("p1.3", on="node1", priority=MID, req=MEDIUM),
            pod("p1.4", on="node1", priority=HIGH, req=SMALL),
            pod("p2", on="node2", priority=HIGH, req=LARGE),
        ],
        expected=[{"node1": ["p1.2", "p1.3"]}],
        calls=[4],
    ),
    dict(
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1.1", on="node1", priority=LOW, req=SMALL, start=epoch(5)),
            pod("p1.2", on="node1", priority=LOW, req=SMALL, start=epoch(4)),
            pod("p1.3", on="node1", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p1.4", on="node1", priority=HIGH, req=SMALL, start=epoch(2)),
            pod("p2", on="node2", priority=HIGH, req=LARGE, start=epoch(1)),
        ],
        expected=[{"node1": ["p1.1", "p1.3"]}],
        calls=[4],
    ),
    dict(
        # InterPodAffinity's anti-affinity in kube's table; ExclusiveFoo keeps the same kind of
        # state through the PreFilter extensions.
        id="pod with anti-affinity is preempted",
        filters=["TestFit", "ExclusiveFoo"],
        nodes=["node1", "node2"],
        pods=[pod("p", labels={"foo": ""}, priority=HIGH, req=SMALL)],
        init=[
            pod("p1.1", on="node1", labels={"foo": ""}, priority=LOW, req=SMALL),
            pod("p1.2", on="node1", priority=MID, req=SMALL),
            pod("p1.3", on="node1", priority=HIGH, req=SMALL),
            pod("p2", on="node2", priority=HIGH, req=SMALL),
        ],
        expected=[{"node1": ["p1.1"]}],
        calls=[3],
    ),
    dict(
        id="get Unschedulable in the preemption phase when the filter plugins filtering the nodes",
        fake_code="UNSCHEDULABLE",
        nodes=["node1", "node2"],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1", on="node1", priority=MID, req=LARGE),
            pod("p2", on="node2", priority=MID, req=LARGE),
        ],
        expected=[{}],
        calls=[2],
    ),
    dict(
        id="preemption with violation of same pdb",
        nodes=["node1"],
        pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
        init=[
            pod("p1.1", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
            pod("p1.2", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=1)],
        expected=[{"node1": (["p1.1", "p1.2"], 1)}],
        calls=[3],
    ),
    dict(
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim doesn't belong to DisruptedPods",
        nodes=["node1"],
        pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
        init=[
            pod("p1.1", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
            pod("p1.2", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p2"])],
        expected=[{"node1": (["p1.1", "p1.2"], 1)}],
        calls=[3],
    ),
    dict(
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim belongs to DisruptedPods",
        nodes=["node1"],
        pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
        init=[
            pod("p1.1", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
            pod("p1.2", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p1.2"])],
        expected=[{"node1": ["p1.1", "p1.2"]}],
        calls=[3],
    ),
    dict(
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim which belongs to DisruptedPods is treated as 'nonViolating'",
        nodes=["node1"],
        pods=[pod("p", priority=HIGH, req=VERY_LARGE)],
        init=[
            pod("p1.1", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
            pod("p1.2", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
            pod("p1.3", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=1, disrupted=["p1.3"])],
        expected=[{"node1": (["p1.1", "p1.2", "p1.3"], 1)}],
        calls=[4],
    ),
    dict(
        id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        nodes=[f"node{i}" for i in range(1, 6)],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[pod(f"p{i}", on=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        # kube's seeded offset source gives 4: node5, node1.
        offsets=[4],
        expected=[{"node1": ["p1"], "node5": ["p5"]}],
        calls=[4],
    ),
    dict(
        id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        nodes=[f"node{i}" for i in range(1, 6)],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1", on="node1", priority=MID, req=LARGE),
            pod("p2", on="node2", priority=VERY_HIGH, req=LARGE),
            pod("p3", on="node3", priority=MID, req=LARGE),
            pod("p4", on="node4", priority=MID, req=LARGE),
            pod("p5", on="node5", priority=VERY_HIGH, req=LARGE),
        ],
        offsets=[4],  # node5 (no), node1 (yes), node2 (no), node3 (yes)
        expected=[{"node1": ["p1"], "node3": ["p3"]}],
        calls=[4],
    ),
    dict(
        id="preemption offset across multiple scheduling cycles and wrap around",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
        nodes=[f"node{i}" for i in range(1, 6)],
        pods=[pod(f"tp{i}", priority=HIGH, req=LARGE) for i in range(1, 4)],
        init=[pod(f"p{i}", on=f"node{i}", priority=MID, req=LARGE) for i in range(1, 6)],
        offsets=[4, 1, 3],
        expected=[
            {"node1": ["p1"], "node5": ["p5"]},
            {"node2": ["p2"], "node3": ["p3"]},
            {"node4": ["p4"], "node5": ["p5"]},
        ],
        calls=[4, 4, 4],
    ),
    dict(
        id="preemption looks past numCandidates until a non-PDB violating node is found",
        args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
        nodes=[f"node{i}" for i in range(1, 6)],
        pods=[pod("p", priority=HIGH, req=LARGE)],
        init=[
            pod("p1", on="node1", labels={"app": "foo"}, priority=MID, req=LARGE),
            pod("p2", on="node2", labels={"app": "foo"}, priority=MID, req=LARGE),
            pod("p3", on="node3", priority=MID, req=LARGE),
            pod("p4", on="node4", priority=MID, req=LARGE),
            pod("p5", on="node5", labels={"app": "foo"}, priority=MID, req=LARGE),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=0)],
        offsets=[4],  # node5 (pdb), node1 (pdb), node2 (pdb, list full), node3 (yes)
        expected=[{"node1": (["p1"], 1), "node3": ["p3"], "node5": (["p5"], 1)}],
        calls=[8],
    ),
]


@pytest.mark.parametrize("case", DRY_RUN_CASES, ids=[c["id"] for c in DRY_RUN_CASES])
def test_dry_run_preemption(case):
    env = Env(
        [node(n, **VERY_LARGE) for n in case["nodes"]],
        case["init"],
        filters=case.get("filters", ["TestFit"]),
        fake_code=case.get("fake_code", "SUCCESS"),
        args=case.get("args"),
    )
    pdbs = [PodDisruptionBudget.from_dict(p) for p in case.get("pdbs", ())]
    offsets = case.get("offsets", [0] * len(case["pods"]))
    for cycle, preemptor in enumerate(case["pods"]):
        before = env.filter_calls()
        _, num_candidates = env.plugin.get_offset_and_num_candidates(len(env.node_infos))
        candidates, _statuses, _errors = env.plugin.dry_run_preemption(
            env.state(preemptor), preemptor, env.node_infos, pdbs, offsets[cycle], num_candidates
        )
        got = {c.name: (names(c.victims), c.num_pdb_violations) for c in candidates}
        want = {
            name: victims if isinstance(victims, tuple) else (victims, 0)
            for name, victims in case["expected"][cycle].items()
        }
        assert got == want, f"cycle {cycle}"
        assert env.filter_calls() - before == case["calls"][cycle], f"cycle {cycle}"


def test_dry_run_keeps_the_snapshot_and_state_intact():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [pod("p1", on="node1", priority=LOW, req=LARGE)],
        filters=["TestFit", "ExclusiveFoo"],
    )
    preemptor = pod("p", priority=HIGH, req=LARGE, labels={"foo": ""})
    state = env.state(preemptor)
    counts = dict(state.read("PreFilterExclusiveFoo"))
    candidates, _, _ = env.plugin.dry_run_preemption(state, preemptor, env.node_infos, [], 0, 1)
    assert [c.name for c in candidates] == ["node1"]
    assert list(env.node_info("node1").pods) == ["p1"]
    assert state.read("PreFilterExclusiveFoo") == counts


class SignedFit(TestFit):
    """TestFit that signs the pods it reads (their requests), so that its answers, and the dry
    run's on an unchanged node, may be reused for the next pod like it."""

    __test__ = False
    name = "SignedFit"

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        return sorted((pod.raw.get("spec") or {}).get("containers", [{}])[0].items(), key=str)


def test_a_dry_run_is_reused_for_a_pod_signed_alike_until_the_node_or_pdbs_change():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [pod("v1", on="node1", priority=LOW, req=LARGE, labels={"app": "foo"})],
        filters=["SignedFit"],
        extra={SignedFit.name: SignedFit},
    )
    dry_runs: list[str] = []
    select = env.plugin.select_victims_on_node

    def counted(state, preemptor, node_info, pdbs):
        dry_runs.append(preemptor.name)
        return select(state, preemptor, node_info, pdbs)

    env.plugin.select_victims_on_node = counted  # type: ignore[method-assign]

    def candidates(name: str) -> dict[str, tuple[list[str], int]]:
        preemptor = pod(name, priority=HIGH, req=LARGE)
        state: CycleState = env.state(preemptor)
        state.signature = env.framework.sign_pod(preemptor)
        statuses = {"node1": Status.unschedulable("Insufficient cpu")}
        found, _, _ = env.plugin.find_candidates(state, env.node_infos, preemptor, statuses)
        return {c.name: (names(c.victims), c.num_pdb_violations) for c in found}

    assert candidates("p1") == {"node1": (["v1"], 0)}
    assert candidates("p2") == {"node1": (["v1"], 0)}
    assert dry_runs == ["p1"], "the node and the PDBs are unchanged: p1's answer holds"
    env.backend.objects["PodDisruptionBudget"] = [pdb({"app": "foo"}, allowed=0)]
    assert candidates("p3") == {"node1": (["v1"], 1)}
    env.backend.add_pod(pod("v2", on="node1", priority=LOW, req=LARGE))  # the node changes
    env.refresh()
    assert candidates("p4") == {"node1": (["v1", "v2"], 1)}
    assert dry_runs == ["p1", "p3", "p4"]


# --- TestSelectBestCandidate ---------------------------------------------------------------------

BEST_CANDIDATE_CASES: list[dict[str, Any]] = [
    dict(
        id="a pod that fits on both nodes when lower priority pods are preempted",
        nodes=["node1", "node2"],
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[
            pod("p1", on="node1", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2", on="node2", priority=MID, req=LARGE, start=epoch(0)),
        ],
        expected=["node1", "node2"],
    ),
    dict(
        id="node with min highest priority pod is picked",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p1.2", on="node1", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2.1", on="node2", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p2.2", on="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("p3.1", on="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("p3.2", on="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
        ],
        expected=["node3"],
    ),
    dict(
        id="when highest priorities are the same, minimum sum of priorities is picked",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p1.2", on="node1", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2.1", on="node2", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2.2", on="node2", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p3.2", on="node3", priority=MID, req=MEDIUM, start=epoch(0)),
        ],
        expected=["node2"],
    ),
    dict(
        id="when highest priority and sum are the same, minimum number of pods is picked",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=SMALL, start=epoch(0)),
            pod("p1.2", on="node1", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p1.3", on="node1", priority=MID, req=SMALL, start=epoch(0)),
            pod("p1.4", on="node1", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p2.1", on="node2", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2.2", on="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p3.2", on="node3", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p3.3", on="node3", priority=LOW, req=SMALL, start=epoch(0)),
        ],
        expected=["node2"],
    ),
    dict(
        id="sum of adjusted priorities is considered",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=SMALL, start=epoch(0)),
            pod("p1.2", on="node1", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p1.3", on="node1", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p2.1", on="node2", priority=MID, req=LARGE, start=epoch(0)),
            pod("p2.2", on="node2", priority=NEG, req=MEDIUM, start=epoch(0)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p3.2", on="node3", priority=NEG, req=SMALL, start=epoch(0)),
            pod("p3.3", on="node3", priority=LOW, req=SMALL, start=epoch(0)),
        ],
        expected=["node2"],
    ),
    dict(
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
        nodes=["node1", "node2", "node3", "node4"],
        pod=pod("p", priority=VERY_HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=SMALL, start=epoch(0)),
            pod("p1.2", on="node1", priority=LOW, req=SMALL, start=epoch(0)),
            pod("p1.3", on="node1", priority=LOW, req=SMALL, start=epoch(0)),
            pod("p2.1", on="node2", priority=HIGH, req=LARGE, start=epoch(0)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p3.2", on="node3", priority=LOW, req=SMALL, start=epoch(0)),
            pod("p3.3", on="node3", priority=LOW, req=SMALL, start=epoch(0)),
            pod("p3.4", on="node3", priority=LOW, req=MEDIUM, start=epoch(0)),
            pod("p4.1", on="node4", priority=MID, req=MEDIUM, start=epoch(0)),
            pod("p4.2", on="node4", priority=MID, req=SMALL, start=epoch(0)),
            pod("p4.3", on="node4", priority=MID, req=SMALL, start=epoch(0)),
            pod("p4.4", on="node4", priority=NEG, req=SMALL, start=epoch(0)),
        ],
        expected=["node1"],
    ),
    dict(
        id="same priority, same number of victims, different start time for each node's pod",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p1.2", on="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", on="node2", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p2.2", on="node2", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(1)),
            pod("p3.2", on="node3", priority=MID, req=MEDIUM, start=epoch(1)),
        ],
        expected=["node2"],
    ),
    dict(
        id="same priority, same number of victims, different start time for all pods",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=MID, req=MEDIUM, start=epoch(4)),
            pod("p1.2", on="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", on="node2", priority=MID, req=MEDIUM, start=epoch(5)),
            pod("p2.2", on="node2", priority=MID, req=MEDIUM, start=epoch(1)),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM, start=epoch(3)),
            pod("p3.2", on="node3", priority=MID, req=MEDIUM, start=epoch(6)),
        ],
        expected=["node3"],
    ),
    dict(
        id="different priority, same number of victims, different start time for all pods",
        nodes=["node1", "node2", "node3"],
        pod=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=LOW, req=MEDIUM, start=epoch(4)),
            pod("p1.2", on="node1", priority=MID, req=MEDIUM, start=epoch(2)),
            pod("p2.1", on="node2", priority=MID, req=MEDIUM, start=epoch(6)),
            pod("p2.2", on="node2", priority=LOW, req=MEDIUM, start=epoch(1)),
            pod("p3.1", on="node3", priority=LOW, req=MEDIUM, start=epoch(3)),
            pod("p3.2", on="node3", priority=MID, req=MEDIUM, start=epoch(5)),
        ],
        expected=["node2"],
    ),
]


@pytest.mark.parametrize("case", BEST_CANDIDATE_CASES, ids=[c["id"] for c in BEST_CANDIDATE_CASES])
@pytest.mark.parametrize("offset", [0, 1, 2], ids=lambda o: f"offset{o}")
def test_select_best_candidate(case, offset):
    env = Env([node(n, **VERY_LARGE) for n in case["nodes"]], case["pods"])
    preemptor = case["pod"]
    infos = env.node_infos
    _, num = env.plugin.get_offset_and_num_candidates(len(infos))
    candidates, _, _ = env.plugin.dry_run_preemption(
        env.state(preemptor), preemptor, infos, [], offset % len(infos), num
    )
    best = env.plugin.select_candidate(candidates)
    assert best is not None
    assert best.name in case["expected"]


@pytest.mark.parametrize(
    ("candidates", "want"),
    [
        ([], None),
        ([("a", [LOW], 1), ("b", [HIGH], 0)], "b"),
        ([("a", [MID], 0), ("b", [LOW, LOW], 0)], "b"),
        ([("a", [MID, NEG, NEG], 0), ("b", [MID, NEG], 0)], "b"),
        ([("a", [MID, LOW], 0), ("b", [MID, LOW], 0)], "a"),
    ],
    ids=["none", "fewest-pdb-violations", "lowest-highest", "adjusted-sum", "first-on-tie"],
)
def test_pick_one_node_for_preemption(candidates, want):
    built = [
        Candidate(name, [pod(f"{name}{i}", priority=p) for i, p in enumerate(prios)], pdbs)
        for name, prios, pdbs in candidates
    ]
    picked = pick_one_node_for_preemption(built)
    assert (picked.name if picked else None) == want


# --- TestPodEligibleToPreemptOthers --------------------------------------------------------------

ELIGIBLE_CASES: list[dict[str, Any]] = [
    dict(
        id="Pod with nominated node",
        pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        pods=[pod("p1", priority=LOW, on="node1", terminating=True)],
        nodes=["node1"],
        status=Status.unresolvable("node(s) had untolerated taint(s)"),
        expected=True,
    ),
    dict(
        id="Pod without nominated node",
        pod=pod("p_without_nominated_node", priority=HIGH),
        pods=[],
        nodes=[],
        status=None,
        expected=True,
    ),
    dict(
        id="Pod with 'PreemptNever' preemption policy",
        pod=pod("p_with_preempt_never_policy", priority=HIGH, policy="Never"),
        pods=[],
        nodes=[],
        status=None,
        expected=False,
    ),
    dict(
        id="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget "
        "condition",
        pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        pods=[
            pod(
                "p1",
                priority=LOW,
                on="node1",
                terminating=True,
                conditions=[DISRUPTION_TARGET],
            )
        ],
        nodes=["node1"],
        status=None,
        expected=False,
    ),
    dict(
        id="non-victim Pods terminating",
        pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
        pods=[pod("p1", priority=LOW, on="node1", terminating=True)],
        nodes=["node1"],
        status=None,
        expected=True,
    ),
    dict(
        id="a terminating victim of higher priority does not count",
        pod=pod("p_with_nominated_node", priority=MID, nominated="node1"),
        pods=[
            pod("p1", priority=HIGH, on="node1", terminating=True, conditions=[DISRUPTION_TARGET])
        ],
        nodes=["node1"],
        status=None,
        expected=True,
    ),
]


@pytest.mark.parametrize("case", ELIGIBLE_CASES, ids=[c["id"] for c in ELIGIBLE_CASES])
def test_pod_eligible_to_preempt_others(case):
    env = Env([node(n) for n in case["nodes"]] or [node("other")], case["pods"])
    eligible, message = env.plugin.pod_eligible_to_preempt_others(case["pod"], case["status"])
    assert eligible is case["expected"]
    if case["pod"].preemption_policy == "Never":
        assert message == MESSAGE_PREEMPT_NEVER
    elif not eligible:
        assert message == MESSAGE_TERMINATING_VICTIM


@pytest.mark.parametrize(
    ("victim", "want"),
    [
        (pod("p1"), False),
        (pod("p1", terminating=True), False),
        (pod("p1", terminating=True, conditions=[{**DISRUPTION_TARGET, "status": "False"}]), False),
        (
            pod("p1", terminating=True, conditions=[{**DISRUPTION_TARGET, "reason": "Other"}]),
            False,
        ),
        (pod("p1", terminating=True, conditions=[DISRUPTION_TARGET]), True),
    ],
    ids=[
        "pod without DeletionTimestamp",
        "pod with DeletionTimestamp but no DisruptionTarget condition",
        "pod with DeletionTimestamp, DisruptionTarget condition status False",
        "pod with DeletionTimestamp, DisruptionTarget condition reason not PreemptionByScheduler",
        "pod with DeletionTimestamp, DisruptionTarget condition status True and reason "
        "PreemptionByScheduler",
    ],
)
def test_pod_terminating_by_preemption(victim, want):
    env = Env([node("node1")])
    assert env.plugin._terminating_by_preemption(victim) is want


def test_eligibility_check_runs_through_post_filter():
    env = Env([node("node1", **ONE_POD)], [pod("p1", on="node1")])
    preemptor = pod("p", priority=HIGH, policy="Never")
    result, status = env.plugin.run_post_filter(
        env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE}
    )
    assert result is None  # the nomination is left as it is
    assert status == failed(MESSAGE_PREEMPT_NEVER)
    assert env.pods_left() == ["p1"]


# --- TestSelectVictimsOnNode ---------------------------------------------------------------------

VICTIM_CASES: list[dict[str, Any]] = [
    dict(
        id="Basic: Preempt single lower priority pod",
        pods=[pod("victim", on="node1", priority=LOW, req=LARGE)],
        preemptor=pod("p", priority=HIGH, req=LARGE),
        expected={"victim"},
        violating=0,
    ),
    dict(
        id="Priority: Prefer lower priority victim",
        pods=[
            pod("high-prio", on="node1", priority=HIGH, req=SMALL),
            pod("mid-prio", on="node1", priority=MID, req=SMALL),
            pod("low-prio", on="node1", priority=LOW, req=SMALL),
        ],
        preemptor=pod("p", priority=HIGH, req=LARGE),
        expected={"low-prio"},
        violating=0,
    ),
    dict(
        id="PDB: Prefer non-violating victim with higher priority over violating victim with "
        "lower priority",
        pods=[
            pod("victim-pdb", on="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
            pod("victim-no-pdb", on="node1", priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=0)],
        preemptor=pod("p", priority=HIGH, req=LARGE),
        expected={"victim-no-pdb"},
        violating=0,
    ),
    dict(
        id="PDB: Prefer lower prioirity pod for preemption, when preemption without pdb "
        "violation is not possible",
        pods=[
            pod("v1", on="node1", labels={"app": "foo"}, priority=LOW, req=MEDIUM),
            pod("v2", on="node1", labels={"app": "foo"}, priority=MID, req=MEDIUM),
        ],
        pdbs=[pdb({"app": "foo"}, allowed=0)],
        preemptor=pod("p", priority=HIGH, req=LARGE),
        expected={"v1"},
        violating=1,
    ),
    dict(
        id="Failure: Cannot preempt the victim with higher priority",
        pods=[pod("victim", on="node1", priority=HIGH)],
        preemptor=pod("p", priority=MID),
        status=Status.unresolvable(REASON_NO_VICTIMS),
    ),
    dict(
        id="Failure: Cannot preempt if node is empty",
        pods=[],
        preemptor=pod("p", priority=MID),
        status=Status.unresolvable(REASON_NO_VICTIMS),
    ),
]


@pytest.mark.parametrize("case", VICTIM_CASES, ids=[c["id"] for c in VICTIM_CASES])
def test_select_victims_on_node(case):
    env = Env([node("node1", **VERY_LARGE)], case["pods"])
    preemptor = case["preemptor"]
    pdbs = [PodDisruptionBudget.from_dict(p) for p in case.get("pdbs", ())]
    victims, violating, status = env.plugin.select_victims_on_node(
        env.state(preemptor), preemptor, env.node_info("node1").clone(), pdbs
    )
    if "status" in case:
        assert status == case["status"]
        assert victims == []
        return
    assert status is None
    assert {v.name for v in victims} == case["expected"]
    assert violating == case["violating"]


def test_victims_are_ordered_most_important_first():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [
            pod("old-low", on="node1", priority=LOW, req=SMALL, start=epoch(1)),
            pod("mid", on="node1", priority=MID, req=SMALL, start=epoch(9)),
            pod("new-low", on="node1", priority=LOW, req=SMALL, start=epoch(5)),
            pod("protected", on="node1", labels={"app": "foo"}, priority=NEG, req=SMALL),
            pod("neg", on="node1", priority=NEG, req=SMALL),
        ],
    )
    preemptor = pod("p", priority=HIGH, req=VERY_LARGE)
    pdbs = [PodDisruptionBudget.from_dict(pdb({"app": "foo"}, allowed=0))]
    victims, violating, status = env.plugin.select_victims_on_node(
        env.state(preemptor), preemptor, env.node_info("node1").clone(), pdbs
    )
    assert status is None and violating == 1
    assert [v.name for v in victims] == ["mid", "old-low", "new-low", "protected", "neg"]


def test_filter_runs_with_higher_priority_nominated_pods():
    # node1's room is promised to a nominated pod of higher priority than the preemptor: removing
    # node1's low pods does not make room there, so node2 is chosen although its victim
    # has the higher priority.
    env = Env(
        [node("node1", **VERY_LARGE), node("node2", **VERY_LARGE)],
        [
            pod("low", on="node1", priority=LOW, req=LARGE),
            pod("mid", on="node2", priority=MID, req=VERY_LARGE),
        ],
    )
    env.scheduler.queue.nominator.add(pod("vip", priority=VERY_HIGH, req=LARGE), "node1")
    preemptor = pod("p", priority=HIGH, req=LARGE)
    result, status = env.plugin.run_post_filter(
        env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE}
    )
    assert (result, status) == (PostFilterResult("node2"), found("node2", 1))
    assert env.pods_left() == ["low"]


# --- TestFilterVictimsWithPDBViolation -----------------------------------------------------------


@pytest.mark.parametrize(
    ("victims", "pdbs", "violating", "non_violating"),
    [
        ([], [], [], []),
        ([pod("p1", labels={"app": "foo"})], [pdb({"app": "bar"})], [], ["p1"]),
        ([pod("p1", labels={"app": "foo"})], [pdb({"app": "foo"}, allowed=1)], [], ["p1"]),
        ([pod("p1", labels={"app": "foo"})], [pdb({"app": "foo"}, allowed=0)], ["p1"], []),
        (
            [pod("p1", labels={"app": "foo"}), pod("p2", labels={"app": "foo"})],
            [pdb({"app": "foo"}, allowed=1)],
            ["p2"],
            ["p1"],
        ),
        (
            [pod("p1", labels={"app": "foo"})],
            [pdb({"app": "foo"}, allowed=0, disrupted=["p1"])],
            [],
            ["p1"],
        ),
        ([pod("p1", labels={"app": "foo"})], [pdb({}, allowed=0)], [], ["p1"]),
        ([pod("p1", labels={"app": "foo"})], [pdb(None, allowed=0)], [], ["p1"]),
        (
            [pod("p1", labels={"app": "foo", "tier": "backend"})],
            [pdb({"app": "foo"}, allowed=1), pdb({"tier": "backend"}, allowed=0)],
            ["p1"],
            [],
        ),
        (
            [pod("p1", labels={"app": "foo"}, namespace="other")],
            [pdb({"app": "foo"}, allowed=0)],
            [],
            ["p1"],
        ),
        ([pod("p1")], [pdb({}, allowed=0)], [], ["p1"]),
        (
            [pod("p1", labels={"app": "foo"})],
            [
                {
                    "metadata": {"namespace": "default"},
                    "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "?"}]}},
                    "status": {"disruptionsAllowed": 0},
                }
            ],
            [],
            ["p1"],
        ),
    ],
    ids=[
        "no victims, no PDBs",
        "victim with no matching PDBs",
        "victim matching PDB, adequate DisruptionsAllowed",
        "victim matching PDB, no DisruptionsAllowed",
        "multiple victims matching the same PDB",
        "pod in DisruptedPods is ignored",
        "PDB with empty selector",
        "PDB without selector",
        "Multiple PDBs",
        "PDB of another namespace",
        "pod without labels",
        "PDB with an invalid selector",
    ],
)
def test_filter_victims_with_pdb_violation(victims, pdbs, violating, non_violating):
    got_violating, got_non_violating = filter_victims_with_pdb_violation(
        victims, [PodDisruptionBudget.from_dict(p) for p in pdbs]
    )
    assert [(v.name, n) for v, n in got_violating] == [(name, 1) for name in violating]
    assert [v.name for v in got_non_violating] == non_violating


# --- TestPreempt ---------------------------------------------------------------------------------

PREEMPT_CASES: list[dict[str, Any]] = [
    dict(
        id="basic preemption logic",
        preemptor=pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
        pods=[
            pod("p1.1", on="node1", priority=LOW, req=SMALL),
            pod("p1.2", on="node1", priority=LOW, req=SMALL),
            pod("p2.1", on="node2", priority=HIGH, req=LARGE),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM),
        ],
        nodes=["node1", "node2", "node3"],
        want=PostFilterResult("node1"),
        expected=["p1.1", "p1.2"],
    ),
    dict(
        id="no preempting in pod",
        preemptor=pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
        pods=[
            pod("p1.1", on="node1", priority=LOW, req=SMALL),
            pod("p1.2", on="node1", priority=LOW, req=SMALL),
            pod("p2.1", on="node2", priority=HIGH, req=LARGE),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM),
        ],
        nodes=["node1", "node2", "node3"],
        want=None,
        expected=[],
    ),
    dict(
        id="PreemptionPolicy is nil",
        preemptor=pod("p", priority=HIGH, req=VERY_LARGE),
        pods=[
            pod("p1.1", on="node1", priority=LOW, req=SMALL),
            pod("p1.2", on="node1", priority=LOW, req=SMALL),
            pod("p2.1", on="node2", priority=HIGH, req=LARGE),
            pod("p3.1", on="node3", priority=MID, req=MEDIUM),
        ],
        nodes=["node1", "node2", "node3"],
        want=PostFilterResult("node1"),
        expected=["p1.1", "p1.2"],
    ),
]


@pytest.mark.parametrize("case", PREEMPT_CASES, ids=[c["id"] for c in PREEMPT_CASES])
def test_preempt(case):
    env = Env([node(n, **VERY_LARGE) for n in case["nodes"]], case["pods"])
    preemptor = case["preemptor"]
    everyone = sorted(p.name for p in case["pods"])
    statuses = {n: UNSCHEDULABLE for n in case["nodes"]}
    result, status = env.plugin.preempt(env.state(preemptor), preemptor, statuses)
    assert status.is_success() or status.is_rejected()
    assert result == case["want"]
    assert env.pods_left() == sorted(set(everyone) - set(case["expected"]))
    if result is None:
        return
    assert status == Status(
        Code.SUCCESS, message_found_placement(result.nominated_node_name, len(case["expected"]))
    )

    # The victims are still terminating (an apiserver keeps them through their grace period),
    # with the DisruptionTarget condition written before their deletion: preempting again for
    # the nominated pod must not choose more victims.
    env2 = Env(
        [node(n, **VERY_LARGE) for n in case["nodes"]],
        [terminating(env.api.stored.get(p.name, p)) for p in case["pods"]],
    )
    renominated = pod("p", priority=HIGH, req=VERY_LARGE, nominated=result.nominated_node_name)
    result2, status2 = env2.plugin.preempt(env2.state(renominated), renominated, statuses)
    assert result2 is None
    assert status2 == Status(Code.UNSCHEDULABLE, MESSAGE_TERMINATING_VICTIM)
    assert env2.pods_left() == everyone


def test_terminating_victims_are_not_deleted_again():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [
            pod("gone", on="node1", priority=LOW, req=LARGE, terminating=True),
            pod("live", on="node1", priority=LOW, req=LARGE),
        ],
    )
    preemptor = pod("p", priority=HIGH, req=VERY_LARGE)
    result, status = env.plugin.preempt(env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE})
    assert (result, status) == (
        PostFilterResult("node1"),
        Status(Code.SUCCESS, message_found_placement("node1", 2)),
    )
    assert env.api.kinds() == [("patch", "live"), ("delete", "live"), ("event", "live")]


def test_a_victim_waiting_at_permit_is_rejected_not_deleted():
    env = Env([node("node1", **VERY_LARGE)], [pod("low", on="node1", priority=LOW, req=LARGE)])
    waiting = WaitingPod(env.backend.pods["low"], "node1", {"Gate": 60.0})
    env.plugin.handle.waiting_pods.add(waiting)
    preemptor = pod("p", priority=HIGH, req=VERY_LARGE)
    result, _ = env.plugin.preempt(env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE})
    assert result == PostFilterResult("node1")
    assert env.pods_left() == ["low"]
    verdict = waiting.wait()
    assert (verdict.code, verdict.reasons, verdict.plugin) == (
        Code.UNSCHEDULABLE,
        ("preempted",),
        NAME,
    )
    # No condition and no deletion, but the Preempted event all the same (as kube records it).
    assert env.api.kinds() == [("event", "low")]


def test_lower_priority_nominations_on_the_chosen_node_are_cleared():
    below, above, elsewhere = (
        pod("below", priority=LOW + 1),
        pod("above", priority=VERY_HIGH),
        pod("elsewhere", priority=LOW),
    )
    env = Env(
        [node("node1", **VERY_LARGE), node("node2", **VERY_LARGE)],
        [pod("low", on="node1", priority=LOW, req=LARGE), below, above, elsewhere],
    )
    nominator = env.scheduler.queue.nominator
    nominator.add(below, "node1")
    nominator.add(above, "node1")
    nominator.add(elsewhere, "node2")
    preemptor = pod("p", priority=HIGH, req=LARGE)
    result, _ = env.plugin.preempt(
        env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE, "node2": UNRESOLVABLE}
    )
    assert result == PostFilterResult("node1")
    assert [p.name for p in nominator.nominated_pods_for_node("node1")] == ["above"]
    assert nominator.node_of(elsewhere) == "node2"
    # Through the API as well, before any victim is touched (kube's asynchronous order).
    assert env.api.calls[0] == ("patch", "below", [], "")
    assert env.api.kinds() == [
        ("patch", "below"),
        ("patch", "low"),
        ("delete", "low"),
        ("event", "low"),
    ]
    assert env.backend.nominations == {"default/below": ""}


def test_no_nodes_is_an_error():
    env = Env([node("node1")])
    preemptor = pod("p", priority=HIGH)
    candidates, statuses, errors = env.plugin.find_candidates(
        env.state(preemptor), [], preemptor, {}
    )
    assert (candidates, statuses, errors) == ([], {}, ["no nodes available"])


def test_a_node_where_nothing_needs_to_go_is_an_error():
    # The Filter statuses say node1 is Unschedulable, yet the pod fits with every pod kept.
    env = Env([node("node1", **VERY_LARGE)], [pod("low", on="node1", priority=LOW, req=SMALL)])
    preemptor = pod("p", priority=HIGH, req=SMALL)
    result, status = env.plugin.run_post_filter(
        env.state(preemptor), preemptor, {"node1": UNSCHEDULABLE}
    )
    assert result is None
    assert status == Status(
        Code.ERROR, MESSAGE_PREFIX + 'expected at least one victim pod on node "node1"'
    )


@pytest.mark.parametrize(
    ("statuses", "nodes", "want"),
    [
        ({}, 3, f"0/3 nodes are available: 3 {REASON_NOT_HELPFUL}."),
        (
            {"a": Status.unschedulable("x", "y"), "b": Status.unschedulable("x")},
            2,
            "0/2 nodes are available: 1 y, 2 x.",
        ),
        ({"a": Status.unschedulable()}, 1, "0/1 nodes are available:"),
    ],
    ids=["all-absent", "reasons-counted-and-sorted-as-strings", "no-reasons"],
)
def test_fit_error_message(statuses, nodes, want):
    assert fit_error_message(nodes, statuses) == want


def test_start_time_without_a_start_is_the_newest():
    from kubesched_default_preemption.victims import start_time

    assert start_time(pod("p")) == math.inf
    assert start_time(pod("p", start="1970-01-01T00:00:05Z")) == 5.0
    assert start_time(pod("p", start="not a time")) == math.inf


# --- actuation: DisruptionTarget, deletion, Preempted, in the background -------------------------

#: The condition the victims of a preemptor of profile custom-scheduler get (without its time).
VICTIM_CONDITION = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "PreemptionByScheduler",
    "message": "custom-scheduler: preempting to accommodate a higher priority pod",
}


def without_time(condition: dict[str, Any] | None) -> dict[str, Any] | None:
    if condition is None:
        return None
    return {k: v for k, v in condition.items() if k != "lastTransitionTime"}


def two_victims() -> Env:
    return Env(
        [node("node1", **VERY_LARGE)],
        [
            pod("v1", on="node1", priority=LOW, req=LARGE, start=epoch(1)),
            pod("v2", on="node1", priority=LOW, req=LARGE, start=epoch(2)),
        ],
    )


PREEMPTOR = pod("p", priority=HIGH, req=VERY_LARGE)


def test_each_victim_gets_the_condition_then_is_deleted_then_gets_the_event():
    env = two_victims()
    result, status = env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert (result, status) == (
        PostFilterResult("node1"),
        Status(Code.SUCCESS, message_found_placement("node1", 2)),
    )
    assert env.pods_left() == []
    assert env.api.kinds() == [
        ("patch", "v1"),
        ("delete", "v1"),
        ("event", "v1"),
        ("patch", "v2"),
        ("delete", "v2"),
        ("event", "v2"),
    ]
    _, _, conditions, nomination = env.api.calls[0]
    assert [without_time(c) for c in conditions] == [VICTIM_CONDITION]
    assert conditions[0]["lastTransitionTime"].endswith("Z")
    assert nomination is None
    assert env.api.calls[2] == (
        "event",
        "v1",
        "Normal",
        REASON_PREEMPTED,
        ACTION_PREEMPTING,
        "Preempted by pod p on node node1",
        PROFILE_NAME,
        "p",
    )
    # The in-memory backend kept the condition on the pod until it deleted it.
    assert env.api.stored["v1"].raw["status"]["conditions"][0]["type"] == "DisruptionTarget"
    # The preemptor is the event's related object (kube's ``Eventf(victim, preemptor, ...)``).
    assert [(e.reason, e.pod, e.related) for e in env.backend.events] == [
        (REASON_PREEMPTED, "default/v1", "default/p"),
        (REASON_PREEMPTED, "default/v2", "default/p"),
    ]


def test_kubes_wording():
    assert message_disruption_target("s") == "s: preempting to accommodate a higher priority pod"
    assert message_preempted("uid-1", "n1") == "Preempted by pod uid-1 on node n1"
    assert (REASON_PREEMPTED, ACTION_PREEMPTING) == ("Preempted", "Preempting")
    assert MESSAGE_WAITING_FOR_PREEMPTION == (
        "waiting for the preemption for this pod to be finished"
    )


def _with(conditions: list[dict[str, Any]], generation: int | None = None) -> Pod:
    victim = pod("v", on="node1", conditions=conditions)
    if generation is not None:
        victim.raw["metadata"]["generation"] = generation
    return victim


@pytest.mark.parametrize(
    ("victim", "want"),
    [
        (_with([]), VICTIM_CONDITION),
        (_with([], generation=3), {**VICTIM_CONDITION, "observedGeneration": 3}),
        (_with([{**VICTIM_CONDITION, "lastTransitionTime": "2025-01-01T00:00:00Z"}]), None),
        (_with([{**VICTIM_CONDITION, "message": "other: preempting"}]), VICTIM_CONDITION),
        (_with([{**VICTIM_CONDITION, "status": "False"}]), VICTIM_CONDITION),
        (
            _with([{**VICTIM_CONDITION, "observedGeneration": 1}], generation=2),
            {**VICTIM_CONDITION, "observedGeneration": 2},
        ),
    ],
    ids=[
        "added",
        "added with the pod's generation",
        "the same condition: no patch",
        "another scheduler's message: replaced",
        "status False: replaced",
        "an older generation: replaced",
    ],
)
def test_disruption_target_condition(victim, want):
    assert without_time(disruption_target_condition(victim, PROFILE_NAME)) == want


def test_the_transition_time_is_kept_when_the_status_does_not_change():
    old = {**VICTIM_CONDITION, "message": "x", "lastTransitionTime": "2025-01-01T00:00:00Z"}
    condition = disruption_target_condition(_with([old]), PROFILE_NAME)
    assert condition is not None
    assert condition["lastTransitionTime"] == "2025-01-01T00:00:00Z"


def test_a_victim_that_already_has_the_condition_is_only_deleted():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [pod("v", on="node1", priority=LOW, req=LARGE, conditions=[VICTIM_CONDITION])],
    )
    env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert env.api.kinds() == [("delete", "v"), ("event", "v")]


def test_a_victim_gone_before_its_patch_is_left_alone():
    env = two_victims()
    del env.backend.pods["v1"]  # deleted behind the snapshot's back
    result, _ = env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert result == PostFilterResult("node1")
    # No deletion and no event for v1 (kube: "Victim Pod is already deleted"); v2 goes on.
    assert env.api.kinds() == [("patch", "v1"), ("patch", "v2"), ("delete", "v2"), ("event", "v2")]


def test_a_refused_call_ends_the_preemption_without_failing_post_filter(caplog):
    env = two_victims()
    env.api.refuse[("delete", "v1")] = RuntimeError('pods "v1" is forbidden')
    result, status = env.plugin.run_post_filter(
        env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE}
    )
    # The decision was made in the cycle; the calls failed afterwards, in the background.
    assert (result, status) == (
        PostFilterResult("node1"),
        Status(Code.SUCCESS, MESSAGE_PREFIX + message_found_placement("node1", 2)),
    )
    assert env.api.kinds() == [("patch", "v1")]  # the last victim is skipped
    assert env.pods_left() == ["v1", "v2"]
    assert 'pods "v1" is forbidden' in caplog.text
    assert env.plugin.pre_enqueue(PREEMPTOR) is None  # not held for calls that are over


def test_victims_already_terminating_send_nothing():
    env = Env(
        [node("node1", **VERY_LARGE)],
        [pod("v", on="node1", priority=LOW, req=LARGE, terminating=True)],
    )
    held: list[Any] = []
    env.plugin.handle.background = held.append
    result, _ = env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert result == PostFilterResult("node1")
    assert held == []
    assert env.plugin.pre_enqueue(PREEMPTOR) is None


def test_the_preemptor_is_gated_until_the_calls_are_sent():
    env = two_victims()
    held: list[Any] = []
    env.plugin.handle.background = held.append
    result, status = env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    # The cycle ends with the nomination while nothing has been sent yet.
    assert (result, status) == (
        PostFilterResult("node1"),
        Status(Code.SUCCESS, message_found_placement("node1", 2)),
    )
    assert env.api.calls == []
    assert env.plugin.pre_enqueue(PREEMPTOR) == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MESSAGE_WAITING_FOR_PREEMPTION
    )
    assert env.plugin.pre_enqueue(pod("other", priority=HIGH)) is None
    (call,) = held
    call()
    assert env.pods_left() == []
    assert env.plugin.pre_enqueue(PREEMPTOR) is None


def test_the_deletion_hint_always_says_skip():
    """kube's hint: the plugins that rejected the pod in its cycle decide (the queue asks them
    too), PreEnqueue decides whether the gate lifts."""
    env = two_victims()
    held: list[Any] = []
    env.plugin.handle.background = held.append
    env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    hint = env.plugin.is_pod_schedulable_after_assigned_pod_deletion
    victim = env.backend.pods["v2"]
    assert hint(PREEMPTOR, victim, None) is QueueingHint.SKIP
    held.pop()()
    assert hint(PREEMPTOR, victim, None) is QueueingHint.SKIP
    assert hint(pod("other", priority=HIGH), victim, None) is QueueingHint.SKIP


#: Rejects the preemptor in its cycle and registers no event: only ``activate`` moves the pod.
SILENT_REJECTOR = FalseFilter.name


@pytest.mark.parametrize(
    ("refused", "in_cycle", "place"),
    [
        (None, False, "unschedulable"),
        (("delete", "v1"), False, "active"),
        (("patch", "v2"), False, "active"),
        (("patch", "below"), False, "active"),
        (("delete", "v1"), True, "backoff"),
    ],
    ids=[
        "no refusal: the pod waits in the pool",
        "a refused deletion: back to activeQ",
        "the last victim's refused patch: back to activeQ",
        "a refused nomination clearing: back to activeQ",
        "refused while the pod is in its cycle: retried after backoff",
    ],
)
def test_a_refused_call_activates_the_preemptor(refused, in_cycle, place):
    """kube's ``fh.Activate`` when the asynchronous preemption's result is an error."""
    below = pod("below", priority=LOW + 1, nominated="node1")
    env = Env(
        [node("node1", **VERY_LARGE)],
        [
            pod("v1", on="node1", priority=LOW, req=LARGE, start=epoch(1)),
            pod("v2", on="node1", priority=LOW, req=LARGE, start=epoch(2)),
            PREEMPTOR,
        ],
    )
    queue = env.scheduler.queue
    queue.nominator.add(below, "node1")
    if refused is not None:
        env.api.refuse[refused] = RuntimeError(f'pods "{refused[1]}" is forbidden')
    held: list[Any] = []
    if not in_cycle:
        env.plugin.handle.background = held.append
    info = queue.pop(timeout=0)
    assert info is not None and info.pod.name == PREEMPTOR.name
    result, _ = env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert result == PostFilterResult("node1")
    queue.requeue_after_failure(info, {SILENT_REJECTOR})
    if held:
        assert queue.pending()["unschedulable"] == 1
        held.pop()()
    assert queue.pending()[place] == 1
    assert env.plugin.pre_enqueue(PREEMPTOR) is None


def test_the_gate_lifts_once_the_last_victim_is_gone():
    """While the last victim's call is on its way, its deletion event may reach the queue
    before the call returns: the gate must be open by then (``lastVictimsPendingPreemption``)."""
    env = two_victims()
    seen: list[tuple[str, Status | None]] = []
    delete = env.backend.delete_pod

    def delete_then_look(victim: Pod) -> bool:
        gone = delete(victim)
        seen.append((victim.name, env.plugin.pre_enqueue(PREEMPTOR)))
        return gone

    env.backend.delete_pod = delete_then_look  # type: ignore[method-assign]
    env.plugin.preempt(env.state(PREEMPTOR), PREEMPTOR, {"node1": UNSCHEDULABLE})
    assert seen == [
        ("v1", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MESSAGE_WAITING_FOR_PREEMPTION)),
        ("v2", None),
    ]


def test_events_to_register():
    env = Env([node("node1")])
    (registered,) = env.plugin.events_to_register()
    assert registered.event == ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
    assert registered.hint == env.plugin.is_pod_schedulable_after_assigned_pod_deletion
