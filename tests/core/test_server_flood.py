"""The health server under a flood of slow and half-sent requests, on loopback only.

200 connections drip a request head a byte at a time and 300 send a large head that never
ends: a fresh ``/healthz`` still answers within a second throughout, and the process's memory
grows by less than 32 MiB — over plain HTTP and over HTTPS (the secure port, ``kubesched run``'s
default: every flooding connection completes its TLS handshake first). Every loop here is
bounded in count and time."""

from __future__ import annotations

import http.client
import resource
import socket
import ssl
import time
from collections.abc import Iterator

import pytest

from kubesched.service.secure_serving import server_context
from kubesched.service.server import HealthServer

SLOW = 200
HALF_SENT = 300
FLOOD_SECONDS = 6.0


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


#: The client side of HTTPS: the server's certificate is self-signed.
_CLIENT = ssl.create_default_context()
_CLIENT.check_hostname = False
_CLIENT.verify_mode = ssl.CERT_NONE


@pytest.fixture(params=["http", "https"])
def server(request: pytest.FixtureRequest) -> Iterator[HealthServer]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * (SLOW + HALF_SENT) + 256  # both ends of every connection, with room
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    tls = server_context() if request.param == "https" else None
    server = HealthServer(
        "127.0.0.1",
        0,
        ready=lambda: True,
        metrics=lambda: b"",
        request_timeout=30.0,
        ssl_context=tls,
    )
    server.start()
    yield server
    server.stop()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def connect(server: HealthServer) -> socket.socket:
    """A connection to ``server``, through its TLS handshake when it serves HTTPS."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    if server.tls:
        return _CLIENT.wrap_socket(sock, server_hostname="localhost")
    return sock


def fresh_healthz(server: HealthServer) -> float:
    began = time.monotonic()
    connection = (
        http.client.HTTPSConnection("127.0.0.1", server.port, timeout=1.0, context=_CLIENT)
        if server.tls
        else http.client.HTTPConnection("127.0.0.1", server.port, timeout=1.0)
    )
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        assert (response.status, response.read()) == (200, b"ok\n")
    finally:
        connection.close()
    return time.monotonic() - began


def test_slow_and_half_sent_requests_do_not_starve_a_fresh_probe(server: HealthServer) -> None:
    fresh_healthz(server)
    before = rss_bytes()
    slow = [connect(server) for _ in range(SLOW)]
    for sock in slow:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
    half = [connect(server) for _ in range(HALF_SENT)]
    filler = b"X-Filler: " + b"a" * 8000 + b"\r\n"
    for sock in half:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + filler)  # never ends
    worst = 0.0
    began = time.monotonic()
    try:
        while time.monotonic() - began < FLOOD_SECONDS:
            for sock in slow:  # one more byte each, every half second
                try:
                    sock.send(b"a")
                except OSError:
                    pass
            worst = max(worst, fresh_healthz(server))
            time.sleep(0.25)
            worst = max(worst, fresh_healthz(server))
            time.sleep(0.25)
        growth = rss_bytes() - before
    finally:
        for sock in slow + half:
            sock.close()
    assert worst < 1.0, f"a fresh /healthz took {worst:.2f}s"
    assert growth < 32 << 20, f"memory grew {growth / 2**20:.1f} MiB"
    assert fresh_healthz(server) < 1.0


def test_a_head_over_the_limit_is_refused(server: HealthServer) -> None:
    with connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 20000)
        answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 431 ")


def test_a_request_that_never_completes_is_closed_at_its_timeout() -> None:
    server = HealthServer("127.0.0.1", 0, ready=lambda: True, metrics=lambda: b"",
                          request_timeout=0.5)  # fmt: skip
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")
            began = time.monotonic()
            assert sock.recv(4096) == b""  # closed by the server
            assert time.monotonic() - began < 2
    finally:
        server.stop()
