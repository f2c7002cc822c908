"""What a configuration mistake tells the user beyond its path: the plugin name meant, the
distribution to install, and the plugins' args errors in the same report."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kubesched import ArgsError, FieldError
from kubesched.config import parse_config
from kubesched.config.defaults import DEFAULT_DISTRIBUTIONS
from kubesched.errors import ConfigError
from kubesched.framework.hookspecs import hookimpl
from kubesched.framework.registry import Registry
from kubesched.service.startup import load_checked, plugin_errors
from kubesched.testing.harness import FifoSort, TestBinder

ROOT = Path(__file__).resolve().parents[2]
V1 = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


# The harness's QueueSort and Bind plugins stand in for the defaults of those names.
Sort, Binder = FifoSort, TestBinder


class Fit:
    """A Filter whose args must name a known strategy."""

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
        if args.get("strategy", "Least") not in ("Least", "Most"):
            raise ArgsError([FieldError("strategy", 'must be "Least" or "Most"')])

    @hookimpl
    def filter(self, state, pod, node_info): ...


def config(plugins: dict[str, Any], plugin_config: list[Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"schedulerName": "custom-scheduler", "plugins": plugins}
    if plugin_config:
        body["pluginConfig"] = plugin_config
    return {"apiVersion": V1, "kind": KIND, "profiles": [body]}


def errors_of(data: dict[str, Any], registry: Registry) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(data, registry, also_check=lambda c: plugin_errors(c, registry))
    return [str(e) for e in caught.value.errors]


FULL = {"PrioritySort": Sort, "DefaultBinder": Binder, "NodeResourcesFit": Fit}


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        pytest.param("NodeResourceFit", "NodeResourcesFit", id="letter-missing"),
        pytest.param("nodeResourcesFit", "NodeResourcesFit", id="case"),
        pytest.param("PrioritySrot", "PrioritySort", id="swapped-letters"),
    ],
)
def test_a_near_miss_of_a_plugin_name_suggests_the_installed_one(written, meant):
    errors = errors_of(config({"filter": {"enabled": [{"name": written}]}}), Registry(FULL))
    assert errors == [
        f'profiles[0].plugins.filter.enabled[0]: unknown plugin "{written}" (did you mean '
        f'"{meant}"?); installed: DefaultBinder, NodeResourcesFit, PrioritySort'
    ]


def test_a_name_like_no_installed_plugin_suggests_nothing():
    errors = errors_of(config({"filter": {"enabled": [{"name": "Gang"}]}}), Registry(FULL))
    assert errors == [
        'profiles[0].plugins.filter.enabled[0]: unknown plugin "Gang"; installed: '
        "DefaultBinder, NodeResourcesFit, PrioritySort"
    ]


def test_pluginconfig_for_a_misspelt_enabled_plugin_suggests_it():
    data = config(
        {"multiPoint": {"enabled": [{"name": "NodeResourcesFit"}]}},
        [{"name": "NodeResourceFit", "args": {}}],
    )
    loaded = parse_config(data, Registry(FULL))
    assert (
        'profiles[0].pluginConfig[0]: plugin "NodeResourceFit" is not enabled in this profile; '
        'its args are ignored (did you mean "NodeResourcesFit"?)'
    ) in loaded.warnings


def test_unknown_plugins_and_args_errors_are_reported_together():
    data = config(
        {"filter": {"enabled": [{"name": "NodeResourceFit"}]}},
        [{"name": "NodeResourcesFit", "args": {"strategy": "Bogus"}}],
    )
    assert errors_of(data, Registry(FULL)) == [
        'profiles[0].plugins.filter.enabled[0]: unknown plugin "NodeResourceFit" (did you '
        'mean "NodeResourcesFit"?); installed: DefaultBinder, NodeResourcesFit, PrioritySort',
        'profiles[0].pluginConfig[0].args.strategy: must be "Least" or "Most"',
    ]


def test_load_checked_reports_args_errors_with_the_files_other_errors(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        f"""
apiVersion: {V1}
kind: {KIND}
percentageOfNodesToScore: 101
profiles:
  - schedulerName: custom-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args: {{strategy: Bogus}}
