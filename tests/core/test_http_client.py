"""The connection pool under Transport's requests (urllib3's, used directly), against a
local server that answers the way a real one may: Content-Length or chunked bodies,
``Connection: close``, no body at all, an idle connection closed under the client's feet, TLS
with the cluster's CA and with the wrong one, a server that never answers. Then Transport over
it: the Status of an error, the token read per request, paths and queries encoded, a proxy.
(The integration tests run the same code against kube-apiserver; test_hostile_server.py has
the answers a hostile or broken peer gives.)"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes.client import ApiClient, Configuration

from kubesched.backends.kube.http_client import ConnectionPool, HttpError, pool_for
from kubesched.backends.kube.transport import ApiError, Transport

Answer = Callable[[bytes], bytes | None]  # request bytes -> answer bytes (None: close)


class Server:
    """Accepts connections on 127.0.0.1 and answers each request with ``answer(request)``;
    keeps every request it read and counts the connections it accepted."""

    def __init__(self, answer: Answer, context: ssl.SSLContext | None = None) -> None:
        self.answer = answer
        self.context = context
        self.requests: list[bytes] = []
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            if self.context is not None:
                sock = self.context.wrap_socket(sock, server_side=True)
            self.open.append(sock)
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    chunk = sock.recv(65536)
                    if not chunk:
                        return
                    buffer += chunk
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buffer) < length:
                    buffer += sock.recv(65536)
                request, buffer = head + b"\r\n\r\n" + buffer[:length], buffer[length:]
                self.requests.append(request)
                answer = self.answer(request)
                if answer is None:
                    sock.close()
                    return
                sock.sendall(answer)
                if answer.startswith(b"HTTP/1.0"):  # no length: the end of the body is ours
                    sock.close()
                    return
        except (OSError, ssl.SSLError):
            return

    def close_idle(self) -> None:
        """Close every connection from the server's side (as a keep-alive timeout does)."""
        for sock in self.open:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass
        self.open.clear()

    def stop(self) -> None:
        self.listener.close()
        self.close_idle()


def json_answer(body: object, status: str = "200 OK", extra: str = "") -> bytes:
    data = json.dumps(body).encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(data)}\r\n\r\n"
    ).encode() + data


def header(request: bytes, name: str) -> str | None:
    """A header's value in ``request`` (names compare without case, as HTTP says)."""
    for line in request.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        key, _, value = line.decode().partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None


def chunked_answer(parts: list[bytes]) -> bytes:
    chunks = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(answer: Answer, context: ssl.SSLContext | None = None) -> Server:
        servers.append(Server(answer, context))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def test_content_length_answers_reuse_one_connection(serve) -> None:
    server = serve(lambda request: json_answer({"echo": request.split(b" ")[1].decode()}))
    pool = _pool(server.port)
    for i in range(5):
        answer = pool.request("GET", f"/api/v1/pods/{i}")
        assert answer.status == 200
        assert json.loads(answer.body) == {"echo": f"/api/v1/pods/{i}"}
    assert server.connections == 1


def test_chunked_answer_is_joined_and_the_connection_kept(serve) -> None:
    parts = [b'{"items": [', b'{"a": 1}, ' * 3000 + b'{"a": 1}', b"]}"]
    server = serve(lambda _: chunked_answer(parts))
    pool = _pool(server.port)
    first = pool.request("GET", "/list")
    second = pool.request("GET", "/list")
    assert len(json.loads(first.body)["items"]) == 3001
    assert second.body == first.body
    assert server.connections == 1


def test_connection_close_and_no_body_answers(serve) -> None:
    answers = iter(
        [
            json_answer({"n": 1}, extra="Connection: close\r\n"),
            b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 204 No Content\r\n\r\n",
            json_answer({"n": 2}),
        ]
    )
    server = serve(lambda _: next(answers))
    pool = _pool(server.port)
    assert json.loads(pool.request("GET", "/a").body) == {"n": 1}
    assert pool.request("DELETE", "/b").body == b""
    assert pool.request("DELETE", "/c").body == b""  # 204 without Content-Length
    assert json.loads(pool.request("GET", "/d").body) == {"n": 2}
    assert server.connections == 2  # a new one after "Connection: close" only


