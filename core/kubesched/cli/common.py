"""What every command shares: exit codes, the bundled example, warnings, loading a config."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import TextIO

from kubesched.config import SchedulerConfiguration
from kubesched.framework.registry import Registry
from kubesched.service.startup import check_plugins, load_checked

EXIT_OK = 0
EXIT_USAGE = 2
#: What a shell reports for a process that wrote to a closed pipe (128 + SIGPIPE).
EXIT_BROKEN_PIPE = 141


def bundled(name: str) -> str:
    return str(resources.files("kubesched") / "examples" / name)


def warn(config: SchedulerConfiguration, err: TextIO) -> None:
    warn_all(config.warnings, err)


def warn_all(warnings: Iterable[str], err: TextIO) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=err)


def load(config_path: str | None, registry: Registry, err: TextIO) -> SchedulerConfiguration:
    """Config loaded, merged and validated, plugins built once to validate their args."""
    config = load_checked(config_path, registry)
    warn(config, err)
    check_plugins(config, registry)
    return config
