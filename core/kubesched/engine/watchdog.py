"""The plugin time limit: plugin calls run on the thread that needs them, under a watchdog.

A cycle (the scheduling cycle of one pod, or its binding cycle) is written as a generator that
yields each time-limited plugin call as a :class:`PluginCall`; :meth:`Watchdog.drive` makes the
call on its own thread and sends the result back (or throws the exception in). No thread
hand-over is paid per call: that hand-over cost ~0.8 CPU-ms per pod on SchedulingBasic, about a
fifth of the scheduler's CPU (docs/benchmarks.md).

Python cannot stop a thread, so a call that overruns the limit is left where it is: the
watchdog marks it abandoned and, on a new thread, throws the overrun error into the cycle where
the call was made. The cycle handles it as any Error at that point (unreserve, forget, requeue)
and the new thread then goes on with whatever the stuck one was doing (``resume``: the
scheduling loop, or serving the binding workers' queue). When the abandoned call returns, its
thread gives its result to the call's ``late`` handler, never touches the cycle again, and ends
(:class:`Abandoned` unwinds it out of its loop).

Exactly one of the two goes on with a cycle: the caller when its call returns first, the
watchdog when the limit passes first; the choice is made under one lock (docs/design.md,
"The plugin time limit").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Abandoned", "Cycle", "PluginCall", "Watchdog"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class PluginCall:
    """One time-limited call a cycle asks its driver to make: ``call(*args)``."""

    call: Callable[..., Any]
    args: tuple
    #: The extension point and plugin running at this moment (named in the overrun's Error).
    running: Callable[[], tuple[str, str]]
    #: Gets the call's result should it return after being abandoned (an exception is dropped).
    late: Callable[[Any], None] | None = None


#: A cycle: yields the calls it wants made under the limit, receives their results.
Cycle = Generator[PluginCall, Any, None]


class Abandoned(BaseException):
    """Unwinds a thread whose call was abandoned: another thread has taken over its work.

    A ``BaseException``, so that no cycle's ``except Exception`` stops it on the way out."""


@dataclass(eq=False, slots=True)
class _Watched:
    request: PluginCall
    cycle: Cycle
    resume: Callable[[], None] | None
    deadline: float
    thread_name: str
    abandoned: bool = field(default=False)


class _Role(threading.local):
    #: What this thread goes on with after a cycle, for a replacement to take over.
    resume: Callable[[], None] | None = None


