"""HealthServer: real HTTP requests to /healthz, /readyz and /metrics on 127.0.0.1."""

from __future__ import annotations

import http.client
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from kubesched.engine.metrics import CONTENT_TYPE, SchedulerMetrics
from kubesched.service.server import HealthServer


@dataclass
class Probes:
    """What the server asks; tests flip these."""

    ready: bool = False
    healthy: bool = True
    reason: str = "waiting for the informer caches to sync"
    metrics: SchedulerMetrics = field(default_factory=SchedulerMetrics)


@dataclass
class Reply:
    status: int
    content_type: str
    body: bytes


@pytest.fixture
def probes() -> Probes:
    return Probes()


@pytest.fixture
def server(probes: Probes) -> Iterator[HealthServer]:
    server = HealthServer(
        "127.0.0.1",
        0,
        ready=lambda: probes.ready,
        metrics=probes.metrics.render,
        healthy=lambda: probes.healthy,
        reason=lambda: probes.reason,
    )
    server.start()
    yield server
    server.stop()


def request(server: HealthServer, path: str, method: str = "GET") -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return Reply(response.status, response.getheader("Content-Type") or "", response.read())
    finally:
        connection.close()


def test_port_zero_picks_a_free_port(server: HealthServer):
    assert server.port > 0
    assert request(server, "/healthz").status == 200


@pytest.mark.parametrize(
    ("healthy", "status", "body"),
    [(True, 200, b"ok\n"), (False, 500, b"unhealthy\n")],
    ids=["healthy", "unhealthy"],
)
def test_healthz(server: HealthServer, probes: Probes, healthy: bool, status: int, body: bytes):
    probes.healthy = healthy
    reply = request(server, "/healthz")
    assert (reply.status, reply.body) == (status, body)
    assert reply.content_type.startswith("text/plain")


def test_readyz_is_503_with_a_one_line_reason_until_ready(server: HealthServer, probes: Probes):
    probes.reason = "not the leader:\nwaiting for the lease"
    not_ready = request(server, "/readyz")
    probes.ready = True
    ready = request(server, "/readyz")

    assert not_ready.status == 503
    assert not_ready.body == b"not the leader: waiting for the lease\n"
    assert (ready.status, ready.body) == (200, b"ok\n")


def test_metrics_serves_the_registry_in_text_format_0_0_4(server: HealthServer, probes: Probes):
    probes.metrics.attempt("scheduled", "default-scheduler", 0.002)
    reply = request(server, "/metrics")

    assert reply.status == 200
    assert reply.content_type == CONTENT_TYPE
    assert "version=0.0.4" in reply.content_type
    assert reply.body == probes.metrics.render()
    assert (
        # Label names sorted, as the Go client sorts them.
        b'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0\n'
        in reply.body
    )


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/", 404),
        ("GET", "/healthz/extra", 404),
        ("GET", "/debug/pprof", 404),
        ("POST", "/nothing", 404),
        ("POST", "/metrics", 405),
        ("DELETE", "/healthz", 405),
        ("HEAD", "/healthz", 200),
        ("GET", "/readyz?verbose", 503),
    ],
    ids=lambda v: str(v),
)
def test_other_requests(server: HealthServer, method: str, path: str, status: int):
    assert request(server, path, method).status == status


def test_a_get_with_a_body_is_refused_with_413(server: HealthServer):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        connection.request("GET", "/healthz", body=b"hello", headers={"Content-Length": "5"})
        response = connection.getresponse()
        assert (response.status, response.read()) == (413, b"no request body accepted\n")
    finally:
        connection.close()
    assert request(server, "/healthz").status == 200  # and the server goes on serving


@pytest.mark.parametrize(
    "broken",
    ["ready", "healthy", "metrics"],
)
def test_a_probe_that_raises_answers_500_naming_the_error(broken: str):
    def boom() -> bool:
        raise RuntimeError("probe exploded")

    probes: dict[str, Callable[[], object]] = {
        "ready": lambda: True,
        "healthy": lambda: True,
        "metrics": lambda: b"",
        broken: boom,
    }
    server = HealthServer("127.0.0.1", 0, **probes)  # type: ignore[arg-type]
    server.start()
    try:
        path = {"ready": "/readyz", "healthy": "/healthz", "metrics": "/metrics"}[broken]
        reply = request(server, path)
    finally:
        server.stop()
    assert reply.status == 500
    assert b"RuntimeError: probe exploded" in reply.body


def test_requests_are_logged_at_debug_only(
    server: HealthServer, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
):
    with caplog.at_level(logging.DEBUG, logger="kubesched.service.server"):
        request(server, "/healthz")
    assert capsys.readouterr().err == ""
    access = [r for r in caplog.records if "/healthz" in r.getMessage()]
    assert access and all(r.levelno == logging.DEBUG for r in access)


def test_concurrent_requests_are_served(server: HealthServer, probes: Probes):
    probes.ready = True
    statuses: list[int] = []

    def probe() -> None:
        statuses.append(request(server, "/readyz").status)

    threads = [threading.Thread(target=probe) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 20


def test_stop_closes_the_port_and_is_idempotent(probes: Probes):
    server = HealthServer("127.0.0.1", 0, ready=lambda: True, metrics=probes.metrics.render)
    server.start()
    port = server.port
    with pytest.raises(RuntimeError, match="already started"):
        server.start()

    server.stop()
    server.stop()

    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=2).request("GET", "/healthz")
