"""Raw JSON requests to the apiserver with the official client's configuration and auth.

The client's generated API methods validate every argument and build model objects for every
response; the scheduler needs neither, so it sends JSON and reads JSON. Every
request (Bindings, status patches, events, lists, watches) goes through :mod:`.http_client`
(urllib3's connection pool used directly) with the TLS settings, proxy and credentials of the
client's ``Configuration``; the credentials header is read per request (trimmed), so a
refreshed or rotated token is used at once. A token bucket enforces
``clientConnection.qps``/``burst`` like client-go's rate limiter, and 429 or 5xx answers that
carry ``Retry-After`` are tried again as client-go does (at most :data:`MAX_RETRIES` times,
each try through the rate limiter and the write guard again).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from kubernetes.client import ApiClient

from kubesched.backends.kube.http_client import (
    MAX_BODY_BYTES,
    MAX_LINE_BYTES,
    ConnectionPool,
    HttpError,
    pool_for,
)

__all__ = [
    "MAX_RETRIES",
    "NOT_SENT",
    "OUTCOME_UNKNOWN",
    "ApiError",
    "TokenBucket",
    "Transport",
    "retry_after_seconds",
]

log = logging.getLogger(__name__)

#: ``ApiError.reason`` of a request that a guard kept from being sent.
NOT_SENT = "NotSent"
#: ``ApiError.reason`` of a write that may have reached the server with no answer back: what it
#: did must be read back, never found out by sending it again.
OUTCOME_UNKNOWN = "OutcomeUnknown"
#: client-go's ``maxRetries`` for a request answered 429/5xx with ``Retry-After``.
MAX_RETRIES = 10
#: The longest one ``Retry-After`` wait is honoured for (longer ones end the request).
MAX_RETRY_AFTER_SECONDS = 30.0


class ApiError(Exception):
    """A non-2xx answer, or no answer, from the apiserver."""

    def __init__(
        self, status: int, reason: str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message
        #: The answer's ``Retry-After`` in seconds, when it had one.
        self.retry_after = retry_after


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` saved up; ``take`` waits for one."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = qps
        self.burst = max(burst, 1)
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """client-go's ``retryAfterSeconds``: a whole number of seconds, else no wait was asked."""
    value = (headers.get("retry-after") or "").strip()
    if not value.isdigit():
        return None
    return float(int(value))


def _error_from_answer(
    status: int, reason: str, body: bytes | str | None, retry_after: float | None = None
) -> ApiError:
    """The ``ApiError`` of a non-2xx answer: the reason and message of its ``Status`` body."""
    text = body.decode(errors="replace") if isinstance(body, bytes) else (body or "")
    try:
        answer = json.loads(text)
        return ApiError(status, answer.get("reason", ""), answer.get("message", text), retry_after)
    except (ValueError, AttributeError):
        return ApiError(status, reason, text[:500] or f"HTTP {status}", retry_after)


#: Characters left as they are in a request path (RFC 3986 pchar and "/").
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def _retryable(status: int) -> bool:
    """client-go's ``checkWait``: only 429 and 5xx answers may ask for a retry."""
    return status == 429 or status >= 500


