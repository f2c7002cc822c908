"""The configuration as the scheduler uses it: defaults applied, plugins merged and expanded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.config.extenders import Extender
from kubesched.framework.hookspecs import EXTENSION_POINTS

__all__ = [
    "API_GROUP",
    "API_VERSION",
    "DEFAULT_SCHEDULER_NAME",
    "DEPRECATED_API_VERSIONS",
    "KIND",
    "ClientConnection",
    "LeaderElection",
    "PluginRef",
    "Profile",
    "SchedulerConfiguration",
]

API_GROUP = "kubescheduler.config.k8s.io"
API_VERSION = f"{API_GROUP}/v1"
#: Accepted with a deprecation warning, to help users migrate files written for older releases.
DEPRECATED_API_VERSIONS = (f"{API_GROUP}/v1beta2", f"{API_GROUP}/v1beta3")
KIND = "KubeSchedulerConfiguration"

#: The profile name when there is no configuration, or when a single profile names none
#: (kube-scheduler uses "default-scheduler" there; this project runs beside it).
DEFAULT_SCHEDULER_NAME = "custom-scheduler"


@dataclass(frozen=True)
class PluginRef:
    """One plugin at one extension point.

    ``weight`` matters at ``score`` only, where it multiplies the plugin's normalized score; a
    weight of 0 or none in the file means 1 (kube-scheduler's rule). Elsewhere it is always 1.
    """

    name: str
    weight: int = 1


@dataclass
class LeaderElection:
    """``leaderElection``; durations in seconds, from Go duration strings ("15s", "1m30s")."""

    leader_elect: bool = True
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass
class ClientConnection:
    """``clientConnection``: how the scheduler talks to the API server."""

    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    content_type: str = ""
    accept_content_types: str = ""


def _empty_points() -> dict[str, list[PluginRef]]:
    return {point: [] for point in EXTENSION_POINTS}


@dataclass
class Profile:
    """One scheduling profile, selected by pods through ``spec.schedulerName``."""

    scheduler_name: str
    #: Every key of ``EXTENSION_POINTS`` (possibly an empty list), plugins in the order they run.
    plugins: dict[str, list[PluginRef]] = field(default_factory=_empty_points)
    #: Plugin name -> its ``pluginConfig`` args (``apiVersion``/``kind`` removed); ``{}`` when the
    #: profile has no pluginConfig entry for a plugin it uses.
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Plugin name -> the field path of its args, e.g. ``profiles[0].pluginConfig[1].args``.
    #: A plugin without a pluginConfig entry gets ``profiles[0].pluginConfig[<Name>].args``
    #: (kube's notation for a keyed list item).
    args_paths: dict[str, str] = field(default_factory=dict)
    #: ``None`` when the profile does not set it (the top-level value applies).
    percentage_of_nodes_to_score: int | None = None
    #: Position in ``profiles[]``.
    index: int = 0

    def plugin_names(self) -> list[str]:
        """Every plugin the profile uses, each once, in first-use order over the points."""
        seen: dict[str, None] = {}
        for point in EXTENSION_POINTS:
            for ref in self.plugins.get(point, []):
                seen.setdefault(ref.name, None)
        return list(seen)


@dataclass
class SchedulerConfiguration:
    """A validated ``KubeSchedulerConfiguration`` with kube-scheduler's defaults applied."""

    profiles: list[Profile]
    parallelism: int = 16
    #: 0 means adaptive (kube-scheduler: from 50% down to 5% as the cluster grows).
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    #: Other top-level fields of the file, as written: ``enableProfiling``,
    #: ``enableContentionProfiling``, ``delayCacheUntilActive``, ``extenders`` (and v1beta2's
    #: ``healthzBindAddress``/``metricsBindAddress``). Only the fields present appear.
    extra: dict[str, Any] = field(default_factory=dict)
    api_version: str = API_VERSION
    #: ``extenders[]``, typed, in the order kube-scheduler calls them (ignorable ones last).
    extenders: list[Extender] = field(default_factory=list)
    #: What the user should know that does not stop the scheduler (deprecations, skipped
    #: default plugins, unused pluginConfig).
    warnings: list[str] = field(default_factory=list)
