"""``kubesched simulate``: schedule the pending pods of a cluster file (or a live cluster,
read-only) in memory and print where each went."""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from kubesched.cli import explain as explain_cli
from kubesched.cli.common import EXIT_OK, bundled, load
from kubesched.cli.render import print_simulation
from kubesched.framework.registry import Registry
from kubesched.service import whatif
from kubesched.service.simulate import simulate


def cmd_simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cluster_path = args.cluster
    config_path = args.config
    if cluster_path is None and not args.kubeconfig:
        cluster_path = bundled("cluster.yaml")
        if config_path is None:
            config_path = bundled("scheduler-config.yaml")
    registry = Registry.installed()
    config = whatif.serve_as(load(config_path, registry, err), args.scheduler_name)
    cluster, _ = whatif.read_input(args, cluster_path, config, registry)
    for warning in cluster.warnings:
        print(f"warning: {warning}", file=err)
    if args.explain:
        result, recorder = explain_cli.simulate_explained(cluster, config, registry, args.seed)
        explain_cli.write_simulation(result, recorder, args.output, out)
        return EXIT_OK
    result = simulate(cluster, config, registry, seed=args.seed, tune_gc=True)
    if args.output == "json":
        json.dump(result.to_dict(), out, indent=2)
        print(file=out)
    else:
        print_simulation(result, out)
    return EXIT_OK


def register_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sim = commands.add_parser("simulate", help="schedule the pending pods of a cluster file")
    sim.add_argument(
        "cluster",
        nargs="?",
        help="Kubernetes manifests (YAML/JSON) with Nodes and Pods; default: the bundled example",
    )
    sim.add_argument("--config", help="a KubeSchedulerConfiguration file")
    sim.add_argument("-o", "--output", choices=("table", "json"), default="table")
    sim.add_argument("--seed", type=int, default=0, help="seed for random tie-breaking")
    sim.add_argument(
        "--explain",
        action="store_true",
        help="for every pod, each plugin's Filter verdict and Score per node (as explain does)",
    )
    sim.add_argument(
        "--no-validate",
        action="store_true",
        help="skip kube-apiserver's validation of the objects (for a snapshot of a cluster, "
        "whose objects an apiserver already stored)",
    )
    whatif.add_arguments(sim)
    sim.set_defaults(func=cmd_simulate)