"""
    )
    with pytest.raises(ConfigError) as caught:
        load_checked(path, Registry(FULL))
    assert [str(e) for e in caught.value.errors] == [
        "percentageOfNodesToScore: must be in the range [0, 100], got 101",
        'profiles[0].pluginConfig[0].args.strategy: must be "Least" or "Most"',
    ]


@pytest.mark.parametrize(
    ("registry", "expected"),
    [
        pytest.param(
            {"DefaultBinder": Binder},
            "profiles[0].plugins.queueSort: exactly one queueSort plugin must be enabled, got "
            "none; the default, PrioritySort, is not installed: install kubesched-priority-sort",
            id="no-PrioritySort",
        ),
        pytest.param(
            {"PrioritySort": Sort},
            "profiles[0].plugins.bind: at least one bind plugin is needed (e.g. DefaultBinder); "
            "the default, DefaultBinder, is not installed: install kubesched-default-binder",
            id="no-DefaultBinder",
        ),
    ],
)
def test_a_missing_default_queuesort_or_binder_names_its_distribution(registry, expected):
    data = {"apiVersion": V1, "kind": KIND}
    assert errors_of(data, Registry(registry)) == [expected]


def test_a_disabled_queuesort_is_not_reported_as_missing_from_the_install():
    data = config({"queueSort": {"disabled": [{"name": "*"}]}})
    assert errors_of(data, Registry(FULL)) == [
        "profiles[0].plugins.queueSort: exactly one queueSort plugin must be enabled, got none"
    ]


def test_default_distributions_are_the_ones_this_project_ships():
    shipped = {}
    for pyproject in ROOT.glob("plugins/*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text())["project"]
        for name in project.get("entry-points", {}).get("kubesched.plugins", {}):
            shipped[name] = project["name"]
    assert {name: shipped.get(name) for name in DEFAULT_DISTRIBUTIONS} == DEFAULT_DISTRIBUTIONS


class Gang:
    """Permit waits for the group; Reserve counts the members (a Permit+Reserve plugin)."""

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None: ...

    @hookimpl
    def reserve(self, state, pod, node_name): ...

    @hookimpl
    def unreserve(self, state, pod, node_name): ...

    @hookimpl
    def permit(self, state, pod, node_name): ...


GANG = {**FULL, "Gang": Gang}


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        pytest.param(
            {"permit": {"enabled": [{"name": "Gang"}]}},
            [
                'profiles[0].plugins.permit.enabled[0]: plugin "Gang" also implements reserve, '
                "where it is not enabled; enable it under profiles[0].plugins.multiPoint to run "
                "it at every point it implements, or disable it at reserve if that is meant"
            ],
            id="permit-only",
        ),
        pytest.param(
            {"permit": {"enabled": [{"name": "Gang"}]}, "reserve": {"enabled": [{"name": "Gang"}]}},
            [],
            id="every-point",
        ),
        pytest.param({"multiPoint": {"enabled": [{"name": "Gang"}]}}, [], id="multiPoint"),
        pytest.param(
            {
                "permit": {"enabled": [{"name": "Gang"}]},
                "reserve": {"disabled": [{"name": "Gang"}]},
            },
            [],
            id="left-out-on-purpose",
        ),
    ],
)
def test_a_plugin_enabled_at_only_some_of_its_points_is_a_warning(plugins, expected):
    loaded = parse_config(config(plugins), Registry(GANG))
    assert [w for w in loaded.warnings if "Gang" in w] == expected


def test_default_plugins_are_not_reported_as_partly_enabled():
    data = config({"score": {"disabled": [{"name": "NodeResourcesFit"}]}})
    warnings = parse_config(data, Registry(GANG)).warnings
    assert [w for w in warnings if "also implements" in w] == []