class Transport:
    """JSON in, JSON out, with an ``ApiClient``'s configuration."""

    def __init__(
        self, api_client: ApiClient, qps: float = 50.0, burst: int = 100, timeout: float = 30.0
    ) -> None:
        self.api_client = api_client
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        configuration = api_client.configuration
        self.pool: ConnectionPool = pool_for(
            configuration, configuration.connection_pool_maxsize or 32
        )
        self.pool.default_headers.update(api_client.default_headers)  # User-Agent
        self.pool.default_headers["Accept"] = "application/json"
        #: The monotonic instant after which no guarded write may still be in flight (the end
        #: of the leader's current term; run.py sets it from the elector).
        self.write_deadline: Callable[[], float] = lambda: math.inf
        #: Requests tried again after a 429/5xx with Retry-After (or a GET's broken connection).
        self.retried = 0

    def _admit(self, method: str, path: str, guard: Callable[[], bool] | None) -> None:
        """Wait for the rate limiter, then ask ``guard``: checked after the limiter, which may
        have slept, so a leader that lost its Lease meanwhile does not send what it decided
        while it led."""
        self.limiter.take()
        if guard is not None and not guard():
            raise ApiError(0, NOT_SENT, f"{method} {path}: not sent: no longer allowed to write")

    def _headers(self, body: bytes, content_type: str) -> dict[str, str]:
        """Content type and credentials of one request (read each time: the configuration's
        refresh hook renews expiring or rotated tokens). Values are trimmed: a token file
        written with a trailing newline must not become a broken header."""
        headers = {"Content-Type": content_type} if body else {}
        for setting in self.api_client.configuration.auth_settings().values():
            value = setting.get("value")
            if setting.get("in") == "header" and value:
                headers[setting["key"]] = str(value).strip()
        return headers

    @staticmethod
    def target(path: str, query: Sequence[tuple[str, Any]] = ()) -> str:
        target = quote(path, safe=_PATH_SAFE)
        if query:
            target += "?" + urlencode(list(query))
        return target

    def request(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, Any]] = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        guard: Callable[[], bool] | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> Any:
        """Send ``body`` (JSON-encoded; ``bytes`` are sent as they are, already encoded) and
        decode the JSON answer (``None`` for an empty body).

        ``guard`` is asked right before each send; when it says False nothing is sent
        (``ApiError``, reason :data:`NOT_SENT`). A guarded request is a write of the leader's:
        its deadline is also the end of the leader's term (:attr:`write_deadline`). A write is
        sent once: when it may have reached the server and no answer came, the ``ApiError``'s
        reason is :data:`OUTCOME_UNKNOWN`. Only a 429/5xx with ``Retry-After`` (any method) or
        a broken connection (GET) is tried again, at most :data:`MAX_RETRIES` times.
        """
        target = self.target(path, query)
        if body is None:
            payload = b""
        elif isinstance(body, bytes):
            payload = body
        else:
            payload = json.dumps(body, separators=(",", ":")).encode()
        timeout = timeout or self.timeout
        for attempt in range(MAX_RETRIES + 1):
            self._admit(method, path, guard)
            deadline = self.write_deadline() if guard is not None else math.inf
            try:
                answer = self.pool.request(
                    method,
                    target,
                    headers=self._headers(payload, content_type),
                    body=payload,
                    timeout=timeout,
                    deadline=deadline,
                    max_body=max_body,
                )
            except HttpError as exc:
                if not exc.sent:
                    raise ApiError(0, "", str(exc)) from None
                if method == "GET" and exc.broken and attempt < MAX_RETRIES:
                    # client-go retries a GET whose connection was reset, after a second.
                    self._wait(1.0, method, path, "the connection broke", deadline)
                    continue
                reason = OUTCOME_UNKNOWN if method != "GET" else ""
                raise ApiError(0, reason, str(exc)) from None
            if 200 <= answer.status <= 299:
                try:
                    return json.loads(answer.body) if answer.body else None
                except ValueError as exc:
                    raise ApiError(
                        answer.status, "", f"{method} {path}: the answer is not JSON: {exc}"
                    ) from None
            wait = retry_after_seconds(answer.headers)
            error = _error_from_answer(answer.status, answer.reason, answer.body, wait)
            if wait is None or not _retryable(answer.status) or attempt == MAX_RETRIES:
                raise error
            self._wait(wait, method, path, f"{answer.status} {error.reason}".strip(), deadline)
        raise AssertionError("unreachable")

    def _wait(self, seconds: float, method: str, path: str, why: str, deadline: float) -> None:
        """Sleep before trying again; an error when the wait is too long or outlives the
        leader's term (the request would be sent by a leader that may no longer lead)."""
        if seconds > MAX_RETRY_AFTER_SECONDS or time.monotonic() + seconds >= deadline:
            raise ApiError(0, "", f"{method} {path}: {why}; asked to retry after {seconds:g}s")
        self.retried += 1
        log.debug("%s %s: %s; retrying in %gs", method, path, why, seconds)
        time.sleep(seconds)

    def stream_lines(
        self,
        path: str,
        query: Sequence[tuple[str, Any]],
        timeout: tuple[float, float],
        max_line: int = MAX_LINE_BYTES,
    ) -> Iterator[bytes]:
        """The lines of a streamed answer (a watch), as they arrive. A non-2xx answer is an
        ``ApiError`` (with its ``Retry-After``); a silent stream (``timeout[1]``) or a dropped
        connection is an ``ApiError`` with status 0: the caller watches again."""
        self.limiter.take()
        target = self.target(path, query)
        try:
            head, lines = self.pool.stream(
                target,
                headers=self._headers(b"", ""),
                connect_timeout=timeout[0],
                read_timeout=timeout[1],
                max_line=max_line,
            )
        except HttpError as exc:
            raise ApiError(0, "", f"watch {path}: {exc}") from None
        if not 200 <= head.status <= 299:
            raise _error_from_answer(
                head.status, head.reason, head.body, retry_after_seconds(head.headers)
            )
        try:
            yield from lines
        except HttpError as exc:
            raise ApiError(0, "", f"watch {path}: {exc}") from None

    def close(self) -> None:
        self.pool.close()
        self.api_client.close()
