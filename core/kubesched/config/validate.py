"""Building and validating the configuration: every error is collected, none stops the others.

The rules are kube-scheduler's (``pkg/scheduler/apis/config/validation/validation.go``, the
component-base leader-election checks, and the framework's checks when it builds a profile), plus
the checks a plugin registry makes possible here: unknown plugin names and plugins enabled at a
point they do not implement. A plugin is imported only when the merged profile uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kubesched.config.decode import DecodedConfig, PluginEntry, ProfileSpec, did_you_mean
from kubesched.config.defaults import DEFAULT_DISTRIBUTIONS, MULTI_POINT, default_plugin_sets
from kubesched.config.extenders import apply_ignored_resources, decode_extenders
from kubesched.config.merge import expand_multi_point, merge_plugins
from kubesched.config.types import (
    DEFAULT_SCHEDULER_NAME,
    PluginRef,
    Profile,
    SchedulerConfiguration,
)
from kubesched.errors import FieldError, PluginLoadError
from kubesched.framework.hookspecs import EXTENSION_POINTS
from kubesched.framework.registry import Registry

__all__ = ["build_configuration"]

#: client-go's ``leaderelection.JitterFactor``: ``NewLeaderElector`` refuses a renewDeadline not
#: above ``retryPeriod × JitterFactor`` (kubesched.service.leaderelection jitters its tries by it
#: too).
LEADER_ELECTION_JITTER_FACTOR = 1.2


class _Resolver:
    """The extension points of registered plugins, each plugin loaded at most once."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._points: dict[str, list[str] | PluginLoadError] = {}

    def points(self, name: str) -> list[str] | PluginLoadError:
        if name not in self._points:
            try:
                self._points[name] = self.registry.get(name).extension_points()
            except PluginLoadError as exc:
                self._points[name] = exc
        return self._points[name]

    def implemented(self, name: str) -> list[str]:
        points = self._points.get(name)
        return points if isinstance(points, list) else []

    def installed(self) -> str:
        return ", ".join(self.registry.names()) or "(none)"

    def names(self) -> list[str]:
        return self.registry.names()

    def install_hint(self, plugin: str) -> str:
        """`` (install <distribution>)`` when ``plugin`` is a default one that is not installed."""
        distribution = DEFAULT_DISTRIBUTIONS.get(plugin)
        if distribution is None or plugin in self.registry:
            return ""
        return f"; the default, {plugin}, is not installed: install {distribution}"


