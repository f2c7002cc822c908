"""SIGTERM and SIGINT reach ``kubesched run`` through a handler that takes no lock.

A Python signal handler runs on the main thread between two bytecodes, which may be while
that thread holds the lock inside the stop Event (``Event.wait`` takes it around each wait).
A handler that set the Event there would wait for that lock forever: the scheduler would go
on binding and the signal would never be answered (seen in CI). Here another thread holds that
lock, which is what the main thread holding it looks like to a handler that takes it."""

from __future__ import annotations

import signal
import threading
import time
from types import SimpleNamespace

from kubesched.service.run import Service


def test_the_stop_request_takes_no_lock_and_is_kept_for_the_serve_loop() -> None:
    service = SimpleNamespace(stop=threading.Event(), signalled=0)
    held, release = threading.Event(), threading.Event()

    def hold_the_events_lock() -> None:
        with service.stop._cond:  # what Event.wait holds around its wait
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold_the_events_lock)
    holder.start()
    try:
        assert held.wait(5)
        began = time.monotonic()
        Service.request_stop(service, signal.SIGTERM)  # type: ignore[arg-type]
        assert time.monotonic() - began < 0.5  # returned without waiting for the lock
        assert service.signalled == signal.SIGTERM
    finally:
        release.set()
        holder.join(5)
