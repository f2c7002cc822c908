"""``/metrics`` is authorized by the apiserver (TokenReview, then SubjectAccessReview for
``get`` on the path), as on kube-scheduler's secure port; the health paths stay open."""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from kubesched.backends.kube.delegated_auth import DelegatedAuthorizer
from kubesched.backends.kube.transport import Transport
from kubesched.service.server import HealthServer


@pytest.fixture
def server(admin_client) -> Iterator[HealthServer]:
    health = HealthServer(
        "127.0.0.1",
        0,
        ready=lambda: True,
        metrics=lambda: b"scheduler_pending_pods 0\n",
        authorize=DelegatedAuthorizer(Transport(admin_client, qps=0)),
    )
    health.start()
    yield health
    health.stop()


def get(server: HealthServer, path: str, token: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _token(core: client.CoreV1Api, namespace: str, name: str) -> str:
    core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
    request = {"spec": {"expirationSeconds": 600}}
    return core.create_namespaced_service_account_token(name, namespace, request).status.token


def test_metrics_need_a_token_allowed_to_get_the_path(admin_client, core_v1, namespace, server):
    rbac = client.RbacAuthorizationV1Api(admin_client)
    role = f"it-metrics-reader-{uuid.uuid4().hex[:6]}"
    rbac.create_cluster_role(
        {
            "metadata": {"name": role},
            "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        }
    )
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": role},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [{"kind": "ServiceAccount", "name": "scraper", "namespace": namespace}],
        }
    )
    try:
        scraper = _token(core_v1, namespace, "scraper")
        other = _token(core_v1, namespace, "someone")
        assert get(server, "/metrics")[0] == 401
        assert get(server, "/metrics", "not-a-token")[0] == 401
        status, body = get(server, "/metrics", other)
        assert status == 403
        assert f"system:serviceaccount:{namespace}:someone".encode() in body
        assert get(server, "/metrics", scraper) == (200, b"scheduler_pending_pods 0\n")
        for path in ("/healthz", "/livez", "/readyz"):
            assert get(server, path) == (200, b"ok\n")
    finally:
        rbac.delete_cluster_role_binding(role)
        rbac.delete_cluster_role(role)
