"""Leader election against a real apiserver, under identities with a least-privilege Role.

Short durations (lease 2s, renew deadline 1.5s, retry 0.2s) keep the tests quick; a monitor
thread samples both candidates' ``is_leader()`` every millisecond to prove there is never a
moment with two leaders.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pytest
from kubernetes import client

from kubesched.config import LeaderElection
from kubesched.service.leaderelection import LeaderElector
from kubesched.testing.controlplane import Cluster, new_api_client

ClientFor = Callable[..., client.ApiClient]
RBAC_GROUP = "rbac.authorization.k8s.io"

LEASE = 2.0
RENEW_DEADLINE = 1.5
RETRY = 0.2
#: How long a candidate may take to notice a free Lease: one jittered retry and a request.
NOTICE = RETRY * 2.2 + 0.5


def election(namespace: str, name: str, **overrides: Any) -> LeaderElection:
    settings: dict[str, Any] = {
        "lease_duration": LEASE,
        "renew_deadline": RENEW_DEADLINE,
        "retry_period": RETRY,
        "resource_name": name,
        "resource_namespace": namespace,
    }
    settings.update(overrides)
    return LeaderElection(**settings)


def wait_until(what: str, probe: Callable[[], Any], timeout: float) -> float:
    """Poll every millisecond; the seconds it took, or fail naming ``what``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if probe():
            return time.monotonic() - start
        time.sleep(0.001)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what}")


@dataclass
class Candidate:
    """One elector running in its own thread, with its callbacks recorded."""

    name: str
    elector: LeaderElector
    stop: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    started_in: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None

    def run(self) -> Candidate:
        self.thread = threading.Thread(
            target=self.elector.run, args=(self.stop,), name=f"elector-{self.name}", daemon=True
        )
        self.thread.start()
        return self

    def on_started(self) -> None:
        self.started_in.append(threading.current_thread().name)
        self.started.set()

    def finish(self, timeout: float = 5.0) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout)
            assert not self.thread.is_alive(), f"{self.name}: run() did not return"


class Monitor:
    """Samples every candidate's ``is_leader()`` until stopped; records any overlap."""

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        self.samples = 0
        self.overlaps: list[list[str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="monitor", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            leaders = [c.name for c in self.candidates if c.elector.is_leader()]
            self.samples += 1
            if len(leaders) > 1:
                self.overlaps.append(leaders)
            time.sleep(0.001)

    def finish(self) -> None:
        self._stop.set()
        self._thread.join(5)
        assert self.samples > 100, "the monitor barely ran"
        assert not self.overlaps, f"two leaders at once: {self.overlaps[:5]}"


@pytest.fixture
def lease_name() -> str:
    return f"kubesched-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def electors(admin_client: client.ApiClient, namespace: str, lease_name: str) -> str:
    """A Role like kube-scheduler's for leases (create; get/update by name), bound to group
    ``electors``; returns the group."""
    group = f"electors-{uuid.uuid4().hex[:6]}"
    rbac = client.RbacAuthorizationV1Api(admin_client)
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "leader-election"},
            "rules": [
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "resourceNames": [lease_name],
                    "verbs": ["get", "update"],
                },
            ],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "leader-election"},
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "leader-election"},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": group}],
        },
    )
    return group


@pytest.fixture
def candidates(
    client_for: ClientFor, namespace: str, lease_name: str, electors: str
) -> Iterator[Callable[..., Candidate]]:
    """``candidates(name, api=None)``: a started candidate on the test's Lease."""
    made: list[Candidate] = []

    def make(name: str, api: client.ApiClient | None = None) -> Candidate:
        api = api or client_for(f"scheduler-{name}", [electors])
        holder: list[Candidate] = []
        elector = LeaderElector(
            api,
            election(namespace, lease_name),
            f"{name}_{uuid.uuid4().hex[:6]}",
            on_started_leading=lambda: holder[0].on_started(),
            on_stopped_leading=lambda: holder[0].stopped.set(),
        )
        candidate = Candidate(name, elector)
        holder.append(candidate)
        made.append(candidate)
        # The Role binding is read from a watch cache: wait until it applies to this identity.
        wait_until(f"RBAC for {name}", lambda: _can_create_leases(api, namespace), 10)
        return candidate.run()

    yield make
    for candidate in made:
        candidate.stop.set()
    for candidate in made:
        if candidate.thread is not None:
            candidate.thread.join(5)


def _can_create_leases(api: client.ApiClient, namespace: str) -> bool:
    review = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {
            "spec": {
                "resourceAttributes": {
                    "namespace": namespace,
                    "verb": "create",
                    "group": "coordination.k8s.io",
                    "resource": "leases",
                }
            },
        }
    )
    return bool(review.status.allowed)


