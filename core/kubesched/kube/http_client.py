"""A small HTTP/1.1 keep-alive client for the scheduler's short JSON requests.

Every pod the scheduler places costs one Binding POST. Through the official client (urllib3 and
``http.client``, headers parsed by the ``email`` package) one such request took about 0.9 ms of
CPU here; written as one ``sendall`` and read back with a few byte splits it takes about 0.2 ms
(docs/benchmarks.md). This module does only that: persistent TLS (or plain) connections to one
server, a request of known length, an answer framed by ``Content-Length``, chunked encoding or
the connection's end. Watches, proxies and anything unusual stay on the official client
(:func:`pool_for` says when this client cannot stand in for it).
"""

from __future__ import annotations

import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ConnectionPool", "HttpError", "Response", "pool_for"]

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
_READ_SIZE = 65536
#: Answers without a body whatever their headers say (RFC 9112 §6.3).
_NO_BODY = frozenset({204, 304})


class HttpError(OSError):
    """The exchange failed: no connection, a broken one, a timeout or a malformed answer."""


@dataclass(slots=True)
class Response:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes


class _Connection:
    """One socket and the bytes read past the last answer."""

    __slots__ = ("answered", "rest", "reused", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rest = b""
        #: It served a request before this one (the server may have closed it since).
        self.reused = False
        #: Bytes of the current request's answer have arrived.
        self.answered = False

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def dropped(self) -> bool:
        """Whether the server has closed (or written to) this idle connection: readable with no
        request outstanding means an end of stream or bytes nobody asked for."""
        poller = select.poll()
        poller.register(self.sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))

    def _read_more(self) -> bytes:
        chunk = self.sock.recv(_READ_SIZE)
        if not chunk:
            raise HttpError("the server closed the connection")
        self.answered = True
        return chunk

    def exchange(self, request: bytes, method: str) -> tuple[Response, bool]:
        """Send ``request``; the answer and whether the connection can be used again."""
        self.answered = False
        self.sock.sendall(request)
        buffer = self.rest
        while (end := buffer.find(_HEADER_END)) < 0:
            buffer += self._read_more()
            if len(buffer) > 1 << 20:
                raise HttpError("answer headers longer than 1 MiB")
        lines = buffer[:end].decode("latin-1").split("\r\n")
        version, _, rest_of_line = lines[0].partition(" ")
        code, _, reason = rest_of_line.partition(" ")
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise HttpError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        buffer = buffer[end + 4 :]
        keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
        if method == "HEAD" or status in _NO_BODY or 100 <= status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body, buffer = self._read_chunked(buffer)
        elif (length := headers.get("content-length")) is not None:
            if not length.isdigit():
                raise HttpError(f"bad Content-Length {length!r}")
            size = int(length)
            while len(buffer) < size:
                buffer += self._read_more()
            body, buffer = buffer[:size], buffer[size:]
        else:  # framed by the end of the connection
            parts = [buffer]
            while chunk := self.sock.recv(_READ_SIZE):
                parts.append(chunk)
            body, buffer, keep = b"".join(parts), b"", False
        self.rest = buffer
        return Response(status, reason, headers, body), keep

    def _read_chunked(self, buffer: bytes) -> tuple[bytes, bytes]:
        parts: list[bytes] = []
        while True:
            while (line_end := buffer.find(b"\r\n")) < 0:
                buffer += self._read_more()
            size_text = buffer[:line_end].split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HttpError(f"bad chunk size {size_text[:20]!r}") from None
            buffer = buffer[line_end + 2 :]
            if size == 0:
                # Trailers (none from the apiserver), then the empty line that ends the body.
                while (trailer_end := buffer.find(b"\r\n")) != 0:
                    if trailer_end < 0:
                        buffer += self._read_more()
                    else:
                        buffer = buffer[trailer_end + 2 :]
                return b"".join(parts), buffer[2:]
            while len(buffer) < size + 2:
                buffer += self._read_more()
            parts.append(buffer[:size])
            buffer = buffer[size + 2 :]


