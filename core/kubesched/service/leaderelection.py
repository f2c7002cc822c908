"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

The algorithm is client-go's ``tools/leaderelection`` with its ``LeaseLock``:

- Candidates read the Lease every ``retry_period`` (jittered by up to 1.2×, as client-go's
  ``JitterFactor``) and take it over when it has no holder, or when the record has not changed for
  the record's ``leaseDurationSeconds``. Expiry is judged on the local monotonic clock from the
  moment this process last saw the record change, never from the remote ``renewTime``, so clock
  skew between machines does not matter (only clock rate does).
- Every write is an update of the last object read or written, carrying its ``resourceVersion``:
  when two candidates race, the apiserver answers one of them 409 Conflict and that one tries
  again later. A missing Lease is created. A takeover increments ``leaseTransitions``; a renewal
  keeps ``acquireTime`` and ``leaseTransitions``.
- The leader renews every ``retry_period`` (first optimistically from its cached object, then by
  reading the Lease again). When no renewal has succeeded for ``renew_deadline``, leadership is
  lost: :meth:`LeaderElector.is_leader` turns false at that instant and stays false.
- When stopped while leading, the Lease is released as client-go's ``ReleaseOnCancel`` does: the
  holder is cleared, ``leaseDurationSeconds`` is 1, ``acquireTime`` and ``renewTime`` are now and
  ``leaseTransitions`` is kept, so the next candidate takes over at its next try.

Two deliberate differences, both stricter: the renewal deadline is counted from when the last
successful renewal was sent (client-go counts from the start of the renewal round, one retry period
later), and seeing another holder in the record ends leadership at once.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from kubesched.config import LeaderElection

__all__ = ["JITTER_FACTOR", "LeaderElector"]

log = logging.getLogger(__name__)

#: client-go's ``JitterFactor``: candidates wait ``retry_period × (1 + U[0, 1.2))`` between tries.
JITTER_FACTOR = 1.2

_LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
_LEASE_PATH = _LEASES_PATH + "/{name}"
_JSON = "application/json"


@dataclass(frozen=True, slots=True)
class _Record:
    """client-go's ``LeaderElectionRecord``, as stored in a Lease spec."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> _Record:
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.leader_transitions,
        }


def _micro_time() -> str:
    """Now as a ``metav1.MicroTime``: RFC 3339 with exactly six fractional digits, in UTC."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _validate(config: LeaderElection, identity: str) -> None:
    """Every problem client-go's ``NewLeaderElector`` would refuse, reported at once."""
    lease, renew, retry = config.lease_duration, config.renew_deadline, config.retry_period
    checks = [
        (
            config.resource_lock == "leases",
            f'resourceLock: "{config.resource_lock}" is not supported; use "leases"',
        ),
        (lease > 0, f"leaseDuration: must be greater than zero, got {lease:g}s"),
        (renew > 0, f"renewDeadline: must be greater than zero, got {renew:g}s"),
        (retry > 0, f"retryPeriod: must be greater than zero, got {retry:g}s"),
        (not 0 < lease < 1, f"leaseDuration: must be at least 1s (whole seconds), got {lease:g}s"),
        (
            lease > renew,
            f"leaseDuration: must be greater than renewDeadline ({renew:g}s), got {lease:g}s",
        ),
        (
            renew > JITTER_FACTOR * retry,
            f"renewDeadline: must be greater than retryPeriod × "
            f"{JITTER_FACTOR} ({JITTER_FACTOR * retry:g}s), got {renew:g}s",
        ),
        (bool(config.resource_name), "resourceName: must not be empty"),
        (bool(config.resource_namespace), "resourceNamespace: must not be empty"),
    ]
    errors = [f"leaderElection.{message}" for ok, message in checks if not ok]
    if not identity:
        errors.append("identity: must not be empty (e.g. <hostname>_<uuid>)")
    if errors:
        raise ValueError("invalid leader election settings:\n  " + "\n  ".join(errors))


