"""The Kubernetes backend's event recorder: the ``events.k8s.io/v1`` body it writes, with the
``related`` object kube-scheduler names on a ``Preempted`` event (``Eventf(victim, preemptor,
...)``), and ``record_event`` passing it through. The apiserver is a fake transport that keeps
what it was sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kubesched import InMemoryBackend, Pod
from kubesched.kube.backend import KubernetesBackend
from kubesched.kube.recorder import EventRecorder
from kubesched.testing.builders import make_pod

VICTIM = make_pod("victim", "team-a").uid("uid-victim").node("n1").obj()
PREEMPTOR = make_pod("preemptor", "team-a").uid("uid-preemptor").obj()
OTHER_PREEMPTOR = make_pod("other", "team-a").uid("uid-other").obj()


class FakeTransport:
    """Answers every request with an empty body and keeps ``(method, path, body)``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, *args: Any, body: Any = None, **kwargs: Any) -> Any:
        self.requests.append((method, path, body))
        return None


@pytest.fixture
def transport() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def recorder(transport: FakeTransport) -> Iterator[EventRecorder]:
    recorder = EventRecorder(transport, qps=0)  # type: ignore[arg-type]
    yield recorder
    recorder.stop()


def reference(pod: Pod) -> dict[str, str]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
    }


def posted(transport: FakeTransport) -> list[dict[str, Any]]:
    return [body for method, _, body in transport.requests if method == "POST"]


@pytest.mark.parametrize(
    ("related", "want"),
    [
        (PREEMPTOR, reference(PREEMPTOR)),
        (None, None),
    ],
    ids=["with a related pod", "without"],
)
def test_the_related_object_is_written(
    recorder: EventRecorder, transport: FakeTransport, related: Pod | None, want: Any
) -> None:
    recorder.record(
        VICTIM,
        "Normal",
        "Preempted",
        "Preempting",
        "Preempted by pod uid-preemptor on node n1",
        "custom-scheduler",
        related,
    )
    recorder.flush()
    (body,) = posted(transport)
    assert body["regarding"] == reference(VICTIM)
    assert body.get("related") == want
    assert (body["reason"], body["action"], body["type"]) == ("Preempted", "Preempting", "Normal")
    assert transport.requests[0][1] == "/apis/events.k8s.io/v1/namespaces/team-a/events"


@pytest.mark.parametrize(
    ("second_related", "writes"),
    [(PREEMPTOR, 1), (OTHER_PREEMPTOR, 2)],
    ids=["same related pod: folded into a series", "another related pod: its own event"],
)
def test_the_related_pod_is_part_of_what_is_folded(
    recorder: EventRecorder, transport: FakeTransport, second_related: Pod, writes: int
) -> None:
    for related in (PREEMPTOR, second_related):
        recorder.record(VICTIM, "Normal", "Preempted", "Preempting", "note", "s", related)
    recorder.flush()
    assert len(posted(transport)) == writes


def test_the_kubernetes_backend_passes_related_through(
    recorder: EventRecorder, transport: FakeTransport
) -> None:
    backend = KubernetesBackend(transport, recorder=recorder)  # type: ignore[arg-type]
    backend.record_event(
        VICTIM,
        event_type="Normal",
        reason="Preempted",
        action="Preempting",
        note="Preempted by pod uid-preemptor on node n1",
        reporting_controller="custom-scheduler",
        related=PREEMPTOR,
    )
    recorder.flush()
    (body,) = posted(transport)
    assert body["related"] == reference(PREEMPTOR)
    assert body["reportingController"] == "custom-scheduler"


@pytest.mark.parametrize(
    ("related", "want"),
    [(PREEMPTOR, "team-a/preemptor"), (None, "")],
    ids=["with a related pod", "without"],
)
def test_the_in_memory_backend_records_related(related: Pod | None, want: str) -> None:
    backend = InMemoryBackend()
    backend.record_event(
        VICTIM,
        event_type="Normal",
        reason="Preempted",
        action="Preempting",
        note="n",
        reporting_controller="s",
        related=related,
    )
    (event,) = backend.events
    assert (event.pod, event.reason, event.related) == ("team-a/victim", "Preempted", want)