class ConnectionPool:
    """Keep-alive connections to one server, shared by threads.

    A request takes an idle connection (the most recently used, whose TLS session is warm) or
    opens one; at most ``max_idle`` are kept between requests. A request that fails on a
    connection that had served before, before any answer came, is sent once more on a new
    connection: the server may have closed the idle one (its keep-alive timeout) as we wrote.
    An idle connection the server already closed is noticed before use and dropped.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        path_prefix: str = "",
        max_idle: int = 32,
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.server_hostname = server_hostname or host
        self.path_prefix = path_prefix.rstrip("/")
        self.max_idle = max_idle
        authority = f"[{host}]" if ":" in host else host
        default_port = 443 if ssl_context is not None else 80
        self.authority = authority if port == default_port else f"{authority}:{port}"
        self.default_headers = dict(default_headers or {})
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        #: Connections opened, and requests sent a second time (after a closed kept-alive one).
        self.opened = 0
        self.retried = 0

    def _open(self, timeout: float) -> _Connection:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.ssl_context is not None:
                sock = self.ssl_context.wrap_socket(sock, server_hostname=self.server_hostname)
        except (OSError, ssl.SSLError) as exc:
            raise HttpError(f"connecting to {self.authority}: {exc}") from exc
        with self._lock:
            self.opened += 1
        return _Connection(sock)

    def _take(self, timeout: float) -> _Connection:
        """An idle connection the server has not closed, or a new one."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._open(timeout)
            if connection.dropped():  # closed while idle (the server's keep-alive timeout)
                connection.close()
                continue
            connection.sock.settimeout(timeout)
            return connection

    def _give_back(self, connection: _Connection) -> None:
        connection.reused = True
        with self._lock:
            if len(self._idle) < self.max_idle:
                self._idle.append(connection)
                return
        connection.close()

    def request(
        self,
        method: str,
        target: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        timeout: float = 30.0,
    ) -> Response:
        """Send one request; ``target`` is the path and query, already encoded."""
        lines = [f"{method} {self.path_prefix}{target} HTTP/1.1", f"Host: {self.authority}"]
        lines.extend(f"{k}: {v}" for k, v in self.default_headers.items())
        if headers:
            lines.extend(f"{k}: {v}" for k, v in headers.items())
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(body)}")
        request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        for attempt in (1, 2):
            # The second attempt always on a new connection: the other idle ones are as old.
            connection = self._take(timeout) if attempt == 1 else self._open(timeout)
            began = time.monotonic()
            try:
                response, keep = connection.exchange(request, method)
            except (OSError, ValueError) as exc:
                log.debug(
                    "%s %s: %s after %.3fs (%s connection, answer %s)",
                    method,
                    target,
                    exc,
                    time.monotonic() - began,
                    "reused" if connection.reused else "new",
                    "begun" if connection.answered else "not begun",
                )
                connection.close()
                stale = connection.reused and not connection.answered
                if attempt == 1 and stale and not isinstance(exc, TimeoutError):
                    self.retried += 1
                    continue  # a kept-alive connection the server had closed: once more
                if isinstance(exc, HttpError):
                    raise
                raise HttpError(f"{method} {target}: {type(exc).__name__}: {exc}") from exc
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    '"%s %s" %d in %.3fs', method, target, response.status, time.monotonic() - began
                )
            if keep:
                self._give_back(connection)
            else:
                connection.close()
            return response
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def pool_for(configuration: Any, max_idle: int = 32) -> ConnectionPool | None:
    """A pool speaking to ``configuration.host`` (a ``kubernetes.client.Configuration``) with
    its TLS settings, or ``None`` when it asks for what this client does not do (a proxy, a
    host name to assert other than the server's, socket options): then the official client
    carries every request."""
    url = urlsplit(configuration.host or "")
    if url.scheme not in ("http", "https") or not url.hostname:
        return None
    if getattr(configuration, "proxy", None) or getattr(configuration, "socket_options", None):
        return None
    assert_hostname = getattr(configuration, "assert_hostname", None)
    if isinstance(assert_hostname, str) and assert_hostname:
        return None
    context: ssl.SSLContext | None = None
    if url.scheme == "https":
        if configuration.verify_ssl:
            context = ssl.create_default_context(
                cafile=configuration.ssl_ca_cert or None,
                cadata=getattr(configuration, "ca_cert_data", None) or None,
            )
            if assert_hostname is False:
                context.check_hostname = False
        else:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    return ConnectionPool(
        url.hostname,
        url.port or (443 if url.scheme == "https" else 80),
        ssl_context=context,
        server_hostname=getattr(configuration, "tls_server_name", None) or None,
        path_prefix=url.path,
        max_idle=max_idle,
    )
