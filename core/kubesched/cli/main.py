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
from collections.abc import Sequence
from typing import TextIO

from kubesched._version import __version__
from kubesched.cli import config as config_cli
from kubesched.cli import explain as explain_cli
from kubesched.cli import extender as extender_cli
from kubesched.cli import plugins as plugins_cli
from kubesched.cli import run as run_cli
from kubesched.cli import scaffold
from kubesched.cli import simulate as simulate_cli
from kubesched.cli.common import EXIT_BROKEN_PIPE, EXIT_OK, EXIT_USAGE, warn_all
from kubesched.errors import KubeschedError

__all__ = ["EXIT_BROKEN_PIPE", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

DESCRIPTION = (
    "A Kubernetes scheduler whose every decision is made by plugins. Commands: simulate and "
    "explain (schedule a cluster file offline), run (schedule a cluster as a service), plugins "
    "(list the installed plugins), new-plugin (start a plugin package), config (validate or "
    "show a configuration)."
)


# -- logging ---------------------------------------------------------------------------------
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

    simulate_cli.register_commands(commands)
    explain_cli.register_commands(commands)
    extender_cli.register_commands(commands)
    run_cli.register_commands(commands)
    plugins_cli.register_commands(commands)
    scaffold.register_commands(commands)
    config_commands = config_cli.register_commands(commands)
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
        warn_all(getattr(exc, "warnings", ()), err)
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