class LeaderElector:
    """Elects one leader among the processes that share ``config``'s Lease.

    ``on_started_leading`` runs in a new daemon thread once the Lease is acquired;
    ``on_stopped_leading`` runs in :meth:`run`'s thread when leadership ends, by loss or by
    ``stop``, and only if leadership had started (client-go calls it in every case). On ``stop``,
    :meth:`is_leader` turns False before the release is sent; the caller should let in-flight
    work guarded by the Lease finish first, as client-go's ``ReleaseOnCancel`` asks. One
    elector runs once: :meth:`run` closes its client when it returns.

    Like kube-scheduler, the elector talks to the apiserver through a client of its own, made
    from ``api_client``'s configuration and headers: requests time out after half the renew
    deadline (at least one second, as client-go's ``resourcelock.NewFromKubeconfig`` sets them),
    are never retried behind our back (the client's default retries would multiply that
    timeout) and, while leading, never outlive the renew deadline.
    """

    def __init__(
        self,
        api_client: client.ApiClient,
        config: LeaderElection,
        identity: str,
        *,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
    ) -> None:
        _validate(config, identity)
        self._api = _leader_election_client(api_client)
        self._config = config
        self._identity = identity
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._describe = f"{config.resource_namespace}/{config.resource_name}"
        self._timeout = min(max(config.renew_deadline / 2, 1.0), config.renew_deadline)
        self._lock = threading.Lock()
        # Monotonic instant until which this process may act as leader; 0 when not leading.
        # Only ever extended by a renewal that completes before it passes (see _extend).
        self._leader_until = 0.0
        # client-go's observedRecord / observedRawRecord / observedTime.
        self._observed = _Record()
        self._observed_time = 0.0
        self._reported_leader = ""
        # The Lease object as last read or written: metadata.resourceVersion guards every update.
        self._lease: dict[str, Any] | None = None

    # -- public ------------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        """This candidate's ``holderIdentity``."""
        return self._identity

    @property
    def holder(self) -> str:
        """The holder in the last record observed; ``""`` when none has been seen."""
        with self._lock:
            return self._observed.holder_identity

    def is_leader(self) -> bool:
        """True while this process holds the Lease and its last renewal is within the deadline."""
        with self._lock:
            return time.monotonic() < self._leader_until

    def check(self, max_tolerable_expired_lease: float = 20.0) -> str:
        """client-go's ``LeaderElector.Check`` (kube-scheduler's leader-election health check,
        20 s): ``""``, or why this process, the Lease's holder in the last record observed,
        has not renewed it for longer than the lease duration plus the tolerance (a deadlock or
        a hung renewal would otherwise leave a leader that neither leads nor exits)."""
        with self._lock:
            held = self._observed.holder_identity == self._identity
            since = time.monotonic() - self._observed_time
        if held and since > self._config.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self._describe}"
        return ""

    def leading_until(self) -> float:
        """The monotonic instant this process's term ends unless renewed (0 when not leading):
        no write it sends as leader may still be in flight after it."""
        with self._lock:
            return self._leader_until

    def run(self, stop: threading.Event) -> None:
        """Acquire, lead and renew until ``stop`` is set or leadership is lost (see the class)."""
        try:
            self._run(stop)
        finally:
            self._api.close()

    def _run(self, stop: threading.Event) -> None:
        with self._lock:
            self._leader_until = 0.0
        log.info("attempting to acquire leader lease %s as %s", self._describe, self._identity)
        if not self._acquire(stop):
            return
        log.info("successfully acquired lease %s as %s", self._describe, self._identity)
        threading.Thread(
            target=self._on_started_leading, name="leader-elected", daemon=True
        ).start()
        lost = self._renew(stop)
        with self._lock:
            self._leader_until = 0.0
        if lost:
            log.info("failed to renew lease %s in time: stopped leading", self._describe)
        else:
            self._release()
            log.info("stopped leading lease %s: asked to stop", self._describe)
        self._on_stopped_leading()

    # -- the loops ---------------------------------------------------------------------------
    def _acquire(self, stop: threading.Event) -> bool:
        """Try until the Lease is ours (True) or ``stop`` is set (False)."""
        while not stop.is_set():
            sent = time.monotonic()
            acquired = self._try_acquire_or_renew(sent + self._config.renew_deadline)
            self._report_transition()
            if acquired and self._extend(sent, acquiring=True):
                if not stop.is_set():
                    return True
                # Stopped while this try was in flight: hand the Lease straight back.
                with self._lock:
                    self._leader_until = 0.0
                self._release()
                return False
            log.debug("failed to acquire lease %s", self._describe)
            period = self._config.retry_period
            if stop.wait(period + random.random() * JITTER_FACTOR * period):
                return False
        return False

    def _renew(self, stop: threading.Event) -> bool:
        """Renew every retry period; True when leadership was lost, False when stopped."""
        while True:
            with self._lock:
                until = self._leader_until
            if stop.wait(max(0.0, min(self._config.retry_period, until - time.monotonic()))):
                return False
            sent = time.monotonic()
            if sent >= until:
                return True
            renewed = self._try_acquire_or_renew(until)
            self._report_transition()
            if renewed:
                if not self._extend(sent, acquiring=False):
                    return True
                log.debug("successfully renewed lease %s", self._describe)
            elif self.holder not in ("", self._identity):
                with self._lock:
                    self._leader_until = 0.0
                return True

    def _extend(self, sent: float, *, acquiring: bool) -> bool:
        """Lead until ``renew_deadline`` after ``sent``, when a write sent then succeeded.

        False, leaving leadership as it is, when the answer came too late: after that deadline,
        or (renewing) after the current term already ended. Checked and set under the lock that
        :meth:`is_leader` takes, so once it has answered False for a term no late response can
        turn it back to True.
        """
        with self._lock:
            now = time.monotonic()
            until = sent + self._config.renew_deadline
            if now >= until or (not acquiring and now >= self._leader_until):
                return False
            self._leader_until = until
            return True

    # -- client-go's tryAcquireOrRenew and release ---------------------------------------------
    def _try_acquire_or_renew(self, deadline: float) -> bool:
        """client-go's ``tryAcquireOrRenew``; no request outlives the monotonic ``deadline``."""
        now = _micro_time()
        record = _Record(
            holder_identity=self._identity,
            lease_duration_seconds=int(self._config.lease_duration),
            acquire_time=now,
            renew_time=now,
        )
        # 1. The leader's fast path: update the cached object, assuming it is still current.
        if self.holder == self._identity and self._lease_valid() and self._lease is not None:
            observed = self._observed
            fast = replace(
                record,
                acquire_time=observed.acquire_time,
                leader_transitions=observed.leader_transitions,
            )
            try:
                self._update(fast, deadline)
                return True
            except Exception as e:  # any failure falls back to the slow path
                log.warning("optimistic renewal of %s failed: %s", self._describe, _brief(e))

        # 2. Read the Lease, or create it when it does not exist.
        try:
            lease = self._request("GET", _LEASE_PATH, None, deadline)
        except client.ApiException as e:
            if e.status != 404:
                log.warning("error retrieving lease %s: %s", self._describe, _brief(e))
                return False
            try:
                self._lease = self._request("POST", _LEASES_PATH, self._body(record), deadline)
            except Exception as e:
                log.warning("error initially creating lease %s: %s", self._describe, _brief(e))
                return False
            self._set_observed(record)
            return True
        except Exception as e:  # network errors, timeouts: try again later
            log.warning("error retrieving lease %s: %s", self._describe, _brief(e))
            return False
        self._lease = lease
        current = _Record.from_spec(lease.get("spec") or {})

        # 3. Has the record changed since last seen? Expiry counts from when it last did.
        if current != self._observed or not self._observed_time:
            self._set_observed(current)
        holder = current.holder_identity
        if holder and holder != self._identity and self._lease_valid():
            log.debug("lease %s is held by %s, not yet expired", self._describe, holder)
            return False

        # 4. Take over or renew: a renewal keeps acquireTime and the transition count.
        if holder == self._identity:
            record = replace(
                record,
                acquire_time=current.acquire_time,
                leader_transitions=current.leader_transitions,
            )
        else:
            record = replace(record, leader_transitions=current.leader_transitions + 1)
        try:
            self._update(record, deadline)
        except Exception as e:  # a 409 means another candidate won this round
            log.warning("failed to update lease %s: %s", self._describe, _brief(e))
            return False
        return True

    def _release(self) -> None:
        """Give the Lease up if this process still holds it, as client-go's ``release``."""
        with self._lock:
            held = self._observed.holder_identity == self._identity
            transitions = self._observed.leader_transitions
        if not held or self._lease is None:
            return
        now = _micro_time()
        record = _Record("", 1, now, now, transitions)
        try:
            self._update(record, math.inf)
        except Exception as e:
            log.error("failed to release lease %s: %s", self._describe, _brief(e))
            return
        log.info("released lease %s", self._describe)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _set_observed(self, record: _Record) -> None:
        with self._lock:
            self._observed = record
            self._observed_time = time.monotonic()

    def _lease_valid(self) -> bool:
        """client-go's ``isLeaseValid``: the observed record changed within its duration."""
        with self._lock:
            duration = self._observed.lease_duration_seconds
            return self._observed_time + duration > time.monotonic()

    def _report_transition(self) -> None:
        holder = self.holder
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            log.info("new leader elected for lease %s: %s", self._describe, holder)

    # -- requests ------------------------------------------------------------------------------
    def _update(self, record: _Record, deadline: float) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized: read or create it first")
        body = dict(self._lease)
        body["spec"] = record.to_spec()
        self._lease = self._request("PUT", _LEASE_PATH, body, deadline)
        self._set_observed(record)

    def _body(self, record: _Record) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self._config.resource_name,
                "namespace": self._config.resource_namespace,
            },
            "spec": record.to_spec(),
        }

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None, deadline: float
    ) -> dict[str, Any]:
        """One call to the Lease API, cut off at ``deadline`` (monotonic) and after the request
        timeout; the decoded object, or ``ApiException`` for non-2xx.

        The typed ``CoordinationV1Api`` methods re-validate a body into ``V1Lease`` and write
        MicroTime fields with ``datetime.isoformat()``, which drops the fraction when the
        microseconds are zero; the apiserver refuses that (400, "cannot parse ... as .000000").
        Writing the JSON ourselves keeps the exact ``MicroTime`` form.
        """
        timeout = min(self._timeout, deadline - time.monotonic())
        if timeout < 0.01:
            raise TimeoutError("the renew deadline has passed")
        method, url, headers, payload, post = self._api.param_serialize(
            method=method,
            resource_path=path,
            path_params={
                "namespace": self._config.resource_namespace,
                "name": self._config.resource_name,
            },
            header_params={"Accept": _JSON, "Content-Type": _JSON},
            body=body,
            auth_settings=["BearerToken"],
        )
        response = self._api.call_api(method, url, headers, payload, post, _request_timeout=timeout)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise client.ApiException(http_resp=response)
        return json.loads(data)


def _leader_election_client(api_client: client.ApiClient) -> client.ApiClient:
    """A client for the Lease alone: ``api_client``'s settings and headers, no retries."""
    configuration = copy.copy(api_client.configuration)
    configuration.retries = False
    own = client.ApiClient(configuration)
    own.default_headers.update(api_client.default_headers)
    own.user_agent = f"{api_client.user_agent}/leader-election"
    return own


def _brief(error: Exception) -> str:
    """One line for a failed request: the HTTP status and reason, or the exception."""
    if isinstance(error, client.ApiException) and error.status:
        try:
            message = json.loads(error.body or "{}").get("message", "")
        except ValueError:
            message = ""
        return f"{error.status} {error.reason}" + (f": {message}" if message else "")
    return f"{type(error).__name__}: {error}"
