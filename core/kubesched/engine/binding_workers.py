"""The binding workers: at most :data:`BINDING_WORKERS` binding cycles at once, on daemon threads.

kube-scheduler starts a goroutine per binding cycle, unbounded. Here each cycle needs a thread,
so they are bounded, and the bound is set by measurement (docs/benchmarks.md, "Binding
concurrency"): the apiserver and etcd spend less CPU per write the more writes arrive together
(etcd commits concurrent writes in one batch), so 16 at once cost them 2.15 CPU-s per 1,000
pods bound where 64 cost 1.52, while beyond 64 the threads' contention for the interpreter costs
the scheduler more than it saves (128: 1.55 s in the scheduler against 1.24 at 64).

A ``ThreadPoolExecutor`` cannot do one thing the plugin time limit needs: when a worker is stuck
in a plugin call, the :class:`~kubesched.engine.watchdog.Watchdog` gives its place to a new
thread (:meth:`BindingWorkers.serve` is that thread's ``resume``), so the pool keeps its size
while the stuck thread waits out its call. Daemon threads, so that a call hung for good never
holds up the process's exit.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from kubesched.engine.watchdog import Abandoned

__all__ = ["BINDING_WORKERS", "BindingWorkers"]

log = logging.getLogger(__name__)

_STOP = None

#: Binding cycles in flight at once by default (``kubesched run --binding-workers``).
BINDING_WORKERS = 64


class BindingWorkers:
    """A FIFO of jobs served by up to ``count`` threads, started as jobs arrive."""

    def __init__(
        self, count: int, name: str = "binding", *, serving: Callable[[Callable[[], None]], None]
    ) -> None:
        """``serving(resume)`` is called on each worker thread before it takes a job (the
        watchdog's :meth:`~kubesched.engine.watchdog.Watchdog.serve_as`)."""
        self._count = max(count, 1)
        self._name = name
        self._serving = serving
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple] | None] = queue.SimpleQueue()
        self._lock = threading.Condition()
        self._started = 0
        #: Workers waiting for a job that no submitted job has claimed yet.
        self._idle = 0
        self._stopped = 0
        self._closed = False

    def submit(self, job: Callable[..., Any], *args: Any) -> None:
        """Queue ``job(*args)``; a new worker starts for it when none is idle and the pool is
        not full (as a ThreadPoolExecutor does)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit a binding cycle after shutdown")
            start = not self._idle and self._started < self._count
            if start:
                self._started += 1
                name = f"{self._name}_{self._started - 1}"
            elif self._idle:
                self._idle -= 1
        self._jobs.put((job, args))
        if start:
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def serve(self) -> None:
        """The loop of a worker that takes over from a stuck one: it waits for a job first."""
        with self._lock:
            self._idle += 1
        self._work()

    def _work(self) -> None:
        self._serving(self.serve)
        while True:
            job = self._jobs.get()
            if job is _STOP:
                with self._lock:
                    self._stopped += 1
                    self._lock.notify_all()
                return
            call, args = job
            try:
                call(*args)
            except Abandoned:  # stuck in a plugin call: the thread that took over serves now
                return
            except Exception:  # a job's own bug must not end the worker
                log.exception("binding job failed")
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, timeout: float | None = None) -> None:
        """No more jobs; the queued ones still run. ``wait``: return once the workers have
        run them (``timeout`` bounds the wait). A worker stuck in a plugin call does not count:
        the thread that took over from it serves in its place."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            started = self._started
        for _ in range(started):
            self._jobs.put(_STOP)
        if wait:
            with self._lock:
                self._lock.wait_for(lambda: self._stopped >= started, timeout)