class _ProfileBuilder:
    def __init__(
        self,
        resolver: _Resolver,
        defaults: dict[str, list[PluginRef]],
        errors: list[FieldError],
        warnings: list[str],
    ) -> None:
        self.resolver = resolver
        self.defaults = defaults
        self.errors = errors
        self.warnings = warnings
        #: Default plugins left out because they are not installed, over all profiles.
        self.skipped_defaults: set[str] = set()

    def build(self, spec: ProfileSpec, single: bool) -> Profile:
        name = spec.scheduler_name
        if name is None and single:
            name = DEFAULT_SCHEDULER_NAME
        if not name and not spec.malformed:
            self.errors.append(
                FieldError(
                    f"{spec.path}.schedulerName",
                    "required: the name pods select this profile by, in spec.schedulerName",
                )
            )
        percentage = spec.percentage_of_nodes_to_score
        if percentage is not None and not 0 <= percentage <= 100:
            self.errors.append(
                FieldError(
                    f"{spec.path}.percentageOfNodesToScore",
                    f"must be in the range [0, 100], got {percentage}",
                )
            )
        profile = Profile(
            scheduler_name=name or "",
            plugins=self.plugins(spec),
            percentage_of_nodes_to_score=percentage,
            index=spec.index,
        )
        self.check_points(profile, spec)
        self.check_partly_enabled(profile, spec)
        self.check_weights(spec)
        self.plugin_config(profile, spec)
        return profile

    def check_weights(self, spec: ProfileSpec) -> None:
        """Warn of a weight where none is used: only score (and multiPoint, for score) weigh."""
        for key, plugin_set in spec.plugins.items():
            if key in ("score", MULTI_POINT):
                continue
            for entry in plugin_set.enabled:
                if entry.weight != 1:
                    self.warnings.append(
                        f"{entry.path}.weight: only score and multiPoint weights are used; "
                        f"the weight at {key} is ignored (kube-scheduler ignores it too)"
                    )

    def check_partly_enabled(self, profile: Profile, spec: ProfileSpec) -> None:
        """Warn of a plugin the user enabled at some points but not at others it implements
        (a Permit+Reserve plugin under ``permit`` only never reserves, nor unreserves on a
        timeout). Points where the user disabled it by name are meant, and not reported."""
        written: dict[str, str] = {}
        disabled: set[tuple[str, str]] = set()
        for key, plugin_set in spec.plugins.items():
            disabled.update((key, name) for name in plugin_set.disabled)
            if key != MULTI_POINT:
                for entry in plugin_set.enabled:
                    written.setdefault(entry.name, entry.path)
        for name, path in written.items():
            if (MULTI_POINT, name) in disabled:
                continue
            enabled = {
                key for key, refs in profile.plugins.items() if any(r.name == name for r in refs)
            }
            missing = [
                point
                for point in self.resolver.implemented(name)
                if point not in enabled and (point, name) not in disabled
            ]
            if enabled and missing:
                points = ", ".join(missing)
                self.warnings.append(
                    f'{path}: plugin "{name}" also implements {points}, where it is not enabled; '
                    f"enable it under {spec.path}.plugins.{MULTI_POINT} to run it at every point "
                    f"it implements, or disable it at {points} if that is meant"
                )

    def plugins(self, spec: ProfileSpec) -> dict[str, list[PluginRef]]:
        merged = merge_plugins(self.defaults, spec.plugins)
        failed_defaults: set[str] = set()
        for key, plugin_set in merged.items():
            kept = []
            for entry in plugin_set.enabled:
                if entry.is_default and entry.name not in self.resolver.registry:
                    self.skipped_defaults.add(entry.name)
                elif self.usable(spec, key, entry, failed_defaults):
                    kept.append(entry)
            plugin_set.enabled = kept
        return expand_multi_point(merged, self.resolver.implemented)

    def usable(
        self, spec: ProfileSpec, key: str, entry: PluginEntry, failed_defaults: set[str]
    ) -> bool:
        """Whether an entry can run at ``key``; reports why not when the user wrote it."""
        if entry.name not in self.resolver.registry:
            hint = did_you_mean(entry.name, self.resolver.names())
            self.errors.append(
                FieldError(
                    entry.path,
                    f'unknown plugin "{entry.name}"{hint}; installed: {self.resolver.installed()}',
                )
            )
            return False
        points = self.resolver.points(entry.name)
        if isinstance(points, PluginLoadError):
            if not entry.is_default:
                self.errors.append(FieldError(entry.path, str(points)))
            elif entry.name not in failed_defaults:
                failed_defaults.add(entry.name)
                self.errors.append(
                    FieldError(
                        f"{spec.path}.plugins",
                        f"{points} (a default plugin: reinstall it, or "
                        f"disable it under {spec.path}.plugins.{MULTI_POINT}.disabled)",
                    )
                )
            return False
        if key == MULTI_POINT or key in points:
            return True
        # kube-scheduler lists v1beta2's defaults per point; an installed plugin may implement
        # fewer points than kube-scheduler's plugin of that name does.
        if not entry.is_default:
            self.errors.append(
                FieldError(
                    entry.path,
                    f'plugin "{entry.name}" does not implement '
                    f"{key}; it implements: {', '.join(points)}",
                )
            )
        return False

    def check_points(self, profile: Profile, spec: ProfileSpec) -> None:
        queue_sort = [ref.name for ref in profile.plugins["queueSort"]]
        if len(queue_sort) != 1:
            got = f"{len(queue_sort)}: {', '.join(queue_sort)}" if queue_sort else "none"
            hint = "" if queue_sort else self.resolver.install_hint("PrioritySort")
            self.errors.append(
                FieldError(
                    f"{spec.path}.plugins.queueSort",
                    f"exactly one queueSort plugin must be enabled, got {got}{hint}",
                )
            )
        if not profile.plugins["bind"]:
            self.errors.append(
                FieldError(
                    f"{spec.path}.plugins.bind",
                    "at least one bind plugin is needed (e.g. DefaultBinder)"
                    + self.resolver.install_hint("DefaultBinder"),
                )
            )

    def plugin_config(self, profile: Profile, spec: ProfileSpec) -> None:
        used = profile.plugin_names()
        written = {
            entry.name for plugin_set in spec.plugins.values() for entry in plugin_set.enabled
        }
        first_path: dict[str, str] = {}
        for config in spec.plugin_config:
            if config.name in first_path:
                self.errors.append(
                    FieldError(
                        f"{config.path}.name",
                        f'duplicate "{config.name}" (first at {first_path[config.name]})',
                    )
                )
                continue
            first_path[config.name] = config.path.rsplit(".", 1)[-1]
            if config.name not in used:
                if config.name in written:  # enabled, but unknown or broken: an error says so
                    continue
                self.warnings.append(
                    f'{config.path}: plugin "{config.name}" is not enabled in '
                    f"this profile; its args are ignored{did_you_mean(config.name, used)}"
                )
                continue
            profile.plugin_args[config.name] = config.args
            profile.args_paths[config.name] = f"{config.path}.args"
        for name in used:
            profile.plugin_args.setdefault(name, {})
            profile.args_paths.setdefault(name, f"{spec.path}.pluginConfig[{name}].args")


