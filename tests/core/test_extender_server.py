"""``kubesched extender serve``: a profile's plugins answering kube-scheduler's extender API.

The requests are sent by kubesched's own extender client (``kubesched.engine.extender``), so these
tests also prove that both sides speak the same JSON; bad requests are sent raw.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import urllib3

from kubesched import CycleState, Handle, NodeInfo, Pod, Status, hookimpl
from kubesched.backends.memory import InMemoryBackend
from kubesched.engine.extender import ExtenderError, HTTPExtender
from kubesched.errors import KubeschedError
from kubesched.service.extender_server import ExtenderServer, ExtenderService, ServeOptions
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_config

ZONE = "zone"
WANTED = "a"


class ZoneFilter:
    """Filter: only nodes in zone ``a`` (UnschedulableAndUnresolvable), and one resolvable
    rejection for nodes labelled ``full``."""

    name = "ZoneFilter"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        labels = node_info.node.labels
        if labels.get(ZONE) != WANTED:
            return Status.unresolvable("node(s) not in zone a")
        if "full" in labels:
            return Status.unschedulable("node(s) are full")
        return None


class TierScore:
    """Score: the node's ``tier`` label (0–100)."""

    name = "TierScore"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return int(node_info.node.labels.get("tier", "0"))


class Boom:
    """Filter that raises: a plugin bug must become an answer, not a dropped connection."""

    name = "Boom"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        pass

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        raise RuntimeError("kaput")


PLUGINS = {"ZoneFilter": ZoneFilter, "TierScore": TierScore, "Boom": Boom}


def node(name: str, **labels: str):
    builder = make_node(name).capacity(cpu="4", memory="8Gi", pods="10")
    for key, value in labels.items():
        builder = builder.label(key, value)
    return builder.obj()


NODES = [
    node("n0", zone="a", tier="30"),
    node("n1", zone="b", tier="90"),
    node("n2", zone="a", tier="60", full="yes"),
    node("n3", zone="a", tier="45"),
]


def serve(filters=("ZoneFilter",), scores=("TierScore",), backend=None, **options: Any):
    profile = {
        "plugins": {
            "filter": {"enabled": [{"name": n} for n in filters]},
            "score": {"enabled": [{"name": n} for n in scores]},
        }
    }
    config, registry = make_config(PLUGINS, profile)
    service = ExtenderService(ServeOptions(config, registry, backend=backend, **options))
    service.start()
    return ExtenderServer(service).start()


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    s = serve()
    yield s
    s.stop()
    s.service.stop()


def client(server: ExtenderServer, **fields: Any) -> HTTPExtender:
    body = {"urlPrefix": server.url, **fields}
    config, _ = make_config({}, None, extenders=[body])
    return HTTPExtender(config.extenders[0])


def infos(*nodes) -> list[NodeInfo]:
    return [NodeInfo(n) for n in nodes or NODES]


def test_filter_runs_the_profiles_filter_plugins(server: ExtenderServer) -> None:
    result = client(server, filterVerb="filter").filter(make_pod("p").obj(), infos())
    assert [i.name for i in result.feasible] == ["n0", "n3"]
    assert result.failed == {"n2": "node(s) are full"}
    assert result.failed_and_unresolvable == {"n1": "node(s) not in zone a"}


def test_prioritize_scales_the_weighted_totals_to_0_10_best_first(server: ExtenderServer) -> None:
    scores, weight = client(server, prioritizeVerb="prioritize", weight=3).prioritize(
        make_pod("p").obj(), infos()
    )
    assert weight == 3
    # totals 30, 90, 60, 45: the best gets 10, the others total * 10 // 90.
    assert scores == {"n0": 3, "n1": 10, "n2": 6, "n3": 5}


def test_prioritize_keeps_the_best_node_unique() -> None:
    s = serve()
    try:
        near = [node("x", tier="100"), node("y", tier="99")]
        scores, _ = client(s, prioritizeVerb="prioritize", weight=1).prioritize(
            make_pod("p").obj(), infos(*near)
        )
    finally:
        s.stop()
    assert scores == {"x": 10, "y": 9}


def test_node_cache_capable_requests_use_the_watched_nodes() -> None:
    s = serve(backend=InMemoryBackend(NODES))
    try:
        ext = client(s, filterVerb="filter", nodeCacheCapable=True)
        result = ext.filter(make_pod("p").obj(), infos())
        assert [i.name for i in result.feasible] == ["n0", "n3"]
        with pytest.raises(ExtenderError, match=r"unknown node\(s\) ghost: not in the node cache"):
            ext.filter(make_pod("p").obj(), infos(node("ghost", zone="a")))
    finally:
        s.stop()


def test_node_names_without_a_cache_are_refused(server: ExtenderServer) -> None:
    ext = client(server, filterVerb="filter", nodeCacheCapable=True)
    with pytest.raises(ExtenderError, match="code 400"):
        ext.filter(make_pod("p").obj(), infos())


