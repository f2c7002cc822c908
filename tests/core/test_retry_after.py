"""429 and 5xx answers with Retry-After, as client-go treats them: the request is tried again
after the wait the server asked for, a bounded number of times, through the rate limiter and
the write guard again; a watch answered 429 backs off and watches again without re-listing."""

from __future__ import annotations

import json
import socket
import threading
import time

from test_hostile_server import (
    Hostile,
    answer,
    numbered,
    raw_informer,
    transport_to,
    watch_requests,
)

from kubesched.backends.kube.transport import MAX_RETRIES, ApiError

TOO_MANY = {"kind": "Status", "reason": "TooManyRequests", "code": 429, "message": "slow down"}


def too_many(retry_after: str) -> bytes:
    data = json.dumps(TOO_MANY).encode()
    return (
        f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    ).encode() + data


def test_a_binding_answered_429_is_sent_again_after_retry_after() -> None:
    times: list[float] = []

    def handle(server: Hostile, sock: socket.socket) -> None:
        for n in numbered(server, sock):
            times.append(time.monotonic())
            sock.sendall(too_many("1") if n == 1 else answer({"kind": "Binding"}, "201 Created"))

    server = Hostile(handle)
    try:
        result = transport_to(server).request("POST", "/b", body={}, guard=lambda: True)
        assert result == {"kind": "Binding"}
        assert server.count("POST") == 2
        assert times[1] - times[0] >= 0.95  # Retry-After honoured
    finally:
        server.stop()


def test_retries_are_bounded_and_the_guard_is_asked_before_each() -> None:
    def handle(server: Hostile, sock: socket.socket) -> None:
        for _ in numbered(server, sock):
            sock.sendall(too_many("0"))

    server = Hostile(handle)
    asked: list[float] = []
    try:
        try:
            transport_to(server).request(
                "POST", "/b", body={}, guard=lambda: asked.append(1) or True
            )
        except ApiError as exc:
            assert exc.status == 429
        else:
            raise AssertionError("an endless 429 must end in an error")
        assert server.count("POST") == MAX_RETRIES + 1
        assert len(asked) == MAX_RETRIES + 1
    finally:
        server.stop()


def test_a_watch_answered_429_backs_off_and_does_not_list_again() -> None:
    watches: list[float] = []
    seen = threading.Event()

    def handle(server: Hostile, sock: socket.socket) -> None:
        for _ in watch_requests(server, sock):
            watches.append(time.monotonic())
            if len(watches) <= 2:
                sock.sendall(too_many("1"))
                continue
            event = {
                "type": "ADDED",
                "object": {"metadata": {"name": "n1", "resourceVersion": "6"}},
            }
            line = json.dumps(event).encode() + b"\n"
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
                + f"{len(line):x}\r\n".encode()
                + line
                + b"\r\n"
            )
            server.stopped.wait(10)
            return

    server = Hostile(handle)
    added: list[dict] = []
    informer = raw_informer(server, "/api/v1/nodes", lambda o: (added.append(o), seen.set()))
    informer.start()
    try:
        assert seen.wait(15), "the watch never resumed"
        lists = sum(1 for r in server.requests if b"watch=true" not in r.split(b"\r\n", 1)[0])
        assert lists == 1  # no re-list on 429
        assert informer.relists == 1
        assert watches[1] - watches[0] >= 0.95 and watches[2] - watches[1] >= 0.95
        assert b"resourceVersion=5" in server.requests[-1]
    finally:
        informer.stop()
        server.stop()
