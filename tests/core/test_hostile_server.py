"""The request path against a hostile or broken peer, on loopback only.

Each row is a server that answers the way a broken proxy, a buggy server or an attacker may:
two answers in one write, a short Content-Length, an informational answer before the real one,
one byte every half second, a 10 GB Content-Length, a close right after reading a POST, and a
token carrying a newline. Each must end in the right answer or a clear error, within its
deadline and with bounded memory, and a write must never be sent twice.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from kubernetes.client import ApiClient, Configuration

from kubesched.backends.kube.informer import Informer
from kubesched.backends.kube.transport import OUTCOME_UNKNOWN, ApiError, Transport

#: How long any server below keeps a connection up at most: every test ends by itself.
SERVER_LIFETIME = 15.0


@dataclass
class Hostile:
    """A loopback server; ``handle(server, sock)`` serves each connection it accepts."""

    handle: Callable[[Hostile, socket.socket], None]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            sock.settimeout(SERVER_LIFETIME)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            self.handle(self, sock)
        except OSError:
            pass
        finally:
            sock.close()

    def read_request(self, sock: socket.socket, buffer: bytearray) -> bytes | None:
        """One whole request from ``sock`` (headers and a Content-Length body), or None at EOF."""
        while b"\r\n\r\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            buffer += chunk
        end = buffer.index(b"\r\n\r\n") + 4
        length = 0
        for line in bytes(buffer[:end]).split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(buffer) < end + length:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            buffer += chunk
        request = bytes(buffer[: end + length])
        del buffer[: end + length]
        self.requests.append(request)
        return request

    def count(self, method: str) -> int:
        return sum(1 for r in self.requests if r.startswith(method.encode() + b" "))

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()


def answer(body: object, status: str = "200 OK", length: int | None = None) -> bytes:
    data = json.dumps(body).encode()
    size = len(data) if length is None else length
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n"
    return head.encode() + data


def numbered(server: Hostile, sock: socket.socket) -> Iterator[int]:
    """Read requests on ``sock``; yield each one's number (1, 2, ...) over the whole server."""
    buffer = bytearray()
    while server.read_request(sock, buffer) is not None:
        yield len(server.requests)


def watch_requests(server: Hostile, sock: socket.socket, version: str = "5") -> Iterator[bytes]:
    """Read requests on ``sock``: answer each list with no items at ``version``, and yield
    each watch request for the caller to answer."""
    for _ in numbered(server, sock):
        request = server.requests[-1]
        if b"watch=true" not in request.split(b"\r\n", 1)[0]:
            sock.sendall(answer({"metadata": {"resourceVersion": version}, "items": []}))
            continue
        yield request


# -- the rows ----------------------------------------------------------------------------------
def two_answers_in_one_write(server: Hostile, sock: socket.socket) -> None:
    for n in numbered(server, sock):
        extra = answer({"n": "stray"}) if n == 1 else b""
        sock.sendall(answer({"n": n}) + extra)


def short_content_length(server: Hostile, sock: socket.socket) -> None:
    for n in numbered(server, sock):
        if n == 1:  # says 7 bytes, sends more: the rest must not become the next answer
            sock.sendall(answer({"n": n, "padding": "x" * 40}, length=7))
        else:
            sock.sendall(answer({"n": n}))


def informational_then_created(server: Hostile, sock: socket.socket) -> None:
    for n in numbered(server, sock):
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        time.sleep(0.05)
        sock.sendall(answer({"kind": "Status", "status": "Success", "n": n}, "201 Created"))


def one_byte_every_half_second(server: Hostile, sock: socket.socket) -> None:
    for _ in numbered(server, sock):
        for byte in answer({"slow": True}):
            if server.stopped.wait(0.5):
                return
            sock.sendall(bytes([byte]))


def ten_gigabytes(server: Hostile, sock: socket.socket) -> None:
    for _ in numbered(server, sock):
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n")
        zeros = b"0" * 65536
        sent = 0
        while sent < 256 << 20 and not server.stopped.is_set():  # bounded: 256 MiB at most
            sock.sendall(zeros)
            sent += len(zeros)
        server.stopped.wait(SERVER_LIFETIME)


def close_after_the_post(server: Hostile, sock: socket.socket) -> None:
    for _ in numbered(server, sock):
        if server.requests[-1].startswith(b"POST "):
            return  # read it whole, then close without a word
        sock.sendall(answer({"warm": True}))


def well_behaved(server: Hostile, sock: socket.socket) -> None:
    for n in numbered(server, sock):
        sock.sendall(answer({"n": n}))


# -- the harness -------------------------------------------------------------------------------
@pytest.fixture
def hostile() -> Iterator[Callable[[Callable[[Hostile, socket.socket], None]], Hostile]]:
    servers: list[Hostile] = []

    def start(handle: Callable[[Hostile, socket.socket], None]) -> Hostile:
        servers.append(Hostile(handle))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def transport_to(server: Hostile, token: str = "t0ken", timeout: float = 5.0) -> Transport:
    configuration = Configuration(host=f"http://127.0.0.1:{server.port}")
    configuration.api_key = {"authorization": token}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    return Transport(ApiClient(configuration), qps=0, timeout=timeout)


def raw_informer(
    server: Hostile, path: str, on_add: Callable[[dict], object], **options: float
) -> Informer[dict]:
    """An informer of raw objects at ``path`` on ``server``, keyed by name, that only reports
    adds (``options``: the informer's keyword settings, e.g. ``inactivity_seconds``)."""
    return Informer(
        transport_to(server),
        path,
        dict,
        lambda o: o["metadata"]["name"],
        lambda o: o["metadata"]["resourceVersion"],
        on_add,
        lambda _old, _new: None,
        lambda _o: None,
        **options,
    )


