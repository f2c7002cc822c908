"""List then watch one resource, delivering adds, updates and deletes without loss or repeats.

Like client-go's reflector: a paginated list gives a resourceVersion, a watch continues from it
(with bookmarks, a server-side timeout and a client-side inactivity timeout so a dead connection
cannot hang it), a dropped stream re-watches from the last version seen, and a 410 Gone (or any
failure to resume) re-lists. A watch that ends at the inactivity timeout (a quiet resource: no
event or bookmark for that long) is watched again at once, without backoff or a warning. A
re-list is diffed against what was delivered before, so handlers see exactly the changes they
missed: no pod is lost and none is delivered twice.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from kubesched.api.objects import ObjectError
from kubesched.backends.kube.transport import ApiError, Transport

__all__ = ["Informer"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Expired(Exception):
    """The resourceVersion we watch from is gone: re-list."""


class Informer(Generic[T]):
    """Keeps ``handlers`` up to date with every object at ``path`` (a list URL)."""

    def __init__(
        self,
        transport: Transport,
        path: str,
        parse: Callable[[dict[str, Any]], T],
        key: Callable[[T], str],
        version: Callable[[T], str],
        on_add: Callable[[T], None],
        on_update: Callable[[T, T], None],
        on_delete: Callable[[T], None],
        *,
        page_size: int = 500,
        watch_seconds: int = 300,
        inactivity_seconds: float = 90.0,
        field_selector: str | None = None,
    ) -> None:
        self.transport = transport
        self.path = path
        self.parse = parse
        self.key = key
        self.version = version
        self.on_add, self.on_update, self.on_delete = on_add, on_update, on_delete
        self.page_size = page_size
        self.watch_seconds = watch_seconds
        self.inactivity_seconds = inactivity_seconds
        self.field_selector = field_selector
        self.store: dict[str, T] = {}
        self.synced = threading.Event()
        self.relists = 0
        #: The last list/watch failure, for readiness messages ("" once it works again).
        self.last_error = ""
        #: Where the next watch starts: the last resourceVersion seen ("" to list first).
        self._resource_version = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"informer{self.path}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        delay = 0.5
        while not self._stop.is_set():
            try:
                if not self._resource_version:
                    self._resource_version = self._list()
                    self.synced.set()
                    self.last_error = ""
                self._watch()
                delay = 0.5
            except _Expired:
                log.info("watch of %s expired; re-listing", self.path)
                self._resource_version = ""
            except ApiError as exc:
                self.last_error = str(exc)
                wait = delay * (1 + random.random() / 2)
                if exc.retry_after is not None:
                    wait = max(wait, min(exc.retry_after, 60.0))
                log.warning("list/watch of %s failed: %s; retrying in %.1fs", self.path, exc, wait)
                self._stop.wait(wait)
                delay = min(delay * 2, 30.0)
                # Too many requests: watch again from where we were (client-go's reflector);
                # a re-list would be the costliest request of all for a loaded apiserver.
                if exc.status != 429 and (exc.status in (401, 403, 404, 410) or delay >= 30.0):
                    self._resource_version = ""  # start over from a fresh list
            except Exception:  # a bug in a handler must not stop the informer for good
                log.exception("informer for %s failed; re-listing", self.path)
                self._stop.wait(delay)
                self._resource_version = ""

    # -- list ----------------------------------------------------------------------------------
    def _parse(self, raw: dict[str, Any]) -> T | None:
        # managedFields are nearly half of a bound pod's JSON and nothing here reads them;
        # kube-scheduler's informers drop them as well (a transform on every informer).
        metadata = raw.get("metadata")
        if isinstance(metadata, dict):
            metadata.pop("managedFields", None)
        try:
            return self.parse(raw)
        except ObjectError as exc:
            log.warning("ignoring malformed object: %s", exc)
            return None

    def _list(self) -> str:
        fresh: dict[str, T] = {}
        token: str | None = None
        resource_version = ""
        while True:
            query: list[tuple[str, str | int]] = [("limit", self.page_size)]
            if token:
                query.append(("continue", token))
            if self.field_selector:
                query.append(("fieldSelector", self.field_selector))
            page = self.transport.request("GET", self.path, query)
            for raw in page.get("items") or ():
                obj = self._parse(raw)
                if obj is not None:
                    fresh[self.key(obj)] = obj
            meta = page.get("metadata") or {}
            resource_version = meta.get("resourceVersion", "")
            token = meta.get("continue")
            if not token:
                break
        self.relists += 1
        self._replace(fresh)
        return resource_version

    def _replace(self, fresh: dict[str, T]) -> None:
        """Deliver the difference between what handlers saw and the fresh list."""
        old = self.store
        self.store = fresh
        for key, obj in fresh.items():
            previous = old.get(key)
            if previous is None:
                self.on_add(obj)
            elif self.version(previous) != self.version(obj):
                self.on_update(previous, obj)
        for key, obj in old.items():
            if key not in fresh:
                self.on_delete(obj)

    # -- watch ---------------------------------------------------------------------------------
    def _watch(self) -> None:
        """Watch from ``_resource_version``, moving it on with every event and bookmark (so a
        watch that breaks resumes after the last event delivered, none delivered twice).

        Ends normally when the server closes the watch (``timeoutSeconds``) or when nothing came
        for ``inactivity_seconds``: on a quiet resource that is expected, not a failure.
        """
        query = [
            ("watch", "true"),
            ("resourceVersion", self._resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", self.watch_seconds),
        ]
        if self.field_selector:
            query.append(("fieldSelector", self.field_selector))
        lines = self.transport.stream_lines(
            self.path, query, timeout=(10.0, self.inactivity_seconds)
        )
        stream = iter(lines)
        heard = time.monotonic()
        while not self._stop.is_set():
            try:
                line = next(stream)
            except StopIteration:
                return
            except ApiError as exc:
                if not self._went_quiet(exc, heard):
                    raise
                log.debug(
                    "watch of %s: no event or bookmark for %.0fs; watching again from "
                    "resourceVersion %s",
                    self.path,
                    self.inactivity_seconds,
                    self._resource_version,
                )
                return
            heard = time.monotonic()
            if self._stop.is_set():
                return
            self._event(json.loads(line))

    def _went_quiet(self, exc: ApiError, heard: float) -> bool:
        """Whether ``exc`` is the inactivity timeout: no answer (status 0) and nothing heard
        for ``inactivity_seconds`` since ``heard``, rather than a connection broken sooner."""
        return exc.status == 0 and time.monotonic() - heard >= self.inactivity_seconds

    def _event(self, event: dict[str, Any]) -> None:
        """Apply one watch event and move ``_resource_version`` on to it; an ``ERROR`` event
        raises (:class:`_Expired` for 410 Gone)."""
        kind = event.get("type")
        raw = event.get("object") or {}
        if kind == "ERROR":
            if raw.get("code") == 410:
                raise _Expired()
            raise ApiError(int(raw.get("code") or 0), raw.get("reason", ""), raw.get("message", ""))
        if kind != "BOOKMARK":
            self._apply(kind, raw)
        version = (raw.get("metadata") or {}).get("resourceVersion")
        if version:
            self._resource_version = version

    def _apply(self, kind: str | None, raw: dict[str, Any]) -> None:
        obj = self._parse(raw)
        if obj is None:
            return
        key = self.key(obj)
        previous = self.store.get(key)
        if kind == "DELETED":
            if previous is not None:
                del self.store[key]
                self.on_delete(obj)
            return
        self.store[key] = obj
        if previous is None:
            self.on_add(obj)
        else:
            self.on_update(previous, obj)
