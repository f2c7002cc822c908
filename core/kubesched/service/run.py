"""``kubesched run``: the scheduler as a service in a cluster.

Start-up: load and validate the profile (exit 2 on a bad one), connect, serve ``/healthz``,
``/readyz`` and ``/metrics``, fill the cache from the informers, then schedule — at once, or once
this instance holds the leader Lease. Standbys keep their caches warm and never bind. SIGTERM
stops taking pods, lets in-flight bindings finish and releases the Lease. A leader that cannot
renew stops binding at once and exits (as kube-scheduler does), to come back as a standby.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass

from kubesched.backends.kube.backend import KubernetesBackend
from kubesched.backends.kube.connect import api_client_for, credentials_source
from kubesched.backends.kube.delegated_auth import DelegatedAuthorizer
from kubesched.backends.kube.recorder import EventRecorder
from kubesched.backends.kube.transport import Transport
from kubesched.config import SchedulerConfiguration
from kubesched.engine.binding_workers import BINDING_WORKERS
from kubesched.engine.metrics import SchedulerMetrics
from kubesched.engine.scheduler import Attempt, Scheduler
from kubesched.framework.registry import Registry
from kubesched.service.gc_tuning import tune_after_initial_sync
from kubesched.service.leaderelection import LeaderElector
from kubesched.service.secure_serving import server_context
from kubesched.service.server import HealthServer
from kubesched.service.startup import load_checked

__all__ = ["RunOptions", "run"]

log = logging.getLogger("kubesched.service.run")

EXIT_OK = 0
EXIT_LEADERSHIP_LOST = 1


@dataclass
class RunOptions:
    config: str | None
    kubeconfig: str | None = None
    leader_elect: bool | None = None
    address: str = "0.0.0.0"
    port: int = 10251
    sync_timeout: float = 60.0
    #: The longest the plugins of one extension point may take for a pod (seconds; 0: none).
    plugin_timeout: float = 30.0
    #: Binding cycles in flight at once (engine/binding_workers.py says why 64).
    binding_workers: int = BINDING_WORKERS
    #: How long the scheduling loop may go without starting a cycle before /healthz fails
    #: (``None``: four plugin time limits and 30 s, the longest a cycle can take; 300 s
    #: without a limit).
    loop_stall_seconds: float | None = None
    #: Serve HTTPS (kube-scheduler's secure port: ``tls_cert_file``/``tls_key_file``, else a
    #: self-signed certificate) and authorize ``/metrics`` through TokenReview and
    #: SubjectAccessReview; health paths stay open. (``kubesched run`` serves so on 10259
    #: unless given ``--port``; these defaults are the library's.)
    secure: bool = False
    tls_cert_file: str = ""
    tls_key_file: str = ""


#: client-go's leader-election health check tolerance, as kube-scheduler sets it.
LEADER_HEALTH_TOLERANCE = 20.0


def _attempt_result(attempt: Attempt) -> str:
    if attempt.node_name is not None:
        return "scheduled"
    return "error" if attempt.reason == "SchedulerError" else "unschedulable"


class Service:
    """Wires config, backend, scheduler, leader election and the health server together."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.registry = Registry.installed()
        self.config: SchedulerConfiguration = load_checked(options.config, self.registry)
        for warning in self.config.warnings:
            log.warning("%s", warning)
        connection = self.config.client_connection
        self.source = credentials_source(connection.kubeconfig, options.kubeconfig)
        self.api_client = api_client_for(connection.kubeconfig, options.kubeconfig)
        self.transport = Transport(self.api_client, connection.qps, connection.burst)
        self.metrics = SchedulerMetrics()
        leader_elect = self.config.leader_election.leader_elect
        if options.leader_elect is not None:
            leader_elect = options.leader_elect
        self.identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self.elector: LeaderElector | None = None
        if leader_elect:
            self.elector = LeaderElector(
                self.api_client,
                self.config.leader_election,
                self.identity,
                on_started_leading=self._started_leading,
                on_stopped_leading=self._stopped_leading,
            )
        if self.elector is not None:
            self.transport.write_deadline = self.elector.leading_until
        can_write = self.elector.is_leader if self.elector else (lambda: True)
        self.backend = KubernetesBackend(
            self.transport,
            recorder=EventRecorder(self.transport, guard=can_write),
            can_bind=can_write,
        )
        self.scheduler = Scheduler(
            self.config,
            self.backend,
            self.registry,
            metrics=self.metrics,
            plugin_timeout=options.plugin_timeout or None,
            binding_workers=options.binding_workers,
            record_attempts=False,  # nothing reads them; memory stays flat under churn
        )
        self.scheduler.observe_attempts(self._observe)
        secure: dict = {}
        if options.secure:
            secure = {
                "ssl_context": server_context(
                    options.tls_cert_file, options.tls_key_file, options.address
                ),
                "authorize": DelegatedAuthorizer(self.transport),
            }
        self.server = HealthServer(
            options.address,
            options.port,
            **secure,
            ready=self._ready,
            metrics=self._render_metrics,
            healthy=lambda: not self.unhealthy_reason(),
            health_reason=self.unhealthy_reason,
            reason=lambda: self.backend.unsynced_reason() or "not ready",
        )
        stall = options.loop_stall_seconds
        if stall is None:
            stall = 4 * options.plugin_timeout + 30 if options.plugin_timeout else 300.0
        self.loop_stall_seconds = stall
        self.stop = threading.Event()
        #: The signal that asked the service to stop (0: none yet); see :meth:`request_stop`.
        self.signalled = 0
        #: Set once the connections are open (:meth:`_connect_ahead`): part of ready.
        self._connected = threading.Event()
        #: Set only after in-flight bindings finished: then the elector releases the Lease.
        self._release = threading.Event()
        self.lost_leadership = False
        self._scheduling: threading.Thread | None = None
        self._electing: threading.Thread | None = None
        self._render_lock = threading.Lock()
        self._renders = 0
        self._last_render = b""

    # -- health and metrics ------------------------------------------------------------------
    def _ready(self) -> bool:
        return self.backend.synced and self._connected.is_set()

    def unhealthy_reason(self) -> str:
        """``""`` while healthy; else why: the scheduling loop exited or stalled, or the leader
        has not renewed its Lease (kube-scheduler's leader-election check)."""
        if self.stop.is_set():
            return ""
        reason = self.scheduler.loop_stalled(self.loop_stall_seconds)
        if not reason and self._scheduling is not None and not self._scheduling.is_alive():
            reason = "the scheduling loop has exited"
        if not reason and self.elector is not None:
            reason = self.elector.check(LEADER_HEALTH_TOLERANCE)
        return reason

    def _render_metrics(self) -> bytes:
        """The exposition. One render at a time (it costs tens of milliseconds under the GIL,
        docs/benchmarks.md): scrapes that arrive while one runs share its answer rather than
        each rendering, so concurrent scrapers cost one render; a lone scrape renders anew."""
        renders_before = self._renders
        with self._render_lock:
            if self._renders != renders_before:  # finished while this scrape waited
                return self._last_render
            self.metrics.set_pending(self.scheduler.queue.pending())
            if self.elector is not None:
                self.metrics.set_leader(self.elector.is_leader())
            self._last_render = self.metrics.render()
            self._renders += 1
            return self._last_render

    def _observe(self, attempt: Attempt, seconds: float) -> None:
        self.metrics.attempt(_attempt_result(attempt), attempt.pod.scheduler_name, seconds)

    # -- leadership --------------------------------------------------------------------------
    def _started_leading(self) -> None:
        log.info("became the leader (%s); scheduling", self.identity)
        self._start_scheduling()

    def _stopped_leading(self) -> None:
        if self.stop.is_set():
            return
        log.error("leader election lost (%s); exiting", self.identity)
        self.lost_leadership = True
        self.stop.set()

    def _start_scheduling(self) -> None:
        self._scheduling = threading.Thread(
            target=self.scheduler.run, args=(self.stop,), name="scheduling", daemon=True
        )
        self._scheduling.start()

    # -- lifecycle ---------------------------------------------------------------------------
    def serve(self) -> int:
        self.server.start()
        log.info(
            "kubesched starting: profiles %s, credentials %s, health on %s:%d",
            ", ".join(self.scheduler.frameworks),
            self.source,
            self.options.address,
            self.server.port,
        )
        started = time.monotonic()
        self.scheduler.start(sync_timeout=self.options.sync_timeout)
        log.info("caches synced in %.1fs", time.monotonic() - started)
        # Before ready, not after: the full collection over what the initial lists built is
        # start-up work, and once /readyz answers ready the scheduler should be scheduling
        # (a client that starts its clock at ready saw it as part of the first pods' time).
        tune_after_initial_sync()  # for the process's life: never undone
        self._connect_ahead()
        if self.elector is None:
            self._start_scheduling()
        else:
            self._electing = threading.Thread(
                target=self._elect, name="leader-election", daemon=True
            )
            self._electing.start()
        while not self.stop.wait(0.2):
            if self.signalled:
                log.info(
                    "received %s; finishing in-flight bindings",
                    signal.Signals(self.signalled).name,
                )
                break
        return self.shutdown()

    def request_stop(self, signum: int) -> None:
        """What the SIGTERM/SIGINT handler does: one plain assignment, no lock taken. The
        handler runs on the main thread between two bytecodes, which may be while that thread
        holds the lock inside :attr:`stop` (``Event.wait`` takes it around each wait); setting
        the Event there would wait for that lock forever, leaving the scheduler running and
        the signal unanswered (seen once in CI: SIGTERM 0.2 s after ready, the process still
        binding 30 s later). The loop in :meth:`serve` reads it every 0.2 s."""
        self.signalled = signum

    def _connect_ahead(self) -> None:
        """Open the connections the binding workers and writers will use, before /readyz
        says ready: in the first burst each would otherwise cost a TLS handshake
        (docs/benchmarks.md, "Connections opened ahead"). A standby opens them too, to take
        over at full speed; connections the server closes meanwhile are opened again when
        needed."""
        began = time.monotonic()
        try:
            opened = self.transport.pool.prewarm(
                self.options.binding_workers + self.backend.writer_threads
            )
            log.info(
                "opened %d connections to the apiserver in %.2fs", opened, time.monotonic() - began
            )
        finally:
            self._connected.set()

    def _elect(self) -> None:
        assert self.elector is not None
        self.elector.run(self._release)  # returns on release, or when leadership is lost
        if not self._release.is_set():
            self._stopped_leading()

    def shutdown(self) -> int:
        """Stop; after a lost Lease within a second or two (nothing may be written any more:
        every guarded write already refuses, and those in flight end with the term)."""
        # A loop that stalled past its limit (what /healthz reports, and why the kubelet sends
        # SIGTERM) is not waited for: the Lease is released at once for the standby.
        stalled = bool(self.scheduler.loop_stalled(self.loop_stall_seconds))
        self.stop.set()
        lost = self.lost_leadership
        self.scheduler.queue.close()
        if self._scheduling is not None:
            self._scheduling.join(timeout=1 if lost or stalled else 30)
        self.scheduler.stop(wait_for_bindings=not lost)
        self._release.set()
        if self._electing is not None:
            self._electing.join(timeout=1 if lost else 10)
        self.backend.stop(wait=not lost)
        self.server.stop()
        log.info("kubesched stopped")
        return EXIT_LEADERSHIP_LOST if self.lost_leadership else EXIT_OK


def run(options: RunOptions) -> int:
    """Run until SIGTERM/SIGINT; returns the process exit code."""
    service = Service(options)

    def _terminate(signum: int, _frame: object) -> None:
        service.request_stop(signum)  # no lock, no logging here: see request_stop

    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    code = service.serve()
    if service.lost_leadership:
        # As kube-scheduler does ("leaderelection lost"): exit now, not after worker threads
        # (a binding worker in a hung plugin) that the interpreter would wait for.
        logging.shutdown()
        os._exit(code)
    return code
