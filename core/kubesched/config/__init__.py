"""The scheduler's configuration: a ``KubeSchedulerConfiguration``, read as kube-scheduler does.

Decoding is strict (unknown fields and wrong types are errors, each with its field path), every
profile's plugins are merged with kube-scheduler's defaults and multiPoint is expanded by
kube-scheduler's rules, and validation reports every problem at once in one
:class:`~kubesched.ConfigError`. Default plugins that are not installed are skipped with a warning.
"""

from kubesched.config.defaults import DEFAULT_PLUGINS
from kubesched.config.load import default_config, load_config, parse_config
from kubesched.config.types import (
    DEFAULT_SCHEDULER_NAME,
    ClientConnection,
    LeaderElection,
    PluginRef,
    Profile,
    SchedulerConfiguration,
)

__all__ = [
    "DEFAULT_PLUGINS",
    "DEFAULT_SCHEDULER_NAME",
    "ClientConnection",
    "LeaderElection",
    "PluginRef",
    "Profile",
    "SchedulerConfiguration",
    "default_config",
    "load_config",
    "parse_config",
]
