"""Who may read ``/metrics``: the apiserver decides, as for kube-scheduler's secure port.

A request's bearer token is checked with a ``TokenReview`` (authentication.k8s.io/v1), then
the user it names is checked with a ``SubjectAccessReview`` (authorization.k8s.io/v1) for
``get`` on the non-resource path (``/metrics``), as component-base's delegating authenticator
and authorizer do. Answers are cached for 10 s (their defaults), allowed and denied alike, so a
scraper costs the apiserver two requests per 10 s at most. The scheduler's identity needs
``create`` on ``tokenreviews`` and ``subjectaccessreviews`` (``system:auth-delegator``); a
scraper needs ``get`` on the ``nonResourceURLs: ["/metrics"]``.
"""

from __future__ import annotations

import hashlib
import logging
import threading

from cachetools import TTLCache

from kubesched.backends.kube.transport import ApiError, Transport

__all__ = ["DelegatedAuthorizer"]

log = logging.getLogger(__name__)


class DelegatedAuthorizer:
    """``authorize(authorization_header) -> (status, reason)`` for one non-resource path."""

    def __init__(
        self, transport: Transport, path: str = "/metrics", ttl: float = 10.0, timeout: float = 5.0
    ) -> None:
        self.transport = transport
        self.path = path
        self.timeout = timeout
        self._cache: TTLCache[str, tuple[int, str]] = TTLCache(maxsize=1024, ttl=ttl)
        self._lock = threading.Lock()

    def __call__(self, authorization: str | None) -> tuple[int, str]:
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return 401, "Unauthorized"
        key = hashlib.sha256(token.encode()).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None:
            return cached
        try:
            decision = self._decide(token)
        except ApiError as exc:
            log.warning("authorizing a request for %s failed: %s", self.path, exc)
            return 500, "Internal Server Error: the authorization check failed"
        with self._lock:
            self._cache[key] = decision
        return decision

    def _decide(self, token: str) -> tuple[int, str]:
        review = self.transport.request(
            "POST",
            "/apis/authentication.k8s.io/v1/tokenreviews",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenReview",
                "spec": {"token": token},
            },
            timeout=self.timeout,
        )
        status = (review or {}).get("status") or {}
        if not status.get("authenticated"):
            return 401, "Unauthorized"
        user = status.get("user") or {}
        username = user.get("username", "")
        access = self.transport.request(
            "POST",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            body={
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "spec": {
                    "user": username,
                    "uid": user.get("uid", ""),
                    "groups": user.get("groups") or [],
                    "extra": user.get("extra") or {},
                    "nonResourceAttributes": {"path": self.path, "verb": "get"},
                },
            },
            timeout=self.timeout,
        )
        if ((access or {}).get("status") or {}).get("allowed"):
            return 200, ""
        # kube-apiserver's wording for a non-resource path.
        return 403, f'forbidden: User "{username}" cannot get path "{self.path}"'
