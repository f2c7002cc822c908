"""Fuzzing the configuration loader: random and mutated KubeSchedulerConfiguration documents and
files give a configuration or a ConfigError with a message, never a crash or a hang."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fuzz_support import check_clear_error, mutated, time_limit, values
from hypothesis import given
from hypothesis import strategies as st

from kubesched import ConfigError
from kubesched.config import SchedulerConfiguration, load_config, parse_config
from kubesched.framework.registry import Registry

ROOT = Path(__file__).resolve().parents[2]
SEED = yaml.safe_load((ROOT / "deploy" / "scheduler-config.yaml").read_text())
FULL = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "percentageOfNodesToScore": 0,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "leaderElection": {
        "leaderElect": True,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
        "resourceLock": "leases",
        "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system",
    },
    "clientConnection": {"kubeconfig": "", "qps": 50, "burst": 100},
    "profiles": [
        {
            "schedulerName": "a",
            "percentageOfNodesToScore": 50,
            "plugins": {
                "multiPoint": {"enabled": [{"name": "NodeAffinity", "weight": 3}]},
                "score": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 2}],
                    "disabled": [{"name": "ImageLocality"}],
                },
                "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeName"}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                },
                {"name": "PodTopologySpread", "args": {"defaultingType": "List"}},
            ],
        },
        {"schedulerName": "b"},
    ],
    "extenders": [{"urlPrefix": "http://127.0.0.1:1/x", "filterVerb": "filter", "weight": 1}],
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.installed()


def _parse(document: object, registry: Registry) -> None:
    try:
        with time_limit():
            config = parse_config(document, registry)
    except ConfigError as exc:
        check_clear_error(exc)
        assert exc.errors, "a ConfigError lists its errors"
        return
    except Exception as exc:  # anything else is a crash
        check_clear_error(exc)
        return
    assert isinstance(config, SchedulerConfiguration)
    assert config.profiles, "a valid configuration has at least one profile"


def test_the_starting_documents_are_valid(registry):
    parse_config(SEED, registry)
    parse_config(FULL, registry)


@given(document=values)
def test_random_documents(registry, document):
    _parse(document, registry)


@given(document=mutated(SEED))
def test_mutated_seed_profile(registry, document):
    _parse(document, registry)


@given(document=mutated(FULL, max_mutations=6))
def test_mutated_full_configuration(registry, document):
    _parse(document, registry)


YAML_SNIPPETS = st.sampled_from(
    [
        "apiVersion: kubescheduler.config.k8s.io/v1\n",
        "kind: KubeSchedulerConfiguration\n",
        "profiles:\n- schedulerName: x\n",
        "  plugins: {score: {enabled: [{name: A, weight: 101}]}}\n",
        "parallelism: &a 1\nx: *a\n",
        "a: !!python/object:os.system ls\n",
        "profiles: [{schedulerName: x}, {schedulerName: x}]\n",
        "kind: KubeSchedulerConfiguration\nkind: Other\n",
        "\t- bad indent\n",
        "{[}\n",
        "--- \n--- \n",
        "leaderElection: {leaseDuration: 1e9h}\n",
        "\x00\n",
    ]
)


@given(parts=st.lists(st.one_of(YAML_SNIPPETS, st.text(max_size=40)), max_size=6))
def test_random_files(tmp_path_factory, registry, parts):
    path = tmp_path_factory.mktemp("cfg") / "config.yaml"
    path.write_text("".join(parts), encoding="utf-8", errors="surrogatepass")
    try:
        with time_limit():
            load_config(path, registry)
    except Exception as exc:
        check_clear_error(exc)


@given(document=mutated(FULL, max_mutations=3))
def test_mutated_files(tmp_path_factory, registry, document):
    path = tmp_path_factory.mktemp("cfg") / "config.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True))
    try:
        with time_limit():
            load_config(path, registry)
    except Exception as exc:
        check_clear_error(exc)


def test_binary_and_missing_files(tmp_path, registry):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    for path in (binary, tmp_path / "missing.yaml", tmp_path):
        with pytest.raises(ConfigError) as info:
            load_config(path, registry)
        check_clear_error(info.value)
