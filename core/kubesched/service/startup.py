"""Start-up checks shared by ``config validate``, ``simulate``, ``explain`` and ``run``: the
configuration and its plugins' args checked together, so one run reports every mistake.

The configuration's own errors (unknown plugins, bad fields) and the errors of the plugins that
could be built (their args) come in one :class:`~kubesched.ConfigError`: a user fixing a file
sees all of them at once, as kube-scheduler-plugins' validation promises.
"""

from __future__ import annotations

import os

from kubesched.backends.memory import InMemoryBackend
from kubesched.config import SchedulerConfiguration, load_config
from kubesched.engine.scheduler import build_frameworks
from kubesched.errors import ConfigError, FieldError
from kubesched.framework.handle import Handle
from kubesched.framework.registry import Registry
from kubesched.framework.snapshot import Snapshot

__all__ = ["check_plugins", "load_checked", "plugin_errors"]


def check_plugins(config: SchedulerConfiguration, registry: Registry) -> None:
    """Build every profile's plugins once over an empty cluster; :class:`ConfigError` with
    every plugin's args error when some fail."""
    backend = InMemoryBackend()
    snapshot = Snapshot()
    build_frameworks(config, registry, lambda name: Handle(name, backend, lambda: snapshot))


def plugin_errors(config: SchedulerConfiguration, registry: Registry) -> list[FieldError]:
    """The errors :func:`check_plugins` finds, as a list."""
    try:
        check_plugins(config, registry)
    except ConfigError as exc:
        return exc.errors
    return []


def load_checked(
    source: str | os.PathLike[str] | None, registry: Registry
) -> SchedulerConfiguration:
    """:func:`~kubesched.config.load_config`, and when the file has errors, its plugins' args
    errors in the same :class:`ConfigError`. A valid file's plugins are not built here: the
    caller builds them (and reports their args errors) next."""
    return load_config(source, registry, also_check=lambda config: plugin_errors(config, registry))
