"""``python -m bench run``: every benchmark of the project in one command.

    python -m bench run [--quick] [--workload NAME]... [--sizes NODESxPODS,...]
                        [--arrival burst,backlog] [--rounds N] [--contenders a,b,c]
                        [--memory-nodes N,...] [--memory-pods N] [--no-api] [--no-memory]
                        [--out docs/benchmarks.md] [--json PATH] [--workdir DIR]
    python -m bench render RESULTS.json [MORE.json ...] [--out docs/benchmarks.md]

Without options: SchedulingBasic at 500 nodes / 1,000 pods and 5,000 / 5,000, every other
workload of bench/workloads.py (scheduler_perf's, and Mixed) at its default size (1,000 nodes),
each with pods arriving both ways (backlog: throughput; burst: latency), and SchedulingBasic
5,000 / 10,000 as a backlog (peak RSS); the contenders (the binding ceiling only where it is a
bound: SchedulingBasic), 3 rounds each.
Before those, the in-memory runs at 100, 1,000 and 5,000 nodes, a profile at 5,000, and the
cost of PodTopologySpread, InterPodAffinity and DefaultPreemption at 1,000 and 5,000 nodes.
``--out`` rewrites the generated block of that Markdown file; ``--quick`` is the seconds-long
smoke run CI does. ``render`` writes the Markdown of a ``--json`` file again (after a change
to bench/report.py) without running anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kubesched.testing.controlplane import find_binaries

from .api import CaseResult, RunResult, run_case
from .cluster import APISERVER_ARGS, BenchCluster
from .contenders import CONTENDERS, QPS, profile_check
from .memory import MemoryResult, ProfileResult, profile_run, run_sizes
from .pinning import pin, placement_for
from .plugin_costs import PluginCost, run_plugin_costs
from .report import Conditions, render, update_doc
from .workloads import BASIC, MIXED, PREEMPTION_BASIC, WORKLOADS, Case, parse_size

__all__ = [
    "default_cases",
    "load_results",
    "main",
    "merge_results",
    "quick_cases",
    "save_results",
]

ARRIVALS = ("burst", "backlog")


def default_cases() -> list[Case]:
    cases = []
    for workload in WORKLOADS.values():
        for size in workload.sizes:
            nodes, pods = parse_size(size)
            cases += [Case(workload, nodes, pods, arrival) for arrival in ("backlog", "burst")]
    return [*cases, Case(BASIC, 5000, 10000, "backlog")]


def quick_cases() -> list[Case]:
    """The smoke run: the ceiling's workload both ways, one with placed pods whose measured
    pods preempt (status patches, deletions), and the project's mix."""
    return [
        Case(BASIC, 4, 8, "backlog"),
        Case(BASIC, 4, 8, "burst"),
        Case(PREEMPTION_BASIC, 3, 3, "burst"),
        Case(MIXED, 6, 12, "burst"),
    ]


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _cases(args: argparse.Namespace) -> list[Case]:
    if not (args.workload or args.sizes or args.arrival):
        return quick_cases() if args.quick else default_cases()
    workloads = args.workload or list(WORKLOADS)
    arrivals = _split(args.arrival) if args.arrival else ["burst"]
    cases = []
    for name in workloads:
        sizes = _split(args.sizes) if args.sizes else list(WORKLOADS[name].sizes)
        for size in sizes:
            nodes, pods = parse_size(size)
            WORKLOADS[name].check(nodes, pods)
            cases += [Case(WORKLOADS[name], nodes, pods, arrival) for arrival in arrivals]
    return cases


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _machine() -> str:
    model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            memory = int(line.split()[1]) // 2**20
    return f"{os.cpu_count()} cores ({model or platform.machine()}), {memory} GiB"


def _software(binaries: Path | None) -> str:
    from importlib.metadata import version

    control_plane = binaries.name if binaries is not None else "no control plane"
    return (
        f"Python {platform.python_version()}, kubesched {version('kubesched')}{_commit()}, "
        f"kubernetes client {version('kubernetes')}, control plane {control_plane}"
    )


