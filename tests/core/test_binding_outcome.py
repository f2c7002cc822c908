"""A Binding whose answer is lost is resolved by reading, never by posting again.

The POST reaches the server, which binds the pod and closes the connection without a word (or a
layer in between answers 409 because an earlier try already bound it): the scheduler must count
the pod as bound where it chose, with exactly one POST, and must not treat a pod bound elsewhere
as its own."""

from __future__ import annotations

import json
import socket

import pytest
from test_hostile_server import Hostile, answer, numbered, transport_to

from kubesched.api.objects import Pod
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.framework.backend import BindError

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
    "spec": {"containers": [{"name": "c", "image": "pause"}]},
}


def apiserver(bound_to: str, on_post: str) -> Hostile:
    """Answers the pod's GET with ``bound_to`` as its node; a Binding POST with ``on_post``:
    ``close`` (bound, answer lost) or ``409`` (already assigned to ``bound_to``)."""

    def handle(server: Hostile, sock: socket.socket) -> None:
        for _ in numbered(server, sock):
            request = server.requests[-1]
            if request.startswith(b"POST "):
                if on_post == "close":
                    return
                message = f'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "{bound_to}"'  # noqa: E501
                status = {"kind": "Status", "reason": "Conflict", "code": 409, "message": message}
                sock.sendall(answer(status, "409 Conflict"))
            else:  # the LIST of that one pod
                assert b"fieldSelector=metadata.name%3Dp " in request.split(b"\r\n", 1)[0]
                pod = json.loads(json.dumps(POD))
                pod["spec"]["nodeName"] = bound_to
                sock.sendall(answer({"kind": "PodList", "items": [pod]}))

    return Hostile(handle)


@pytest.mark.parametrize("on_post", ["close", "409"])
def test_a_binding_that_took_effect_is_a_success_with_one_post(on_post) -> None:
    server = apiserver("node-1", on_post)
    try:
        backend = KubernetesBackend(transport_to(server))
        backend.bind(Pod(POD), "node-1")
        assert server.count("POST") == 1
        if on_post == "close":
            assert server.count("GET") == 1  # read back: no informer here
    finally:
        server.stop()


@pytest.mark.parametrize("on_post", ["close", "409"])
def test_a_pod_bound_elsewhere_is_not_taken_for_ours(on_post) -> None:
    server = apiserver("node-2", on_post)
    try:
        backend = KubernetesBackend(transport_to(server))
        with pytest.raises(BindError) as raised:
            backend.bind(Pod(POD), "node-1")
        assert server.count("POST") == 1
        if on_post == "close":
            assert not raised.value.retryable  # bound: the watch brings it to the cache
    finally:
        server.stop()


def test_a_lost_answer_for_a_pod_still_unbound_goes_back_to_the_queue() -> None:
    server = apiserver("", "close")
    try:
        with pytest.raises(BindError) as raised:
            KubernetesBackend(transport_to(server)).bind(Pod(POD), "node-1")
        assert raised.value.retryable
        assert server.count("POST") == 1
    finally:
        server.stop()