def test_body_framed_by_the_connection_end(serve) -> None:
    answer = b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"whole": 1}'
    server = serve(lambda _: answer)
    pool = _pool(server.port)
    assert pool.request("GET", "/y").body == b'{"whole": 1}'
    assert pool.request("GET", "/y").body == b'{"whole": 1}'
    assert server.connections == 2  # HTTP/1.0: never kept


def test_an_idle_connection_the_server_closed_is_replaced_once(serve) -> None:
    server = serve(lambda _: json_answer({"ok": True}))
    pool = _pool(server.port)
    pool.request("POST", "/bind", body=b"{}")
    server.close_idle()
    threading.Event().wait(0.1)  # the FIN arrives
    answer = pool.request("POST", "/bind", body=b"{}")  # the kept connection is dead
    assert json.loads(answer.body) == {"ok": True}
    assert server.connections == 2
    assert len(server.requests) == 2  # the first attempt never reached the server


def test_a_get_racing_the_close_is_sent_again_once(serve) -> None:
    """The server closes a kept-alive connection as a GET goes out: a GET, and only a GET, is
    tried once more on a new connection (a POST never is: test_hostile_server.py)."""
    answers = iter([json_answer({"n": 1}), None, json_answer({"n": 2})])
    server = serve(lambda _: next(answers))
    pool = _pool(server.port)
    assert json.loads(pool.request("GET", "/warm").body) == {"n": 1}
    assert json.loads(pool.request("GET", "/again").body) == {"n": 2}
    assert len(server.requests) == 3


def test_a_fresh_connection_that_fails_is_not_retried(serve) -> None:
    server = serve(lambda _: None)  # reads the request, closes without answering
    pool = _pool(server.port)
    with pytest.raises(HttpError):
        pool.request("POST", "/bind", body=b"{}")
    assert len(server.requests) == 1


def test_a_server_that_does_not_answer_times_out_without_a_retry(serve) -> None:
    release = threading.Event()

    def slow(_: bytes) -> bytes:
        release.wait(10)
        return json_answer({})

    server = serve(lambda _: json_answer({"first": True}))
    pool = _pool(server.port)
    pool.request("GET", "/warm")  # the next request goes out on a reused connection
    server.answer = slow
    with pytest.raises(HttpError, match=r"in time|deadline"):
        pool.request("POST", "/bind", body=b"{}", timeout=0.3)
    release.set()
    assert len(server.requests) == 2  # the slow request was sent once


def test_a_get_on_a_fresh_connection_that_fails_is_not_retried(serve) -> None:
    server = serve(lambda _: None)  # reads the request, closes without answering
    with pytest.raises(HttpError) as caught:
        _pool(server.port).request("GET", "/api/v1/nodes")
    assert caught.value.broken
    assert len(server.requests) == 1  # only a kept-alive connection's GET goes again


def test_the_host_header_names_the_server(serve) -> None:
    server = serve(lambda _: json_answer({}))
    _pool(server.port).request("GET", "/version")
    assert header(server.requests[0], "Host") == f"127.0.0.1:{server.port}"


def test_a_header_that_is_not_latin_1_is_refused_before_sending(serve) -> None:
    server = serve(lambda _: json_answer({}))
    with pytest.raises(HttpError) as caught:
        _pool(server.port).request("GET", "/", headers={"Authorization": "Bearer \u2603"})
    assert not caught.value.sent
    assert "not Latin-1" in str(caught.value)
    assert server.requests == []