def _commit() -> str:
    """`` at <commit>`` of the checkout (``+`` when it has changes), or nothing outside git."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "core", "plugins"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f" at {head}{'+' if dirty else ''}"


def save_results(
    path: Path,
    conditions: Conditions,
    cases: list[CaseResult],
    memory: list[MemoryResult],
    profile: ProfileResult | None,
    plugin_costs: list[PluginCost] = (),  # type: ignore[assignment]
) -> None:
    data = {
        "conditions": conditions.__dict__,
        "cases": [c.to_dict() for c in cases],
        "memory": [m.to_dict() for m in memory],
        "profile": profile.to_dict() if profile else None,
        "plugin_costs": [c.to_dict() for c in plugin_costs],
    }
    path.write_text(json.dumps(data, indent=1))


def _build(cls: type, data: dict[str, Any]) -> Any:
    """A dataclass from its JSON form, leaving out the derived keys ``to_dict`` added."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def load_results(
    path: Path,
) -> tuple[
    Conditions, list[CaseResult], list[MemoryResult], ProfileResult | None, list[PluginCost]
]:
    """What :func:`save_results` wrote, as the objects :func:`render` takes."""
    data = json.loads(path.read_text())
    cases = []
    for case_data in data["cases"]:
        case = _build(CaseResult, case_data)
        case.runs = [_build(RunResult, run) for run in case_data["runs"]]
        cases.append(case)
    memory = [_build(MemoryResult, m) for m in data["memory"]]
    profile = None
    if data.get("profile"):
        fields = data["profile"]
        profile = ProfileResult(
            fields["nodes"],
            fields["pods"],
            fields["profiled_seconds"],
            [tuple(row) for row in fields["points"]],
            [tuple(row) for row in fields["plugins"]],
            [tuple(row) for row in fields["core"]],
            [tuple(row) for row in fields["top"]],
        )
    plugin_costs = [_build(PluginCost, c) for c in data.get("plugin_costs") or ()]
    return _build(Conditions, data["conditions"]), cases, memory, profile, plugin_costs