def _check_profiles(profiles: Sequence[Profile], errors: list[FieldError]) -> None:
    first_index: dict[str, int] = {}
    for profile in profiles:
        if not profile.scheduler_name:
            continue
        if profile.scheduler_name in first_index:
            errors.append(
                FieldError(
                    f"profiles[{profile.index}].schedulerName",
                    f'duplicate "{profile.scheduler_name}" (first used by '
                    f"profiles[{first_index[profile.scheduler_name]}])",
                )
            )
        else:
            first_index[profile.scheduler_name] = profile.index
    # One queue serves every profile, so they must agree on how it is sorted.
    canon = [ref.name for ref in profiles[0].plugins["queueSort"]]
    canon_args = profiles[0].plugin_args.get(canon[0], {}) if len(canon) == 1 else {}
    for profile in profiles[1:]:
        names = [ref.name for ref in profile.plugins["queueSort"]]
        if names != canon:
            errors.append(
                FieldError(
                    f"profiles[{profile.index}].plugins.queueSort",
                    f"must be the same for all profiles; profiles[0] uses {_names(canon)}, this "
                    f"profile uses {_names(names)}",
                )
            )
        elif len(names) == 1 and profile.plugin_args.get(names[0], {}) != canon_args:
            errors.append(
                FieldError(
                    profile.args_paths[names[0]],
                    f"queueSort must be the same for all profiles; the "
                    f'args of "{names[0]}" differ from profiles[0]\'s',
                )
            )


