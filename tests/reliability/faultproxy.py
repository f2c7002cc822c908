"""A fault-injecting HTTP proxy between kubesched and kube-apiserver, on loopback only.

kubesched talks plain HTTP to the proxy (its kubeconfig's server is ``http://127.0.0.1:PORT``,
with no credentials); the proxy forwards every request to kube-apiserver over TLS with the
client certificate of the identity it was made for, so the apiserver sees the scheduler's own
least-privilege user and RBAC applies as usual. A TCP proxy could only delay, drop or cut
connections; seeing each HTTP request lets this one fail, delay, drop or hold one chosen request
(the Bind of one pod, the pods watch) and keep an audit log of every request and the answer the
client got: the bindings that were sent, per pod, and what the apiserver said to each.

Faults are :class:`Fault` rules matched in the order added; each applies ``times`` times (or
forever) and every wait it makes is bounded, so the proxy always stops. It listens on 127.0.0.1
only and is a test tool: it holds a client key and adds it to anyone's requests.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import re
import select
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

__all__ = ["BINDING", "Fault", "FaultProxy", "Record"]

#: The path of a pod's Binding subresource; groups: namespace, pod name.
BINDING = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding$")

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
}
#: The longest any fault holds a request or a stream (a bound on every wait).
MAX_HOLD_SECONDS = 120.0

ACTIONS = ("fail", "delay", "drop", "lose_reply", "hang", "hold", "silence", "before")


@dataclass
class Fault:
    """One rule: requests that match ``method``/``path`` (a regex, full match) and, when set,
    ``watch`` are given ``action``:

    - ``fail``: answer ``status`` with a Kubernetes ``Status`` body and ``headers`` (e.g.
      ``{"Retry-After": "2"}``); nothing is forwarded.
    - ``delay``: wait ``seconds``, then forward.
    - ``drop``: close the connection without an answer; nothing is forwarded.
    - ``lose_reply``: forward, then close the connection without passing the answer on (the
      apiserver did it, the client cannot know).
    - ``hang``: forward, then keep the client waiting ``seconds`` without an answer and close.
    - ``hold``: wait until :meth:`release` (at most ``seconds``), then forward.
    - ``silence``: forward a watch, pass its headers on, then nothing more for ``seconds``
      (the connection stays open), then close.
    - ``before``: call ``hook(match, body)`` (the path's regex match, the request body),
      then forward.

    ``times`` limits how many requests the rule applies to in all, ``times_per_path`` how many
    per distinct path (e.g. only the first Bind of each pod).
    """

    action: str
    path: str
    method: str | None = None
    watch: bool | None = None
    status: int = 500
    seconds: float = 0.0
    times: int | None = None
    times_per_path: int | None = None
    hook: Callable[[re.Match[str], bytes | None], None] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    name: str = ""
    #: How many requests it was applied to.
    hits: int = 0
    _pattern: re.Pattern[str] = field(init=False, repr=False)
    _gate: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _per_path: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fault action {self.action!r}; one of {', '.join(ACTIONS)}")
        self._pattern = re.compile(self.path)
        self.name = self.name or f"{self.action} {self.method or '*'} {self.path}"

    def release(self) -> None:
        """Let the requests a ``hold`` keeps (and any later ones) through."""
        self._gate.set()


@dataclass(frozen=True)
class Record:
    """One request: when it arrived and ended (monotonic seconds), the status the client got
    (0: no answer) and the one the apiserver gave (0: not forwarded, or no answer)."""

    started: float
    ended: float
    method: str
    path: str
    watch: bool
    status: int
    upstream: int = 0
    fault: str = ""

    def binding(self) -> tuple[str, str] | None:
        """(namespace, pod) for a Binding POST, else None."""
        match = BINDING.fullmatch(self.path)
        if self.method != "POST" or match is None:
            return None
        return match.group(1), match.group(2)


class _Closed(Exception):
    """The client went away, or the proxy is stopping."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    _upstream: http.client.HTTPSConnection | None = None

    # -- the request ---------------------------------------------------------------------------
    def _serve(self) -> None:
        proxy = self.server.proxy
        started = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        path, _, query = self.path.partition("?")
        watch = parse_qs(query).get("watch", [""])[0] in ("true", "1")
        fault, match = proxy._match(self.command, path, watch)
        status = 0
        self._upstream_status = 0
        try:
            status = self._apply(fault, match, body, watch)
        except (_Closed, OSError, http.client.HTTPException):
            self.close_connection = True
        finally:
            proxy._record(
                Record(
                    started,
                    time.monotonic(),
                    self.command,
                    path,
                    watch,
                    status,
                    self._upstream_status,
                    fault.name if fault else "",
                )
            )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

    def _apply(
        self, fault: Fault | None, match: re.Match[str] | None, body: bytes | None, watch: bool
    ) -> int:
        """Serve the request under ``fault``; the status the client got (0: none)."""
        action = fault.action if fault else ""
        if action == "fail":
            assert fault is not None
            return self._fail(fault.status, fault.headers)
        if action == "drop":
            self.close_connection = True
            return 0
        if action == "delay":
            assert fault is not None
            self._wait(fault.seconds, threading.Event())
        elif action == "hold":
            assert fault is not None
            self._wait(fault.seconds or MAX_HOLD_SECONDS, fault._gate)
        elif action == "before":
            assert fault is not None and fault.hook is not None and match is not None
            fault.hook(match, body)
        response = self._forward(body)
        if response is None:  # the apiserver is not there: as if the client had reached it
            self.close_connection = True
            return 0
        self._upstream_status = response.status
        if action == "lose_reply":
            response.read()
            self.close_connection = True
            return 0
        if action == "hang":
            assert fault is not None
            response.read()
            with contextlib.suppress(_Closed):
                self._wait(fault.seconds, threading.Event(), watch_client=True)
            self.close_connection = True
            return 0
        if watch and response.status == 200:
            silent = fault.seconds if action == "silence" and fault is not None else None
            return self._stream(response, silent)
        self._relay(response, response.read())
        return response.status

    # -- answers -------------------------------------------------------------------------------
    def _fail(self, status: int, headers: dict[str, str]) -> int:
        reason = http.client.responses.get(status, "Error")
        body = json.dumps(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": f"injected by the fault proxy: {status} {reason}",
                "reason": reason.replace(" ", ""),
                "code": status,
            }
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        return status

    def _relay(self, response: http.client.HTTPResponse, data: bytes) -> None:
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _stream(self, response: http.client.HTTPResponse, silent_seconds: float | None) -> int:
        """Pass a watch on as it arrives (chunked), or go silent for ``silent_seconds``.

        Returns 410 when the stream ended with a 410 Gone ``ERROR`` event (an expired
        resourceVersion), else 200.
        """
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        proxy = self.server.proxy
        upstream = self._upstream
        self.close_connection = True  # one watch per connection: simpler to end it cleanly
        stream = (self.path.partition("?")[0], self.connection, upstream, silent_seconds)
        proxy._streams.add(stream)
        try:
            if silent_seconds is not None:
                # Read and discard upstream (so the apiserver is never blocked) while the
                # client hears nothing; the connection stays open.
                deadline = time.monotonic() + min(silent_seconds, MAX_HOLD_SECONDS)
                upstream_sock = upstream.sock if upstream is not None else None
                while time.monotonic() < deadline and not proxy._closing.is_set():
                    readable, _, _ = select.select(
                        [s for s in (self.connection, upstream_sock) if s is not None], [], [], 0.2
                    )
                    if self.connection in readable and not self.connection.recv(1, socket.MSG_PEEK):
                        raise _Closed()
                    if upstream_sock is not None and upstream_sock in readable:
                        if not response.read1(65536):
                            break
                raise _Closed()
            status = 200
            while not proxy._closing.is_set():
                data = response.read1(65536)
                if not data:
                    break
                if b'"type":"ERROR"' in data and b'"code":410' in data:
                    status = 410
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return status
        finally:
            proxy._streams.discard(stream)
            self._close_upstream()

    # -- upstream ------------------------------------------------------------------------------
    def _forward(self, body: bytes | None) -> http.client.HTTPResponse | None:
        proxy = self.server.proxy
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        headers["Host"] = proxy.upstream_netloc
        if body is not None:
            headers["Content-Length"] = str(len(body))
        for attempt in (1, 2):
            fresh = self._upstream is None
            if fresh:
                self._upstream = http.client.HTTPSConnection(
                    proxy.upstream_host,
                    proxy.upstream_port,
                    context=proxy.tls,
                    timeout=proxy.upstream_timeout,
                )
            assert self._upstream is not None
            try:
                self._upstream.request(self.command, self.path, body=body, headers=headers)
                return self._upstream.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the apiserver closed while idle: the request never
                # reached it, so one retry on a fresh connection is safe.
                self._close_upstream()
                if fresh or attempt == 2:
                    return None
            except (OSError, http.client.HTTPException):
                self._close_upstream()
                return None
        return None

    def _close_upstream(self) -> None:
        if self._upstream is not None:
            self._upstream.close()
            self._upstream = None

    def _wait(self, seconds: float, gate: threading.Event, *, watch_client: bool = False) -> None:
        """Wait up to ``seconds`` (bounded) or until ``gate``; stop early when the proxy stops
        or, with ``watch_client``, when the client hangs up."""
        deadline = time.monotonic() + min(seconds, MAX_HOLD_SECONDS)
        closing = self.server.proxy._closing
        while not gate.is_set() and not closing.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if watch_client:
                readable, _, _ = select.select([self.connection], [], [], min(left, 0.2))
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    raise _Closed()
            else:
                gate.wait(min(left, 0.2))
        if closing.is_set():
            raise _Closed()

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self._close_upstream()

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the records say it all
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, proxy: FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-answer is part of the game here


class FaultProxy:
    """The proxy for one identity; :meth:`start` it, give kubesched :meth:`kubeconfig`."""

    def __init__(self, kubeconfig: Path, upstream_timeout: float = 60.0) -> None:
        document = yaml.safe_load(Path(kubeconfig).read_text())
        contexts = {c["name"]: c["context"] for c in document["contexts"]}
        context = contexts[document["current-context"]]
        cluster = {c["name"]: c["cluster"] for c in document["clusters"]}[context["cluster"]]
        user = {u["name"]: u["user"] for u in document["users"]}[context["user"]]
        server = urlsplit(cluster["server"])
        self.upstream_host = server.hostname or "127.0.0.1"
        self.upstream_port = server.port or 443
        self.upstream_netloc = server.netloc
        self.upstream_timeout = upstream_timeout
        self._dir = tempfile.TemporaryDirectory(prefix="kubesched-faultproxy-")
        cert = Path(self._dir.name, "client.crt")
        key = Path(self._dir.name, "client.key")
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        key.chmod(0o600)
        self.tls = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
        self.tls.load_cert_chain(cert, key)
        self._faults: list[Fault] = []
        self._records: list[Record] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._streams: set[
            tuple[str, socket.socket, http.client.HTTPSConnection | None, float | None]
        ] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="fault-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the proxy first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._closing.set()
        for fault in self.faults():
            fault.release()
        self.cut_watches(silent=True)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._dir.cleanup()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig that reaches the apiserver through this proxy (plain HTTP, loopback)."""
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "via-fault-proxy", "cluster": {"server": self.url}}],
            "users": [{"name": "via-fault-proxy", "user": {}}],
            "contexts": [
                {
                    "name": "via-fault-proxy",
                    "context": {"cluster": "via-fault-proxy", "user": "via-fault-proxy"},
                }
            ],
            "current-context": "via-fault-proxy",
        }
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path

    # -- faults --------------------------------------------------------------------------------
    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        fault.release()
        with self._lock:
            if fault in self._faults:
                self._faults.remove(fault)

    def faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def _match(
        self, method: str, path: str, watch: bool
    ) -> tuple[Fault | None, re.Match[str] | None]:
        with self._lock:
            for fault in self._faults:
                if fault.method is not None and fault.method != method:
                    continue
                if fault.watch is not None and fault.watch != watch:
                    continue
                if fault.times is not None and fault.hits >= fault.times:
                    continue
                match = fault._pattern.fullmatch(path)
                if match is None:
                    continue
                seen = fault._per_path.get(path, 0)
                if fault.times_per_path is not None and seen >= fault.times_per_path:
                    continue
                fault._per_path[path] = seen + 1
                fault.hits += 1
                return fault, match
        return None, None

    def cut_watches(self, path: str = ".*", *, silent: bool = False) -> int:
        """Cut the open watches whose path matches, as a dropped connection would; how many.
        Watches kept silent by a fault are left alone unless ``silent``."""
        pattern = re.compile(path)
        cut = 0
        for stream_path, client, upstream, silence in list(self._streams):
            if not pattern.fullmatch(stream_path) or (silence is not None and not silent):
                continue
            for sock in (client, upstream.sock if upstream is not None else None):
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
            cut += 1
        return cut

    # -- the audit log -------------------------------------------------------------------------
    def _record(self, record: Record) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> list[Record]:
        with self._lock:
            return list(self._records)

    def bindings(self, namespace: str | None = None) -> dict[str, list[Record]]:
        """Every Binding POST, by pod name (in ``namespace`` when given), in arrival order."""
        out: dict[str, list[Record]] = {}
        for record in self.records():
            target = record.binding()
            if target is None or (namespace is not None and target[0] != namespace):
                continue
            out.setdefault(target[1], []).append(record)
        return out
