"""Raw JSON requests to the apiserver with the official client's configuration and auth.

The client's generated API methods validate every argument and build model objects for every
response (DESIGN.md §6); the scheduler needs neither, so it sends JSON and reads JSON. Short
requests (Bindings, status patches, events, lists) go through :mod:`.http_client`, a keep-alive
HTTP/1.1 client four times cheaper in CPU than the official stack, with the TLS settings and
credentials of the client's ``Configuration`` (tokens are read per request, so a refreshed or
rotated token is used at once). Watches, and every request when the configuration asks for a
proxy or other things that client does not do, go through the client's ``ApiClient``. A token
bucket enforces ``clientConnection.qps``/``burst`` like client-go's rate limiter.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from .http_client import ConnectionPool, HttpError, pool_for

__all__ = ["NOT_SENT", "ApiError", "TokenBucket", "Transport"]

#: ``ApiError.reason`` of a request that a guard kept from being sent.
NOT_SENT = "NotSent"


class ApiError(Exception):
    """A non-2xx answer, or no answer, from the apiserver."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else message)
        self.status = status
        self.reason = reason
        self.message = message


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


def _error_from(exc: ApiException) -> ApiError:
    return _error_from_answer(exc.status or 0, str(exc.reason or ""), exc.body)


def _error_from_answer(status: int, reason: str, body: bytes | str | None) -> ApiError:
    """The ``ApiError`` of a non-2xx answer: the reason and message of its ``Status`` body."""
    text = body.decode(errors="replace") if isinstance(body, bytes) else (body or "")
    try:
        answer = json.loads(text)
        return ApiError(status, answer.get("reason", ""), answer.get("message", text))
    except (ValueError, AttributeError):
        return ApiError(status, reason, text or f"HTTP {status}")


#: Characters left as they are in a request path (RFC 3986 pchar and "/").
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


class Transport:
    """JSON in, JSON out, over an ``ApiClient``."""

    def __init__(
        self, api_client: ApiClient, qps: float = 50.0, burst: int = 100, timeout: float = 30.0
    ) -> None:
        self.api_client = api_client
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        self._auth = list(api_client.configuration.auth_settings())
        configuration = api_client.configuration
        #: Short requests' connections; ``None``: everything goes through ``api_client``.
        self.pool: ConnectionPool | None = pool_for(
            configuration, configuration.connection_pool_maxsize or 32
        )
        if self.pool is not None:
            self.pool.default_headers.update(api_client.default_headers)  # User-Agent
            self.pool.default_headers["Accept"] = "application/json"

    def _admit(self, method: str, path: str, guard: Callable[[], bool] | None) -> None:
        """Wait for the rate limiter, then ask ``guard``: checked after the limiter, which may
        have slept, so a leader that lost its Lease meanwhile does not send what it decided
        while it led."""
        self.limiter.take()
        if guard is not None and not guard():
            raise ApiError(0, NOT_SENT, f"{method} {path}: not sent: no longer allowed to write")

    def _headers(self, body: bytes, content_type: str) -> dict[str, str]:
        """Content type and credentials of one request (the token is read each time: the
        configuration's refresh hook renews expiring ones)."""
        headers = {"Content-Type": content_type} if body else {}
        for setting in self.api_client.configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        return headers

    def _send(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, Any]] = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | tuple[float, float] | None = None,
        guard: Callable[[], bool] | None = None,
    ) -> Any:
        self._admit(method, path, guard)
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        request = self.api_client.param_serialize(
            method,
            path,
            query_params=list(query),
            header_params=headers,
            body=body,
            auth_settings=self._auth,
        )
        try:
            response = self.api_client.call_api(*request, _request_timeout=timeout or self.timeout)
        except ApiException as exc:
            raise _error_from(exc) from None
        except Exception as exc:  # connection refused, TLS, timeouts: all "no answer"
            raise ApiError(0, "", f"{method} {path}: {type(exc).__name__}: {exc}") from None
        if not 200 <= response.status <= 299:
            response.read()
            raise _error_from(ApiException(http_resp=response))
        return response

    def request(
        self,
        method: str,
        path: str,
        query: Sequence[tuple[str, Any]] = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
        guard: Callable[[], bool] | None = None,
    ) -> Any:
        """Send and decode the JSON answer (``None`` for an empty body). ``guard`` is asked
        right before sending; when it says False nothing is sent (``ApiError``, reason
        :data:`NOT_SENT`)."""
        if self.pool is None:
            response = self._send(method, path, query, body, content_type, timeout, guard)
            data = response.read()
            return json.loads(data) if data else None
        self._admit(method, path, guard)
        target = quote(path, safe=_PATH_SAFE)
        if query:
            target += "?" + urlencode(list(query))
        payload = b"" if body is None else json.dumps(body, separators=(",", ":")).encode()
        try:
            answer = self.pool.request(
                method,
                target,
                headers=self._headers(payload, content_type),
                body=payload,
                timeout=timeout or self.timeout,
            )
        except HttpError as exc:
            raise ApiError(0, "", f"{method} {path}: {exc}") from None
        if not 200 <= answer.status <= 299:
            raise _error_from_answer(answer.status, answer.reason, answer.body)
        try:
            return json.loads(answer.body) if answer.body else None
        except ValueError as exc:
            raise ApiError(
                answer.status, "", f"{method} {path}: the answer is not JSON: {exc}"
            ) from None

    def stream_lines(
        self, path: str, query: Sequence[tuple[str, Any]], timeout: tuple[float, float]
    ) -> Iterator[bytes]:
        """The lines of a streamed answer (a watch), as they arrive."""
        response = self._send("GET", path, query, timeout=timeout).response
        try:
            rest = b""
            for chunk in response.stream(amt=None, decode_content=False):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line:
                        yield line
            if rest:
                yield rest
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            # A silent stream (inactivity timeout) or a dropped connection: the caller re-watches.
            raise ApiError(0, "", f"watch {path}: {type(exc).__name__}: {exc}") from None
        finally:
            response.release_conn()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        self.api_client.close()


def list_query(items: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in items.items() if v is not None]
