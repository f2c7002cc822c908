"""Strict decoding: a loaded mapping -> specs that remember the field path of every value.

Like kube-scheduler's strict decoder, an unknown field anywhere in the schema is an error, and so is
a value of the wrong type; ``null`` means "not set". Unlike it, decoding never stops at the first
problem: every error is collected with its path. ``pluginConfig[].args`` is free-form (the plugin
validates it when the profile is built).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.config.defaults import MULTI_POINT
from kubesched.config.durations import parse_duration
from kubesched.config.types import (
    API_GROUP,
    DEPRECATED_API_VERSIONS,
    ClientConnection,
    LeaderElection,
)
from kubesched.errors import FieldError
from kubesched.framework.hookspecs import EXTENSION_POINTS

__all__ = [
    "DecodedConfig",
    "PluginConfigSpec",
    "PluginEntry",
    "PluginSetSpec",
    "ProfileSpec",
    "decode",
    "parse_duration",
]

_V1BETA2 = f"{API_GROUP}/v1beta2"
_TOP_FIELDS = (
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
)
_V1BETA2_ONLY_FIELDS = ("healthzBindAddress", "metricsBindAddress")
_LEADER_ELECTION_FIELDS = (
    "leaderElect",
    "leaseDuration",
    "renewDeadline",
    "retryPeriod",
    "resourceLock",
    "resourceName",
    "resourceNamespace",
)
_CLIENT_CONNECTION_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
_PROFILE_FIELDS = ("schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig")
_PLUGIN_SET_FIELDS = ("enabled", "disabled")
_PLUGIN_FIELDS = ("name", "weight")
_PLUGIN_CONFIG_FIELDS = ("name", "args")
# Extenders are kept as written; their fields are still checked. Field -> expected kind.
_EXTENDER_FIELDS = {
    "urlPrefix": "string",
    "filterVerb": "string",
    "preemptVerb": "string",
    "prioritizeVerb": "string",
    "weight": "integer",
    "bindVerb": "string",
    "enableHTTPS": "boolean",
    "tlsConfig": "tls",
    "httpTimeout": "duration",
    "nodeCacheCapable": "boolean",
    "managedResources": "resources",
    "ignorable": "boolean",
}
_TLS_FIELDS = {
    "insecure": "boolean",
    "serverName": "string",
    "certFile": "string",
    "keyFile": "string",
    "caFile": "string",
    "certData": "string",
    "keyData": "string",
    "caData": "string",
}
_MANAGED_RESOURCE_FIELDS = {"name": "string", "ignoredByScheduler": "boolean"}
#: Plugin args carry their own type meta in kube files (``kind: NodeResourcesFitArgs``); dropped.
_ARGS_TYPE_META = ("apiVersion", "kind")
#: The plugins whose args kube-scheduler v1.37 has a registered type for (``<Name>Args`` in
#: ``kubescheduler.config.k8s.io``): only their type meta is checked, as kube's
#: ``PluginConfig.decodeNestedObjects`` skips the args of plugins it has no type for.
KUBE_ARGS_PLUGINS = frozenset(
    {
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    }
)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean "X"?)`` for the closest of ``known`` to a misspelt ``name``, else ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    if not close:  # a case slip ("nodename") is a near miss too
        by_case = {k.lower(): k for k in known}
        close = [by_case[name.lower()]] if name.lower() in by_case else []
    return f' (did you mean "{close[0]}"?)' if close else ""


def show(value: Any) -> str:
    """A value as an error message quotes it: JSON for scalars, the kind for collections."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str | bool | int | float) or value is None:
        return json.dumps(value, ensure_ascii=False)
    return type(value).__name__


