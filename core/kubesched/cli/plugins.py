"""``kubesched plugins``: the installed plugins, their distributions and extension points."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from kubesched.cli.common import EXIT_OK
from kubesched.cli.render import print_rows
from kubesched.errors import PluginLoadError
from kubesched.framework.registry import Registry


def cmd_plugins(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    rows: list[dict[str, Any]] = []
    for spec in Registry.installed().specs():
        row: dict[str, Any] = {
            "name": spec.name,
            "distribution": spec.distribution,
            "version": spec.version,
            "extension_points": [],
        }
        try:
            row["extension_points"] = spec.extension_points()
        except PluginLoadError as exc:
            row["error"] = str(exc)
        rows.append(row)
    if args.output == "json":
        json.dump(rows, out, indent=2)
        print(file=out)
        return EXIT_OK
    table = [("NAME", "DISTRIBUTION", "VERSION", "EXTENSION POINTS")]
    table += [
        (
            r["name"],
            r["distribution"],
            r["version"],
            r.get("error") or ", ".join(r["extension_points"]),
        )
        for r in rows
    ]
    print_rows(table, out)
    return EXIT_OK


def register_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    plugins = commands.add_parser("plugins", help="list the installed plugins")
    plugins.add_argument("-o", "--output", choices=("table", "json"), default="table")
    plugins.set_defaults(func=cmd_plugins)
