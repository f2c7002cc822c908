"""The Kubernetes backend's Binding and the node it names: the check that the node still
exists is made when the request is let through, after the client's rate limiter, so a node
deleted while the Binding waited there gets no Binding (the apiserver would accept one and
strand the pod). A deposed leader's Binding is refused as before."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kubesched.backends.kube.backend import NOT_LEADER, KubernetesBackend
from kubesched.backends.kube.transport import NOT_SENT, ApiError
from kubesched.framework.backend import BindError
from kubesched.testing.builders import make_pod


class Limited:
    """A transport whose rate limiter "sleeps" through ``meanwhile`` before the guard is asked;
    records what it sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.meanwhile = lambda: None

    def request(self, method: str, path: str, *, body: Any = None, guard: Any = None) -> Any:
        self.meanwhile()
        if guard is not None and not guard():
            raise ApiError(0, NOT_SENT, f"{method} {path}: not sent")
        self.sent.append((method, path))
        return {}


def _backend(transport: Limited, leading: list[bool]) -> KubernetesBackend:
    backend = KubernetesBackend(transport, can_bind=lambda: leading[0])  # type: ignore[arg-type]
    backend.nodes = SimpleNamespace(store={"n1": object(), "n2": object()})  # type: ignore[assignment]
    return backend


def test_a_node_deleted_while_the_binding_waited_gets_no_binding() -> None:
    transport = Limited()
    backend = _backend(transport, [True])
    pod = make_pod("p").obj()
    transport.meanwhile = lambda: backend.nodes.store.pop("n1")  # type: ignore[union-attr]
    with pytest.raises(BindError) as refused:
        backend.bind(pod, "n1")
    assert str(refused.value) == f"node n1 was deleted before pod {pod.key} was bound"
    assert refused.value.retryable  # back to the queue, for a live node
    assert transport.sent == []


def test_a_live_node_is_bound_to_and_a_deposed_leader_sends_nothing() -> None:
    transport = Limited()
    leading = [True]
    backend = _backend(transport, leading)
    pod = make_pod("p").obj()
    backend.bind(pod, "n2")
    assert transport.sent == [("POST", f"/api/v1/namespaces/{pod.namespace}/pods/p/binding")]
    transport.meanwhile = lambda: leading.__setitem__(0, False)  # the Lease lost meanwhile
    with pytest.raises(BindError, match=NOT_LEADER):
        backend.bind(pod, "n2")
    assert len(transport.sent) == 1
