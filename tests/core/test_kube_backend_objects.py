"""The Kubernetes backend's side of the consulted kinds, over a recording transport: what each
write sends (method, path, content type, the write guard), how refusals come back
(``ObjectWriteError`` with the HTTP status; nothing sent by a deposed leader), and that a
watched kind's changes reach the handler with their kind."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from kubesched import ObjectWriteError
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.transport import NOT_SENT, ApiError

PVC = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "team-a", "resourceVersion": "7"},
    "spec": {},
}
PV = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"}, "spec": {}}


class Transport:
    """Records requests; answers lists with ``items`` and writes with ``answer`` (or raises)."""

    def __init__(self, items: list[dict[str, Any]] | None = None, path: str = "") -> None:
        self.sent: list[tuple[str, str, Any, str]] = []
        self.items = items or []
        self.items_path = path
        self.error: ApiError | None = None

    def request(
        self,
        method: str,
        path: str,
        query: Any = (),
        body: Any = None,
        content_type: str = "application/json",
        timeout: Any = None,
        guard: Any = None,
    ) -> Any:
        if method == "GET":
            items = self.items if path == self.items_path else []
            return {"items": items, "metadata": {"resourceVersion": "10"}}
        if guard is not None and not guard():
            raise ApiError(0, NOT_SENT, "not sent")
        if self.error is not None:
            raise self.error
        self.sent.append((method, path, body, content_type))
        return {
            **(body or {}),
            "metadata": {**(body or {}).get("metadata", {}), "resourceVersion": "8"},
        }

    def stream_lines(self, *args: Any, **kwargs: Any):
        time.sleep(0.05)
        return iter(())


@pytest.mark.parametrize(
    ("call", "method", "path", "content_type"),
    [
        pytest.param(
            lambda b: b.update_object("PersistentVolumeClaim", PVC),
            "PUT",
            "/api/v1/namespaces/team-a/persistentvolumeclaims/data",
            "application/json",
            id="update",
        ),
        pytest.param(
            lambda b: b.update_object("PersistentVolumeClaim", PVC, subresource="status"),
            "PUT",
            "/api/v1/namespaces/team-a/persistentvolumeclaims/data/status",
            "application/json",
            id="update status",
        ),
        pytest.param(
            lambda b: b.patch_object("PersistentVolume", "", "pv-1", {"spec": {"claimRef": None}}),
            "PATCH",
            "/api/v1/persistentvolumes/pv-1",
            "application/merge-patch+json",
            id="merge patch",
        ),
        pytest.param(
            lambda b: b.create_object("PersistentVolume", PV),
            "POST",
            "/api/v1/persistentvolumes",
            "application/json",
            id="create",
        ),
    ],
)
def test_writes(call, method, path, content_type):
    transport = Transport()
    backend = KubernetesBackend(transport)  # type: ignore[arg-type]
    stored = call(backend)
    (sent,) = transport.sent
    assert sent[0] == method and sent[1] == path and sent[3] == content_type
    assert stored["metadata"]["resourceVersion"] == "8"


@pytest.mark.parametrize(
    ("status", "conflict", "not_found"),
    [(409, True, False), (404, False, True), (422, False, False)],
)
def test_refusals_carry_the_status(status, conflict, not_found):
    transport = Transport()
    transport.error = ApiError(
        status, "Conflict", 'persistentvolumes "pv-1": the object has been modified'
    )
    backend = KubernetesBackend(transport)  # type: ignore[arg-type]
    with pytest.raises(ObjectWriteError) as caught:
        backend.update_object("PersistentVolume", PV)
    assert caught.value.status == status
    assert (caught.value.conflict, caught.value.not_found) == (conflict, not_found)
    assert caught.value.key == "pv-1"


def test_a_deposed_leader_sends_nothing():
    transport = Transport()
    backend = KubernetesBackend(transport, can_bind=lambda: False)  # type: ignore[arg-type]
    with pytest.raises(ObjectWriteError) as caught:
        backend.patch_object("PersistentVolumeClaim", "team-a", "data", {"metadata": {}})
    assert caught.value.status == 0
    assert transport.sent == []


class Handler:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.event = threading.Event()

    def on_node_add(self, node: Any) -> None: ...
    def on_node_update(self, old: Any, new: Any) -> None: ...
    def on_node_delete(self, node: Any) -> None: ...
    def on_pod_add(self, pod: Any) -> None: ...
    def on_pod_update(self, old: Any, new: Any) -> None: ...
    def on_pod_delete(self, pod: Any) -> None: ...

    def on_object_add(self, kind: str, obj: Any) -> None:
        self.seen.append((kind, obj["metadata"]["name"]))
        self.event.set()

    def on_object_update(self, kind: str, old: Any, new: Any) -> None: ...
    def on_object_delete(self, kind: str, obj: Any) -> None: ...


def test_watched_kinds_reach_the_handler_with_their_kind():
    transport = Transport([dict(PVC)], "/api/v1/persistentvolumeclaims")
    backend = KubernetesBackend(transport)  # type: ignore[arg-type]
    claims = backend.lister("PersistentVolumeClaim")
    handler = Handler()
    backend.start(handler, sync_timeout=10)  # type: ignore[arg-type]
    try:
        assert handler.event.wait(10)
        assert ("PersistentVolumeClaim", "data") in handler.seen
        assert [c["metadata"]["name"] for c in claims()] == ["data"]
    finally:
        backend.stop()


def test_kinds_that_raise_no_events_are_only_listed():
    transport = Transport([{"metadata": {"name": "team-a"}}], "/api/v1/namespaces")
    backend = KubernetesBackend(transport)  # type: ignore[arg-type]
    namespaces = backend.lister("Namespace")
    handler = Handler()
    backend.start(handler, sync_timeout=10)  # type: ignore[arg-type]
    try:
        assert [n["metadata"]["name"] for n in namespaces()] == ["team-a"]
        assert handler.seen == []
    finally:
        backend.stop()