def _names(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _check_top_level(config: DecodedConfig, errors: list[FieldError]) -> None:
    def fail(path: str, message: str) -> None:
        errors.append(FieldError(path, message))

    if config.parallelism <= 0:
        fail("parallelism", f"must be greater than 0, got {config.parallelism}")
    if not 0 <= config.percentage_of_nodes_to_score <= 100:
        fail(
            "percentageOfNodesToScore",
            f"must be in the range [0, 100], got {config.percentage_of_nodes_to_score}",
        )
    initial, maximum = config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds
    if initial <= 0:
        fail("podInitialBackoffSeconds", f"must be greater than 0, got {initial:g}")
    if maximum < initial:
        fail(
            "podMaxBackoffSeconds",
            f"must be greater than or equal to "
            f"podInitialBackoffSeconds ({initial:g}), got {maximum:g}",
        )
    election = config.leader_election
    if election.leader_elect:
        for key, seconds in (
            ("leaseDuration", election.lease_duration),
            ("renewDeadline", election.renew_deadline),
            ("retryPeriod", election.retry_period),
        ):
            if seconds <= 0:
                fail(f"leaderElection.{key}", f"must be greater than zero, got {seconds:g}s")
        if 0 < election.lease_duration <= election.renew_deadline:
            fail(
                "leaderElection.leaseDuration",
                f"must be greater than renewDeadline "
                f"({election.renew_deadline:g}s), got {election.lease_duration:g}s",
            )
        # client-go's rule (kube-scheduler exits on it at start-up, after loading the config),
        # compared in whole nanoseconds as Go's time.Duration does.
        renew_ns = round(election.renew_deadline * 1e9)
        retry_ns = round(election.retry_period * 1e9)
        floor_ns = int(LEADER_ELECTION_JITTER_FACTOR * retry_ns)
        if renew_ns > 0 and retry_ns > 0 and renew_ns <= floor_ns:
            fail(
                "leaderElection.renewDeadline",
                f"must be greater than retryPeriod × {LEADER_ELECTION_JITTER_FACTOR:g} "
                f"({floor_ns / 1e9:g}s; the leader must have time for more than one "
                f"jittered retry), got {election.renew_deadline:g}s",
            )
        if election.resource_lock != "leases":
            fail("leaderElection.resourceLock", f'must be "leases", got "{election.resource_lock}"')
    _check_unhonoured(config, fail)
    if config.client_connection.burst < 0:
        fail(
            "clientConnection.burst", f"must be non-negative, got {config.client_connection.burst}"
        )
    binders = 0
    for i, extender in enumerate(config.extra.get("extenders") or []):
        if not isinstance(extender, dict):
            continue
        weight = extender.get("weight")
        if extender.get("prioritizeVerb") and isinstance(weight, int | None) and (weight or 0) <= 0:
            fail(f"extenders[{i}].weight", "must be positive when prioritizeVerb is set")
        binders += bool(extender.get("bindVerb"))
    if binders > 1:
        fail("extenders", f"only one extender can implement bind, found {binders}")


#: What the API client speaks: JSON, always (no protobuf codec).
JSON = "application/json"


def _check_unhonoured(config: DecodedConfig, fail: Callable[[str, str], None]) -> None:
    """Refuse the values kubesched would otherwise accept and not act on (docs/design.md, "The
    configuration schema"): each is either honoured or an error, never silently ignored."""
    connection = config.client_connection
    if connection.content_type not in ("", JSON):
        fail(
            "clientConnection.contentType",
            f'kubesched talks to the API server in JSON only: set "{JSON}" or leave it empty, '
            f'got "{connection.content_type}"',
        )
    accepted = [t.strip() for t in connection.accept_content_types.split(",") if t.strip()]
    if any(t != JSON for t in accepted):
        fail(
            "clientConnection.acceptContentTypes",
            f'kubesched accepts JSON only from the API server: set "{JSON}" or leave it empty, '
            f'got "{connection.accept_content_types}"',
        )
    for key, why in (
        ("enableProfiling", "kubesched serves no /debug/pprof endpoints"),
        ("enableContentionProfiling", "kubesched serves no /debug/pprof endpoints"),
        (
            "delayCacheUntilActive",
            "a kubesched standby always fills its cache, to take over at once",
        ),
    ):
        if config.extra.get(key) is True:
            fail(key, f"true is not supported ({why}); set it to false or remove it")
    for key in ("healthzBindAddress", "metricsBindAddress"):
        address = config.extra.get(key)
        if address and not _port_zero(address):
            # kube-scheduler's v1beta2 rule: the fields are deprecated and must be unused.
            fail(
                key,
                f'must be empty or with an explicit 0 port, got "{address}" (kubesched run '
                "serves health and metrics at --bind-address and --port)",
            )


def _port_zero(address: str) -> bool:
    _, sep, port = address.rpartition(":")
    return bool(sep) and port == "0"


def build_configuration(
    config: DecodedConfig, registry: Registry, errors: list[FieldError], warnings: list[str]
) -> SchedulerConfiguration:
    """The configuration with profiles built; problems are appended to ``errors``."""
    defaults = default_plugin_sets(config.api_version)
    builder = _ProfileBuilder(_Resolver(registry), defaults, errors, warnings)
    specs = config.profiles or [ProfileSpec(index=0)]
    profiles = [builder.build(spec, single=len(specs) == 1) for spec in specs]
    _check_profiles(profiles, errors)
    _check_top_level(config, errors)
    extenders = decode_extenders(config.extra.get("extenders"), errors)
    apply_ignored_resources(profiles, extenders)
    if builder.skipped_defaults:
        order = [
            ref.name for key in (MULTI_POINT, *EXTENSION_POINTS) for ref in defaults.get(key, [])
        ]
        skipped = sorted(builder.skipped_defaults, key=order.index)
        warnings.append(f"default plugins not installed, skipped: {', '.join(skipped)}")
    return SchedulerConfiguration(
        profiles=profiles,
        parallelism=config.parallelism,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds=config.pod_initial_backoff_seconds,
        pod_max_backoff_seconds=config.pod_max_backoff_seconds,
        leader_election=config.leader_election,
        client_connection=config.client_connection,
        extra=config.extra,
        api_version=config.api_version,
        warnings=warnings,
        extenders=extenders,
    )
