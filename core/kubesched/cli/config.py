"""``kubesched config validate|show``: every error of a config file, or the effective profiles."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from kubesched.cli.common import EXIT_OK, load
from kubesched.framework.hookspecs import EXTENSION_POINTS
from kubesched.framework.registry import Registry


def cmd_config_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = load(args.file, Registry.installed(), err)
    names = ", ".join(p.scheduler_name for p in config.profiles)
    print(f"{args.file}: valid ({len(config.profiles)} profile(s): {names})", file=out)
    return EXIT_OK


def cmd_config_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = load(args.file, Registry.installed(), err)
    shown: dict[str, Any] = {
        "apiVersion": config.api_version,
        "parallelism": config.parallelism,
        "percentageOfNodesToScore": config.percentage_of_nodes_to_score,
        "podInitialBackoffSeconds": config.pod_initial_backoff_seconds,
        "podMaxBackoffSeconds": config.pod_max_backoff_seconds,
        "profiles": [],
    }
    for profile in config.profiles:
        points: dict[str, list[Any]] = {}
        for point in EXTENSION_POINTS:
            refs = profile.plugins.get(point, [])
            points[point] = [
                {"name": r.name, "weight": r.weight} if point == "score" else r.name for r in refs
            ]
        shown["profiles"].append(
            {
                "schedulerName": profile.scheduler_name,
                "percentageOfNodesToScore": profile.percentage_of_nodes_to_score,
                "plugins": points,
                "pluginConfig": [
                    {"name": n, "args": a} for n, a in profile.plugin_args.items() if a
                ],
            }
        )
    if args.output == "json":
        json.dump(shown, out, indent=2)
        print(file=out)
    else:
        import yaml

        yaml.safe_dump(shown, out, sort_keys=False, default_flow_style=False)
    return EXIT_OK


def register_commands(commands: argparse._SubParsersAction) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    config = commands.add_parser("config", help="check or show a configuration")
    config_commands = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    validate = config_commands.add_parser("validate", help="report every error in a config file")
    validate.add_argument("file", help="a KubeSchedulerConfiguration file")
    validate.set_defaults(func=cmd_config_validate)
    show = config_commands.add_parser("show", help="the effective profiles, plugin order, weights")
    show.add_argument(
        "file", nargs="?", help="a KubeSchedulerConfiguration file (default: the default profile)"
    )
    show.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    show.set_defaults(func=cmd_config_show)
    return config_commands  # its actions get their descriptions with the top level's
