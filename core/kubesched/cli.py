"""The ``kubesched`` command line: ``simulate``, ``explain``, ``plugins``, ``new-plugin``,
``config validate|show``, ``run``.

User mistakes (a bad file, config or plugin) print one clear message per problem and exit with
code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any, TextIO

from . import __version__, explain_cli, extender_cli, scaffold, whatif
from .config import SchedulerConfiguration
from .errors import KubeschedError, PluginLoadError
from .hookspecs import EXTENSION_POINTS
from .registry import Registry
from .simulate import SimulationResult, simulate
from .startup import check_plugins, load_checked

__all__ = ["main"]

EXIT_OK = 0
EXIT_USAGE = 2
#: kube-scheduler's secure port: ``kubesched run`` serves HTTPS there unless given ``--port``.
SECURE_PORT = 10259
#: What a shell reports for a process that wrote to a closed pipe (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141

DESCRIPTION = (
    "A Kubernetes scheduler whose every decision is made by plugins. Commands: simulate and "
    "explain (schedule a cluster file offline), run (schedule a cluster as a service), plugins "
    "(list the installed plugins), new-plugin (start a plugin package), config (validate or "
    "show a configuration)."
)


def _bundled(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def _warn(config: SchedulerConfiguration, err: TextIO) -> None:
    _warn_all(config.warnings, err)


def _warn_all(warnings: Iterable[str], err: TextIO) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=err)


def _load(config_path: str | None, registry: Registry, err: TextIO) -> SchedulerConfiguration:
    """Config loaded, merged and validated, plugins built once to validate their args."""
    config = load_checked(config_path, registry)
    _warn(config, err)
    check_plugins(config, registry)
    return config


# -- simulate ------------------------------------------------------------------------------------
def _print_table(result: SimulationResult, out: TextIO) -> None:
    rows = [("NAMESPACE", "POD", "NODE", "MESSAGE")]
    rows += [(p.namespace, p.name, p.node or "<none>", p.message) for p in result.pods]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3],
            file=out,
        )
    summary = f"{result.scheduled} scheduled, {result.unschedulable} unschedulable"
    left_alone = result.left_alone_text()
    print(f"\n{summary}, {left_alone}" if left_alone else f"\n{summary}", file=out)


def cmd_simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    cluster_path = args.cluster
    config_path = args.config
    if cluster_path is None and not args.kubeconfig:
        cluster_path = _bundled("cluster.yaml")
        if config_path is None:
            config_path = _bundled("scheduler-config.yaml")
    registry = Registry.installed()
    config = whatif.serve_as(_load(config_path, registry, err), args.scheduler_name)
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
        _print_table(result, out)
    return EXIT_OK


# -- plugins -------------------------------------------------------------------------------------
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
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    for row in table:
        print(
            "  ".join(c.ljust(widths[i]) for i, c in enumerate(row[:3])) + "  " + row[3], file=out
        )
    return EXIT_OK


# -- config --------------------------------------------------------------------------------------
def cmd_config_validate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = _load(args.file, Registry.installed(), err)
    names = ", ".join(p.scheduler_name for p in config.profiles)
    print(f"{args.file}: valid ({len(config.profiles)} profile(s): {names})", file=out)
    return EXIT_OK


def cmd_config_show(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    config = _load(args.file, Registry.installed(), err)
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


# -- run ---------------------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .run import RunOptions, run  # imports the Kubernetes client: only when running

    leader_elect = None if args.leader_elect is None else args.leader_elect == "true"
    # HTTPS on --secure-port (kube-scheduler's 10259) unless plain HTTP is asked for by --port.
    plain = args.port is not None
    if plain and args.secure_port is not None:
        raise KubeschedError(
            f"--port {args.port} and --secure-port {args.secure_port}: give one (--port serves "
            "plain HTTP, --secure-port HTTPS with /metrics behind the apiserver's authorization)"
        )
    if plain and (args.tls_cert_file or args.tls_private_key_file):
        raise KubeschedError(
            "--tls-cert-file and --tls-private-key-file apply to --secure-port; --port "
            f"{args.port} serves plain HTTP"
        )
    return run(
        RunOptions(
            config=args.config,
            kubeconfig=args.kubeconfig,
            leader_elect=leader_elect,
            address=args.bind_address,
            port=args.port if plain else _or(args.secure_port, SECURE_PORT),
            plugin_timeout=args.plugin_timeout,
            secure=not plain,
            tls_cert_file=args.tls_cert_file,
            tls_key_file=args.tls_private_key_file,
        )
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg (and exc when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def setup_logging(verbosity: int, log_format: str, err: TextIO) -> None:
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler = logging.StreamHandler(err)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


# -- entry point ---------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubesched", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kubesched {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-v info, -vv debug)"
    )
    parser.add_argument("--log-format", choices=("text", "json"), default="text")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    explain_cli.register_commands(commands)
    extender_cli.register_commands(commands)

    run = commands.add_parser("run", help="schedule the pods of a cluster (as a service)")
    run.add_argument(
        "--config", help="a KubeSchedulerConfiguration file (default: the default profile)"
    )
    run.add_argument(
        "--kubeconfig",
        help="used when the config's clientConnection.kubeconfig "
        "is empty; then $KUBECONFIG, then the in-cluster service account",
    )
    run.add_argument(
        "--leader-elect", choices=("true", "false"), help="override leaderElection.leaderElect"
    )
    run.add_argument(
        "--bind-address", default="0.0.0.0", help="address of /healthz, /readyz and /metrics"
    )
    run.add_argument(
        "--secure-port",
        type=int,
        default=None,
        metavar="N",
        help=f"serve /healthz, /livez, /readyz and /metrics over HTTPS on this port (default "
        f"{SECURE_PORT}, kube-scheduler's; 0 picks a free one), /metrics only for tokens the "
        "apiserver authorizes (TokenReview + SubjectAccessReview: get on /metrics)",
    )
    run.add_argument(
        "--port",
        type=int,
        default=None,
        metavar="N",
        help="serve them over plain HTTP on this port instead, /metrics unauthenticated "
        "(kube-scheduler's former insecure port, 10251; 0 picks a free one)",
    )
    run.add_argument(
        "--tls-cert-file",
        default="",
        help="the HTTPS certificate, PEM (default: a self-signed one made at start-up)",
    )
    run.add_argument("--tls-private-key-file", default="", help="the key of --tls-cert-file")
    run.add_argument(
        "--plugin-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="the longest the plugins of one extension point may take for a pod (the "
        "scheduling cycle's Filter and Score points together, then PostFilter, Reserve, "
        "Permit, PreBind, Bind, PostBind each) before that pod's attempt ends with an Error "
        "naming the plugin (0: no limit; default 30)",
    )
    run.set_defaults(func=cmd_run)

    plugins = commands.add_parser("plugins", help="list the installed plugins")
    plugins.add_argument("-o", "--output", choices=("table", "json"), default="table")
    plugins.set_defaults(func=cmd_plugins)
    scaffold.register_commands(commands)

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
    _describe(commands)
    _describe(config_commands)
    return parser


def _describe(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Give each subcommand its one-line help as the description its own --help shows."""
    helps = {action.dest: action.help for action in commands._choices_actions}
    for name, parser in commands.choices.items():
        if parser.description is None and helps.get(name):
            text = str(helps[name])
            parser.description = text[0].upper() + text[1:] + "."


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    verbosity = args.verbose + (1 if args.command == "run" else 0)  # a service logs at info
    setup_logging(verbosity, args.log_format, err)
    try:
        code = int(args.func(args, out, err))
        out.flush()
        return code
    except KubeschedError as exc:
        _warn_all(getattr(exc, "warnings", ()), err)
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`kubesched plugins -o json | head -1`): stop quietly, as a
        # program killed by SIGPIPE would. Python's docs advise pointing stdout at devnull so
        # the flush at exit does not fail again.
        if out is sys.stdout:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