def test_a_connection_that_carried_a_malformed_answer_is_not_reused(serve) -> None:
    answers = iter([b"HTTP/1.1 200 OK\r\nbroken header\r\n\r\n", json_answer({"n": 2})])
    server = serve(lambda _: next(answers))
    pool = _pool(server.port)
    with pytest.raises(HttpError, match="malformed header line") as caught:
        pool.request("GET", "/a")
    assert caught.value.sent and not caught.value.broken
    assert json.loads(pool.request("GET", "/b").body) == {"n": 2}
    assert server.connections == 2


def test_a_get_cut_at_its_deadline_is_not_sent_again(serve) -> None:
    """A GET on a kept-alive connection that gets no byte back before its deadline ends as a
    timeout that was sent: it is not taken for a connection the server had closed."""
    release = threading.Event()
    server = serve(lambda _: json_answer({"first": True}))
    pool = _pool(server.port)
    pool.request("GET", "/warm")

    def silent(_: bytes) -> None:  # holds the request, then closes without a word
        release.wait(10)

    server.answer = silent
    with pytest.raises(HttpError) as caught:
        pool.request("GET", "/slow", deadline=time.monotonic() + 0.3)
    release.set()
    assert caught.value.timed_out and caught.value.sent
    assert len(server.requests) == 2


def test_no_connection_at_all_names_the_server() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with pytest.raises(HttpError, match=f"connecting to 127.0.0.1:{port}"):
        _pool(port).request("GET", "/", timeout=2)


