"""The configuration: strict decoding, kube-scheduler's defaults merge and multiPoint expansion,
and validation that reports every error at once."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import (
    DEFAULT_PLUGINS,
    DEFAULT_SCHEDULER_NAME,
    PluginRef,
    Profile,
    default_config,
    load_config,
    parse_config,
)
from kubesched.errors import ConfigError
from kubesched.framework.hookspecs import EXTENSION_POINTS, hookimpl
from kubesched.framework.registry import PluginSpec, Registry

V1 = "kubescheduler.config.k8s.io/v1"
V1BETA2 = "kubescheduler.config.k8s.io/v1beta2"
V1BETA3 = "kubescheduler.config.k8s.io/v1beta3"
KIND = "KubeSchedulerConfiguration"


# -- fake plugins: only which hooks they implement matters here -------------------------------
class QueueSortPlugin:
    @hookimpl
    def queue_sort_less(self, pod_a, pod_b):
        return True


class PreEnqueuePlugin:
    @hookimpl
    def pre_enqueue(self, pod): ...


class FilterPlugin:
    @hookimpl
    def filter(self, state, pod, node_info): ...


class FilterScorePlugin:
    @hookimpl
    def pre_filter(self, state, pod, nodes): ...

    @hookimpl
    def filter(self, state, pod, node_info): ...

    @hookimpl
    def pre_score(self, state, pod, nodes): ...

    @hookimpl
    def score(self, state, pod, node_info):
        return 0


class FitPlugin:
    @hookimpl
    def pre_filter(self, state, pod, nodes): ...

    @hookimpl
    def filter(self, state, pod, node_info): ...

    @hookimpl
    def score(self, state, pod, node_info):
        return 0


class ScorePlugin:
    @hookimpl
    def score(self, state, pod, node_info):
        return 0


class PostFilterPlugin:
    @hookimpl
    def post_filter(self, state, pod, filtered_node_status): ...


class BindPlugin:
    @hookimpl
    def bind(self, state, pod, node_name): ...


class CustomPlugin:
    @hookimpl
    def filter(self, state, pod, node_info): ...

    @hookimpl
    def score(self, state, pod, node_info):
        return 0

    @hookimpl
    def reserve(self, state, pod, node_name): ...


# Not installed on purpose: NodePorts, VolumeRestrictions, NodeVolumeLimits, VolumeBinding,
# VolumeZone, DynamicResources, NodeDeclaredFeatures (the defaults that must be skipped with one
# warning).
PLUGINS: dict[str, type] = {
    "SchedulingGates": PreEnqueuePlugin,
    "PrioritySort": QueueSortPlugin,
    "NodeUnschedulable": FilterPlugin,
    "NodeName": FilterPlugin,
    "TaintToleration": FilterScorePlugin,
    "NodeAffinity": FilterScorePlugin,
    "NodeResourcesFit": FitPlugin,
    "PodTopologySpread": FilterScorePlugin,
    "InterPodAffinity": FilterScorePlugin,
    "DefaultPreemption": PostFilterPlugin,
    "NodeResourcesBalancedAllocation": ScorePlugin,
    "ImageLocality": ScorePlugin,
    "DefaultBinder": BindPlugin,
    "Custom": CustomPlugin,
    "OtherFilter": FilterPlugin,
    "OtherSort": QueueSortPlugin,
}
INSTALLED = ", ".join(sorted(PLUGINS))
SKIPPED_WARNING = (
    "default plugins not installed, skipped: NodePorts, VolumeRestrictions, "
    "NodeVolumeLimits, VolumeBinding, VolumeZone, DynamicResources, NodeDeclaredFeatures"
)

DEFAULT_PRE_FILTER = [
    "TaintToleration",
    "NodeAffinity",
    "NodeResourcesFit",
    "PodTopologySpread",
    "InterPodAffinity",
]
DEFAULT_FILTER = ["NodeName", "NodeUnschedulable", *DEFAULT_PRE_FILTER]
DEFAULT_PRE_SCORE = ["TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity"]
DEFAULT_SCORE = [
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
DEFAULT_POINTS: dict[str, list[Any]] = {
    "preEnqueue": ["SchedulingGates"],
    "queueSort": ["PrioritySort"],
    "preFilter": DEFAULT_PRE_FILTER,
    "filter": DEFAULT_FILTER,
    "postFilter": ["DefaultPreemption"],
    "preScore": DEFAULT_PRE_SCORE,
    "score": DEFAULT_SCORE,
    "reserve": [],
    "permit": [],
    "preBind": [],
    "bind": ["DefaultBinder"],
    "postBind": [],
}


class CountingRegistry(Registry):
    """Records which plugins were looked up (looking one up is how a plugin gets imported)."""

    def __init__(self, plugins: dict[str, type], broken: tuple[str, ...] = ()) -> None:
        super().__init__(plugins)
        self.looked_up: list[str] = []
        self.broken = {
            name: PluginSpec(
                name=name,
                distribution="kubesched-broken",
                version="0.1",
                target="kubesched_no_such_module:Plugin",
                _entry_point=importlib.metadata.EntryPoint(
                    name, "kubesched_no_such_module:Plugin", "kubesched.plugins"
                ),
            )
            for name in broken
        }

    def names(self) -> list[str]:
        return sorted([*super().names(), *self.broken])

    def __contains__(self, name: object) -> bool:
        return name in self.broken or super().__contains__(name)

    def get(self, name: str) -> PluginSpec:
        self.looked_up.append(name)
        return self.broken[name] if name in self.broken else super().get(name)


# -- builders ------------------------------------------------------------------------------------
def config(*profiles: dict[str, Any], api: str = V1, **top: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"apiVersion": api, "kind": KIND, **top}
    if profiles:
        data["profiles"] = list(profiles)
    return data


def profile(name: str = "custom-scheduler", **fields: Any) -> dict[str, Any]:
    return {"schedulerName": name, **fields}


def plugins(**points: Any) -> dict[str, Any]:
    return {"plugins": points}


def enabled(*entries: str | tuple[str, int]) -> list[dict[str, Any]]:
    return [{"name": e} if isinstance(e, str) else {"name": e[0], "weight": e[1]} for e in entries]


def disabled(*names: str) -> list[dict[str, Any]]:
    return [{"name": name} for name in names]


def view(prof: Profile) -> dict[str, list[Any]]:
    """Plugin names per point; (name, weight) at score."""
    return {
        point: [(r.name, r.weight) if point == "score" else r.name for r in refs]
        for point, refs in prof.plugins.items()
    }


def parse(data: Any, registry: Registry | None = None):
    return parse_config(data, registry or Registry(PLUGINS))


def errors_of(data: Any, registry: Registry | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse(data, registry)
    return [str(error) for error in info.value.errors]


# -- defaults -------------------------------------------------------------------------------------
def test_default_plugins_follow_kube_scheduler_v1():
    assert [(r.name, r.weight) for r in DEFAULT_PLUGINS] == [
        ("SchedulingGates", 1),
        ("PrioritySort", 1),
        ("NodeName", 1),
        ("NodeUnschedulable", 1),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", 1),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", 1),
        ("NodeVolumeLimits", 1),
        ("VolumeBinding", 1),
        ("VolumeZone", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("DynamicResources", 2),
        ("DefaultPreemption", 1),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", 1),
        ("NodeDeclaredFeatures", 1),
    ]


@pytest.mark.parametrize(
    "load",
    [
        pytest.param(lambda reg: default_config(reg), id="default_config"),
        pytest.param(lambda reg: load_config(None, reg), id="load_config-None"),
        pytest.param(lambda reg: parse_config(config(), reg), id="no-profiles"),
        pytest.param(lambda reg: parse_config(config(profiles=[]), reg), id="empty-profiles"),
        pytest.param(lambda reg: parse_config(config({}), reg), id="one-profile-without-name"),
    ],
)
def test_no_config_gives_one_profile_with_installed_defaults_in_kube_order(load):
    cfg = load(Registry(PLUGINS))
    assert DEFAULT_SCHEDULER_NAME == "custom-scheduler"
    assert [p.scheduler_name for p in cfg.profiles] == [DEFAULT_SCHEDULER_NAME]
    prof = cfg.profiles[0]
    assert view(prof) == DEFAULT_POINTS
    assert list(prof.plugins) == list(EXTENSION_POINTS)
    assert prof.percentage_of_nodes_to_score is None
    assert prof.plugin_names() == [
        "SchedulingGates",
        "PrioritySort",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeName",
        "NodeUnschedulable",
        "DefaultPreemption",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "DefaultBinder",
    ]
    assert cfg.warnings == [SKIPPED_WARNING]
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (16, 0)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (1, 10)
    assert cfg.api_version == V1


def test_skipped_defaults_are_reported_once_for_all_profiles():
    cfg = parse(config(profile("a"), profile("b")))
    assert cfg.warnings == [SKIPPED_WARNING]


def test_defaults_disabled_by_the_profile_are_never_loaded_nor_reported():
    registry = CountingRegistry(PLUGINS)
    cfg = parse(
        config(
            profile(
                **plugins(
                    multiPoint={
                        "disabled": disabled(
                            "ImageLocality",
                            "NodePorts",
                            "VolumeRestrictions",
                            "NodeVolumeLimits",
                            "VolumeBinding",
                            "VolumeZone",
                            "DynamicResources",
                            "NodeDeclaredFeatures",
                        )
                    }
                )
            )
        ),
        registry,
    )
    assert "ImageLocality" not in registry.looked_up
    assert "ImageLocality" not in cfg.profiles[0].plugin_names()
    assert cfg.warnings == []


# -- merging with the defaults and multiPoint expansion --------------------------------------
MERGE_CASES = [
    pytest.param(
        plugins(multiPoint={"enabled": enabled(("NodeAffinity", 5))}),
        {
            "score": [("TaintToleration", 3), ("NodeAffinity", 5), *DEFAULT_SCORE[2:]],
            "filter": DEFAULT_FILTER,
        },
        id="multiPoint-replace-in-place-keeps-position",
    ),
    pytest.param(
        plugins(score={"enabled": enabled(("NodeAffinity", 5))}),
        # kube-scheduler: a plugin named at a point and in multiPoint is an "override" and runs
        # first there, with the specific entry's weight.
        {
            "score": [("NodeAffinity", 5), ("TaintToleration", 3), *DEFAULT_SCORE[2:]],
            "filter": DEFAULT_FILTER,
        },
        id="score-entry-overrides-multiPoint-weight-and-runs-first",
    ),
    pytest.param(
        plugins(
            score={
                "disabled": disabled("*"),
                "enabled": enabled(("ImageLocality", 2), ("Custom", 4)),
            }
        ),
        {"score": [("ImageLocality", 2), ("Custom", 4)], "filter": DEFAULT_FILTER, "reserve": []},
        id="disabled-star-at-score-then-enabled-only",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": enabled(("Custom", 7))}),
        {
            "filter": [*DEFAULT_FILTER, "Custom"],
            "score": [*DEFAULT_SCORE, ("Custom", 7)],
            "reserve": ["Custom"],
            "preFilter": DEFAULT_PRE_FILTER,
        },
        id="multiPoint-custom-expands-to-each-point-it-implements",
    ),
    pytest.param(
        plugins(
            multiPoint={"enabled": enabled(("Custom", 7))},
            score={"enabled": enabled(("Custom", 9))},
        ),
        {"score": [("Custom", 9), *DEFAULT_SCORE], "filter": [*DEFAULT_FILTER, "Custom"]},
        id="specific-point-beats-multiPoint",
    ),
    pytest.param(
        plugins(
            multiPoint={"enabled": enabled("Custom")}, filter={"enabled": enabled("OtherFilter")}
        ),
        {"filter": [*DEFAULT_FILTER, "Custom", "OtherFilter"]},
        id="order-overrides-then-multiPoint-then-specific",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": enabled("Custom")}, filter={"disabled": disabled("Custom")}),
        {"filter": DEFAULT_FILTER, "score": [*DEFAULT_SCORE, ("Custom", 1)], "reserve": ["Custom"]},
        id="disabled-at-one-point-while-in-multiPoint",
    ),
    pytest.param(
        plugins(score={"disabled": disabled("TaintToleration")}),
        {"score": DEFAULT_SCORE[1:], "filter": DEFAULT_FILTER, "preScore": DEFAULT_PRE_SCORE},
        id="default-disabled-at-one-point-only",
    ),
    pytest.param(
        plugins(multiPoint={"disabled": disabled("NodeAffinity")}),
        {
            "filter": [n for n in DEFAULT_FILTER if n != "NodeAffinity"],
            "score": [s for s in DEFAULT_SCORE if s[0] != "NodeAffinity"],
        },
        id="multiPoint-disabled-removes-everywhere",
    ),
    pytest.param(
        plugins(filter={"disabled": disabled("*"), "enabled": enabled("OtherFilter", "NodeName")}),
        {"filter": ["OtherFilter", "NodeName"], "preFilter": DEFAULT_PRE_FILTER},
        id="disabled-star-at-filter-skips-multiPoint-there",
    ),
    pytest.param(
        plugins(
            multiPoint={
                "disabled": disabled("*"),
                "enabled": enabled("PrioritySort", ("Custom", 4), "DefaultBinder"),
            }
        ),
        {
            "queueSort": ["PrioritySort"],
            "filter": ["Custom"],
            "score": [("Custom", 4)],
            "reserve": ["Custom"],
            "bind": ["DefaultBinder"],
            "preFilter": [],
            "postFilter": [],
        },
        id="multiPoint-disabled-star-keeps-only-user-plugins",
    ),
    pytest.param(
        plugins(multiPoint={"enabled": enabled(("Custom", 0))}),
        {"score": [*DEFAULT_SCORE, ("Custom", 1)]},
        id="weight-zero-means-one",
    ),
    pytest.param(
        plugins(queueSort={"disabled": disabled("*"), "enabled": enabled("OtherSort")}),
        {"queueSort": ["OtherSort"]},
        id="queueSort-replaced",
    ),
]


@pytest.mark.parametrize(("profile_fields", "expected"), MERGE_CASES)
def test_merge_and_multipoint_expansion(profile_fields, expected):
    got = view(parse(config(profile(**profile_fields))).profiles[0])
    assert {point: got[point] for point in expected} == expected


def test_v1beta2_uses_its_per_point_defaults_and_weights():
    cfg = parse(
        config(profile(**plugins(score={"enabled": enabled(("NodeAffinity", 5))})), api=V1BETA2)
    )
    assert cfg.warnings[0] == f"{V1BETA2} is deprecated; use {V1}"
    got = view(cfg.profiles[0])
    assert got["score"] == [
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("InterPodAffinity", 1),
        ("NodeResourcesFit", 1),
        ("NodeAffinity", 5),
        ("PodTopologySpread", 2),
        ("TaintToleration", 1),
    ]
    assert got["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
    ]
    assert got["preScore"] == [
        "InterPodAffinity",
        "PodTopologySpread",
        "TaintToleration",
        "NodeAffinity",
    ]
    assert (got["queueSort"], got["bind"]) == (["PrioritySort"], ["DefaultBinder"])


@pytest.mark.parametrize(
    ("api", "skipped"),
    [
        pytest.param(
            V1BETA2,
            "NodePorts, VolumeRestrictions, VolumeBinding, VolumeZone, NodeVolumeLimits",
            id="v1beta2",
        ),  # first use over its per-point lists
        pytest.param(
            V1BETA3,
            "NodePorts, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
            "DynamicResources, NodeDeclaredFeatures",
            id="v1beta3",
        ),
    ],
)
def test_deprecated_versions_load_with_a_warning(api, skipped):
    cfg = parse(config(profile(), api=api))
    assert cfg.api_version == api
    assert cfg.warnings == [
        f"{api} is deprecated; use {V1}",
        f"default plugins not installed, skipped: {skipped}",
    ]


# -- values ---------------------------------------------------------------------------------------
def test_top_level_values_and_extra_fields():
    cfg = parse(
        config(
            profile("a", percentageOfNodesToScore=30),
            profile("b"),
            parallelism=4,
            percentageOfNodesToScore=50,
            podInitialBackoffSeconds=0.5,
            podMaxBackoffSeconds=2,
            enableProfiling=False,
            delayCacheUntilActive=False,
            extenders=[{"urlPrefix": "http://x", "filterVerb": "filter", "httpTimeout": "5s"}],
            clientConnection={
                "kubeconfig": "/k",
                "qps": 0,
                "burst": 7,
                "contentType": "application/json",
            },
            leaderElection={
                "leaderElect": False,
                "leaseDuration": "1m30s",
                "renewDeadline": "0s",
                "retryPeriod": "500ms",
                "resourceName": "custom-scheduler",
                "resourceNamespace": "",
            },
        )
    )
    assert (cfg.parallelism, cfg.percentage_of_nodes_to_score) == (4, 50)
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (0.5, 2)
    assert [p.percentage_of_nodes_to_score for p in cfg.profiles] == [30, None]
    assert [p.index for p in cfg.profiles] == [0, 1]
    assert cfg.extra == {
        "enableProfiling": False,
        "delayCacheUntilActive": False,
        "extenders": [{"urlPrefix": "http://x", "filterVerb": "filter", "httpTimeout": "5s"}],
    }
    client = cfg.client_connection
    assert (client.kubeconfig, client.qps, client.burst, client.content_type) == (
        "/k",
        50.0,
        7,
        "application/json",
    )  # qps 0 means the default, as in kube-scheduler
    election = cfg.leader_election
    assert (
        election.leader_elect,
        election.lease_duration,
        election.renew_deadline,
        election.retry_period,
    ) == (False, 90.0, 10.0, 0.5)  # "0s" means the default
    assert (election.resource_lock, election.resource_name, election.resource_namespace) == (
        "leases",
        "custom-scheduler",
        "kube-system",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1h", 3600.0),
        ("1.5s", 1.5),
        ("2m0.5s", 120.5),
        (".5s", 0.5),
        ("1.s", 1.0),
        ("0", 0.0),
        ("+3s", 3.0),
        ("100us", 1e-4),
        ("100\u00b5s", 1e-4),
        ("2000000ns", 0.002),
        ("1h2m3s4ms", 3723.004),
    ],
)
def test_go_durations(text, seconds):
    cfg = parse(
        config(
            profile(),
            leaderElection={"leaseDuration": "1000h", "renewDeadline": "999h", "retryPeriod": text},
        )
    )
    assert cfg.leader_election.retry_period == pytest.approx(seconds or 2.0)  # "0": the default


@pytest.mark.parametrize("value", ["15", "s", "1x", "", "1 s", ".s", "1s ", "-", 15])
def test_bad_go_durations(value):
    assert errors_of(config(profile(), leaderElection={"retryPeriod": value})) == [
        f'leaderElection.retryPeriod: must be a duration such as "15s", "1m30s" or "500ms", '
        f"got {value!r}".replace("'", '"')
    ]


def test_plugin_config_args_are_kept_without_type_meta():
    cfg = parse(
        config(
            profile(
                pluginConfig=[
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "apiVersion": V1,
                            "kind": "NodeResourcesFitArgs",
                            "scoringStrategy": {
                                "type": "MostAllocated",
                                "resources": [{"name": "cpu"}],
                            },
                        },
                    },
                    {"name": "ImageLocality"},
                ]
            )
        )
    )
    prof = cfg.profiles[0]
    assert prof.plugin_args["NodeResourcesFit"] == {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}
    }
    assert prof.plugin_args["ImageLocality"] == {}
    assert prof.plugin_args["NodeName"] == {}
    assert prof.args_paths["NodeResourcesFit"] == "profiles[0].pluginConfig[0].args"
    assert prof.args_paths["ImageLocality"] == "profiles[0].pluginConfig[1].args"
    assert prof.args_paths["NodeName"] == "profiles[0].pluginConfig[NodeName].args"
    assert set(prof.plugin_args) == set(prof.plugin_names())


def test_plugin_config_for_an_unused_plugin_is_a_warning():
    cfg = parse(config(profile(pluginConfig=[{"name": "Custom", "args": {"x": 1}}])))
    assert cfg.warnings == [
        'profiles[0].pluginConfig[0]: plugin "Custom" is not enabled in this profile; its args '
        "are ignored",
        SKIPPED_WARNING,
    ]
    assert "Custom" not in cfg.profiles[0].plugin_args


# -- errors ---------------------------------------------------------------------------------------
TOP_FIELDS = (
    "apiVersion, kind, parallelism, leaderElection, clientConnection, enableProfiling, "
    "enableContentionProfiling, percentageOfNodesToScore, podInitialBackoffSeconds, "
    "podMaxBackoffSeconds, profiles, extenders, delayCacheUntilActive"
)
POINTS = (
    "preEnqueue, queueSort, preFilter, filter, postFilter, preScore, score, reserve, "
    "permit, preBind, bind, postBind"
)
ERROR_CASES = [
    # strict decoding
    pytest.param(
        config(profile(), parallelizm=3),
        [f'parallelizm: unknown field (did you mean "parallelism"?); allowed: {TOP_FIELDS}'],
        id="unknown-top-level-field",
    ),
    pytest.param(
        config(profile(**plugins(filter={"enabledd": enabled("NodeName")}))),
        [
            'profiles[0].plugins.filter.enabledd: unknown field (did you mean "enabled"?); '
            "allowed: enabled, disabled"
        ],
        id="unknown-plugin-set-field",
    ),
    pytest.param(
        config(profile(**plugins(filterr={}))),
        [
            'profiles[0].plugins.filterr: unknown field (did you mean "filter"?); '
            f"allowed: {POINTS}, multiPoint"
        ],
        id="unknown-extension-point",
    ),
    pytest.param(
        config(profile(**plugins(score={"enabled": [{"name": "Custom", "wieght": 2}]}))),
        [
            'profiles[0].plugins.score.enabled[0].wieght: unknown field (did you mean "weight"?); '
            "allowed: name, weight"
        ],
        id="unknown-plugin-entry-field",
    ),
    pytest.param(
        config(profile(pluginConfig=[{"name": "NodeName", "arg": {}}])),
        [
            'profiles[0].pluginConfig[0].arg: unknown field (did you mean "args"?); '
            "allowed: name, args"
        ],
        id="unknown-pluginConfig-field",
    ),
    pytest.param(
        config(profile(schedulername="x")),
        [
            'profiles[0].schedulername: unknown field (did you mean "schedulerName"?); '
            "allowed: schedulerName, "
            "percentageOfNodesToScore, plugins, pluginConfig"
        ],
        id="unknown-profile-field",
    ),
    pytest.param(
        config(profile(), leaderElection={"leaderElection": True}),
        [
            'leaderElection.leaderElection: unknown field (did you mean "leaderElect"?); '
            "allowed: leaderElect, "
            "leaseDuration, renewDeadline, retryPeriod, resourceLock, resourceName, "
            "resourceNamespace"
        ],
        id="unknown-leaderElection-field",
    ),
    pytest.param(
        config(profile(), clientConnection={"qsp": 5}),
        [
            "clientConnection.qsp: unknown field; allowed: kubeconfig, acceptContentTypes, "
            "contentType, qps, burst"
        ],
        id="unknown-clientConnection-field",
    ),
    pytest.param(
        config(profile(), extenders=[{"urlPrefix": "http://x", "tls": {}}]),
        [
            "extenders[0].tls: unknown field; allowed: urlPrefix, filterVerb, preemptVerb, "
            "prioritizeVerb, weight, bindVerb, enableHTTPS, tlsConfig, httpTimeout, "
            "nodeCacheCapable, managedResources, ignorable"
        ],
        id="unknown-extender-field",
    ),
    pytest.param(
        config(profile(**plugins(multiPoint={})), api=V1BETA2),
        [
            f"profiles[0].plugins.multiPoint: unknown field; allowed: {POINTS} (multiPoint "
            f"needs kubescheduler.config.k8s.io/v1beta3 or later)"
        ],
        id="v1beta2-multiPoint",
    ),
    pytest.param(
        config(profile(), parallelism="x"),
        ['parallelism: must be an integer, got "x"'],
        id="wrong-type-integer",
    ),
    pytest.param(
        config(profile(), parallelism=True),
        ["parallelism: must be an integer, got true"],
        id="bool-is-not-an-integer",
    ),
    pytest.param(
        config(profile(), leaderElection={"leaderElect": "yes please"}),
        ['leaderElection.leaderElect: must be a boolean (true or false), got "yes please"'],
        id="wrong-type-boolean",
    ),
    pytest.param(
        config(profiles={"a": 1}), ["profiles: must be a list, got a mapping"], id="wrong-type-list"
    ),
    pytest.param(
        config(profiles=[5]), ["profiles[0]: must be a mapping, got 5"], id="profile-not-a-mapping"
    ),
    pytest.param(
        config(profile(**plugins(filter={"enabled": ["OtherFilter"]}))),
        [
            'profiles[0].plugins.filter.enabled[0]: must be a mapping, got "OtherFilter"; '
            "write {name: OtherFilter}"
        ],
        id="plugin-entry-as-a-string",
    ),
    pytest.param(
        config(profile(plugins=[])),
        ["profiles[0].plugins: must be a mapping, got a list"],
        id="wrong-type-mapping",
    ),
    pytest.param(
        config(profile(pluginConfig=[{"name": "NodeName", "args": [1]}])),
        ["profiles[0].pluginConfig[0].args: must be a mapping, got a list"],
        id="args-not-a-mapping",
    ),
    pytest.param(
        config(profile(**plugins(filter={"enabled": [{"weight": 1}]}))),
        [
            "profiles[0].plugins.filter.enabled[0].name: required: the plugin's name, e.g. "
            "NodeResourcesFit"
        ],
        id="plugin-name-required",
    ),
    # plugins
    pytest.param(
        config(profile(**plugins(score={"enabled": enabled("NoSuchPlugin")}))),
        [
            f'profiles[0].plugins.score.enabled[0]: unknown plugin "NoSuchPlugin"; '
            f"installed: {INSTALLED}"
        ],
        id="unknown-plugin-lists-installed",
    ),
    pytest.param(
        config(profile(**plugins(multiPoint={"enabled": enabled("Nope")}))),
        [
            f'profiles[0].plugins.multiPoint.enabled[0]: unknown plugin "Nope"; '
            f"installed: {INSTALLED}"
        ],
        id="unknown-multiPoint-plugin",
    ),
    pytest.param(
        config(profile(**plugins(filter={"enabled": enabled("OtherFilter", "ImageLocality")}))),
        [
            'profiles[0].plugins.filter.enabled[1]: plugin "ImageLocality" does not '
            "implement filter; it implements: score"
        ],
        id="plugin-not-implementing-point",
    ),
    pytest.param(
        config(profile(**plugins(reserve={"enabled": enabled("TaintToleration")}))),
        [
            'profiles[0].plugins.reserve.enabled[0]: plugin "TaintToleration" does not '
            "implement reserve; it implements: preFilter, filter, preScore, score"
        ],
        id="not-implementing-lists-points-in-order",
    ),
    pytest.param(
        config(profile(**plugins(filter={"enabled": enabled("Custom", "OtherFilter", "Custom")}))),
        [
            'profiles[0].plugins.filter.enabled[2]: duplicate plugin "Custom"; already '
            "enabled at enabled[0]"
        ],
        id="duplicate-at-a-point",
    ),
    pytest.param(
        config(profile(**plugins(multiPoint={"enabled": enabled("Custom", "Custom")}))),
        [
            'profiles[0].plugins.multiPoint.enabled[1]: duplicate plugin "Custom"; already '
            "enabled at enabled[0]"
        ],
        id="double-registration-in-multiPoint",
    ),
    pytest.param(
        config(profile(**plugins(score={"enabled": enabled(("Custom", 101))}))),
        ["profiles[0].plugins.score.enabled[0].weight: must be in the range [0, 100], got 101"],
        id="weight-above-100",
    ),
    pytest.param(
        config(profile(**plugins(multiPoint={"enabled": enabled(("Custom", -1))}))),
        ["profiles[0].plugins.multiPoint.enabled[0].weight: must be in the range [0, 100], got -1"],
        id="negative-weight",
    ),
    pytest.param(
        config(profile(**plugins(queueSort={"enabled": enabled("OtherSort")}))),
        [
            "profiles[0].plugins.queueSort: exactly one queueSort plugin must be enabled, "
            "got 2: PrioritySort, OtherSort"
        ],
        id="two-queueSort-plugins",
    ),
    pytest.param(
        config(profile(**plugins(queueSort={"disabled": disabled("*")}))),
        ["profiles[0].plugins.queueSort: exactly one queueSort plugin must be enabled, got none"],
        id="no-queueSort-plugin",
    ),
    pytest.param(
        config(profile(**plugins(multiPoint={"disabled": disabled("DefaultBinder")}))),
        ["profiles[0].plugins.bind: at least one bind plugin is needed (e.g. DefaultBinder)"],
        id="no-bind-plugin",
    ),
    # profiles
    pytest.param(
        config(profile("x"), profile("y"), profile("x")),
        ['profiles[2].schedulerName: duplicate "x" (first used by profiles[0])'],
        id="duplicate-schedulerName",
    ),
    pytest.param(
        config(profile("a"), {}),
        [
            "profiles[1].schedulerName: required: the name pods select this profile by, in "
            "spec.schedulerName"
        ],
        id="schedulerName-required-with-two-profiles",
    ),
    pytest.param(
        config(profile("")),
        [
            "profiles[0].schedulerName: required: the name pods select this profile by, in "
            "spec.schedulerName"
        ],
        id="empty-schedulerName",
    ),
    pytest.param(
        config(
            profile("a"),
            profile(
                "b",
                **plugins(queueSort={"disabled": disabled("*"), "enabled": enabled("OtherSort")}),
            ),
        ),
        [
            "profiles[1].plugins.queueSort: must be the same for all profiles; profiles[0] "
            "uses PrioritySort, this profile uses OtherSort"
        ],
        id="queueSort-differs",
    ),
    pytest.param(
        config(
            profile("a"), profile("b", pluginConfig=[{"name": "PrioritySort", "args": {"x": 1}}])
        ),
        [
            "profiles[1].pluginConfig[0].args: queueSort must be the same for all profiles; "
            'the args of "PrioritySort" differ from profiles[0]\'s'
        ],
        id="queueSort-args-differ",
    ),
    pytest.param(
        config(profile(pluginConfig=[{"name": "NodeName"}, {"name": "NodeName"}])),
        ['profiles[0].pluginConfig[1].name: duplicate "NodeName" (first at pluginConfig[0])'],
        id="duplicate-pluginConfig",
    ),
    pytest.param(
        config(profile(percentageOfNodesToScore=101)),
        ["profiles[0].percentageOfNodesToScore: must be in the range [0, 100], got 101"],
        id="profile-percentage",
    ),
    # top level
    pytest.param(
        config(profile(), parallelism=0),
        ["parallelism: must be greater than 0, got 0"],
        id="parallelism",
    ),
    pytest.param(
        config(profile(), percentageOfNodesToScore=-5),
        ["percentageOfNodesToScore: must be in the range [0, 100], got -5"],
        id="percentage",
    ),
    pytest.param(
        config(profile(), podInitialBackoffSeconds=0, podMaxBackoffSeconds=0),
        ["podInitialBackoffSeconds: must be greater than 0, got 0"],
        id="initial-backoff",
    ),
    pytest.param(
        config(profile(), podInitialBackoffSeconds=5, podMaxBackoffSeconds=2),
        [
            "podMaxBackoffSeconds: must be greater than or equal to podInitialBackoffSeconds"
            " (5), got 2"
        ],
        id="max-backoff",
    ),
    pytest.param(
        config(profile(), leaderElection={"leaseDuration": "5s"}),
        ["leaderElection.leaseDuration: must be greater than renewDeadline (10s), got 5s"],
        id="lease-not-above-renew",
    ),
    pytest.param(
        config(profile(), leaderElection={"retryPeriod": "-1s"}),
        ["leaderElection.retryPeriod: must be greater than zero, got -1s"],
        id="negative-duration",
    ),
    pytest.param(
        config(profile(), leaderElection={"leaseDuration": "5s", "leaderElect": False}),
        None,
        id="durations-unchecked-without-leader-election",
    ),
    pytest.param(
        config(profile(), leaderElection={"resourceLock": "endpointsleases"}),
        ['leaderElection.resourceLock: must be "leases", got "endpointsleases"'],
        id="resourceLock",
    ),
    pytest.param(
        config(profile(), clientConnection={"burst": -1}),
        ["clientConnection.burst: must be non-negative, got -1"],
        id="burst",
    ),
    pytest.param(
        config(
            profile(),
            extenders=[
                {"urlPrefix": "a", "bindVerb": "bind"},
                {"urlPrefix": "b", "bindVerb": "bind"},
            ],
        ),
        ["extenders: only one extender can implement bind, found 2"],
        id="two-binders",
    ),
    # type meta
    pytest.param(
        {"kind": KIND}, ["apiVersion: required: kubescheduler.config.k8s.io/v1"], id="no-apiVersion"
    ),
    pytest.param(
        config(api="kubescheduler.config.k8s.io/v1alpha1"),
        [
            'apiVersion: unsupported "kubescheduler.config.k8s.io/v1alpha1"; use '
            f"{V1} (or {V1BETA2}, {V1BETA3})"
        ],
        id="unsupported-apiVersion",
    ),
    pytest.param(
        {"apiVersion": V1, "kind": "KubeSchedulerPolicy"},
        ['kind: must be KubeSchedulerConfiguration, got "KubeSchedulerPolicy"'],
        id="wrong-kind",
    ),
    pytest.param(
        [1, 2], ["must be a mapping (a KubeSchedulerConfiguration), got a list"], id="not-a-mapping"
    ),
]


@pytest.mark.parametrize(("data", "expected"), ERROR_CASES)
def test_errors(data, expected):
    if expected is None:
        parse(data)
    else:
        assert errors_of(data) == expected


def test_every_error_is_reported_at_once():
    data = config(
        profile("a", **plugins(filter={"enabledd": []}, score={"enabled": enabled("Nope")})),
        profile("a"),
        parallelism="x",
    )
    assert errors_of(data) == [
        'parallelism: must be an integer, got "x"',
        'profiles[0].plugins.filter.enabledd: unknown field (did you mean "enabled"?); '
        "allowed: enabled, disabled",
        f'profiles[0].plugins.score.enabled[0]: unknown plugin "Nope"; installed: {INSTALLED}',
        'profiles[1].schedulerName: duplicate "a" (first used by profiles[0])',
    ]


def test_config_error_names_the_source_and_counts_errors():
    with pytest.raises(ConfigError) as info:
        parse_config(
            config(profile(), parallelism=0, podInitialBackoffSeconds=0),
            Registry(PLUGINS),
            source="sched.yaml",
        )
    assert str(info.value) == (
        "sched.yaml: invalid configuration (2 errors):\n"
        "  parallelism: must be greater than 0, got 0\n"
        "  podInitialBackoffSeconds: must be greater than 0, got 0"
    )
    assert info.value.source == "sched.yaml"


def test_a_plugin_that_fails_to_load_is_an_error_at_its_path():
    registry = CountingRegistry(PLUGINS, broken=("Broken",))
    errors = errors_of(config(profile(**plugins(filter={"enabled": enabled("Broken")}))), registry)
    assert errors == [
        'profiles[0].plugins.filter.enabled[0]: plugin "Broken" from kubesched-broken 0.1 '
        "(kubesched_no_such_module:Plugin) failed to import: ModuleNotFoundError: No module "
        "named 'kubesched_no_such_module'"
    ]


def test_a_default_plugin_that_fails_to_load_names_the_fix():
    registry = CountingRegistry(
        {k: v for k, v in PLUGINS.items() if k != "ImageLocality"}, broken=("ImageLocality",)
    )
    with pytest.raises(ConfigError) as info:
        default_config(registry)
    assert [str(e) for e in info.value.errors] == [
        'profiles[0].plugins: plugin "ImageLocality" from kubesched-broken 0.1 '
        "(kubesched_no_such_module:Plugin) failed to import: ModuleNotFoundError: No module "
        "named 'kubesched_no_such_module' (a default plugin: reinstall it, or disable it under "
        "profiles[0].plugins.multiPoint.disabled)"
    ]


def test_disabled_names_need_not_be_installed():
    cfg = parse(config(profile(**plugins(filter={"disabled": disabled("NotInstalled")}))))
    assert view(cfg.profiles[0])["filter"] == DEFAULT_FILTER


# -- files ----------------------------------------------------------------------------------------
def test_load_config_from_a_yaml_file(tmp_path: Path):
    path = tmp_path / "sched.yaml"
    path.write_text(f"""\
