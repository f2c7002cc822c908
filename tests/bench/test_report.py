"""The report's Targets table and the write counts it rests on, from figures made up here.

No control plane: runs are built by hand, so each test states the figures and the verdict the
generated docs/benchmarks.md must then show (a missed target says so, unequal work withholds the
ratio, a workload not run is listed as not run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.api import CaseResult, RunResult
from bench.cluster import write_kind
from bench.measure import parse_request_counts, rss_growth
from bench.report import Conditions, _versus, render, targets, unequal_work
from bench.workloads import WORKLOADS

#: The start of a throughput target's row.
_KS = "pods/s ≥ 1.0 × kube-scheduler, "


def _run(
    contender: str,
    pods_per_second: float,
    *,
    p99: float | None = None,
    writes: dict[str, float] | None = None,
    rss: float = 100.0,
    after: list[float] | None = None,
) -> RunResult:
    return RunResult(
        contender=contender,
        round=0,
        pods=1000,
        bound=1000,
        seconds=1000 / pods_per_second,
        pods_per_second=pods_per_second,
        p50_ms=None if p99 is None else p99 / 2,
        p99_ms=p99,
        cpu_seconds=1.0,
        peak_rss_mb=rss,
        apiserver_cpu_seconds=1.0,
        created_per_second=None,
        events=1000,
        attempts={},
        startup_seconds=0.0,
        writes=writes if writes is not None else {"bindings": 1000, "events": 1000},
        rss_after_samples=after or [],
    )


def _case(workload: str, arrival: str, *runs: RunResult, nodes: int = 1000, pods: int = 1000):
    case = CaseResult(f"{workload}-{arrival}", workload, workload, nodes, pods, arrival)
    case.runs = list(runs)
    return case


def _row(rows: list[tuple[str, str, str]], start: str) -> tuple[str, str, str]:
    (row,) = [r for r in rows if r[0].startswith(start)]
    return row


def test_every_workload_has_a_row_and_those_not_run_say_so() -> None:
    rows = targets([], [])
    for name in WORKLOADS:
        assert _row(rows, f"pods/s ≥ 1.0 × and p99 ≤ kube-scheduler's, {name}")[1] == "not run"
    assert _row(rows, "flat RSS over churn")[1] == "not run"


def test_ratio_and_p99_per_workload_with_missed_targets_named() -> None:
    backlog = _case(
        "TopologySpreading", "backlog", _run("kubesched", 80.0), _run("reference", 200.0)
    )
    burst = _case(
        "TopologySpreading",
        "burst",
        _run("kubesched", 70.0, p99=900.0),
        _run("reference", 150.0, p99=1200.0),
    )
    rows = targets([backlog, burst], [])
    throughput = _row(rows, "pods/s ≥ 1.0 × kube-scheduler, TopologySpreading 1,000 / 1,000")
    assert throughput[1].startswith("0.40 × (80 vs 200 pods/s, backlog)")
    assert throughput[2] == "**not met**"
    latency = _row(rows, "p99 ≤ kube-scheduler's, TopologySpreading 1,000 / 1,000")
    assert latency[1:] == ("900 ms vs 1,200 ms", "met")
    block = render(
        Conditions("cmd", "2026-12-02", "m", "1", "2", "s", 1), [backlog, burst], [], None
    )
    assert "missed: pods/s ≥ 1.0 × kube-scheduler, TopologySpreading 1,000 / 1,000" in block


def test_status_patches_and_deletions_count_as_work() -> None:
    """Preemption writes more than Bindings and Events; a contender that skipped the status
    patches would do less work, and its ratio is withheld."""
    full = {"bindings": 1000, "events": 5000, "pod status": 4000, "pod deletes": 3000}
    skipped = {"bindings": 1000, "events": 5000, "pod deletes": 3000}
    case = _case(
        "PreemptionBasic",
        "backlog",
        _run("kubesched", 50.0, writes=skipped),
        _run("reference", 40.0, writes=full),
    )
    assert case.runs[1].writes_per_pod() == 13.0
    row = _row(targets([case], []), "pods/s ≥ 1.0 × kube-scheduler, PreemptionBasic")
    assert row[2] == "**not comparable**"
    assert "9.00 vs 13.00 API writes per pod" in row[1]


def test_peak_rss_is_held_against_kube_schedulers() -> None:
    case = _case(
        "SchedulingBasic",
        "backlog",
        _run("kubesched", 300.0, rss=340.0),
        _run("reference", 250.0, rss=327.0),
        nodes=5000,
        pods=10000,
    )
    row = _row(targets([case], []), "peak RSS ≤ kube-scheduler's")
    assert row[1:] == ("340 MB vs 327 MB", "**not met**")


@pytest.mark.parametrize(
    ("after", "verdict"),
    [([100.0] * 30, "met"), ([100.0] * 15 + [120.0] * 15, "**not met**")],
    ids=["flat", "growing"],
)
def test_churn_memory_must_stay_flat(after: list[float], verdict: str) -> None:
    case = _case(
        "SchedulingWithMixedChurn",
        "burst",
        _run("kubesched", 100.0, p99=50.0, after=after),
        _run("reference", 100.0, p99=50.0, after=[200.0] * 30),
    )
    row = _row(targets([case], []), "flat RSS over churn")
    assert row[2] == verdict
    assert "kube-scheduler +0.0%" in row[1]


def test_a_failed_case_is_reported_not_hidden() -> None:
    case = _case("SchedulingCSIPVs", "backlog")
    case.error = "TimeoutError: 10/1000 claims bound by the PV controller after 600s"
    rows = targets([case], [])
    row = _row(rows, "SchedulingCSIPVs 1,000 / 1,000")
    assert row[2] == "**failed**" and "claims bound" in row[1]
    block = render(Conditions("cmd", "d", "m", "1", "2", "s", 1), [case], [], None)
    assert "**Failed**: TimeoutError" in block and "failed to run: SchedulingCSIPVs" in block


def test_rss_growth_compares_the_last_samples_with_the_first() -> None:
    assert rss_growth([100.0] * 5 + [110.0] * 5) == pytest.approx(0.10)
    assert rss_growth([100.0] * 9) is None  # too few samples to tell


def _sample(verb: str, resource: str, subresource: str, code: str, value: int) -> str:
    labels = (
        f'code="{code}",component="apiserver",dry_run="",group="",resource="{resource}",'
        f'scope="resource",subresource="{subresource}",verb="{verb}",version="v1"'
    )
    return f"apiserver_request_total{{{labels}}} {value}"


METRICS = "\n".join(
    [
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests",
        _sample("POST", "pods", "binding", "201", 1000),
        _sample("POST", "pods", "", "201", 1000),
        _sample("PATCH", "pods", "status", "200", 7),
        _sample("PATCH", "pods", "status", "409", 1),
        _sample("POST", "events", "", "201", 990),
        _sample("PUT", "leases", "", "200", 40),
        _sample("LIST", "pods", "", "200", 12),
    ]
)


def test_request_counters_are_read_by_kind() -> None:
    counts = parse_request_counts(METRICS)
    assert counts[("PATCH", "pods", "status")] == 8  # every answer code counts
    kinds: dict[str, float] = {}
    for key, value in counts.items():
        if kind := write_kind(*key):
            kinds[kind] = kinds.get(kind, 0) + value
    # The harness's pod creations, the apiserver's own leases and reads are nobody's work.
    assert kinds == {"bindings": 1000, "pod status": 8, "events": 990}


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        (("POST", "bindings", ""), "bindings"),
        (("DELETE", "pods", ""), "pod deletes"),
        (("PUT", "resourceclaims", "status"), "claims and volumes"),
        (("PATCH", "persistentvolumeclaims", ""), "claims and volumes"),
        (("POST", "nodes", ""), ""),
        (("GET", "pods", "binding"), ""),
        (("POST", "configmaps", ""), "other"),
    ],
)
def test_write_kinds(key: tuple[str, str, str], kind: str) -> None:
    assert write_kind(*key) == kind


@pytest.mark.parametrize(
    ("ours", "theirs", "comparable"),
    [(1000, 1000, True), (985, 1000, True), (87, 1000, False), (1000, 0, False)],
    ids=["same events", "within 2 %", "events capped", "no events on the other side"],
)
def test_ratios_are_withheld_where_the_work_differs(ours: int, theirs: int, comparable: bool):
    case = _case(
        "SchedulingBasic",
        "backlog",
        _run("kubesched", 150.0, writes={"bindings": 1000, "events": ours}),
        _run("reference", 100.0, writes={"bindings": 1000, "events": theirs}),
    )
    assert (unequal_work(case, "kubesched", "reference") is None) == comparable
    measured, verdict = _versus(case, "reference", 1.0)
    assert verdict == ("met" if comparable else "**not comparable**"), measured


@pytest.mark.parametrize(
    ("ceiling_events", "verdict"),
    [(1000, "**not met**"), (0, "**not comparable**")],
    ids=["bindings and events", "bindings only"],
)
def test_the_ceiling_target_reads_only_a_ceiling_that_wrote_the_same(
    ceiling_events: int, verdict: str
) -> None:
    """The ceiling is compared as equal work: one that wrote Bindings alone is withheld."""
    case = _case(
        "SchedulingBasic",
        "backlog",
        _run("kubesched", 500.0),
        _run("ceiling", 1000.0, writes={"bindings": 1000, "events": ceiling_events}),
        nodes=500,
    )
    row = _row(targets([case], []), "pods/s ≥ 0.9 × the binding ceiling")
    assert row[2] == verdict, row
    assert row[1].startswith("0.50 ×"), row


def test_several_runs_render_as_one_report(tmp_path: Path) -> None:
    from bench.cli import load_results, merge_results, save_results

    first = tmp_path / "a.json"
    second = tmp_path / "b.json"
    save_results(
        first,
        Conditions("python -m bench run a", "2026-12-02", "m", "5", "6", "s", 1),
        [_case("SchedulingBasic", "backlog", _run("kubesched", 2.0), _run("reference", 1.0))],
        [],
        None,
    )
    save_results(
        second,
        Conditions("python -m bench run b", "2026-12-02", "m", "7", "8", "s", 1),
        [_case("PreemptionBasic", "burst", _run("kubesched", 1.0, p99=5.0))],
        [],
        None,
    )
    conditions, cases, *_ = merge_results([load_results(first), load_results(second)])
    assert [c.workload for c in cases] == ["SchedulingBasic", "PreemptionBasic"]
    assert conditions.command == "python -m bench run a"
    assert (
        "Also `python -m bench run b` on 2026-12-02, load average 7 before, 8 after"
        in (conditions.notes[-1])
    )
    assert cases[0].runs[0].writes == {"bindings": 1000, "events": 1000}  # kept through JSON


def test_a_case_run_again_pools_its_rounds(tmp_path: Path) -> None:
    """Medians over every round of a case, whichever run of the harness made them."""
    from bench.cli import load_results, merge_results, save_results

    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, ours, theirs in zip(paths, (90.0, 130.0), (100.0, 110.0), strict=True):
        save_results(
            path,
            Conditions(f"python -m bench run {path.stem}", "2026-12-06", "m", "1", "2", "s", 1),
            [_case("Mixed", "backlog", _run("kubesched", ours), _run("reference", theirs))],
            [],
            None,
        )
    _, cases, *_ = merge_results([load_results(path) for path in paths])
    assert [c.key for c in cases] == ["Mixed-backlog"]
    assert [r.pods_per_second for r in cases[0].of("kubesched")] == [90.0, 130.0]
    measured, verdict = _versus(cases[0], "reference", 1.0)
    assert measured.startswith("1.05 × (110 vs 105 pods/s"), measured
    assert verdict == "met"


def _mixed_run(contender: str, churned: int, per_churned: float) -> RunResult:
    """PreemptionAsync-like: 1,000 measured pods at 2 writes each (a Binding and a `Scheduled`
    Event), and ``churned`` preemptors at ``per_churned`` writes each."""
    run = _run(contender, 100.0)
    run.churn_ticks = churned
    run.measured_writes = {"bindings": 1000, "events": 1000}
    run.writes = {"bindings": 1000 + churned, "events": 1000 + churned * (per_churned - 1)}
    return run


@pytest.mark.parametrize(
    ("ours", "theirs", "flagged"),
    [
        ((30, 13.0), (10, 13.0), None),
        ((30, 13.0), (10, 13.2), None),
        ((30, 14.0), (10, 13.0), "unequal work: 14.00 vs 13.00 API writes per churned pod"),
    ],
    ids=["other mix, same work", "within 2 % per kind", "more per preemptor"],
)
def test_pods_of_two_kinds_are_compared_kind_for_kind(ours, theirs, flagged) -> None:
    # Totals per pod handled differ (2.32 vs 2.11 in the first case: the longer run was handed
    # more preemptors, at 13 writes each against a measured pod's 2), the work does not.
    case = _case(
        "PreemptionAsync",
        "backlog",
        _mixed_run("kubesched", *ours),
        _mixed_run("reference", *theirs),
    )
    assert unequal_work(case, "kubesched", "reference") == flagged
    report = render(Conditions("c", "d", "m", "1", "2", "s", 1), [case], [], None)
    assert (
        "API writes per kind of pod (medians; the equal-work check compares these): "
        f"kube-scheduler 2.00 per measured pod, {theirs[1]:.2f} per churned pod; "
        f"kubesched 2.00 per measured pod, {ours[1]:.2f} per churned pod." in report
    )


def test_runs_without_per_kind_counts_fall_back_to_writes_per_pod_handled() -> None:
    mixed, plain = _mixed_run("kubesched", 30, 13.0), _mixed_run("reference", 10, 13.0)
    plain.measured_writes = {}  # a run recorded before the counts per kind
    case = _case("PreemptionAsync", "backlog", mixed, plain)
    assert unequal_work(case, "kubesched", "reference") == (
        "unequal work: 2.32 vs 2.11 API writes per pod"
    )


def test_the_watch_counts_status_writes_and_the_measured_pods_writes() -> None:
    from bench.measure import PodWatch, measured_writes

    watch = PodWatch(transport=None, namespace="bench", resource_version="1")  # type: ignore[arg-type]

    def version(name: str, message: str = "", nominated: str = "", node: str = "") -> dict:
        status: dict = {"nominatedNodeName": nominated} if nominated else {}
        if message:
            status["conditions"] = [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": message,
                }
            ]
        return {"metadata": {"name": name}, "spec": {"nodeName": node}, "status": status}

    for pod in (
        version("pod-1"),
        version("pod-1", node="n1"),  # the Binding: not a status write
        version("pre-1"),
        version("pre-1", "0/1 nodes", "n1"),  # a failure with its nomination: one patch
        version("pre-1", "0/1 nodes", "n1"),  # another field changed: no status write
        version("pre-1", "0/2 nodes", "n1"),
        version("pre-1", "0/2 nodes", "n1", node="n1"),
    ):
        watch.seen(pod, 0.0)
    assert watch.status_writes == {"pre-1": 2}
    assert measured_writes(watch, {"pod-1": 1, "pre-1": 2}) == {"bindings": 1.0, "events": 1.0}


def test_backlog_cases_say_how_long_from_ready_to_the_last_binding() -> None:
    """A scheduler that preempts for every pod before binding any has a short first → last
    window; the time from its ready counts what came before its first binding too."""
    ours, theirs = _run("kubesched", 250.0), _run("reference", 300.0)
    ours.ready_to_last_seconds, theirs.ready_to_last_seconds = 5.0, 4.0
    report = render(
        Conditions("python -m bench run", "2026-12-02", "m", "1", "1", "s", 1),
        [_case("PreemptionBasic", "backlog", ours, theirs)],
        [],
        None,
    )
    assert (
        "From the contender's ready (every pod waiting), or its first binding when that came "
        "first, to its last binding (medians): "
        "kube-scheduler 4.00 s (250 pods/s), kubesched 5.00 s (200 pods/s)." in report
    )


def test_a_scheduler_that_binds_before_it_is_seen_ready_is_timed_from_its_first_binding() -> None:
    """kube-scheduler binds as soon as its caches are synced; the harness polls /readyz every
    0.1 s, so its first bindings may precede its ready: they count in the window too."""
    ours, theirs = _run("kubesched", 250.0), _run("reference", 250.0)  # 4 s first → last each
    ours.ready_to_last_seconds = 4.05  # its first binding 50 ms after its ready
    theirs.ready_to_last_seconds = 3.2  # 0.8 s of bindings before the harness saw it ready
    row = _row(
        targets([_case("SchedulingBasic", "backlog", ours, theirs)], []),
        _KS + "SchedulingBasic 1,000",
    )
    assert row[1:] == ("0.99 × (247 vs 250 pods/s, backlog, from ready)", "**not met**")


def test_backlog_targets_are_timed_from_ready_when_both_have_it() -> None:
    """kube's asynchronous preemption binds its first pod late: first → last says 40 vs 300
    pods/s, from ready to the last binding 200 vs 250. The target reads the latter."""
    ours, theirs = _run("kubesched", 40.0), _run("reference", 300.0)
    ours.seconds = 4.0  # its first binding came 1 s after its ready
    ours.ready_to_last_seconds, theirs.ready_to_last_seconds = 5.0, 4.0
    row = _row(
        targets([_case("PreemptionBasic", "backlog", ours, theirs)], []), _KS + "PreemptionBasic"
    )
    assert row[1:] == ("0.80 × (200 vs 250 pods/s, backlog, from ready)", "**not met**")


def test_backlog_targets_fall_back_to_first_to_last_without_a_ready_time() -> None:
    ours, theirs = _run("kubesched", 150.0), _run("reference", 100.0)
    ours.ready_to_last_seconds = 5.0  # the other side's run predates the field
    row = _row(
        targets([_case("SchedulingBasic", "backlog", ours, theirs)], []),
        _KS + "SchedulingBasic 1,000",
    )
    assert row[1:] == ("1.50 × (150 vs 100 pods/s, backlog)", "met")
