"""A ``@hookimpl`` method whose name is no hook (``def filters``) would be registered by pluggy
and never called: it is refused wherever a plugin class is taken in, naming the plugin and the
hook it was probably meant to be."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import PluginLoadError, hookimpl
from kubesched.config import parse_config
from kubesched.errors import ConfigError
from kubesched.framework.registry import Registry
from kubesched.testing.harness import Harness, make_config, new_plugin, plugin_profile

V1 = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


class Base:
    def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...


class OnlyMisspelt(Base):
    @hookimpl
    def filters(self, state, pod, node_info): ...


class ScoreAndMisspeltNormalize(Base):
    @hookimpl
    def score(self, state, pod, node_info):
        return 0

    @hookimpl
    def normalise_score(self, state, pod, scores): ...


class FarFromAnyHook(Base):
    @hookimpl
    def filter(self, state, pod, node_info): ...

    @hookimpl
    def on_startup(self): ...


class RenamedBySpecname(Base):
    @hookimpl(specname="filter")
    def check_node(self, state, pod, node_info): ...


def _origin(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


CASES = [
    pytest.param(
        OnlyMisspelt,
        '@kubesched.hookimpl method "filters" is not a kubesched hook; did you mean "filter"?',
        id="only-a-misspelt-hook",
    ),
    pytest.param(
        ScoreAndMisspeltNormalize,
        '@kubesched.hookimpl method "normalise_score" is not a kubesched hook; did you mean '
        '"normalize_score"?',
        id="a-misspelt-companion-hook",
    ),
    pytest.param(
        FarFromAnyHook,
        '@kubesched.hookimpl method "on_startup" is not a kubesched hook; the hooks are: bind, '
        "events_to_register, filter, normalize_score, permit, post_bind, post_filter, pre_bind, "
        "pre_bind_pre_flight, pre_enqueue, pre_filter, pre_filter_add_pod, "
        "pre_filter_remove_pod, pre_score, queue_sort_less, reserve, score, score_nodes, sign_pod, "
        "unreserve",
        id="no-near-hook-lists-them-all",
    ),
    pytest.param(
        RenamedBySpecname,
        '@kubesched.hookimpl method "check_node" sets specname="filter"; name the method '
        '"filter" instead',
        id="specname",
    ),
]


@pytest.mark.parametrize(("plugin", "problem"), CASES)
def test_a_profile_naming_the_plugin_is_refused_at_its_path(plugin, problem):
    data = {
        "apiVersion": V1,
        "kind": KIND,
        "profiles": [
            {
                "schedulerName": "custom-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "Typo"}]}},
            }
        ],
    }
    with pytest.raises(ConfigError) as caught:
        parse_config(data, Registry({"Typo": plugin}))
    path = "profiles[0].plugins.multiPoint.enabled[0]"
    assert str(caught.value.errors[0]) == (
        f'{path}: plugin "Typo" from {_origin(plugin)}: {problem}'
    )


@pytest.mark.parametrize(("plugin", "problem"), CASES)
@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda p: new_plugin(p), id="new_plugin"),
        pytest.param(lambda p: plugin_profile(p), id="plugin_profile"),
        pytest.param(lambda p: Harness.for_plugin(p), id="Harness.for_plugin"),
        pytest.param(lambda p: Harness({p.__name__: p}, {}), id="Harness-plugin-not-enabled"),
        pytest.param(lambda p: make_config({p.__name__: p}), id="make_config"),
    ],
)
def test_the_testing_harness_refuses_it_too(build, plugin, problem):
    with pytest.raises(PluginLoadError) as caught:
        build(plugin)
    assert str(caught.value) == f'plugin "{plugin.__name__}" from {_origin(plugin)}: {problem}'