apiVersion: {V1}
kind: {KIND}
leaderElection:
  leaseDuration: 1m30s
  renewDeadline: 45s
profiles:
- schedulerName: my-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Custom
        weight: 5
  pluginConfig:
  - name: Custom
    args:
      kind: CustomArgs
      threshold: 3
""")
    cfg = load_config(path, Registry(PLUGINS))
    prof = cfg.profiles[0]
    assert prof.scheduler_name == "my-scheduler"
    assert prof.plugins["score"][-1] == PluginRef("Custom", 5)
    assert prof.plugin_args["Custom"] == {"threshold": 3}
    assert (cfg.leader_election.lease_duration, cfg.leader_election.renew_deadline) == (90, 45)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            f"apiVersion: {V1}\nkind: [{KIND}\n",
            "invalid YAML at line 3, column 1: expected ',' or ']', but got '<stream end>'",
            id="unclosed-flow-list",
        ),
        pytest.param(
            f"apiVersion: {V1}\nkind: {KIND}\n  parallelism: 3\n",
            "invalid YAML at line 3, column 14: mapping values are not allowed here",
            id="bad-indent",
        ),
        pytest.param(
            f"apiVersion: {V1}\nkind: {KIND}\nparallelism: 3\nparallelism: 4\n",
            'invalid YAML at line 4, column 1: duplicate key "parallelism"',
            id="duplicate-key",
        ),
        pytest.param("", f"the file is empty; expected a {KIND} (apiVersion: {V1})", id="empty"),
    ],
)
def test_bad_yaml_names_the_file_and_line(tmp_path: Path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(str(path), Registry(PLUGINS))
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}: invalid configuration (1 error):\n  ")
    assert [str(error) for error in info.value.errors] == [message]


def test_missing_file(tmp_path: Path):
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(path, Registry(PLUGINS))
    assert str(info.value) == (
        f"{path}: invalid configuration (1 error):\n  cannot read the file: no such file"
    )


def test_errors_in_a_file_name_the_file(tmp_path: Path):
    path = tmp_path / "sched.yaml"
    path.write_text(f"apiVersion: {V1}\nkind: {KIND}\nparallelism: -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, Registry(PLUGINS))
    assert str(info.value) == (
        f"{path}: invalid configuration (1 error):\n  parallelism: must be greater than 0, got -1"
    )


# -- pluginConfig args' type meta (kube's PluginConfig.decodeNestedObjects) ----------------------
def _args(name: str, **args: Any) -> dict[str, Any]:
    enable = plugins(multiPoint={"enabled": enabled(name)}) if name == "Custom" else {}
    return config(profile(pluginConfig=[{"name": name, "args": args}], **enable))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            _args("DefaultPreemption", apiVersion=V1, kind="InterPodAffinityArgs"),
            [
                "profiles[0].pluginConfig[0].args: args for plugin DefaultPreemption were not of "
                "type DefaultPreemptionArgs.kubescheduler.config.k8s.io, got "
                "InterPodAffinityArgs.kubescheduler.config.k8s.io"
            ],
            id="kind-of-another-plugin",
        ),
        pytest.param(
            _args("NodeResourcesFit", apiVersion="example.com/v1", kind="NodeResourcesFitArgs"),
            [
                "profiles[0].pluginConfig[0].args: args for plugin NodeResourcesFit were not of "
                "type NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
                "NodeResourcesFitArgs.example.com"
            ],
            id="another-group",
        ),
        pytest.param(
            _args("NodeResourcesFit", apiVersion="kubescheduler.config.k8s.io/v9"),
            [
                "profiles[0].pluginConfig[0].args: decoding args for plugin NodeResourcesFit: no "
                'kind "NodeResourcesFitArgs" is registered for version '
                '"kubescheduler.config.k8s.io/v9"'
            ],
            id="unknown-version",
        ),
        pytest.param(
            _args("NodeResourcesFit", kind=5),
            ["profiles[0].pluginConfig[0].args.kind: must be a string, got 5"],
            id="kind-not-a-string",
        ),
    ],
)
def test_args_type_meta_must_name_the_plugins_args(data: Any, expected: list[str]) -> None:
    assert errors_of(data) == expected


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        ("DefaultPreemption", {"apiVersion": V1, "kind": "DefaultPreemptionArgs"}),
        ("DefaultPreemption", {"kind": "DefaultPreemptionArgs"}),
        ("DefaultPreemption", {"apiVersion": V1}),
        # kube has no args type for a plugin of its own: its type meta is the plugin's business
        ("Custom", {"apiVersion": "example.com/v1", "kind": "Whatever"}),
    ],
    ids=["full", "kind-only", "version-only", "out-of-tree"],
)
def test_matching_type_meta_is_accepted_and_dropped(name: str, meta: dict[str, str]) -> None:
    cfg = parse(_args(name, **meta, minCandidateNodesAbsolute=5))
    assert cfg.profiles[0].plugin_args[name] == {"minCandidateNodesAbsolute": 5}