def merge_results(
    loaded: list[
        tuple[
            Conditions,
            list[CaseResult],
            list[MemoryResult],
            ProfileResult | None,
            list[PluginCost],
        ]
    ],
) -> tuple[
    Conditions, list[CaseResult], list[MemoryResult], ProfileResult | None, list[PluginCost]
]:
    """Several runs' results as one report: the first run's conditions, each later run's
    command, date and load average as a note, every case, memory run and plugin cost. A case
    run by more than one of them (the same workload, size and arrival) pools its rounds, so
    that its medians are over every round run, none left out."""
    conditions, cases, memory, profile, costs = loaded[0]
    cases, memory, costs = list(cases), list(memory), list(costs)
    by_key = {case.key: case for case in cases}
    for other, more_cases, more_memory, other_profile, more_costs in loaded[1:]:
        conditions.notes.append(
            f"Also `{other.command}` on {other.date}, load average {other.load_before} before, "
            f"{other.load_after} after; {other.rounds} round(s)."
        )
        for case in more_cases:
            kept = by_key.get(case.key)
            if kept is None:
                cases.append(case)
                by_key[case.key] = case
            else:
                kept.runs = [*kept.runs, *case.runs]
                kept.error = kept.error or case.error
        memory += more_memory
        costs += more_costs
        profile = profile or other_profile
    return conditions, cases, memory, profile, costs


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the benchmarks and report the figures")
    run.add_argument("--quick", action="store_true", help="tiny sizes, one round (CI smoke run)")
    run.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    run.add_argument("--sizes", help="NODESxPODS[,…] for every chosen workload, e.g. 500x1000")
    run.add_argument("--arrival", help="burst, backlog or both (comma-separated)")
    run.add_argument("--rounds", type=int, help="runs per contender and case (default 3)")
    run.add_argument("--contenders", default=",".join(CONTENDERS), help="subset, in order")
    run.add_argument("--memory-nodes", help="node counts of the in-memory runs (100,1000,5000)")
    run.add_argument("--memory-pods", type=int, help="pods per in-memory run (default 1000)")
    run.add_argument("--no-api", action="store_true", help="skip the control-plane runs")
    run.add_argument("--no-memory", action="store_true", help="skip the in-memory runs")
    run.add_argument(
        "--plugin-nodes",
        help="node counts of the per-plugin runs (1000,5000; none with --no-memory)",
    )
    run.add_argument(
        "--pin",
        action="store_true",
        help="run the control plane and the harness on half of the CPUs and each contender "
        "alone on the rest (default: every process shares every CPU)",
    )
    run.add_argument("--out", type=Path, help="Markdown file whose generated block to rewrite")
    run.add_argument("--json", type=Path, help="write every run's figures here")
    run.add_argument("--workdir", type=Path, help="keep logs and the control plane's files here")
    again = commands.add_parser(
        "render", help="the Markdown of --json files (one report of them all), without running"
    )
    again.add_argument("results", type=Path, nargs="+", help="files written by run --json")
    again.add_argument("--out", type=Path, help="Markdown file whose generated block to rewrite")
    args = parser.parse_args(argv)
    if args.command == "render":
        return args
    if args.arrival and any(a not in ARRIVALS for a in _split(args.arrival)):
        parser.error(f"--arrival: choose from {', '.join(ARRIVALS)}")
    contenders = _split(args.contenders)
    if not contenders or any(c not in CONTENDERS for c in contenders):
        parser.error(f"--contenders: choose from {', '.join(CONTENDERS)}")
    args.contenders = tuple(contenders)
    try:
        args.cases = _cases(args)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.command == "render":
        block = render(*merge_results([load_results(path) for path in args.results]))
        print(block)
        if args.out is not None:
            update_doc(args.out, block)
            print(f"wrote {args.out}")
        return 0
    quick = args.quick
    rounds = args.rounds or (1 if quick else 3)
    memory_nodes = [int(n) for n in _split(args.memory_nodes or "")] or (
        [20, 100] if quick else [100, 1000, 5000]
    )
    memory_pods = args.memory_pods or (50 if quick else 1000)
    conditions = Conditions(
        command="python -m bench " + shlex.join(sys.argv[1:] if argv is None else argv),
        date=datetime.date.today().isoformat(),
        machine=_machine(),
        load_before=_load(),
        load_after="",
        software="",
        rounds=rounds,
    )
    print(f"load average {conditions.load_before}", flush=True)

    memory: list[MemoryResult] = []
    profile: ProfileResult | None = None
    plugin_costs: list[PluginCost] = []
    if not args.no_memory:
        print("in memory:", flush=True)
        memory = run_sizes(memory_nodes, memory_pods, 1 if quick else 3)
        largest = max(memory_nodes)
        print(f"  profiling {largest} nodes …", flush=True)
        profile = profile_run(largest, min(memory_pods, 500))
        plugin_nodes = [int(n) for n in _split(args.plugin_nodes or "")] or (
            [50] if quick else [1000, 5000]
        )
        print("per plugin:", flush=True)
        plugin_costs = run_plugin_costs(plugin_nodes, 20 if quick else None)

    cases: list[CaseResult] = []
    binaries: Path | None = None
    if not args.no_api:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="kubesched-bench-"))
        found = find_binaries()
        binaries = found.directory
        placement = placement_for() if args.pin else None
        with BenchCluster(found, workdir / "control-plane" if args.workdir else None) as cluster:
            if placement is not None:
                # The harness (its watch; the pod creator it starts) with the control plane.
                for process in cluster.control_plane.processes():
                    pin(process.pid, placement.control_plane)
                pin(os.getpid(), placement.control_plane)
            conditions.notes.append(
                f"CPUs: {placement.describe()}."
                if placement is not None
                else "CPUs: every process shares every CPU (no --pin)."
            )
            conditions.profile_check = profile_check(
                cluster.control_plane, found.kube_scheduler, workdir / "profile-check"
            )
            print(f"profiles: {conditions.profile_check}", flush=True)
            for case in args.cases:
                print(f"{case.title}:", flush=True)
                try:
                    result = run_case(
                        cluster, case, rounds, workdir, args.contenders, placement=placement
                    )
                except Exception as exc:  # one broken case must not lose the others' figures
                    result = CaseResult(
                        case.key,
                        case.title,
                        case.workload.name,
                        case.nodes,
                        case.pods,
                        case.arrival,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                    print(f"  failed: {result.error}", file=sys.stderr, flush=True)
                    try:
                        cluster.delete_pods()
                    except Exception as cleanup:
                        print(f"  cleanup failed too: {cleanup}", file=sys.stderr)
                cases.append(result)
                if args.json is not None:  # so far: a run cut short keeps what it measured
                    save_results(args.json, conditions, cases, memory, profile, plugin_costs)
        if args.workdir is None:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    conditions.load_after = _load()
    conditions.software = _software(binaries)
    conditions.notes.append(
        f"kube-apiserver runs with {' '.join(APISERVER_ARGS)}; both schedulers' clientConnection "
        f"qps/burst is {QPS}/{QPS}; every contender is a process of its own, started for each "
        "run, authenticated as system:kube-scheduler."
    )
    block = render(conditions, cases, memory, profile, plugin_costs)
    print(block)
    if args.out is not None:
        update_doc(args.out, block)
        print(f"wrote {args.out}")
    if args.json is not None:
        save_results(args.json, conditions, cases, memory, profile, plugin_costs)
        print(f"wrote {args.json}")
    incomplete = [r for c in cases for r in c.runs if not r.complete]
    for run in incomplete:
        print(f"warning: {run.contender} bound {run.bound}/{run.pods} pods", file=sys.stderr)
    failed = [c for c in cases if c.error]
    for case in failed:
        print(f"error: {case.title}: {case.error}", file=sys.stderr)
    return 1 if incomplete or failed else 0
