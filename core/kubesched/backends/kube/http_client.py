"""The scheduler's requests to one server, over urllib3's connection pool used directly.

urllib3 is the library the official client already stands on. Its pool keeps what matters
about connections (TLS with the configuration's CA, client certificate, host name checks and
proxy; connections whose server closed them or wrote to them while idle dropped before
reuse); what goes over a connection is :mod:`.http_exchange`'s (the request in one write, the
answer framed and capped; measured four times cheaper than ``urlopen``), except for watches,
which are urllib3's streamed answers. On top, the rules a scheduler needs that no
general-purpose client has:

- nothing is resent behind the caller's back: a POST or PATCH goes out once; only a GET is
  tried again, once, when a kept-alive connection turns out closed before any answer came;
- a **deadline**, not a per-read timeout: a watchdog thread cuts the connection when it passes,
  so a peer that drips one byte at a time cannot hold a thread longer than the caller allowed;
- caps on an answer's head and body and on a streamed line, checked before the bytes are kept
  (a Content-Length over the cap is refused before anything is read);
- header values with CR, LF or NUL, or not Latin-1, are refused before anything is sent;
- :class:`HttpError` says whether the request may have reached the server (``sent``): a write
  whose outcome is unknown must be resolved by reading, never by sending it again.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)
from urllib3.exceptions import (
    HTTPError as Urllib3Error,
)
from urllib3.util.retry import Retry
from urllib3.util.wait import wait_for_read

from kubesched.backends.kube.http_exchange import (
    Answer,
    ClosedEarly,
    MalformedAnswer,
    encode_request,
    read_answer,
)

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_LINE_BYTES",
    "ConnectionPool",
    "HttpError",
    "Response",
    "check_header",
    "pool_for",
]

log = logging.getLogger(__name__)

#: The largest answer body kept by default: a list page of 500 objects is a few MiB.
MAX_BODY_BYTES = 64 << 20
#: The largest line of a streamed answer (one watch event: an object is at most 1.5 MiB in etcd).
MAX_LINE_BYTES = 16 << 20
_READ_SIZE = 65536
_IDEMPOTENT = frozenset({"GET", "HEAD"})
#: TLS records read from an idle connection that carry no data (session tickets) before it is
#: judged anyway: a server that keeps sending them is not one to reuse.
_IDLE_RECORDS = 8
_BAD_VALUE = re.compile("[\r\n\0]")
_BAD_NAME = re.compile("[\r\n\0: ]")


class HttpError(OSError):
    """The exchange failed: no connection, a broken one, the deadline, or a malformed answer.

    ``sent`` is False only when the request cannot have reached the server (no connection was
    made, or a header value was refused before sending)."""

    def __init__(
        self, message: str, *, sent: bool = True, timed_out: bool = False, broken: bool = False
    ) -> None:
        super().__init__(message)
        self.sent = sent
        #: The deadline or the read timeout ended it.
        self.timed_out = timed_out
        #: The connection was closed or reset under the exchange (client-go's "probable EOF").
        self.broken = broken


@dataclass(slots=True)
class Response:
    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


def check_header(name: str, value: str) -> None:
    """Refuse a header value that would split the request (CR, LF) or that servers cut (NUL)."""
    if _BAD_VALUE.search(value) or _BAD_NAME.search(name):
        raise HttpError(
            f"header {name!r}: its value contains CR, LF or NUL; the request was not sent",
            sent=False,
        )


# -- the deadline watchdog ---------------------------------------------------------------------
class _Watchdog:
    """One daemon thread that shuts down the socket of each exchange whose deadline passed."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Exchange]] = []
        self._cond = threading.Condition()
        self._sequence = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, exchange: _Exchange) -> None:
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="http-deadlines", daemon=True
                )
                self._thread.start()
            heapq.heappush(self._heap, (exchange.deadline, next(self._sequence), exchange))
            if self._heap[0][2] is exchange:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    if self._heap:
                        self._cond.wait(self._heap[0][0] - time.monotonic())
                    else:
                        self._cond.wait()
                _, _, exchange = heapq.heappop(self._heap)
            exchange.expire()


_WATCHDOG = _Watchdog()
#: The exchange of the request this thread is sending (read by the connection classes).
_current = threading.local()


