"""The scheduler's HTTP endpoints: ``/healthz``, ``/livez``, ``/readyz`` and ``/metrics``.

- ``GET /healthz`` and ``GET /livez``: 200 ``ok`` while ``healthy()``, else 500 naming
  ``health_reason()``.
- ``GET /readyz``: 200 ``ok`` once ``ready()``, else 503 with a one-line reason.
- ``GET /metrics``: 200 with ``metrics()`` in the Prometheus text format, once
  ``authorize(authorization_header)`` allowed it (401/403 otherwise; open when no authorizer).
- Anything else: 404 (405 for methods other than GET and HEAD on these paths).

Built to stay up whoever connects: one thread reads every connection without blocking (a
selector), so slow or half-sent requests cost a buffer each, never a thread; a request head
must arrive whole within ``request_timeout`` and fit in :data:`MAX_HEADER_BYTES`; no request
body is accepted; at most ``max_connections`` are kept (the oldest is dropped for a new one);
complete requests are answered by a bounded pool of ``workers`` threads, one response per
connection. With an ``ssl_context`` it serves HTTPS (the handshake is non-blocking too).

Requests are logged at debug level only. A probe that raises answers 500 naming the error, so
a bug in a probe shows up as unhealthy rather than as a dropped connection.
"""

from __future__ import annotations

import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

from kubesched.engine.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE

__all__ = ["MAX_HEADER_BYTES", "HealthServer"]

log = logging.getLogger(__name__)

_TEXT = "text/plain; charset=utf-8"
#: The longest request head (request line and headers) accepted.
MAX_HEADER_BYTES = 16384
_PATHS = ("/healthz", "/livez", "/readyz", "/metrics")


class _Connection:
    __slots__ = ("buffer", "deadline", "handshaking", "peer", "sock")

    def __init__(self, sock: socket.socket, peer: str, deadline: float, tls: bool) -> None:
        self.sock = sock
        self.peer = peer
        self.deadline = deadline
        self.buffer = bytearray()
        self.handshaking = tls