def test_malformed_answers_are_errors(serve) -> None:
    server = serve(lambda _: b"SPDY/3 200 OK\r\n\r\n")
    with pytest.raises(HttpError, match="SPDY"):
        _pool(server.port).request("GET", "/")
    bad_chunk = serve(lambda _: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    with pytest.raises(HttpError, match=r"chunk|broke"):
        _pool(bad_chunk.port).request("GET", "/")


# -- TLS ---------------------------------------------------------------------------------------
@pytest.fixture
def tls(tmp_path: Path):
    from kubesched.testing import _certs as certs  # the core env installs [testing]

    ca = certs.CertificateAuthority(tmp_path / "ca")
    serving = ca.issue_serving("server", "127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(serving.cert_path, serving.key_path)
    other = certs.CertificateAuthority(tmp_path / "other", common_name="someone-else")
    return context, ca.cert_path, other.cert_path


def _pool(port: int) -> ConnectionPool:
    return pool_for(_configuration(f"http://127.0.0.1:{port}"))


def _configuration(host: str, ca: Path | None = None, token: str = "") -> Configuration:
    configuration = Configuration(host=host)
    configuration.ssl_ca_cert = str(ca) if ca else None
    if token:
        configuration.api_key = {"authorization": token}
        configuration.api_key_prefix = {"authorization": "Bearer"}
    return configuration


def test_tls_with_the_cluster_ca_and_refused_with_another(serve, tls) -> None:
    context, ca, other_ca = tls
    server = serve(lambda _: json_answer({"kind": "Status"}), context)
    pool = pool_for(_configuration(f"https://127.0.0.1:{server.port}", ca))
    assert pool is not None
    assert json.loads(pool.request("GET", "/version").body) == {"kind": "Status"}
    assert json.loads(pool.request("GET", "/version").body) == {"kind": "Status"}
    assert server.connections == 1
    wrong = pool_for(_configuration(f"https://127.0.0.1:{server.port}", other_ca))
    assert wrong is not None
    with pytest.raises(HttpError, match="CERTIFICATE_VERIFY_FAILED"):
        wrong.request("GET", "/version")


# -- streamed answers --------------------------------------------------------------------------
def test_a_stream_that_goes_silent_ends_as_a_timeout(serve) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    server = serve(lambda _: head + b"6\r\nfirst\n\r\n")  # then nothing, the socket open
    status, lines = _pool(server.port).stream("/watch", read_timeout=0.3)
    assert status.status == 200
    assert next(lines) == b"first"
    with pytest.raises(HttpError) as caught:
        next(lines)
    assert caught.value.timed_out and not caught.value.broken


def test_a_stream_cut_mid_chunk_ends_as_a_broken_connection(serve) -> None:
    cut = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nfirst\n\r\n20\r\npart"
    server = serve(lambda _: cut)  # an HTTP/1.0 answer: the server closes after it
    _, lines = _pool(server.port).stream("/watch", read_timeout=5)
    assert next(lines) == b"first"
    with pytest.raises(HttpError) as caught:
        list(lines)
    assert caught.value.broken and not caught.value.timed_out


# -- connections opened ahead -----------------------------------------------------------------
def _accepted(server: Server) -> int:
    """The connections the server accepted, once its accept thread has caught up."""
    seen, quiet_since = server.connections, time.monotonic()
    while time.monotonic() - quiet_since < 0.2:
        time.sleep(0.02)
        if server.connections != seen:
            seen, quiet_since = server.connections, time.monotonic()
    return seen


def _concurrent_gets(pool: ConnectionPool, count: int) -> None:
    """``count`` GETs in flight at once, each holding its connection until all have one."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def get() -> None:
        try:
            barrier.wait(5)
            pool.request("GET", "/version")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=get) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not errors


def test_connections_opened_ahead_serve_a_burst_without_handshakes(serve, tls) -> None:
    context, ca, _ = tls
    answered = threading.Event()

    def slow(_: bytes) -> bytes:  # keep each request's connection busy until all have begun
        answered.wait(0.2)
        return json_answer({"kind": "Status"})

    server = serve(slow, context)
    pool = pool_for(_configuration(f"https://127.0.0.1:{server.port}", ca))
    assert pool.prewarm(6) == 6
    assert _accepted(server) == 6
    # The server's TLS 1.3 session tickets wait unread on each: still open, none opened again.
    assert pool.prewarm(6) == 0
    _concurrent_gets(pool, 6)
    assert _accepted(server) == 6  # the burst used them: no new connection, no handshake
    assert len(server.requests) == 6


def test_an_idle_tls_connection_the_server_closed_or_wrote_to_is_not_reused(serve, tls) -> None:
    context, ca, _ = tls
    server = serve(lambda _: json_answer({"kind": "Status"}), context)
    pool = pool_for(_configuration(f"https://127.0.0.1:{server.port}", ca))
    pool.request("GET", "/version")
    server.close_idle()  # a keep-alive timeout on the server's side
    assert json.loads(pool.request("GET", "/version").body) == {"kind": "Status"}
    assert _accepted(server) == 2
    for sock in server.open:  # bytes nobody asked for on the idle connection
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    _accepted(server)  # (waits a moment: the bytes arrive)
    assert json.loads(pool.request("GET", "/version").body) == {"kind": "Status"}
    assert _accepted(server) == 3
    assert len(server.requests) == 3


def test_connections_opened_ahead_are_bounded_by_the_pool(serve) -> None:
    server = serve(lambda _: json_answer({}))
    configuration = _configuration(f"http://127.0.0.1:{server.port}")
    pool = pool_for(configuration, max_size=3)
    assert pool.prewarm(10) == 3
    assert _accepted(server) == 3


def test_opening_ahead_stops_at_the_first_failure_and_raises_nothing() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    pool = _pool(port)
    assert pool.prewarm(20) == 0
    with pytest.raises(HttpError, match=f"connecting to 127.0.0.1:{port}"):
        pool.request("GET", "/", timeout=2)  # the request reports what opening met


def test_opening_ahead_to_a_server_that_never_finishes_tls_gives_up_in_time(tls) -> None:
    _, ca, _ = tls
    listener = socket.create_server(("127.0.0.1", 0))  # accepts, never speaks TLS
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    try:
        pool = pool_for(_configuration(f"https://127.0.0.1:{listener.getsockname()[1]}", ca))
        began = time.monotonic()
        assert pool.prewarm(16, timeout=0.5) == 0
        assert time.monotonic() - began < 3
    finally:
        listener.close()
        for sock in accepted:
            sock.close()


# -- Transport over the pool -------------------------------------------------------------------
def _transport(server: Server, token: str = "") -> Transport:
    api = ApiClient(_configuration(f"http://127.0.0.1:{server.port}", token=token))
    transport = Transport(api, qps=0)
    assert transport.pool is not None
    return transport


def test_transport_sends_json_with_the_current_token(serve) -> None:
    server = serve(lambda _: json_answer({"kind": "Status", "status": "Success"}, "201 Created"))
    transport = _transport(server, token="first")
    body = {"kind": "Binding", "target": {"name": "node-1"}}
    assert transport.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body=body) == {
        "kind": "Status",
        "status": "Success",
    }
    transport.api_client.configuration.api_key["authorization"] = "second"  # token rotated
    transport.request("GET", "/api/v1/pods", [("fieldSelector", "spec.nodeName="), ("limit", 5)])
    first, second = server.requests
    head, _, payload = first.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/v1/namespaces/ns/pods/p/binding HTTP/1.1\r\n")
    assert header(first, "Authorization") == "Bearer first"
    assert header(first, "Content-Type") == "application/json"
    assert header(first, "User-Agent")
    assert json.loads(payload) == body
    assert second.startswith(b"GET /api/v1/pods?fieldSelector=spec.nodeName%3D&limit=5 HTTP/1.1")
    assert header(second, "Authorization") == "Bearer second"
    assert header(second, "Content-Type") is None  # no body


def test_transport_error_carries_the_status_reason_and_message(serve) -> None:
    status = {
        "kind": "Status",
        "status": "Failure",
        "reason": "Conflict",
        "message": 'pods "p" is already assigned to node "n1"',
        "code": 409,
    }
    server = serve(lambda _: json_answer(status, "409 Conflict"))
    with pytest.raises(ApiError) as raised:
        _transport(server).request("POST", "/api/v1/namespaces/ns/pods/p/binding", body={})
    assert (raised.value.status, raised.value.reason) == (409, "Conflict")
    assert raised.value.message == 'pods "p" is already assigned to node "n1"'

    plain = serve(lambda _: b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy")
    with pytest.raises(ApiError) as raised:
        _transport(plain).request("GET", "/api/v1/nodes")
    assert (raised.value.status, raised.value.reason, raised.value.message) == (
        503,
        "Service Unavailable",
        "busy",
    )


def test_transport_without_an_answer_is_an_api_error_naming_the_request() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    transport = Transport(ApiClient(_configuration(f"http://127.0.0.1:{port}")), qps=0)
    with pytest.raises(ApiError, match=r"POST /api/v1/namespaces/ns/pods/p/binding: connecting"):
        transport.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body={})


def test_transport_guard_keeps_the_request_from_being_sent(serve) -> None:
    server = serve(lambda _: json_answer({}))
    with pytest.raises(ApiError) as raised:
        _transport(server).request("POST", "/bind", body={}, guard=lambda: False)
    assert raised.value.reason == "NotSent"
    assert server.requests == []


def test_a_proxy_in_the_configuration_is_used(serve) -> None:
    """A plain-HTTP apiserver behind an HTTP proxy: the request goes to the proxy, absolute."""
    proxy = serve(lambda _: json_answer({"via": "proxy"}))
    configuration = _configuration("http://apiserver.invalid:8080")
    configuration.proxy = f"http://127.0.0.1:{proxy.port}"
    assert Transport(ApiClient(configuration), qps=0).request("GET", "/version") == {"via": "proxy"}
    assert proxy.requests[0].startswith(b"GET http://apiserver.invalid:8080/version HTTP/1.1")


def test_a_host_with_a_path_prefix_keeps_it(serve) -> None:
    server = serve(lambda _: json_answer({}))
    pool = pool_for(_configuration(f"http://127.0.0.1:{server.port}/k8s/clusters/c-1/"))
    assert pool is not None
    pool.request("GET", "/api/v1/nodes")
    assert server.requests[0].startswith(b"GET /k8s/clusters/c-1/api/v1/nodes HTTP/1.1\r\n")
