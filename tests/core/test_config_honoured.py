"""Every setting kubesched accepts is acted on; the values it cannot honour are refused with the
field's path, never decoded and dropped (clientConnection.contentType, profiling, ...)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from kubesched import hookimpl
from kubesched.config import parse_config
from kubesched.errors import ConfigError
from kubesched.framework.registry import Registry
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import FifoSort, TestBinder, make_scheduler

V1 = "kubescheduler.config.k8s.io/v1"
V1BETA2 = "kubescheduler.config.k8s.io/v1beta2"
KIND = "KubeSchedulerConfiguration"


# The harness's QueueSort and Bind plugins stand in for the defaults of those names.
Sort, Binder = FifoSort, TestBinder


REGISTRY = Registry({"PrioritySort": Sort, "DefaultBinder": Binder})


def errors_of(api: str = V1, **top: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config({"apiVersion": api, "kind": KIND, **top}, REGISTRY)
    return [str(e) for e in caught.value.errors]


def loads(api: str = V1, **top: Any) -> None:
    parse_config({"apiVersion": api, "kind": KIND, **top}, REGISTRY)


@pytest.mark.parametrize(
    "connection",
    [
        pytest.param({"contentType": "application/json"}, id="contentType-json"),
        pytest.param({"contentType": ""}, id="contentType-empty"),
        pytest.param({"acceptContentTypes": "application/json"}, id="accept-json"),
        pytest.param({"acceptContentTypes": ""}, id="accept-empty"),
    ],
)
def test_json_content_types_are_accepted(connection):
    loads(clientConnection=connection)


@pytest.mark.parametrize(
    ("connection", "expected"),
    [
        pytest.param(
            {"contentType": "application/vnd.kubernetes.protobuf"},
            "clientConnection.contentType: kubesched talks to the API server in JSON only: set "
            '"application/json" or leave it empty, got "application/vnd.kubernetes.protobuf"',
            id="contentType-protobuf",
        ),
        pytest.param(
            {"acceptContentTypes": "application/vnd.kubernetes.protobuf,application/json"},
            "clientConnection.acceptContentTypes: kubesched accepts JSON only from the API "
            'server: set "application/json" or leave it empty, got '
            '"application/vnd.kubernetes.protobuf,application/json"',
            id="accept-protobuf-first",
        ),
    ],
)
def test_protobuf_is_refused(connection, expected):
    assert errors_of(clientConnection=connection) == [expected]


@pytest.mark.parametrize(
    ("field", "why"),
    [
        ("enableProfiling", "kubesched serves no /debug/pprof endpoints"),
        ("enableContentionProfiling", "kubesched serves no /debug/pprof endpoints"),
        (
            "delayCacheUntilActive",
            "a kubesched standby always fills its cache, to take over at once",
        ),
    ],
)
def test_features_kubesched_lacks_are_refused_when_turned_on(field, why):
    loads(**{field: False})
    assert errors_of(**{field: True}) == [
        f"{field}: true is not supported ({why}); set it to false or remove it"
    ]


@pytest.mark.parametrize("field", ["healthzBindAddress", "metricsBindAddress"])
def test_v1beta2_bind_addresses_follow_kube_schedulers_rule(field):
    loads(api=V1BETA2, **{field: ""})
    loads(api=V1BETA2, **{field: "0.0.0.0:0"})
    assert errors_of(api=V1BETA2, **{field: "0.0.0.0:10251"}) == [
        f'{field}: must be empty or with an explicit 0 port, got "0.0.0.0:10251" (kubesched '
        "run serves health and metrics at --bind-address and --port)"
    ]


# -- binding workers: how many binding cycles run at once --------------------------------------
class Gate:
    """A Bind plugin that holds every binding until released, counting those in flight."""

    lock = threading.Lock()
    in_flight = 0
    most = 0
    release = threading.Event()
    arrived = threading.Semaphore(0)

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
        self.handle = handle

    @hookimpl
    def bind(self, state, pod, node_name):
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.most = max(cls.most, cls.in_flight)
        cls.arrived.release()
        cls.release.wait(10)
        with cls.lock:
            cls.in_flight -= 1
        self.handle.backend.bind(pod, node_name)


def _most_bindings_in_flight(pods: int, **options: Any) -> int:
    """Schedule ``pods`` pods whose binding cycles wait at Bind; how many were in flight."""
    Gate.in_flight = Gate.most = 0
    Gate.release.clear()
    Gate.arrived = threading.Semaphore(0)
    scheduler, backend = make_scheduler(
        {"Gate": Gate},
        {"plugins": {"bind": {"enabled": [{"name": "Gate"}]}}},
        nodes=[make_node("n1").obj()],
        pods=[make_pod(f"p{i}").obj() for i in range(pods)],
        inline_binding=False,
        **options,
    )
    try:
        while scheduler.schedule_one(timeout=0):
            pass
        arrived = 0
        while Gate.arrived.acquire(timeout=0.5):  # until no more come: the rest wait
            arrived += 1
        assert arrived == Gate.most
        Gate.release.set()
        assert scheduler.wait_for_bindings(timeout=30)
    finally:
        Gate.release.set()
        scheduler.stop()
    assert all(pod.node_name == "n1" for pod in backend.pods.values())
    return Gate.most


@pytest.mark.parametrize("workers", [1, 3])
def test_binding_workers_bound_the_binding_cycles_in_flight(workers):
    assert _most_bindings_in_flight(6, binding_workers=workers) == workers


def test_parallelism_does_not_bound_binding_as_in_kube_scheduler():
    """kube-scheduler's parallelism is for its algorithms' goroutines (here: the plugins',
    DefaultPreemption's); binding cycles have their own bound (64 by default)."""
    assert _most_bindings_in_flight(6, parallelism=1) == 6


def test_a_weight_where_none_is_used_is_a_warning():
    data = {
        "apiVersion": V1,
        "kind": KIND,
        "profiles": [
            {
                "schedulerName": "s",
                "plugins": {
                    "queueSort": {
                        "enabled": [{"name": "PrioritySort", "weight": 5}],
                        "disabled": [{"name": "*"}],
                    },
                    "multiPoint": {"enabled": [{"name": "DefaultBinder", "weight": 3}]},
                },
            }
        ],
    }
    warnings = parse_config(data, REGISTRY).warnings
    assert [w for w in warnings if "weight" in w] == [
        "profiles[0].plugins.queueSort.enabled[0].weight: only score and multiPoint weights "
        "are used; the weight at queueSort is ignored (kube-scheduler ignores it too)"
    ]