class HealthServer:
    """Serves the health, readiness and metrics endpoints (see the module).

    ``ready``, ``healthy`` and ``metrics`` are called once per request from a worker thread;
    when not ready, ``reason()`` gives the 503's one-line text."""

    def __init__(
        self,
        address: str,
        port: int,
        *,
        ready: Callable[[], bool],
        metrics: Callable[[], bytes],
        healthy: Callable[[], bool] = lambda: True,
        reason: Callable[[], str] = lambda: "not ready",
        health_reason: Callable[[], str] = lambda: "",
        authorize: Callable[[str | None], tuple[int, str]] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        request_timeout: float = 5.0,
        max_connections: int = 1024,
        workers: int = 4,
    ) -> None:
        self._address = address
        self._requested_port = port
        self._ready = ready
        self._metrics = metrics
        self._healthy = healthy
        self._reason = reason
        self._health_reason = health_reason
        self._authorize = authorize
        self._ssl = ssl_context
        self.request_timeout = request_timeout
        self.max_connections = max_connections
        self._workers = workers
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._stopping = threading.Event()
        self._connections: dict[int, _Connection] = {}

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and serve; port 0 picks a free port (see :attr:`port`)."""
        if self._listener is not None:
            raise RuntimeError("HealthServer is already started")
        family = socket.AF_INET6 if ":" in self._address else socket.AF_INET
        # SO_REUSEADDR (create_server's default): no failure on a port left in TIME_WAIT.
        listener = socket.create_server(
            (self._address, self._requested_port), family=family, backlog=128
        )
        listener.setblocking(False)
        self._listener = listener
        self._stopping.clear()
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="health-worker")
        self._thread = threading.Thread(
            target=self._serve, args=(listener,), name="health-server", daemon=True
        )
        self._thread.start()
        scheme = "https" if self._ssl is not None else "http"
        log.info(
            "serving /healthz, /readyz and /metrics on %s://%s:%d", scheme, self._address, self.port
        )

    @property
    def tls(self) -> bool:
        """Whether it serves HTTPS."""
        return self._ssl is not None

    @property
    def port(self) -> int:
        """The port being served (the one picked when asked for 0)."""
        if self._listener is None:
            return self._requested_port
        return int(self._listener.getsockname()[1])

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call more than once."""
        listener, thread, pool = self._listener, self._thread, self._pool
        self._listener = self._thread = self._pool = None
        if listener is None:
            return
        self._stopping.set()
        if thread is not None:
            thread.join(timeout=5)
        listener.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    # -- the selector loop ---------------------------------------------------------------------
    def _serve(self, listener: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ, None)
        try:
            while not self._stopping.is_set():
                for key, _ in selector.select(timeout=0.2):
                    if key.data is None:
                        self._accept(selector, listener)
                    else:
                        self._read(selector, key.data)
                self._expire(selector)
        finally:
            for connection in list(self._connections.values()):
                self._drop(selector, connection)
            selector.close()

    def _accept(self, selector: selectors.BaseSelector, listener: socket.socket) -> None:
        for _ in range(64):  # a burst, then back to the others
            try:
                sock, peer = listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: drop the oldest to make room
                log.warning("accepting a health connection failed: %s", exc)
                self._evict_oldest(selector)
                return
            if len(self._connections) >= self.max_connections:
                self._evict_oldest(selector)
            sock.setblocking(False)
            if self._ssl is not None:
                try:
                    sock = self._ssl.wrap_socket(
                        sock, server_side=True, do_handshake_on_connect=False
                    )
                except (OSError, ssl.SSLError):
                    sock.close()
                    continue
            connection = _Connection(
                sock,
                f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer),
                time.monotonic() + self.request_timeout,
                self._ssl is not None,
            )
            self._connections[sock.fileno()] = connection
            selector.register(sock, selectors.EVENT_READ, connection)

    def _evict_oldest(self, selector: selectors.BaseSelector) -> None:
        if self._connections:
            oldest = min(self._connections.values(), key=lambda c: c.deadline)
            self._drop(selector, oldest)

    def _expire(self, selector: selectors.BaseSelector) -> None:
        now = time.monotonic()
        for connection in [c for c in self._connections.values() if c.deadline <= now]:
            self._drop(selector, connection)

    def _forget(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        try:
            selector.unregister(connection.sock)
        except (KeyError, ValueError, OSError):
            pass
        self._connections.pop(id_of(connection), None)

    def _drop(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        self._forget(selector, connection)
        try:
            connection.sock.close()
        except OSError:
            pass

    def _read(self, selector: selectors.BaseSelector, connection: _Connection) -> None:
        sock = connection.sock
        try:
            if connection.handshaking:
                sock.do_handshake()  # type: ignore[attr-defined]
                connection.handshaking = False
            data = sock.recv(8192)
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except (OSError, ssl.SSLError):
            self._drop(selector, connection)
            return
        if not data:
            self._drop(selector, connection)
            return
        connection.buffer += data
        complete = b"\r\n\r\n" in connection.buffer
        if not complete and len(connection.buffer) <= MAX_HEADER_BYTES:
            return
        self._forget(selector, connection)
        pool = self._pool
        try:
            if pool is None:
                raise RuntimeError("stopped")
            pool.submit(self._respond, connection)
        except RuntimeError:  # stopping
            sock.close()

    # -- answering (worker threads) ------------------------------------------------------------
    def _respond(self, connection: _Connection) -> None:
        sock = connection.sock
        try:
            sock.setblocking(True)
            sock.settimeout(self.request_timeout)
            status, body, content_type, method, extra = self._answer(bytes(connection.buffer))
            head = [
                f"HTTP/1.1 {status.value} {status.phrase}",
                f"Content-Type: {content_type}",
                f"Content-Length: {len(body)}",
                "X-Content-Type-Options: nosniff",
                "Connection: close",
                *extra,
            ]
            payload = ("\r\n".join(head) + "\r\n\r\n").encode()
            sock.sendall(payload if method == "HEAD" else payload + body)
        except (OSError, ssl.SSLError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    def _answer(self, raw: bytes) -> tuple[HTTPStatus, bytes, str, str, list[str]]:
        head, found, _ = raw.partition(b"\r\n\r\n")
        if not found or len(head) > MAX_HEADER_BYTES:
            return (
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                b"request head too large\n",
                _TEXT,
                "GET",
                [],
            )
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return HTTPStatus.BAD_REQUEST, b"bad request line\n", _TEXT, "GET", []
        method, target, _ = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                return HTTPStatus.BAD_REQUEST, b"bad header line\n", _TEXT, method, []
            headers[name.strip().lower()] = value.strip()
        path = target.split("?", 1)[0]
        log.debug('%s "%s %s"', "health request", method, path)
        if path not in _PATHS:
            return HTTPStatus.NOT_FOUND, f"{path} not found\n".encode(), _TEXT, method, []
        if method not in ("GET", "HEAD"):
            body = f"{method} not allowed\n".encode()
            return HTTPStatus.METHOD_NOT_ALLOWED, body, _TEXT, method, ["Allow: GET"]
        if headers.get("content-length", "0") not in ("", "0") or "transfer-encoding" in headers:
            return (
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                b"no request body accepted\n",
                _TEXT,
                method,
                [],
            )
        try:
            return (*self._endpoint(path, headers), method, [])
        except Exception as e:
            log.exception("GET %s failed", path)
            text = f"{type(e).__name__}: {e}\n".encode()
            return HTTPStatus.INTERNAL_SERVER_ERROR, text, _TEXT, method, []

    def _endpoint(self, path: str, headers: dict[str, str]) -> tuple[HTTPStatus, bytes, str]:
        if path in ("/healthz", "/livez"):
            if self._healthy():
                return HTTPStatus.OK, b"ok\n", _TEXT
            reason = " ".join(str(self._health_reason() or "").split())
            text = f"unhealthy: {reason}\n" if reason else "unhealthy\n"
            return HTTPStatus.INTERNAL_SERVER_ERROR, text.encode(), _TEXT
        if path == "/readyz":
            if self._ready():
                return HTTPStatus.OK, b"ok\n", _TEXT
            reason = " ".join(str(self._reason() or "not ready").split())
            return HTTPStatus.SERVICE_UNAVAILABLE, f"{reason}\n".encode(), _TEXT
        if self._authorize is not None:
            code, why = self._authorize(headers.get("authorization"))
            if code != 200:
                return HTTPStatus(code), f"{why}\n".encode(), _TEXT
        return HTTPStatus.OK, self._metrics(), METRICS_CONTENT_TYPE


def id_of(connection: _Connection) -> int:
    """The key of ``connection`` in the server's table (its descriptor when registered)."""
    try:
        return connection.sock.fileno()
    except OSError:
        return -1