def child(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


@dataclass
class PluginEntry:
    """One ``{name, weight}`` of an enabled list, or a default (``path`` empty)."""

    name: str
    weight: int = 1
    path: str = ""

    @property
    def is_default(self) -> bool:
        return not self.path


@dataclass
class PluginSetSpec:
    """One ``{enabled, disabled}`` of a profile's ``plugins``, as written."""

    enabled: list[PluginEntry] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class PluginConfigSpec:
    name: str
    args: dict[str, Any]
    path: str


@dataclass
class ProfileSpec:
    """One ``profiles[i]`` as written; ``plugins`` has ``multiPoint`` and every point as keys."""

    index: int
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: dict[str, PluginSetSpec] = field(default_factory=dict)
    plugin_config: list[PluginConfigSpec] = field(default_factory=list)
    #: Not a mapping in the file (already reported): nothing else is checked about it.
    malformed: bool = False

    @property
    def path(self) -> str:
        return f"profiles[{self.index}]"


@dataclass
class DecodedConfig:
    """Top-level values with kube-scheduler's defaults for the ones not set."""

    api_version: str
    parallelism: int = 16
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    extra: dict[str, Any] = field(default_factory=dict)
    #: Empty when the file has no profiles (one default profile is used then).
    profiles: list[ProfileSpec] = field(default_factory=list)


class _Decoder:
    def __init__(self, api_version: str) -> None:
        self.api_version = api_version
        self.errors: list[FieldError] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append(FieldError(path, message))

    # -- shapes -----------------------------------------------------------------------------
    def mapping(
        self, value: Any, path: str, allowed: Sequence[str], hint: str = ""
    ) -> Mapping[str, Any] | None:
        """The mapping with unknown fields reported; ``{}`` for null, ``None`` if not a mapping."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.error(path, f"must be a mapping, got {show(value)}")
            return None
        for key in value:
            if key not in allowed:
                near = did_you_mean(str(key), allowed)
                self.error(
                    child(path, key), f"unknown field{near}; allowed: {', '.join(allowed)}{hint}"
                )
        return value

    def items(self, value: Any, path: str) -> list[tuple[str, Any]]:
        """``(path, item)`` of a list; ``[]`` for null or a non-list (reported)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"must be a list, got {show(value)}")
            return []
        return [(f"{path}[{i}]", item) for i, item in enumerate(value)]

    # -- scalars (None: not set, or wrong type and reported) ---------------------------------
    def integer(self, value: Any, path: str) -> int | None:
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        self.error(path, f"must be an integer, got {show(value)}")
        return None

    def number(self, value: Any, path: str) -> float | None:
        if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
            return None if value is None else float(value)
        self.error(path, f"must be a number, got {show(value)}")
        return None

    def string(self, value: Any, path: str) -> str | None:
        if value is None or isinstance(value, str):
            return value
        self.error(path, f"must be a string, got {show(value)}")
        return None

    def boolean(self, value: Any, path: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.error(path, f"must be a boolean (true or false), got {show(value)}")
        return None

    def duration(self, value: Any, path: str) -> float | None:
        if value is None:
            return None
        seconds = parse_duration(value) if isinstance(value, str) else None
        if seconds is None:
            self.error(
                path, f'must be a duration such as "15s", "1m30s" or "500ms", got {show(value)}'
            )
        return seconds

    def typed(self, kind: str, value: Any, path: str) -> None:
        """Check a value of a field kept as written (extenders)."""
        if kind == "tls":
            self.table(value, path, _TLS_FIELDS)
        elif kind == "resources":
            for item_path, item in self.items(value, path):
                self.table(item, item_path, _MANAGED_RESOURCE_FIELDS)
        else:
            getattr(self, kind)(value, path)

    def table(self, value: Any, path: str, fields: Mapping[str, str]) -> None:
        data = self.mapping(value, path, list(fields))
        for key, kind in fields.items():
            if data and key in data:
                self.typed(kind, data[key], child(path, key))

    # -- the schema ---------------------------------------------------------------------------
    def config(self, data: Mapping[str, Any]) -> DecodedConfig:
        allowed = _TOP_FIELDS + (_V1BETA2_ONLY_FIELDS if self.api_version == _V1BETA2 else ())
        self.mapping(data, "", allowed)
        out = DecodedConfig(api_version=self.api_version)
        parallelism = self.integer(data.get("parallelism"), "parallelism")
        if parallelism is not None:
            out.parallelism = parallelism
        percentage = self.integer(data.get("percentageOfNodesToScore"), "percentageOfNodesToScore")
        if percentage is not None:
            out.percentage_of_nodes_to_score = percentage
        # kube-scheduler's fields are integers; fractions are accepted for fast tests.
        initial = self.number(data.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds")
        if initial is not None:
            out.pod_initial_backoff_seconds = initial
        maximum = self.number(data.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds")
        if maximum is not None:
            out.pod_max_backoff_seconds = maximum
        out.leader_election = self.leader_election(data.get("leaderElection"))
        out.client_connection = self.client_connection(data.get("clientConnection"))
        for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
            if self.boolean(data.get(key), key) is not None:
                out.extra[key] = data[key]
        for key in _V1BETA2_ONLY_FIELDS:
            if key in allowed and self.string(data.get(key), key) is not None:
                out.extra[key] = data[key]
        if data.get("extenders") is not None:
            for item_path, item in self.items(data["extenders"], "extenders"):
                self.table(item, item_path, _EXTENDER_FIELDS)
            out.extra["extenders"] = data["extenders"]
        out.profiles = [
            self.profile(i, item)
            for i, (_, item) in enumerate(self.items(data.get("profiles"), "profiles"))
        ]
        return out

    def leader_election(self, value: Any) -> LeaderElection:
        # Zero or empty values get the defaults, as kube-scheduler's defaulting does.
        out = LeaderElection()
        data = self.mapping(value, "leaderElection", _LEADER_ELECTION_FIELDS) or {}
        elect = self.boolean(data.get("leaderElect"), "leaderElection.leaderElect")
        if elect is not None:
            out.leader_elect = elect
        for key, attr in (
            ("leaseDuration", "lease_duration"),
            ("renewDeadline", "renew_deadline"),
            ("retryPeriod", "retry_period"),
        ):
            seconds = self.duration(data.get(key), f"leaderElection.{key}")
            if seconds:
                setattr(out, attr, seconds)
        for key, attr in (
            ("resourceLock", "resource_lock"),
            ("resourceName", "resource_name"),
            ("resourceNamespace", "resource_namespace"),
        ):
            text = self.string(data.get(key), f"leaderElection.{key}")
            if text:
                setattr(out, attr, text)
        return out

    def client_connection(self, value: Any) -> ClientConnection:
        out = ClientConnection()
        data = self.mapping(value, "clientConnection", _CLIENT_CONNECTION_FIELDS) or {}
        for key, attr in (
            ("kubeconfig", "kubeconfig"),
            ("contentType", "content_type"),
            ("acceptContentTypes", "accept_content_types"),
        ):
            text = self.string(data.get(key), f"clientConnection.{key}")
            if text is not None:
                setattr(out, attr, text)
        qps = self.number(data.get("qps"), "clientConnection.qps")
        if qps:  # 0 means the scheduler's own default (kube-scheduler's rule)
            out.qps = qps
        burst = self.integer(data.get("burst"), "clientConnection.burst")
        if burst:
            out.burst = burst
        return out

    def profile(self, index: int, value: Any) -> ProfileSpec:
        out = ProfileSpec(index=index)
        path = out.path
        data = self.mapping(value, path, _PROFILE_FIELDS)
        if data is None:
            out.malformed = True
            data = {}
        out.scheduler_name = self.string(data.get("schedulerName"), f"{path}.schedulerName")
        out.percentage_of_nodes_to_score = self.integer(
            data.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore"
        )
        out.plugins = self.plugins(data.get("plugins"), f"{path}.plugins")
        out.plugin_config = self.plugin_config(data.get("pluginConfig"), f"{path}.pluginConfig")
        return out

    def plugins(self, value: Any, path: str) -> dict[str, PluginSetSpec]:
        points = list(EXTENSION_POINTS)
        hint = ""
        if self.api_version == _V1BETA2:
            hint = f" ({MULTI_POINT} needs {API_GROUP}/v1beta3 or later)"
        else:
            points.append(MULTI_POINT)
        data = self.mapping(value, path, points, hint) or {}
        sets = {MULTI_POINT: PluginSetSpec()}
        sets.update(
            {point: self.plugin_set(data.get(point), child(path, point)) for point in points}
        )
        return sets

    def plugin_set(self, value: Any, path: str) -> PluginSetSpec:
        out = PluginSetSpec()
        data = self.mapping(value, path, _PLUGIN_SET_FIELDS) or {}
        for item_path, item in self.items(data.get("enabled"), f"{path}.enabled"):
            entry = self.plugin(item, item_path)
            if entry is None:
                continue
            first = next((e for e in out.enabled if e.name == entry.name), None)
            if first is not None:  # kube-scheduler: "already registered"
                self.error(
                    item_path,
                    f'duplicate plugin "{entry.name}"; already enabled at '
                    f"{first.path.rsplit('.', 1)[-1]}",
                )
                continue
            out.enabled.append(entry)
        for item_path, item in self.items(data.get("disabled"), f"{path}.disabled"):
            entry = self.plugin(item, item_path)
            if entry is not None:
                out.disabled.append(entry.name)
        return out

    def plugin(self, value: Any, path: str) -> PluginEntry | None:
        if isinstance(value, str):
            self.error(path, f"must be a mapping, got {show(value)}; write {{name: {value}}}")
            return None
        data = self.mapping(value, path, _PLUGIN_FIELDS)
        if data is None:
            return None
        name = self.string(data.get("name"), f"{path}.name")
        weight = self.integer(data.get("weight"), f"{path}.weight")
        if weight is not None and not 0 <= weight <= 100:
            self.error(f"{path}.weight", f"must be in the range [0, 100], got {weight}")
        if not name:
            if data.get("name") in (None, ""):  # a wrong type was reported above
                self.error(f"{path}.name", "required: the plugin's name, e.g. NodeResourcesFit")
            return None
        return PluginEntry(name=name, weight=weight or 1, path=path)

    def plugin_config(self, value: Any, path: str) -> list[PluginConfigSpec]:
        out = []
        for item_path, item in self.items(value, path):
            data = self.mapping(item, item_path, _PLUGIN_CONFIG_FIELDS)
            if data is None:
                continue
            name = self.string(data.get("name"), f"{item_path}.name")
            if data.get("name") in (None, ""):
                self.error(
                    f"{item_path}.name", "required: the name of the plugin these args configure"
                )
            args = data.get("args")
            if args is None:
                args = {}
            elif not isinstance(args, Mapping):
                self.error(f"{item_path}.args", f"must be a mapping, got {show(args)}")
                args = {}
            if name:
                self.args_type_meta(name, args, f"{item_path}.args")
                args = {k: v for k, v in args.items() if k not in _ARGS_TYPE_META}
                out.append(PluginConfigSpec(name=name, args=args, path=item_path))
        return out

    def args_type_meta(self, name: str, args: Mapping[str, Any], path: str) -> None:
        """A kube plugin's args that name their type must name ``<Name>Args`` of this API
        group (kube: ``args for plugin X were not of type XArgs.kubescheduler.config.k8s.io,
        got …``); a version the group does not have is refused too."""
        if name not in KUBE_ARGS_PLUGINS or not any(key in args for key in _ARGS_TYPE_META):
            return
        want_kind = f"{name}Args"
        api_version = args.get("apiVersion", f"{API_GROUP}/v1")
        kind = args.get("kind", want_kind)
        for key, value in (("apiVersion", api_version), ("kind", kind)):
            if not isinstance(value, str):
                self.error(child(path, key), f"must be a string, got {show(value)}")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return
        group = api_version.rpartition("/")[0]
        if (kind, group) != (want_kind, API_GROUP):
            self.error(
                path,
                f"args for plugin {name} were not of type {want_kind}.{API_GROUP}, "
                f"got {kind}.{group}",
            )
        elif api_version not in (f"{API_GROUP}/v1", *DEPRECATED_API_VERSIONS):
            self.error(
                path,
                f'decoding args for plugin {name}: no kind "{kind}" is registered for '
                f'version "{api_version}"',
            )


def decode(data: Mapping[str, Any], api_version: str) -> tuple[DecodedConfig, list[FieldError]]:
    """Decode a ``KubeSchedulerConfiguration`` mapping; the errors are every problem found."""
    decoder = _Decoder(api_version)
    config = decoder.config(data)
    return config, decoder.errors