class _Exchange:
    """One request's deadline and the connection carrying it."""

    __slots__ = ("connection", "deadline", "done", "expired", "lock")

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.connection: HTTPConnection | None = None
        self.expired = False
        self.done = False
        self.lock = threading.Lock()

    def attach(self, connection: HTTPConnection) -> None:
        with self.lock:
            self.connection = connection
            if not self.expired:
                return
        _cut(connection)

    def expire(self) -> None:
        with self.lock:
            if self.done:
                return
            self.expired = True
            connection = self.connection
        if connection is not None:
            _cut(connection)

    def finish(self) -> None:
        with self.lock:
            self.done = True


def _cut(connection: HTTPConnection) -> None:
    """Shut the socket down under a thread blocked on it: its read or write returns at once."""
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _DeadlineMixin:
    """Hands the connection of each request to the sending thread's :class:`_Exchange`."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        exchange: _Exchange | None = getattr(_current, "exchange", None)
        if exchange is not None:
            exchange.attach(self)  # type: ignore[arg-type]
        super().request(*args, **kwargs)  # type: ignore[misc]


class _Connection(_DeadlineMixin, HTTPConnection):
    pass


class _TLSConnection(_DeadlineMixin, HTTPSConnection):
    @property
    def is_connected(self) -> bool:
        """Whether an idle connection may carry the next request. urllib3 drops one whose
        socket is readable (the server closed it, or wrote while nothing was asked); but a
        TLS 1.3 server sends its session tickets after the handshake, so a connection opened
        ahead and not used yet is readable too. Those records are read here (they are no
        answer); only a close or application data still drops the connection."""
        sock = self.sock
        if sock is None:
            return False
        if not wait_for_read(sock, timeout=0.0):
            return True
        if not isinstance(sock, ssl.SSLSocket):
            return False
        timeout = sock.gettimeout()
        try:
            sock.settimeout(0.0)
            for _ in range(_IDLE_RECORDS):
                try:
                    sock.recv(1)
                except ssl.SSLWantReadError:  # records without data (tickets) were read
                    if not wait_for_read(sock, timeout=0.0):
                        return True
                    continue
                return False  # b"" (the server closed it) or bytes nobody asked for
            return False
        except (OSError, ValueError):
            return False
        finally:
            try:
                sock.settimeout(timeout)
            except OSError:
                pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


# -- the pool ----------------------------------------------------------------------------------
class ConnectionPool:
    """Keep-alive connections to one server (urllib3's pool), shared by threads."""

    def __init__(
        self,
        pool: HTTPConnectionPool,
        *,
        path_prefix: str = "",
        default_headers: Mapping[str, str] | None = None,
    ) -> None:
        self.pool = pool
        self.path_prefix = path_prefix.rstrip("/")
        self.default_headers = dict(default_headers or {})
        self.authority = f"{pool.host}:{pool.port}"
        #: The ``Host`` of each request: the server's, or the absolute target's through a proxy.
        self.host_header = _host_header(pool, self.path_prefix)

    def _headers(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        merged = dict(self.default_headers)
        if headers:
            merged.update(headers)
        for name, value in merged.items():
            check_header(name, value)
        return merged

    def _open(
        self,
        method: str,
        target: str,
        headers: dict[str, str],
        body: bytes | None,
        exchange: _Exchange,
        read_timeout: float,
    ) -> urllib3.BaseHTTPResponse:
        remaining = exchange.deadline - time.monotonic()
        if remaining <= 0:
            raise HttpError(
                f"{method} {target}: the deadline passed before sending", sent=False, timed_out=True
            )
        retries: Retry | bool = False
        if method in _IDEMPOTENT:
            # A kept-alive connection the server closed as we wrote: a GET may go once more.
            retries = Retry(
                total=1, connect=0, read=1, status=0, other=0, redirect=False,
                allowed_methods=_IDEMPOTENT, raise_on_status=False, raise_on_redirect=False,
                respect_retry_after_header=False,
            )  # fmt: skip
        _current.exchange = exchange
        try:
            return self.pool.urlopen(
                method,
                self.path_prefix + target,
                body=body,
                headers=headers,
                retries=retries,
                redirect=False,
                assert_same_host=False,
                timeout=urllib3.Timeout(connect=remaining, read=min(read_timeout, remaining)),
                preload_content=False,
                decode_content=False,
                release_conn=False,
            )
        except urllib3.exceptions.MaxRetryError as exc:
            raise self._error(method, target, exc.reason or exc, exchange, True) from None
        except (Urllib3Error, OSError, ValueError) as exc:
            raise self._error(method, target, exc, exchange, True) from None
        finally:
            _current.exchange = None

    def _error(
        self, method: str, target: str, exc: BaseException, exchange: _Exchange, sent: bool
    ) -> HttpError:
        if isinstance(exc, HttpError):
            return exc
        if isinstance(exc, NewConnectionError | ConnectTimeoutError):
            reason = getattr(exc, "__cause__", None) or exc
            return HttpError(
                f"{method} {target}: connecting to {self.authority}: {reason}", sent=False
            )
        if exchange.expired:
            return HttpError(
                f"{method} {target}: no complete answer within the deadline",
                sent=sent,
                timed_out=True,
            )
        if isinstance(exc, ReadTimeoutError | TimeoutError):
            return HttpError(
                f"{method} {target}: the server did not answer in time", sent=sent, timed_out=True
            )
        if isinstance(exc, MalformedAnswer):
            return HttpError(f"{method} {target}: {exc}", sent=sent)
        if isinstance(exc, ProtocolError):
            return HttpError(
                f"{method} {target}: the connection broke: {exc}", sent=sent, broken=True
            )
        if isinstance(exc, ConnectionError):
            return HttpError(f"{method} {target}: {exc}", sent=sent, broken=True)
        return HttpError(f"{method} {target}: {type(exc).__name__}: {exc}", sent=sent)

    def request(
        self,
        method: str,
        target: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
        timeout: float = 30.0,
        deadline: float | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> Response:
        """Send one request; ``target`` is the path and query, already encoded. The answer must
        be complete by ``deadline`` (monotonic) or within ``timeout`` seconds, whichever is first.

        The exchange itself is :mod:`.http_exchange`'s, on a connection of urllib3's pool. A GET
        or HEAD whose kept-alive connection turns out closed before one byte of an answer came
        (the server's keep-alive timeout racing the request) is sent once more on a new
        connection; nothing else is ever sent twice.
        """
        limit = time.monotonic() + timeout
        exchange = _Exchange(limit if deadline is None else min(limit, deadline))
        merged = self._headers(headers)
        if body or method in ("POST", "PUT", "PATCH"):
            merged["Content-Length"] = str(len(body))
        try:
            data = encode_request(method, self.path_prefix + target, self.host_header, merged, body)
        except UnicodeEncodeError as exc:
            raise HttpError(
                f"{method} {target}: a header is not Latin-1 ({exc.reason}); the request was "
                "not sent",
                sent=False,
            ) from None
        _WATCHDOG.watch(exchange)
        began = time.monotonic()
        try:
            for attempt in range(2):
                connection, reused = self._connection(method, target, exchange)
                try:
                    answer = self._exchange(connection, data, method, exchange, timeout, max_body)
                except ClosedEarly as exc:
                    self._drop(connection)
                    if (
                        exc.nothing
                        and reused
                        and method in _IDEMPOTENT
                        and attempt == 0
                        and not exchange.expired  # cut at the deadline: no time for another
                    ):
                        continue
                    raise self._error(method, target, exc, exchange, True) from None
                except (MalformedAnswer, OSError) as exc:
                    self._drop(connection)
                    raise self._error(method, target, exc, exchange, True) from None
                if answer.reusable and not exchange.expired:
                    self.pool._put_conn(connection)
                else:
                    self._drop(connection)
                break
        finally:
            exchange.finish()
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                '"%s %s" %d in %.3fs', method, target, answer.status, time.monotonic() - began
            )
        return Response(answer.status, answer.reason, answer.headers, answer.body)

    def _connection(
        self, method: str, target: str, exchange: _Exchange
    ) -> tuple[HTTPConnection, bool]:
        """A connection from the pool, connected (the pool's idle ones are checked there), and
        whether it was open already. A failure here means nothing was sent."""
        remaining = exchange.deadline - time.monotonic()
        if remaining <= 0:
            raise HttpError(
                f"{method} {target}: the deadline passed before sending", sent=False, timed_out=True
            )
        try:
            connection: HTTPConnection = self.pool._get_conn()  # type: ignore[assignment]
        except (Urllib3Error, OSError) as exc:
            raise HttpError(f"{method} {target}: {exc}", sent=False) from None
        if connection.sock is not None:
            return connection, True
        connection.timeout = remaining
        try:
            connection.connect()
        except (Urllib3Error, OSError, ValueError) as exc:
            self._drop(connection)
            reason = getattr(exc, "__cause__", None) or exc
            raise HttpError(
                f"{method} {target}: connecting to {self.authority}: {reason}", sent=False
            ) from None
        return connection, False

    @staticmethod
    def _exchange(
        connection: HTTPConnection,
        data: bytes,
        method: str,
        exchange: _Exchange,
        read_timeout: float,
        max_body: int,
    ) -> Answer:
        exchange.attach(connection)  # from here the watchdog may cut it at the deadline
        sock = connection.sock
        if sock is None:  # cut as it was handed over
            raise ClosedEarly("the connection was cut at the deadline", nothing=False)
        remaining = exchange.deadline - time.monotonic()
        sock.settimeout(max(min(read_timeout, remaining), 0.001))
        sock.sendall(data)
        return read_answer(sock, method, max_body)

    def _drop(self, connection: HTTPConnection) -> None:
        """Close ``connection`` and give its slot back to the pool."""
        connection.close()
        self.pool._put_conn(connection)

    def _read_body(
        self, method: str, target: str, response: urllib3.BaseHTTPResponse, max_body: int
    ) -> bytes:
        if method == "HEAD" or response.status in (204, 304):
            return b""
        length = response.headers.get("content-length")
        if length is not None and length.strip().isdigit() and int(length) > max_body:
            raise HttpError(
                f"{method} {target}: the answer announces {int(length)} bytes, more than the "
                f"{max_body} allowed"
            )
        parts: list[bytes] = []
        size = 0
        while chunk := response.read(_READ_SIZE):
            size += len(chunk)
            if size > max_body:
                raise HttpError(f"{method} {target}: the answer is longer than {max_body} bytes")
            parts.append(chunk)
        return b"".join(parts)

    def stream(
        self,
        target: str,
        *,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 90.0,
        max_line: int = MAX_LINE_BYTES,
    ) -> tuple[Response, Iterator[bytes]]:
        """A streamed GET: its status and headers (the body read in full when not 2xx) and an
        iterator over the body's non-empty lines as they arrive."""
        exchange = _Exchange(time.monotonic() + connect_timeout + read_timeout)
        _WATCHDOG.watch(exchange)  # until the answer's headers have come
        try:
            response = self._open(
                "GET", target, self._headers(headers), None, exchange, read_timeout
            )
        finally:
            exchange.finish()
        if not 200 <= response.status <= 299:
            try:
                data = self._read_body("GET", target, response, MAX_BODY_BYTES)
            except (Urllib3Error, OSError, ValueError):
                data = b""
            response.close()
            response.release_conn()
            return Response(response.status, response.reason or "", response.headers, data), iter(
                ()
            )
        head = Response(response.status, response.reason or "", response.headers, b"")
        return head, self._lines(target, response, max_line)

    def _lines(
        self, target: str, response: urllib3.BaseHTTPResponse, max_line: int
    ) -> Iterator[bytes]:
        rest = b""
        clean = False
        try:
            while chunk := response.read1(_READ_SIZE):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                if len(rest) > max_line:
                    raise HttpError(f"GET {target}: a line longer than {max_line} bytes")
                for line in lines:
                    if len(line) > max_line:
                        raise HttpError(f"GET {target}: a line longer than {max_line} bytes")
                    if line:
                        yield line
            if rest:
                yield rest
            clean = True
        except (Urllib3Error, OSError, ValueError) as exc:
            if isinstance(exc, HttpError):
                raise
            raise HttpError(
                f"GET {target}: {type(exc).__name__}: {exc}",
                timed_out=isinstance(exc, ReadTimeoutError | TimeoutError),
                broken=isinstance(exc, ProtocolError | ConnectionError),
            ) from None
        finally:
            if not clean:
                response.close()
            response.release_conn()

    def prewarm(self, count: int, timeout: float = 10.0, threads: int = 8) -> int:
        """Have ``count`` connections open in the pool before they are needed (as many as it
        holds); returns how many were opened now.

        A scheduler that starts binds its backlog at once: otherwise each of its binding workers
        and event writers opens its connection in that first burst, a TLS handshake costing the
        scheduler and the apiserver milliseconds of CPU each (docs/benchmarks.md, "Connections
        opened ahead"). The first failure stops it: the requests that follow meet the same error
        and report it. Each connection has what is left of ``timeout`` seconds, and none is
        begun once they have passed, so a server that never answers costs about that."""
        queue = self.pool.pool
        if queue is None:
            return 0
        held: list[HTTPConnection] = []
        for _ in range(min(count, queue.qsize())):
            held.append(self.pool._get_conn(timeout=0))  # type: ignore[arg-type]
        closed = [c for c in held if getattr(c, "sock", None) is None]
        deadline = time.monotonic() + timeout
        opened = 0
        failed = threading.Event()
        lock = threading.Lock()
        #: Connections a worker is connecting at this moment: not handed back until it is done.
        busy: set[int] = set()
        abandoned = False

        def open_all(connections: list[HTTPConnection]) -> None:
            nonlocal opened
            for connection in connections:
                remaining = deadline - time.monotonic()
                if failed.is_set() or remaining <= 0:
                    return
                with lock:
                    if abandoned:
                        return
                    busy.add(id(connection))
                connection.timeout = remaining
                try:
                    connection.connect()
                    ok = True
                except (Urllib3Error, OSError, ValueError) as exc:
                    ok = False
                    if not failed.is_set():
                        failed.set()
                        log.debug("opening connections to %s ahead: %s", self.authority, exc)
                with lock:
                    busy.discard(id(connection))
                    late = abandoned
                    if ok and not late:
                        opened += 1
                if not ok or late:
                    connection.close()  # a late one is no longer the pool's: close it here
                if not ok:
                    return

        workers = [
            threading.Thread(
                target=open_all, args=(closed[i::threads],), name=f"connect-{i}", daemon=True
            )
            for i in range(min(threads, len(closed)))
        ]
        try:
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(max(deadline - time.monotonic(), 0) + 1)
        finally:
            with lock:
                abandoned = True
                late = set(busy)
            for connection in held:
                # A connection still being opened stays with its worker; its slot comes back.
                self.pool._put_conn(None if id(connection) in late else connection)
        return opened

    def close(self) -> None:
        self.pool.close()


def _host_header(pool: HTTPConnectionPool, path_prefix: str) -> str:
    """http.client's ``Host``: the absolute target's authority when there is one (a plain-HTTP
    request through a proxy), else the pool's host (IPv6 in brackets) and its port unless it
    is the scheme's default."""
    if path_prefix.startswith(("http://", "https://")):
        return urlsplit(path_prefix).netloc.rpartition("@")[2]
    host = pool.host.strip("[]")
    if ":" in host:
        host = f"[{host}]"
    default = 443 if pool.scheme == "https" else 80
    return host if pool.port in (None, default) else f"{host}:{pool.port}"


def _ssl_context(configuration: Any) -> ssl.SSLContext:
    if configuration.verify_ssl:
        context = ssl.create_default_context(
            cafile=configuration.ssl_ca_cert or None,
            cadata=getattr(configuration, "ca_cert_data", None) or None,
        )
    else:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file or None)
    return context


def pool_for(configuration: Any, max_size: int = 32) -> ConnectionPool:
    """A pool speaking to ``configuration.host`` (a ``kubernetes.client.Configuration``) with its
    TLS settings, proxy and socket options."""
    url = urlsplit(configuration.host or "")
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(
            f"cannot reach the apiserver at {configuration.host!r}: not an http(s) URL"
        )
    port = url.port or (443 if url.scheme == "https" else 80)
    prefix = url.path
    kwargs: dict[str, Any] = {"maxsize": max_size, "block": False, "retries": False}
    socket_options = getattr(configuration, "socket_options", None)
    if socket_options:
        kwargs["socket_options"] = socket_options
    if url.scheme == "https":
        context = _ssl_context(configuration)
        assert_hostname = getattr(configuration, "assert_hostname", None)
        if assert_hostname is False or isinstance(assert_hostname, str):
            context.check_hostname = False
        kwargs["ssl_context"] = context
        kwargs["assert_hostname"] = assert_hostname if configuration.verify_ssl else False
        if server_name := getattr(configuration, "tls_server_name", None):
            kwargs["server_hostname"] = server_name
    proxy = getattr(configuration, "proxy", None)
    if proxy:
        manager = urllib3.ProxyManager(
            proxy, proxy_headers=getattr(configuration, "proxy_headers", None)
        )
        manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
        manager.connection_pool_kw.update(kwargs)
        pool = manager.connection_from_host(url.hostname, port, url.scheme)
        if url.scheme == "http":  # a plain-HTTP request through a proxy names its server
            prefix = f"http://{url.netloc}{prefix}"
    elif url.scheme == "https":
        pool = _TLSPool(url.hostname, port, **kwargs)
    else:
        pool = _Pool(url.hostname, port, **kwargs)
    return ConnectionPool(pool, path_prefix=prefix)
