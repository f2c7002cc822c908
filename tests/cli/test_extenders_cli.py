"""Extenders from the command line: ``simulate``/``explain`` calling them, ``extender serve``."""

from __future__ import annotations

import io
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kubesched import cli
from kubesched.engine.extender import HTTPExtender
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.extender_stub import FILTER_LABEL, REJECT_MESSAGE, SCORE_LABEL, StubExtender
from kubesched.testing.harness import make_config

API = "kubescheduler.config.k8s.io/v1"
GPU = "example.com/gpu"


@pytest.fixture
def stub() -> Iterator[StubExtender]:
    with StubExtender() as extender:
        yield extender


def write_cluster(path: Path) -> Path:
    nodes = [
        make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").label(FILTER_LABEL, "reject"),
        make_node("n2").capacity(cpu="4", memory="8Gi", pods="10").label(SCORE_LABEL, "9"),
        make_node("n3").capacity(cpu="4", memory="8Gi", pods="10"),
    ]
    pod = (
        make_pod("web")
        .uid("u1")
        .scheduler("custom-scheduler")
        .req(cpu="100m", **{GPU: "1"})
        .limits(**{GPU: "1"})
    )
    docs = [n.manifest() for n in nodes] + [pod.manifest()]
    path.write_text(yaml.safe_dump_all(docs))
    return path


def write_config(path: Path, extenders: list[dict]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": API,
                "kind": "KubeSchedulerConfiguration",
                "profiles": [{"schedulerName": "custom-scheduler"}],
                "extenders": extenders,
            }
        )
    )
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_simulate_and_explain_call_the_configs_extenders(
    stub: StubExtender, tmp_path: Path
) -> None:
    cluster = write_cluster(tmp_path / "cluster.yaml")
    extender = {
        "urlPrefix": stub.url,
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 1,
        # The nodes have no GPUs: NodeResourcesFit must leave the resource to the extender.
        "managedResources": [{"name": GPU, "ignoredByScheduler": True}],
    }
    config = write_config(tmp_path / "config.yaml", [extender])
    code, out, _ = run("simulate", str(cluster), "--config", str(config))
    assert code == 0
    assert re.search(r"default\s+web\s+n2", out)
    code, out, _ = run("explain", "web", "--cluster", str(cluster), "--config", str(config))
    assert code == 0
    header = next(line for line in out.splitlines() if line.strip().startswith("NODE"))
    assert stub.url in header
    assert REJECT_MESSAGE in out
    assert "9 -> 90 = 90" in out  # raw 9, ×10, ×weight 1


def test_extender_serve_refuses_half_a_tls_pair(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.yaml", [])
    code, _, err = run("extender", "serve", "--config", str(config), "--tls-cert", "x.crt")
    assert code == 2
    assert "--tls-cert and --tls-key go together" in err


def test_extender_serve_refuses_a_config_with_extenders(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config.yaml", [{"urlPrefix": "http://127.0.0.1:1"}])
    code, _, err = run("extender", "serve", "--config", str(config))
    assert code == 2
    assert "extenders[] are not called by `extender serve`" in err


def test_extender_serve_answers_until_stopped(tmp_path: Path) -> None:
    config = tmp_path / "profile.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": API,
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "plugins": {"filter": {"enabled": [{"name": "LabelFilter"}]}},
                        "pluginConfig": [
                            {"name": "LabelFilter", "args": {"labels": {"pool": "blue"}}}
                        ],
                    }
                ],
            }
        )
    )
    args = cli.build_parser().parse_args(
        ["extender", "serve", "--config", str(config), "--port", "0"]
    )
    err, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(
        target=args.func, args=(args, io.StringIO(), err), kwargs={"stop": stop}, daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while "serving profile" not in err.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        url = re.search(r"on (http://\S+)", err.getvalue()).group(1)
        ext_config, _ = make_config(
            {}, None, extenders=[{"urlPrefix": url, "filterVerb": "filter"}]
        )
        from kubesched import NodeInfo

        nodes = [
            NodeInfo(make_node("blue").label("pool", "blue").obj()),
            NodeInfo(make_node("green").label("pool", "green").obj()),
        ]
        result = HTTPExtender(ext_config.extenders[0]).filter(make_pod("p").obj(), nodes)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert [i.name for i in result.feasible] == ["blue"]
    assert list(result.failed_and_unresolvable) == ["green"]
    assert not thread.is_alive()