def read_lease(admin_client: client.ApiClient, namespace: str, name: str) -> dict[str, Any]:
    response = client.CoordinationV1Api(admin_client).read_namespaced_lease(
        name, namespace, _preload_content=False
    )
    return json.loads(response.data)["spec"]


def leader_of(*group: Candidate) -> Candidate | None:
    leaders = [c for c in group if c.elector.is_leader()]
    return leaders[0] if len(leaders) == 1 else None


# -- settings ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("overrides", "identity", "message"),
    [
        pytest.param(
            {"resource_lock": "endpointsleases"},
            "a",
            'resourceLock: "endpointsleases" is not supported',
            id="not-leases",
        ),
        pytest.param(
            {"lease_duration": 1.5},
            "a",
            "must be greater than renewDeadline",
            id="lease-not-above-renew",
        ),
        pytest.param(
            {"retry_period": 1.3},
            "a",
            "must be greater than retryPeriod",
            id="renew-within-jittered-retry",
        ),
        pytest.param(
            {"retry_period": 0}, "a", "retryPeriod: must be greater than zero", id="zero-retry"
        ),
        pytest.param({}, "", "identity: must not be empty", id="no-identity"),
    ],
)
def test_bad_settings_are_refused_with_the_field_named(overrides, identity, message):
    config = election("default", "x", **overrides)
    with pytest.raises(ValueError, match="invalid leader election settings") as refused:
        LeaderElector(
            client.ApiClient(),
            config,
            identity,
            on_started_leading=lambda: None,
            on_stopped_leading=lambda: None,
        )
    assert message in str(refused.value)


# -- election ----------------------------------------------------------------------------------
def test_exactly_one_of_two_candidates_leads(
    candidates: Callable[..., Candidate],
    admin_client: client.ApiClient,
    namespace: str,
    lease_name: str,
):
    a, b = candidates("a"), candidates("b")
    monitor = Monitor([a, b])

    wait_until("a leader", lambda: leader_of(a, b), LEASE + NOTICE)
    time.sleep(3 * LEASE)  # many renewals: leadership must not move or double
    leader = leader_of(a, b)
    monitor.finish()

    assert leader is not None
    follower = b if leader is a else a
    assert leader.started.is_set() and not follower.started.is_set()
    assert leader.started_in == ["leader-elected"]  # its own thread, not run()'s
    assert leader.elector.holder == follower.elector.holder == leader.elector.identity
    spec = read_lease(admin_client, namespace, lease_name)
    assert spec["holderIdentity"] == leader.elector.identity
    assert spec["leaseDurationSeconds"] == int(LEASE)
    assert spec["leaseTransitions"] == 0
    assert spec["acquireTime"] < spec["renewTime"]  # renewals keep acquireTime


def test_stopping_the_leader_releases_the_lease(
    candidates: Callable[..., Candidate],
    admin_client: client.ApiClient,
    namespace: str,
    lease_name: str,
):
    a = candidates("a")
    wait_until("a to lead", a.elector.is_leader, LEASE + NOTICE)
    acquired = read_lease(admin_client, namespace, lease_name)

    a.finish()

    assert a.stopped.is_set() and not a.elector.is_leader()
    spec = read_lease(admin_client, namespace, lease_name)
    assert spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == acquired["leaseTransitions"]
    assert spec["acquireTime"] == spec["renewTime"] > acquired["acquireTime"]


def test_released_lease_is_taken_over_quickly(
    candidates: Callable[..., Candidate],
    admin_client: client.ApiClient,
    namespace: str,
    lease_name: str,
):
    a = candidates("a")
    wait_until("a to lead", a.elector.is_leader, LEASE + NOTICE)
    b = candidates("b")
    monitor = Monitor([a, b])
    time.sleep(LEASE)

    a.finish()
    took = wait_until("b to take over", b.elector.is_leader, LEASE + NOTICE)
    monitor.finish()

    # Through the release, not by expiry: well within one lease duration.
    assert took < NOTICE < LEASE
    assert a.stopped.is_set() and b.started.wait(1)
    spec = read_lease(admin_client, namespace, lease_name)
    assert spec["holderIdentity"] == b.elector.identity
    assert spec["leaseDurationSeconds"] == int(LEASE)
    assert spec["leaseTransitions"] == 1


