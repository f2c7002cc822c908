"""``kubesched explain POD`` and ``kubesched simulate --explain``: each plugin's decision per node.

The cluster file is scheduled exactly as ``kubesched simulate`` schedules it (so a pod sees the
pods placed before it), with a :class:`~kubesched.engine.explain_recorder.ExplainRecorder`
attached. For
each scheduling cycle of a pod it prints a table of nodes × Filter plugins (each verdict and
reason), a table of nodes × Score plugins (raw, normalized and weighted scores, the totals), the
once-per-cycle points, and which node won and why. ``-o json`` prints the same as data.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from importlib import resources
from typing import Any, TextIO

from kubesched.api.manifests import Cluster
from kubesched.api.objects import Pod
from kubesched.cli.render import print_simulation
from kubesched.config import SchedulerConfiguration
from kubesched.engine.explain_recorder import (
    EXCLUDED,
    NOT_EVALUATED,
    REJECTED,
    CycleReport,
    ExplainRecorder,
)
from kubesched.errors import KubeschedError
from kubesched.framework.registry import Registry
from kubesched.service import whatif
from kubesched.service.simulate import SimulationResult, simulate
from kubesched.service.startup import load_checked

__all__ = [
    "cmd_explain",
    "find_pod",
    "register_commands",
    "render_report",
    "simulate_explained",
    "write_simulation",
]

EXIT_OK = 0


def register_commands(commands: Any) -> None:
    """Add ``explain`` to the ``kubesched`` sub-commands (``commands`` from add_subparsers)."""
    parser = commands.add_parser(
        "explain", help="why a pod went where it did: each plugin's verdict and score per node"
    )
    parser.add_argument(
        "pod", metavar="POD", help="NAME or NAMESPACE/NAME of a pending pod in the cluster file"
    )
    parser.add_argument(
        "--cluster", help="Kubernetes manifests with Nodes and Pods; default: the bundled example"
    )
    parser.add_argument("--config", help="a KubeSchedulerConfiguration file")
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")
    parser.add_argument("--seed", type=int, default=0, help="seed for random tie-breaking")
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="skip kube-apiserver's validation of the objects (for a snapshot of a cluster)",
    )
    whatif.add_arguments(parser)
    parser.set_defaults(func=cmd_explain)


def _bundled(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


# -- running -------------------------------------------------------------------------------------
def simulate_explained(
    cluster: Cluster, config: SchedulerConfiguration, registry: Registry, seed: int | None = 0
) -> tuple[SimulationResult, ExplainRecorder]:
    """``simulate`` with every scheduling cycle recorded."""
    recorder = ExplainRecorder()
    result = simulate(cluster, config, registry, seed=seed, on_scheduler=recorder.attach)
    return result, recorder


def find_pod(cluster: Cluster, wanted: str, source: str) -> Pod:
    """The pod ``NAME`` or ``NAMESPACE/NAME`` of ``cluster``; a :class:`KubeschedError` naming
    the candidates when there is none or more than one."""
    namespace, _, name = wanted.rpartition("/")
    found = [p for p in cluster.pods if p.name == name and namespace in ("", p.namespace)]
    if len(found) > 1:
        keys = ", ".join(p.key for p in found)
        raise KubeschedError(
            f"{source}: pod name {name!r} is ambiguous ({keys}); use NAMESPACE/NAME"
        )
    if not found:
        pending = [p.key for p in cluster.pods if not p.node_name]
        listed = ", ".join(pending[:10]) + (", …" if len(pending) > 10 else "") or "none"
        raise KubeschedError(f"{source}: no pod {wanted!r}; pending pods: {listed}")
    return found[0]


def cmd_explain(
    args: argparse.Namespace, out: TextIO, err: TextIO, registry: Registry | None = None
) -> int:
    """Run ``kubesched explain`` (``registry``: the installed plugins unless given)."""
    cluster_path, config_path = args.cluster, args.config
    if cluster_path is None and not getattr(args, "kubeconfig", None):
        cluster_path = _bundled("cluster.yaml")
        if config_path is None:
            config_path = _bundled("scheduler-config.yaml")
    registry = registry if registry is not None else Registry.installed()
    config = whatif.serve_as(load_checked(config_path, registry), args.scheduler_name)
    for warning in config.warnings:
        print(f"warning: {warning}", file=err)
    cluster, source = whatif.read_input(args, cluster_path, config, registry)
    pod = find_pod(cluster, args.pod, source)
    if pod.node_name:
        raise KubeschedError(
            f"pod {pod.key} is already bound to node {pod.node_name}; explain shows how pending "
            "pods are scheduled"
        )
    profiles = [p.scheduler_name for p in config.profiles]
    if pod.scheduler_name not in profiles:
        raise KubeschedError(
            f"pod {pod.key} asks for scheduler {pod.scheduler_name!r}, which no profile serves "
            f"(profiles: {', '.join(profiles)}); --scheduler-name {pod.scheduler_name} runs the "
            "profile under that name"
        )
    result, recorder = simulate_explained(cluster, config, registry, seed=args.seed)
    reports = recorder.for_pod(pod.key)
    outcome = next(p for p in result.pods if (p.namespace, p.name) == (pod.namespace, pod.name))
    if args.output == "json":
        data = {
            "pod": pod.key,
            "node": outcome.node,
            "message": outcome.message,
            "attempts": [r.to_dict() for r in reports],
        }
        json.dump(data, out, indent=2)
        print(file=out)
        return EXIT_OK
    if not reports:
        print(f"pod {pod.key} never entered a scheduling cycle: {outcome.message}", file=out)
    for index, report in enumerate(reports):
        if index:
            print(file=out)
        print(render_report(report), file=out)
    return EXIT_OK


def write_simulation(
    result: SimulationResult, recorder: ExplainRecorder, output: str, out: TextIO
) -> None:
    """``simulate --explain``: every pod with every cycle it went through, then (as a table)
    the usual ``simulate`` table; as JSON, simulate's document with ``attempts`` per pod."""
    if output == "json":
        data: dict[str, Any] = result.to_dict()
        for entry in data["pods"]:
            key = f"{entry['namespace']}/{entry['name']}"
            entry["attempts"] = [r.to_dict() for r in recorder.for_pod(key)]
        json.dump(data, out, indent=2)
        print(file=out)
        return

    for outcome in result.pods:
        key = f"{outcome.namespace}/{outcome.name}"
        reports = recorder.for_pod(key)
        if not reports:
            print(f"Pod {key}: never entered a scheduling cycle: {outcome.message}\n", file=out)
        for report in reports:
            print(render_report(report) + "\n", file=out)
    print_simulation(result, out)


