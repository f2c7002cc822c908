"""The scheduling loop cannot die silently.

A cycle that raises (the cache refusing to assume a pod the watch just reported bound) is an
Error for that pod and the loop goes on; a loop that exits or stops turning, or a leader that
has stopped renewing its Lease, fails ``/healthz`` so the kubelet restarts the process and a
standby takes over."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path

import pytest

from kubesched.backends.memory import InMemoryBackend
from kubesched.engine.scheduler import REASON_SCHEDULER_ERROR, Scheduler
from kubesched.service.run import RunOptions, Service
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_config

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "http://127.0.0.1:9"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
"""


def test_a_cycle_that_raises_is_an_error_for_its_pod_and_the_loop_goes_on() -> None:
    config, registry = make_config({}, podInitialBackoffSeconds=0.1, podMaxBackoffSeconds=0.1)
    pods = [make_pod(f"p{i}").obj() for i in range(3)]
    backend = InMemoryBackend([make_node("n1").obj()], pods)
    scheduler = Scheduler(config, backend, registry, inline_binding=True)
    assume = scheduler.cache.assume_pod
    raised: list[str] = []

    def assume_once_refused(pod, node):  # as when the watch reports the pod bound mid-cycle
        if pod.name == "p0" and not raised:
            raised.append(pod.name)
            raise ValueError(f"pod {pod.key} is already in the cache")
        return assume(pod, node)

    scheduler.cache.assume_pod = assume_once_refused
    attempts = []
    scheduler.observe_attempts(lambda attempt, _seconds: attempts.append(attempt))
    scheduler.start()
    stop = threading.Event()
    loop = threading.Thread(target=scheduler.run, args=(stop, 0.05), daemon=True)
    loop.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if {a.pod.name for a in attempts if a.node_name} == {"p0", "p1", "p2"}:
                break
            time.sleep(0.02)
        errors = [a for a in attempts if a.reason == REASON_SCHEDULER_ERROR]
        assert [a.pod.name for a in errors] == ["p0"]
        assert "ValueError" in errors[0].message
        assert {a.pod.name for a in attempts if a.node_name} == {"p0", "p1", "p2"}
        assert loop.is_alive()
        assert not scheduler.loop_stalled(5)
    finally:
        stop.set()
        loop.join(5)
        scheduler.stop()


@pytest.fixture
def service(tmp_path: Path):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    made: list[Service] = []

    def make(**options) -> Service:
        svc = Service(
            RunOptions(
                config=None,
                kubeconfig=str(kubeconfig),
                leader_elect=False,
                address="127.0.0.1",
                port=0,
                **options,
            )
        )
        svc.server.start()
        made.append(svc)
        return svc

    yield make
    for svc in made:
        svc.stop.set()
        svc.scheduler.stop(wait_for_bindings=False)
        svc.server.stop()


def healthz(svc: Service) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{svc.server.port}/healthz", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def wait_for_status(svc: Service, status: int, within: float) -> str:
    deadline = time.monotonic() + within
    while True:
        code, body = healthz(svc)
        if code == status:
            return body
        assert time.monotonic() < deadline, f"/healthz stayed {code} {body!r}"
        time.sleep(0.05)


class Fatal(BaseException):
    """What no ``except Exception`` catches: the loop's thread ends."""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_loop_whose_thread_ends_fails_healthz(service) -> None:
    svc = service()
    svc.scheduler.schedule_one = lambda timeout=None: (_ for _ in ()).throw(Fatal())
    svc._start_scheduling()
    body = wait_for_status(svc, 500, within=2)
    assert "the scheduling loop has exited" in body


def test_a_loop_that_hangs_past_its_limit_fails_healthz(service) -> None:
    svc = service(loop_stall_seconds=0.5)
    release = threading.Event()
    svc.scheduler.schedule_one = lambda timeout=None: release.wait(30)
    svc._start_scheduling()
    try:
        body = wait_for_status(svc, 500, within=3)
        assert "has not started a cycle" in body
    finally:
        release.set()


def test_a_loop_that_raises_exceptions_stays_alive_and_healthy(service) -> None:
    svc = service(loop_stall_seconds=2)
    calls: list[int] = []

    def broken(timeout=None):
        calls.append(1)
        raise RuntimeError("a bug between cycles")

    svc.scheduler.schedule_one = broken
    svc._start_scheduling()
    time.sleep(0.5)
    assert len(calls) >= 2  # the loop went on
    assert healthz(svc) == (200, "ok\n")


def test_a_leader_that_stopped_renewing_fails_healthz(service) -> None:
    svc = service()
    svc._start_scheduling()
    assert healthz(svc)[0] == 200

    class StuckElector:
        def check(self, tolerance: float) -> str:
            return "failed election to renew leadership on lease kube-system/kubesched"

        def is_leader(self) -> bool:
            return True

    svc.elector = StuckElector()  # type: ignore[assignment]
    body = wait_for_status(svc, 500, within=2)
    assert "failed election to renew leadership" in body


def test_the_secure_port_serves_https_with_metrics_behind_a_token(tmp_path: Path) -> None:
    """``--secure-port``: HTTPS with a self-signed certificate; health open, /metrics 401
    without a bearer token (no apiserver is asked for that)."""
    import http.client
    import ssl

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    svc = Service(
        RunOptions(config=None, kubeconfig=str(kubeconfig), leader_elect=False,
                   address="127.0.0.1", port=0, secure=True)
    )  # fmt: skip
    svc.server.start()
    try:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        answers = {}
        for path in ("/healthz", "/livez", "/metrics"):
            connection = http.client.HTTPSConnection(
                "127.0.0.1", svc.server.port, timeout=5, context=context
            )
            connection.request("GET", path)
            answers[path] = connection.getresponse().status
            connection.close()
        assert answers == {"/healthz": 200, "/livez": 200, "/metrics": 401}
    finally:
        svc.server.stop()


def test_shutdown_does_not_wait_for_a_loop_that_hangs_past_its_limit(service) -> None:
    """SIGTERM after /healthz failed for a hung loop (the kubelet restarting the process): the
    service stops within a second or two and so releases its Lease for the standby, instead of
    renewing it while waiting 30 s for a cycle that will not end."""
    svc = service(loop_stall_seconds=0.5)
    release = threading.Event()
    svc.scheduler.schedule_one = lambda timeout=None: release.wait(60)
    svc._start_scheduling()
    try:
        wait_for_status(svc, 500, within=3)
        began = time.monotonic()
        assert svc.shutdown() == 0
        assert time.monotonic() - began < 5
    finally:
        release.set()


def test_ready_is_said_only_after_the_start_up_collection(service, monkeypatch) -> None:
    # A client that starts its clock at ready (a rollout, the benchmark) must not see the
    # collector's full pass over the initial lists as scheduling time.
    import kubesched.service.run as run_module

    svc = service()
    ready_when_tuned: list[bool] = []
    monkeypatch.setattr(svc.scheduler, "start", lambda sync_timeout=None: None)
    monkeypatch.setattr(type(svc.backend), "synced", property(lambda _self: True))
    monkeypatch.setattr(
        run_module, "tune_after_initial_sync", lambda: ready_when_tuned.append(svc._ready())
    )
    monkeypatch.setattr(svc, "_start_scheduling", svc.stop.set)
    monkeypatch.setattr(svc.server, "start", lambda: None)  # the fixture started it
    svc.serve()
    assert ready_when_tuned == [False]
    assert svc._ready()
