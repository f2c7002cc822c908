"""The Kubernetes backend's event recorder: the ``events.k8s.io/v1`` body it writes, with the
``related`` object kube-scheduler names on a ``Preempted`` event (``Eventf(victim, preemptor,
...)``), and ``record_event`` passing it through. The apiserver is a fake transport that keeps
what it was sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched import InMemoryBackend, Pod
from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.recorder import MAX_TRACKED, EventRecorder
from kubesched.backends.kube.transport import ApiError
from kubesched.testing.builders import make_pod

VICTIM = make_pod("victim", "team-a").uid("uid-victim").node("n1").obj()
PREEMPTOR = make_pod("preemptor", "team-a").uid("uid-preemptor").obj()
OTHER_PREEMPTOR = make_pod("other", "team-a").uid("uid-other").obj()


class FakeTransport:
    """Answers every request with an empty body and keeps ``(method, path, body)``, the body
    decoded as the apiserver reads it (the recorder sends events already encoded)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, *args: Any, body: Any = None, **kwargs: Any) -> Any:
        self.requests.append((method, path, json.loads(body) if isinstance(body, bytes) else body))
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


class SlowTransport(FakeTransport):
    """Takes ``delay`` seconds per request, as a loaded apiserver does; thread-safe."""

    def __init__(self, delay: float = 0.0, missing: bool = False) -> None:
        super().__init__()
        self.delay = delay
        self.missing = missing  # PATCHes answer 404, as for an event the server let expire
        self._lock = threading.Lock()

    def request(self, method: str, path: str, *args: Any, body: Any = None, **kwargs: Any) -> Any:
        time.sleep(self.delay)
        with self._lock:
            super().request(method, path, body=body)
        if method == "PATCH" and self.missing:
            raise ApiError(404, "NotFound", "events.events.k8s.io not found")
        return None


def pods(n: int, namespace: str = "burst") -> list[Pod]:
    return [make_pod(f"p{i}", namespace).uid(f"uid-{i}").obj() for i in range(n)]


def test_every_pod_of_a_burst_gets_its_scheduled_event() -> None:
    transport = SlowTransport(delay=0.002)  # 1,000 writes one at a time would take 2 s
    recorder = EventRecorder(transport)  # type: ignore[arg-type]
    try:
        for pod in pods(1000):
            recorder.record(pod, "Normal", "Scheduled", "Binding", f"assigned {pod.name}", "s")
        recorder.flush(timeout=10)
        regarding = {body["regarding"]["uid"] for body in posted(transport)}
        assert len(regarding) == 1000
        assert recorder.dropped == 0
    finally:
        recorder.stop()


def test_repeats_fold_into_a_series_whatever_their_note() -> None:
    transport = SlowTransport()
    recorder = EventRecorder(transport, series_finish_seconds=0.2)  # type: ignore[arg-type]
    try:
        for nodes in (1, 2, 3, 4):
            recorder.record(
                VICTIM, "Warning", "FailedScheduling", "Scheduling", f"0/{nodes} nodes", "s"
            )
        recorder.flush()
        assert len(posted(transport)) == 1, "one event, however the message changed"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and recorder._series:  # ended series are forgotten
            time.sleep(0.02)
        recorder.flush()
        counts = [body["series"]["count"] for m, _, body in transport.requests if m == "PATCH"]
        assert counts and counts[0] >= 2, "the second occurrence is written at once"
        assert counts[-1] == 4, "the final count is written when the series ends"
        assert len(counts) <= 2
    finally:
        recorder.stop()


def test_a_series_whose_event_expired_is_written_anew() -> None:
    transport = SlowTransport(missing=True)
    recorder = EventRecorder(transport)  # type: ignore[arg-type]
    try:
        for _ in range(2):
            recorder.record(VICTIM, "Warning", "FailedScheduling", "Scheduling", "note", "s")
        recorder.flush()
        bodies = posted(transport)
        assert len(bodies) == 2
        assert bodies[1]["series"]["count"] == 2
        assert bodies[1]["metadata"]["name"] == bodies[0]["metadata"]["name"]
    finally:
        recorder.stop()


def test_the_spam_filter_is_per_object() -> None:
    transport = SlowTransport()
    recorder = EventRecorder(transport)  # type: ignore[arg-type]
    noisy, quiet = pods(2, "spam")
    try:
        for i in range(40):  # forty different reasons: none folds into another
            recorder.record(noisy, "Warning", f"Reason{i}", "Scheduling", "note", "s")
        recorder.record(quiet, "Normal", "Scheduled", "Binding", "assigned", "s")
        recorder.flush()
        by_object: dict[str, int] = {}
        for body in posted(transport):
            uid = body["regarding"]["uid"]
            by_object[uid] = by_object.get(uid, 0) + 1
        assert by_object == {noisy.uid: 25, quiet.uid: 1}
        assert recorder.dropped == 15
    finally:
        recorder.stop()


def test_a_full_queue_drops_counts_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    transport = SlowTransport(delay=0.05)
    recorder = EventRecorder(transport, writers=1, max_queue=5)  # type: ignore[arg-type]
    try:
        with caplog.at_level("WARNING", logger="kubesched.backends.kube.recorder"):
            for pod in pods(50, "full"):
                recorder.record(pod, "Normal", "Scheduled", "Binding", "assigned", "s")
        assert recorder.dropped >= 40
        assert any("event dropped (the event queue is full)" in r.message for r in caplog.records)
    finally:
        recorder.stop(timeout=0.1)


@pytest.mark.parametrize(("qps", "written"), [(0.0, 60), (1.0, 10)], ids=["off", "capped"])
def test_the_overall_cap_is_off_unless_asked_for(qps: float, written: int) -> None:
    transport = SlowTransport()
    recorder = EventRecorder(transport, qps=qps, burst=10)  # type: ignore[arg-type]
    try:
        for pod in pods(60, "cap"):
            recorder.record(pod, "Normal", "Scheduled", "Binding", "assigned", "s")
        recorder.flush()
        assert len(posted(transport)) == written
    finally:
        recorder.stop()


def test_what_is_kept_is_bounded_by_count_under_churn() -> None:
    """SchedulingWithMixedChurn: every tick a new pod fails once and is deleted. Its series and
    spam bucket would otherwise be kept for minutes each; past client-go's 4,096 objects the
    oldest go, and each series keeps its event encoded, not as a body."""
    transport = SlowTransport()
    recorder = EventRecorder(transport)  # type: ignore[arg-type]
    try:
        for i, pod in enumerate(pods(12_000, "churn")):
            note = f"0/1001 nodes are available: 1 Too many pods, 1000 Insufficient cpu. ({i})"
            recorder.record(pod, "Warning", "FailedScheduling", "Scheduling", note, "s")
            if i % 1_000 == 999:  # a tick's pace, not one burst past the queue's bound
                recorder.flush(timeout=10)
        assert recorder.dropped == 0
        assert len(posted(transport)) == 12_000, "every pod's first event is written"
        assert len(recorder._series) <= MAX_TRACKED
        assert len(recorder._spam._buckets) <= MAX_TRACKED
        assert all(not hasattr(series, "body") for series in recorder._series.values())
    finally:
        recorder.stop()
