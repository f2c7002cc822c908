"""A watch that ends at the inactivity timeout is the normal end of a watch on a quiet resource.

Namespaces, ReplicationControllers and PVs may see no event and no bookmark for longer than the
informer's inactivity timeout; the read then times out and the informer watches again from the
last resourceVersion it saw. That is logged at DEBUG, with no backoff; a connection broken
before the timeout and an error answer are still warnings. On loopback, against a scripted
server (tests/core/test_hostile_server.py).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time

from test_hostile_server import Hostile, answer, raw_informer, watch_requests

INACTIVITY = 0.5
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
)
SERVER_ERROR = {"kind": "Status", "reason": "InternalError", "code": 500, "message": "etcd down"}


def chunk(event: dict) -> bytes:
    line = json.dumps(event).encode() + b"\n"
    return f"{len(line):x}\r\n".encode() + line + b"\r\n"


def namespace(kind: str, version: str) -> dict:
    return {"type": kind, "object": {"metadata": {"name": "ns1", "resourceVersion": version}}}


def watch_version(request: bytes) -> str:
    found = re.search(rb"[?&]resourceVersion=(\d*)", request.split(b"\r\n", 1)[0])
    assert found is not None
    return found.group(1).decode()


def test_a_quiet_watch_times_out_at_debug_and_real_failures_stay_warnings(caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="kubesched.backends.kube.informer")
    watches: list[bytes] = []
    began: list[float] = []
    held = threading.Event()

    def handle(server: Hostile, sock: socket.socket) -> None:
        for request in watch_requests(server, sock):
            watches.append(request)
            began.append(time.monotonic())
            if len(watches) == 1:  # one event, then silence past the inactivity timeout
                sock.sendall(STREAM_HEAD + chunk(namespace("ADDED", "6")))
                server.stopped.wait(5 * INACTIVITY)
                return
            if len(watches) == 2:  # a bookmark, then the connection breaks at once
                sock.sendall(STREAM_HEAD + chunk(namespace("BOOKMARK", "7")))
                return
            if len(watches) == 3:
                sock.sendall(answer(SERVER_ERROR, "500 Internal Server Error"))
                continue
            held.set()
            server.stopped.wait(10)
            return

    server = Hostile(handle)
    added: list[dict] = []
    informer = raw_informer(
        server, "/api/v1/namespaces", added.append, inactivity_seconds=INACTIVITY
    )
    informer.start()
    try:
        assert held.wait(15), "the informer never watched a fourth time"
    finally:
        informer.stop()
        server.stop()

    records = [r for r in caplog.records if r.name == "kubesched.backends.kube.informer"]
    quiet = [r for r in records if "no event or bookmark" in r.getMessage()]
    failed = [r for r in records if "failed" in r.getMessage()]
    assert [r.levelno for r in quiet] == [logging.DEBUG]
    assert "/api/v1/namespaces" in quiet[0].getMessage()
    assert [r.levelno for r in failed] == [logging.WARNING, logging.WARNING]  # broken, then 500
    assert "500 InternalError: etcd down" in failed[1].getMessage()
    # Each watch resumes after the last event or bookmark seen; nothing is listed or seen twice.
    assert [watch_version(w) for w in watches] == ["5", "6", "7", "7"]
    assert informer.relists == 1
    assert [o["metadata"]["resourceVersion"] for o in added] == ["6"]
    # The quiet end is not a failure: watched again at once, without the 0.5 s+ backoff.
    assert began[1] - began[0] < INACTIVITY + 0.45