def test_cut_off_leader_is_replaced_once_the_lease_expires(
    proxied: Callable[[str], tuple[client.ApiClient, Proxy]],
    candidates: Callable[..., Candidate],
    admin_client: client.ApiClient,
    namespace: str,
    lease_name: str,
):
    """A leader cut off from the apiserver can neither renew nor release: the follower takes
    over after a full lease duration without a change, and not before the leader has stepped
    down."""
    api, proxy = proxied("a")
    a = candidates("a", api)
    wait_until("a to lead", a.elector.is_leader, LEASE + NOTICE)
    b = candidates("b")
    monitor = Monitor([a, b])
    time.sleep(LEASE)

    proxy.hang()
    stepped_down = wait_until("a to step down", lambda: not a.elector.is_leader(), LEASE)
    took = stepped_down + wait_until("b to take over", b.elector.is_leader, 2 * LEASE + NOTICE)
    monitor.finish()

    assert stepped_down <= RENEW_DEADLINE + 0.1
    # b saw the record change at most one retry period before the cut.
    assert LEASE - RETRY * 2.2 - 0.1 < took <= LEASE + NOTICE, f"took over after {took:.2f}s"
    assert a.stopped.wait(1) and b.started.wait(1)
    spec = read_lease(admin_client, namespace, lease_name)
    assert spec["holderIdentity"] == b.elector.identity
    assert spec["leaseTransitions"] == 1


# -- losing the Lease --------------------------------------------------------------------------
class Proxy:
    """A TCP relay to the apiserver that a test can cut: ``refuse`` (the port closes) or
    ``hang`` (connections are accepted and requests swallowed, never answered)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.mode = "forward"
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="proxy", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(downstream)
            if self.mode != "forward":
                continue
            upstream = socket.create_connection(self.upstream)
            self.sockets.append(upstream)
            for src, dst in ((downstream, upstream), (upstream, downstream)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if self.mode == "forward":
                    dst.sendall(data)
        except OSError:
            pass

    def hang(self) -> None:
        self.mode = "hang"

    def refuse(self) -> None:
        self.mode = "refuse"
        self.close()

    def close(self) -> None:
        self.listener.close()
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()


@pytest.fixture
def proxied(
    control_plane: Cluster, electors: str
) -> Iterator[Callable[[str], tuple[client.ApiClient, Proxy]]]:
    """``proxied(name)``: a client for candidate ``name`` whose traffic goes through a Proxy."""
    made: list[tuple[client.ApiClient, Proxy]] = []

    def make(name: str) -> tuple[client.ApiClient, Proxy]:
        api = new_api_client(control_plane.kubeconfig_for(f"scheduler-{name}", [electors]))
        server = urlsplit(api.configuration.host)
        proxy = Proxy((server.hostname or "127.0.0.1", server.port or 443))
        if server.hostname and not server.hostname.replace(".", "").isdigit():
            api.configuration.tls_server_name = server.hostname
        api.configuration.host = f"https://127.0.0.1:{proxy.port}"
        made.append((api, proxy))
        return api, proxy

    yield make
    for api, proxy in made:
        api.close()
        proxy.close()


def _revoke_rbac(admin_client: client.ApiClient, namespace: str) -> None:
    client.RbacAuthorizationV1Api(admin_client).delete_namespaced_role_binding(
        "leader-election", namespace
    )


@pytest.mark.parametrize(
    ("cut", "slack"),
    [
        pytest.param("refuse", 0.1, id="connection-refused"),
        pytest.param("hang", 0.1, id="apiserver-hangs"),
        # RBAC changes reach the apiserver's authorizer through a watch: allow for that.
        pytest.param("forbid", 0.5, id="forbidden"),
    ],
)
def test_failed_renewals_end_leadership_within_the_renew_deadline(
    cut: str,
    slack: float,
    proxied: Callable[[str], tuple[client.ApiClient, Proxy]],
    candidates: Callable[..., Candidate],
    admin_client: client.ApiClient,
    namespace: str,
):
    api, proxy = proxied("a")
    a = candidates("a", api)
    wait_until("a to lead", a.elector.is_leader, LEASE + NOTICE)
    time.sleep(RENEW_DEADLINE)  # a few renewals first

    if cut == "forbid":
        _revoke_rbac(admin_client, namespace)
    else:
        getattr(proxy, cut)()
    lost_after = wait_until("a to step down", lambda: not a.elector.is_leader(), LEASE)
    # run() returns promptly even while a request hangs: while leading, no request outlives
    # the renew deadline.
    assert a.thread is not None
    returned_after = wait_until("run() to return", lambda: not a.thread.is_alive(), LEASE)
    leaders = [a.elector.is_leader() for _ in range(1000)]

    assert lost_after <= RENEW_DEADLINE + slack
    assert returned_after <= 0.3
    assert a.stopped.is_set()
    assert not any(leaders)
