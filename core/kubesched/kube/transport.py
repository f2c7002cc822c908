"""Raw JSON requests to the apiserver over the official client's connection and auth.

The client's generated API methods validate every argument and build model objects for every
response (DESIGN.md §6); the scheduler needs neither, so it sends JSON and reads JSON through the
client's ``ApiClient`` (which still handles TLS, tokens, client certificates and proxies). A
token bucket enforces ``clientConnection.qps``/``burst`` like client-go's rate limiter.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

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
    body = exc.body.decode() if isinstance(exc.body, bytes) else (exc.body or "")
    try:
        status = json.loads(body)
        return ApiError(exc.status or 0, status.get("reason", ""), status.get("message", body))
    except (ValueError, AttributeError):
        return ApiError(exc.status or 0, str(exc.reason or ""), body or str(exc))


class Transport:
    """JSON in, JSON out, over an ``ApiClient``."""

    def __init__(
        self, api_client: ApiClient, qps: float = 50.0, burst: int = 100, timeout: float = 30.0
    ) -> None:
        self.api_client = api_client
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        self._auth = list(api_client.configuration.auth_settings())

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
        self.limiter.take()
        # Checked after the rate limiter, which may have slept: a leader that lost its Lease
        # meanwhile must not send what it decided while it led.
        if guard is not None and not guard():
            raise ApiError(0, NOT_SENT, f"{method} {path}: not sent: no longer allowed to write")
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
        response = self._send(method, path, query, body, content_type, timeout, guard)
        data = response.read()
        return json.loads(data) if data else None

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
        self.api_client.close()


def list_query(items: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in items.items() if v is not None]
