"""The scheduler's HTTP endpoints: ``/healthz``, ``/readyz`` and ``/metrics``.

- ``GET /healthz``: 200 ``ok`` while ``healthy()``, else 500 naming ``health_reason()``.
- ``GET /readyz``: 200 ``ok`` once ``ready()``, else 503 with a one-line reason.
- ``GET /metrics``: 200 with ``metrics()`` in the Prometheus text format 0.0.4.
- Anything else: 404 (405 for methods other than GET and HEAD on these three paths).

Requests are logged at debug level only. A probe that raises answers 500 naming the error, so a
bug in a probe shows up as unhealthy rather than as a dropped connection.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE

__all__ = ["HealthServer"]

log = logging.getLogger(__name__)

_TEXT = "text/plain; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        server = self.server
        try:
            if path == "/healthz":
                if server.healthy():
                    self._reply(HTTPStatus.OK, b"ok\n")
                else:
                    reason = " ".join(str(server.health_reason() or "").split())
                    text = f"unhealthy: {reason}\n" if reason else "unhealthy\n"
                    self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, text.encode())
            elif path == "/readyz":
                if server.ready():
                    self._reply(HTTPStatus.OK, b"ok\n")
                else:
                    reason = " ".join(str(server.reason() or "not ready").split())
                    self._reply(HTTPStatus.SERVICE_UNAVAILABLE, f"{reason}\n".encode())
            elif path == "/metrics":
                self._reply(HTTPStatus.OK, server.metrics(), METRICS_CONTENT_TYPE)
            else:
                self._reply(HTTPStatus.NOT_FOUND, f"{path} not found\n".encode())
        except Exception as e:
            log.exception("GET %s failed", path)
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(e).__name__}: {e}\n".encode())

    do_HEAD = do_GET

    def _other(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/readyz", "/metrics"):
            self._reply(
                HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command} not allowed\n".encode(), allow="GET"
            )
        else:
            self._reply(HTTPStatus.NOT_FOUND, f"{path} not found\n".encode())

    do_POST = do_PUT = do_DELETE = do_PATCH = _other

    def _reply(
        self, status: HTTPStatus, body: bytes, content_type: str = _TEXT, allow: str = ""
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Probes must not fail because a previous instance left the port in TIME_WAIT.
    allow_reuse_address = True
    # socketserver's default backlog of 5 makes a burst of probes wait for SYN retries.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        *,
        ready: Callable[[], bool],
        metrics: Callable[[], bytes],
        healthy: Callable[[], bool],
        reason: Callable[[], str],
        health_reason: Callable[[], str] = lambda: "",
    ) -> None:
        self.ready = ready
        self.metrics = metrics
        self.healthy = healthy
        self.reason = reason
        self.health_reason = health_reason
        super().__init__(address, _Handler)


class HealthServer:
    """Serves the health, readiness and metrics endpoints from a daemon thread.

    ``ready``, ``healthy`` and ``metrics`` are called once per request, from the request's
    thread; when not ready, ``reason()`` gives the 503's one-line text (e.g. "waiting for the
    informer caches to sync", "not the leader").
    """

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
    ) -> None:
        self._address = address
        self._health_reason = health_reason
        self._requested_port = port
        self._ready = ready
        self._metrics = metrics
        self._healthy = healthy
        self._reason = reason
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind and serve; port 0 picks a free port (see :attr:`port`)."""
        if self._server is not None:
            raise RuntimeError("HealthServer is already started")
        self._server = _Server(
            (self._address, self._requested_port),
            ready=self._ready,
            metrics=self._metrics,
            healthy=self._healthy,
            reason=self._reason,
            health_reason=self._health_reason,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="health-server",
            daemon=True,
        )
        self._thread.start()
        log.info("serving /healthz, /readyz and /metrics on %s:%d", self._address, self.port)

    @property
    def port(self) -> int:
        """The port being served (the one picked when asked for 0)."""
        if self._server is None:
            return self._requested_port
        return int(self._server.server_address[1])

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call more than once."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)
