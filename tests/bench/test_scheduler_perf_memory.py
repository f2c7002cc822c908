"""scheduler_perf's workloads in memory (``bench/scheduler_perf_memory.py``) keep their shapes:
a small run of each places what scheduler_perf's would, and the figures come out. Nothing here
says how fast anything is."""

from __future__ import annotations

import pytest

from bench.scheduler_perf_memory import (
    DEVICES_PER_NODE,
    PREEMPTORS_EVERY,
    WORKLOADS,
    main,
    run_workload,
)

#: Workload -> pods placed of 20 measured on 20 nodes, where not all of them.
PLACED = {
    # One node in five holds a bound green pod; each placed one takes another node.
    "SchedulingPodAntiAffinity": 16,
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_each_workload_places_its_pods(name: str) -> None:
    run = run_workload(name, 20, 20)
    extra = 1 if name == "PreemptionAsync" else 0  # one preemptor among the first 114
    assert run.pods == 20 + extra
    assert run.scheduled == PLACED.get(name, 20 + extra)
    assert run.cpu_seconds > 0 and run.pods_per_cpu_second > 0


def test_dra_pods_take_a_device_each_until_the_devices_run_out() -> None:
    nodes = 2
    run = run_workload("SchedulingWithResourceClaimTemplate", nodes, nodes * DEVICES_PER_NODE + 3)
    assert run.scheduled == nodes * DEVICES_PER_NODE


def test_preemption_async_has_scheduler_perfs_ratio_of_preemptors() -> None:
    cluster = WORKLOADS["PreemptionAsync"].build(2, PREEMPTORS_EVERY * 2)
    pending = [p for p in cluster.pods if not p.node_name]
    assert sum(1 for p in pending if p.priority == 10) == 2
    assert all(len(p.raw["spec"]["containers"]) == 1 for p in pending)


def test_an_unknown_workload_is_refused_naming_the_known_ones(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["NoSuchWorkload"])
    assert "unknown workload NoSuchWorkload; known: SchedulingBasic" in capsys.readouterr().err