# -- rendering -----------------------------------------------------------------------------------
def _table(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows as aligned columns (the last column is not padded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        indent + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def _verdict_cell(report: CycleReport, node: str, plugin: str) -> str:
    verdict = report.verdict(node, plugin)
    if verdict is None:
        return "-"
    if verdict.passed:
        return "passed"
    if verdict.code == "Skip":
        return "skipped"
    return "; ".join(verdict.reasons) or verdict.code


def _outcome_cell(report: CycleReport, node: str) -> str:
    info = report.nodes[node]
    if info.outcome in (EXCLUDED, NOT_EVALUATED) or (info.outcome == REJECTED and not info.filters):
        return f"{info.outcome}: {info.message}" if info.message else info.outcome
    if node == report.selected:
        return f"{info.outcome}, selected"
    return info.outcome


def _score_cell(report: CycleReport, node: str, plugin: str) -> str:
    detail = report.score(node, plugin)
    if detail is None or detail.weighted is None:
        return "-"
    return f"{detail.raw} -> {detail.normalized} = {detail.weighted}"


def _points(report: CycleReport, *names: str) -> list[str]:
    """One line per once-per-cycle point that ran: each plugin's code and reasons."""
    lines = []
    for point in names:
        verdicts = report.points.get(point, ())
        shown = ", ".join(
            f"{v.plugin} {v.code}" + (f" ({'; '.join(v.reasons)})" if v.reasons else "")
            for v in verdicts
        )
        if shown:
            lines.append(f"{point}: {shown}")
    return lines


def render_report(report: CycleReport) -> str:
    """One cycle as text, in the order things ran: PreFilter, the Filter table, PostFilter,
    PreScore, the Score table, then Reserve to PostBind."""
    lines = [
        f"Pod {report.pod}  profile {report.profile}  attempt {report.attempt}",
        report.summary(),
        *_points(report, "PreFilter"),
        "Filter:",
    ]
    nodes = list(report.nodes)
    if report.filter_plugins:
        rows = [["NODE", *report.filter_plugins, "OUTCOME"]]
        rows += [
            [
                n,
                *(_verdict_cell(report, n, p) for p in report.filter_plugins),
                _outcome_cell(report, n),
            ]
            for n in nodes
        ]
        lines += _table(rows)
    else:
        lines.append("  no Filter plugins: every node fits")
    lines += _points(report, "PostFilter", "PreScore", "NormalizeScore")
    scored = [n for n in nodes if report.nodes[n].total is not None]
    if scored:
        plugins = list(report.score_plugins)
        lines.append("Score (raw -> normalized = weighted):")
        rows = [["NODE", *(f"{p} x{report.score_plugins[p]}" for p in plugins), "TOTAL"]]
        for n in scored:
            total = str(report.nodes[n].total)
            mark = "  <- selected" if n == report.selected else ""
            rows.append([n, *(_score_cell(report, n, p) for p in plugins), total + mark])
        lines += _table(rows)
    lines += _points(report, "Score", "Reserve", "Unreserve", "Permit", "PreBind", "Bind")
    lines += _points(report, "PostBind")
    return "\n".join(lines)