def test_bind_runs_the_profiles_bind_plugins() -> None:
    pod = make_pod("p", "shop").uid("u1").obj()
    backend = InMemoryBackend(NODES, [pod])
    s = serve(backend=backend)
    try:
        client(s, bindVerb="bind").bind(pod, "n3")
        assert backend.pods["u1"].node_name == "n3"
        with pytest.raises(ExtenderError, match="unknown node nope"):
            client(s, bindVerb="bind").bind(pod, "nope")
    finally:
        s.stop()


def post(server: ExtenderServer, verb: str, body: bytes, **headers: str) -> tuple[int, Any]:
    response = urllib3.request(
        "POST", f"{server.url}/{verb}", body=body, headers=headers, retries=False
    )
    return response.status, json.loads(response.data)


@pytest.mark.parametrize(
    ("verb", "body", "status", "error"),
    [
        pytest.param("filter", b"{not json", 400, "malformed JSON", id="malformed"),
        pytest.param("filter", b"[1, 2]", 400, "must be a JSON object", id="not-an-object"),
        pytest.param("filter", b'{"Nodes": null}', 400, "the request has no Pod", id="no-pod"),
        pytest.param(
            "filter",
            b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": 3}}',
            400,
            "Nodes must be a NodeList",
            id="bad-nodes",
        ),
        pytest.param("bind", b'{"PodName": "p"}', 400, "ExtenderBindingArgs needs", id="bind"),
        pytest.param("nope", b"{}", 404, "no verb 'nope'", id="unknown-verb"),
    ],
)
def test_bad_requests_get_an_error_answer(
    server: ExtenderServer, verb: str, body: bytes, status: int, error: str
) -> None:
    code, answer = post(server, verb, body)
    assert code == status
    assert error in answer["Error"]
    # ... and the server goes on serving.
    assert client(server, filterVerb="filter").filter(make_pod("p").obj(), infos()).feasible


def test_an_oversized_body_is_refused_before_it_is_read() -> None:
    s = serve(max_request_bytes=1000)
    try:
        code, answer = post(s, "filter", b"{" + b" " * 5000 + b"}")
    finally:
        s.stop()
    assert code == 413
    assert "over the limit of 1000" in answer["Error"]


def test_a_plugin_error_is_the_filter_answers_error() -> None:
    s = serve(filters=("Boom",))
    try:
        with pytest.raises(ExtenderError, match="kaput"):
            client(s, filterVerb="filter").filter(make_pod("p").obj(), infos())
    finally:
        s.stop()


def test_health_and_metrics(server: ExtenderServer) -> None:
    client(server, filterVerb="filter").filter(make_pod("p").obj(), infos())
    assert urllib3.request("GET", f"{server.url}/healthz").status == 200
    assert urllib3.request("GET", f"{server.url}/readyz").status == 200
    metrics = urllib3.request("GET", f"{server.url}/metrics").data.decode()
    assert (
        'scheduler_framework_extension_point_duration_seconds_count{extension_point="Filter"'
        in (metrics)
    )


def test_a_configuration_with_several_profiles_needs_profile() -> None:
    config, registry = make_config(PLUGINS, None)
    config.profiles.append(config.profiles[0].__class__(scheduler_name="other"))
    with pytest.raises(KubeschedError, match="choose the one to serve with --profile"):
        ExtenderService(ServeOptions(config, registry))


# -- TLS ------------------------------------------------------------------------------------------
@pytest.fixture
def tls_server(tmp_path) -> Iterator[tuple[ExtenderServer, bytes]]:
    from kubesched.testing._certs import CertificateAuthority

    ca = CertificateAuthority(tmp_path / "ca")
    pair = ca.issue_serving("extender")
    config, registry = make_config(
        PLUGINS, {"plugins": {"filter": {"enabled": [{"name": "ZoneFilter"}]}}}
    )
    service = ExtenderService(ServeOptions(config, registry))
    server = ExtenderServer(
        service, tls_cert=str(pair.cert_path), tls_key=str(pair.key_path)
    ).start()
    yield server, ca.cert_pem
    server.stop()


@pytest.mark.parametrize(
    "tls",
    [
        pytest.param(
            lambda ca: {"tlsConfig": {"caData": base64.b64encode(ca).decode()}}, id="caData"
        ),
        pytest.param(lambda ca: {"enableHTTPS": True}, id="enableHTTPS-without-CA"),
        pytest.param(lambda ca: {"tlsConfig": {"insecure": True}}, id="insecure"),
    ],
)
def test_https_extenders(tls_server, tls) -> None:
    server, ca = tls_server
    assert server.url.startswith("https://")
    ext = client(server, filterVerb="filter", **tls(ca))
    assert [i.name for i in ext.filter(make_pod("p").obj(), infos()).feasible] == ["n0", "n3"]


def test_an_https_extender_with_another_ca_is_refused(tls_server, tmp_path) -> None:
    from kubesched.testing._certs import CertificateAuthority

    server, _ = tls_server
    other = CertificateAuthority(tmp_path / "other").cert_pem
    ext = client(
        server, filterVerb="filter", tlsConfig={"caData": base64.b64encode(other).decode()}
    )
    with pytest.raises(
        ExtenderError, match=r"Post \"https://127.0.0.1:\d+/filter\": .*CERTIFICATE_VERIFY_FAILED"
    ):
        ext.filter(make_pod("p").obj(), infos())