@dataclass
class Measured:
    seconds: float
    peak_bytes: int
    outcome: object


def measured(call: Callable[[], object]) -> Measured:
    """Run ``call``: what it returned or raised, how long it took and its peak allocation."""
    tracemalloc.start()
    began = time.monotonic()
    try:
        outcome: object = call()
    except ApiError as exc:
        outcome = exc
    seconds = time.monotonic() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return Measured(seconds, peak, outcome)


MEMORY_BOUND = 8 << 20


def test_two_answers_in_one_write_each_request_gets_its_own(hostile) -> None:
    server = hostile(two_answers_in_one_write)
    transport = transport_to(server)
    first = measured(lambda: transport.request("GET", "/api/v1/nodes"))
    second = measured(lambda: transport.request("GET", "/api/v1/pods"))
    assert first.outcome == {"n": 1}
    assert second.outcome == {"n": 2}  # never the stray answer sent with the first
    assert max(first.seconds, second.seconds) < 2


def test_short_content_length_is_a_clear_error_and_does_not_leak(hostile) -> None:
    server = hostile(short_content_length)
    transport = transport_to(server)
    first = measured(lambda: transport.request("GET", "/api/v1/nodes"))
    assert isinstance(first.outcome, ApiError)
    assert "not JSON" in first.outcome.message
    second = measured(lambda: transport.request("GET", "/api/v1/pods"))
    assert second.outcome == {"n": 2}
    assert max(first.seconds, second.seconds) < 2


def test_an_informational_answer_then_201_is_the_answer(hostile) -> None:
    server = hostile(informational_then_created)
    transport = transport_to(server)
    body = {"kind": "Binding", "target": {"name": "node-1"}}
    path = "/api/v1/namespaces/ns/pods/p/binding"
    first = measured(lambda: transport.request("POST", path, body=body))
    second = measured(lambda: transport.request("POST", path, body=body))
    assert first.outcome == {"kind": "Status", "status": "Success", "n": 1}
    assert second.outcome == {"kind": "Status", "status": "Success", "n": 2}
    assert server.count("POST") == 2
    assert max(first.seconds, second.seconds) < 2


def test_one_byte_every_half_second_ends_at_the_deadline(hostile) -> None:
    server = hostile(one_byte_every_half_second)
    transport = transport_to(server, timeout=1.0)
    result = measured(lambda: transport.request("POST", "/bind", body={}))
    assert isinstance(result.outcome, ApiError)
    assert "deadline" in result.outcome.message or "in time" in result.outcome.message
    assert result.outcome.reason == OUTCOME_UNKNOWN  # it was sent: what it did is unknown
    assert 0.9 < result.seconds < 2.0, result.seconds  # the deadline, plus a loaded machine
    assert server.count("POST") == 1


def test_a_ten_gigabyte_answer_is_refused_in_bounded_memory(hostile) -> None:
    server = hostile(ten_gigabytes)
    transport = transport_to(server)
    result = measured(lambda: transport.request("GET", "/api/v1/pods"))
    assert isinstance(result.outcome, ApiError)
    assert "10737418240 bytes" in result.outcome.message
    assert result.seconds < 2
    assert result.peak_bytes < MEMORY_BOUND, result.peak_bytes


def test_a_close_after_the_post_was_read_sends_exactly_one_post(hostile) -> None:
    server = hostile(close_after_the_post)
    transport = transport_to(server)
    assert transport.request("GET", "/warm") == {"warm": True}  # the POST reuses this connection
    result = measured(
        lambda: transport.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body={})
    )
    assert isinstance(result.outcome, ApiError)
    assert result.outcome.reason == OUTCOME_UNKNOWN
    time.sleep(0.3)  # a resent POST would have arrived by now
    assert server.count("POST") == 1
    assert result.seconds < 2


def test_a_header_value_with_a_newline_is_refused_before_sending(hostile) -> None:
    server = hostile(well_behaved)
    injected = transport_to(server, token="abc\r\nX-Injected: yes")
    result = measured(lambda: injected.request("POST", "/bind", body={}))
    assert isinstance(result.outcome, ApiError)
    assert "CR, LF or NUL" in result.outcome.message
    assert result.outcome.reason != OUTCOME_UNKNOWN  # nothing went out
    assert server.requests == []
    # A token file's trailing newline is trimmed, not sent as a broken header.
    trailing = transport_to(server, token="abc\n")
    assert trailing.request("POST", "/bind", body={}) == {"n": 1}
    assert b"authorization: bearer abc\r\n" in server.requests[0].lower()
    assert server.requests[0].endswith(b"\r\n\r\n{}")


def test_a_leaders_write_never_outlives_its_term(hostile) -> None:
    """A guarded write (the leader's) is cut at the end of the leader's term, whatever its own
    timeout: a deposed leader's Binding cannot land after a successor took over."""
    server = hostile(one_byte_every_half_second)
    transport = transport_to(server, timeout=30.0)
    term_end = time.monotonic() + 0.7
    transport.write_deadline = lambda: term_end
    result = measured(lambda: transport.request("POST", "/bind", body={}, guard=lambda: True))
    assert isinstance(result.outcome, ApiError)
    assert result.outcome.reason == OUTCOME_UNKNOWN
    assert result.seconds < 1.7, result.seconds