class Watchdog:
    """Drives cycles on their callers' threads; takes over one whose call overran ``limit``.

    ``limit`` ``None`` drives cycles with no watch at all. ``overrun(request)`` builds the
    exception thrown into a cycle whose call overran (and logs it); it runs on the watchdog's
    new thread while the plugin is still in the call, so ``request.running()`` still names it.
    """

    def __init__(self, limit: float | None, overrun: Callable[[PluginCall], BaseException]) -> None:
        self.limit = limit
        self._overrun = overrun
        self._lock = threading.Lock()
        self._watched: set[_Watched] = set()
        self._role = _Role()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        #: How often the watchdog looks: a tenth of the limit, between 10 ms and 1 s.
        self.tick = min(max((limit or 1.0) / 10, 0.01), 1.0)

    # -- the calling threads -----------------------------------------------------------------
    def serve_as(self, resume: Callable[[], None] | None) -> None:
        """Declare what the current thread does after each cycle: a thread that takes over
        from this one when it is stuck calls ``resume()`` after finishing the stuck cycle
        (``None``: nothing; the caller's own call returns late)."""
        self._role.resume = resume

    def drive(self, cycle: Cycle, error: BaseException | None = None) -> None:
        """Run ``cycle`` to its end on this thread, making each call it yields under the limit.

        ``error``: thrown into the cycle first (a take-over resumes with the overrun).
        Raises :class:`Abandoned` when this thread's call was abandoned and the thread has a
        role another thread now plays; returns quietly when it has none."""
        value: Any = None
        request: PluginCall | None = None
        try:
            while True:
                try:
                    request = cycle.send(value) if error is None else cycle.throw(error)
                except StopIteration:
                    return
                finally:
                    error = None
                value, error, abandoned = self._make(request, cycle)
                if abandoned is not None:
                    if abandoned.resume is not None:
                        raise Abandoned
                    return
        finally:
            # A failed call's traceback holds its frames, and through their callers (f_back)
            # this one: as it ends, this frame must hold neither an exception nor the last
            # request, whose arguments may hold one (PostFilter gets the FitError). Otherwise
            # a reference cycle per unschedulable attempt is left for the collector, which the
            # tuned GC reaches rarely (RSS grew ~0.4 MB/s over SchedulingWithMixedChurn's
            # churn).
            request = value = error = None

    def _make(
        self, request: PluginCall, cycle: Cycle
    ) -> tuple[Any, BaseException | None, _Watched | None]:
        """``request``'s call under the limit: its value or the exception it raised, and, when
        the call was abandoned meanwhile, its record (the outcome then went to ``late``).

        The exception's traceback holds this frame: an ``except … as`` name is unbound as its
        block ends (returning included), so the frame does not keep the exception (see the
        end of :meth:`drive`)."""
        if self.limit is None:
            try:
                return request.call(*request.args), None, None
            except Exception as exc:
                return None, exc, None
        watched = _Watched(
            request,
            cycle,
            self._role.resume,
            time.monotonic() + self.limit,
            threading.current_thread().name,
        )
        with self._lock:
            self._watched.add(watched)
        if self._thread is None:
            self._start()
        try:
            value = request.call(*request.args)
        except Exception as exc:
            return self._returned(watched, None, exc)
        except BaseException:
            # What no cycle handles (a plugin's BaseException) ends this thread, as it would
            # with no limit: its cycle is not watched any more, never taken over and resumed.
            with self._lock:
                self._watched.discard(watched)
            raise
        return self._returned(watched, value, None)

    def _returned(
        self, watched: _Watched, value: Any, error: BaseException | None
    ) -> tuple[Any, BaseException | None, _Watched | None]:
        """The outcome of ``watched``'s call, unless the watchdog abandoned it meanwhile."""
        with self._lock:
            abandoned = watched.abandoned
            if not abandoned:
                self._watched.discard(watched)
        if not abandoned:
            return value, error, None
        self._deliver_late(watched.request, value, error is None)
        return None, None, watched

    @staticmethod
    def _deliver_late(request: PluginCall, value: Any, ok: bool) -> None:
        if request.late is None or not ok:
            return
        try:
            request.late(value)
        except Exception:
            log.exception("handling the late result of an abandoned plugin call failed")

    # -- the watchdog ------------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is not None or self._closed.is_set():
                return
            self._thread = threading.Thread(target=self._watch, name="plugin-watchdog", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        while not self._closed.wait(self.tick):
            now = time.monotonic()
            with self._lock:
                overdue = [w for w in self._watched if w.deadline <= now]
                for watched in overdue:
                    watched.abandoned = True
                    self._watched.discard(watched)
            for watched in overdue:
                threading.Thread(
                    target=self._take_over, args=(watched,), name=watched.thread_name, daemon=True
                ).start()

    def _take_over(self, watched: _Watched) -> None:
        """On a new thread: finish the stuck cycle with the overrun, then do what the stuck
        thread did (its ``resume``)."""
        self._role.resume = watched.resume
        try:
            self.drive(watched.cycle, self._overrun(watched.request))
            if watched.resume is not None:
                watched.resume()
        except Abandoned:  # stuck again, and taken over again
            return
        except Exception:
            log.exception("finishing a cycle whose plugin call overran failed")

    def watching(self) -> int:
        """How many calls are being made under the limit at this moment."""
        with self._lock:
            return len(self._watched)

    def close(self) -> None:
        """Stop watching (calls in progress are no longer limited). Safe more than once."""
        self._closed.set()
