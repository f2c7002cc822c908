"""A small HTTP extender for tests: deterministic rules read from labels, on loopback only.

``StubExtender().start()`` serves ``POST /filter``, ``/prioritize`` and ``/bind`` on
``127.0.0.1`` (a free port; :attr:`url`), answering in kube's ``extender/v1`` JSON:

- filter: a node labelled ``extender.kubesched.io/filter: reject`` is in ``FailedNodes``
  (message :data:`REJECT_MESSAGE`), ``unresolvable`` in ``FailedAndUnresolvableNodes``
  (:data:`UNRESOLVABLE_MESSAGE`); every other node is kept.
- prioritize: a node's score is its ``extender.kubesched.io/score`` label (0–10; none: 0).
- a pod labelled ``extender.kubesched.io/fail`` (``fail_label``) makes every verb fail:
  ``status`` answers HTTP 500, ``error`` answers 200 with ``Error`` set to
  :data:`ERROR_MESSAGE`.
- preempt: keeps kube's candidates and victims, less the nodes in ``refuse_preemption``; a
  node in ``no_victims`` comes back with none (kube refuses that answer).
- bind: records the binding (``bindings``) and, when ``binder`` is given, calls it
  ``binder(namespace, name, uid, node)`` to write it (e.g. through the API).

With ``node_cache_capable`` requests carry only node names: the labels then come from
``nodes`` (name -> labels), which the test keeps up to date. Every request body is kept in
``requests`` as ``(verb, body)``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ERROR_MESSAGE",
    "FAIL_LABEL",
    "FILTER_LABEL",
    "REJECT_MESSAGE",
    "SCORE_LABEL",
    "UNRESOLVABLE_MESSAGE",
    "StubExtender",
]

FILTER_LABEL = "extender.kubesched.io/filter"
SCORE_LABEL = "extender.kubesched.io/score"
FAIL_LABEL = "extender.kubesched.io/fail"
REJECT_MESSAGE = "rejected by the stub extender"
UNRESOLVABLE_MESSAGE = "rejected by the stub extender for good"
ERROR_MESSAGE = "the stub extender failed on purpose"


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except ValueError:
            self._reply(HTTPStatus.BAD_REQUEST, {"Error": "malformed JSON"})
            return
        stub = self.server.stub
        with stub._lock:
            stub.requests.append((verb, body))
        pod_labels = _labels((body or {}).get("Pod"))
        fail = pod_labels.get(stub.fail_label) if verb != "bind" else None
        if verb == "bind":
            fail = stub._failing_binds.get(body.get("PodName", ""))
        if fail == "status":
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {})
        elif fail == "error":
            self._reply(HTTPStatus.OK, {"Error": ERROR_MESSAGE} if verb != "prioritize" else [])
        elif verb == "filter":
            self._reply(HTTPStatus.OK, stub._filter(body))
        elif verb == "prioritize":
            self._reply(HTTPStatus.OK, stub._prioritize(body))
        elif verb == "bind":
            self._reply(HTTPStatus.OK, stub._bind(body))
        elif verb == "preempt":
            self._reply(HTTPStatus.OK, stub._preempt(body))
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"Error": f"no verb {verb}"})

    def _reply(self, status: HTTPStatus, answer: Any) -> None:
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, stub: StubExtender) -> None:
        self.stub = stub
        super().__init__(("127.0.0.1", 0), _Handler)


class StubExtender:
    """See the module docstring."""

    def __init__(
        self,
        *,
        node_cache_capable: bool = False,
        binder: Callable[[str, str, str, str], None] | None = None,
        fail_label: str = FAIL_LABEL,
    ) -> None:
        self.node_cache_capable = node_cache_capable
        #: The pod label that makes this stub fail (two stubs can fail apart).
        self.fail_label = fail_label
        self.binder = binder
        #: Node name -> labels, for requests that carry names only.
        self.nodes: dict[str, Mapping[str, str]] = {}
        self.requests: list[tuple[str, Any]] = []
        self.bindings: list[tuple[str, str, str]] = []
        self._failing_binds: dict[str, str] = {}
        #: preempt: nodes dropped from the candidates, and nodes answered with no victims.
        self.refuse_preemption: set[str] = set()
        self.no_victims: set[str] = set()
        self._lock = threading.Lock()
        self._server: _Server | None = None

    # -- the rules -----------------------------------------------------------------------------
    def _candidates(self, body: Mapping[str, Any]) -> list[tuple[str, Mapping[str, str]]]:
        if body.get("NodeNames") is not None:
            return [(name, self.nodes.get(name, {})) for name in body["NodeNames"]]
        items = (body.get("Nodes") or {}).get("items") or []
        return [(item["metadata"]["name"], _labels(item)) for item in items]

    def _filter(self, body: Mapping[str, Any]) -> dict[str, Any]:
        kept, failed, unresolvable = [], {}, {}
        for name, labels in self._candidates(body):
            verdict = labels.get(FILTER_LABEL)
            if verdict == "reject":
                failed[name] = REJECT_MESSAGE
            elif verdict == "unresolvable":
                unresolvable[name] = UNRESOLVABLE_MESSAGE
            else:
                kept.append(name)
        answer: dict[str, Any] = {
            "Nodes": None,
            "NodeNames": None,
            "FailedNodes": failed,
            "FailedAndUnresolvableNodes": unresolvable,
            "Error": "",
        }
        if body.get("NodeNames") is not None:
            answer["NodeNames"] = kept
        else:
            items = (body.get("Nodes") or {}).get("items") or []
            answer["Nodes"] = {
                "metadata": {},
                "items": [i for i in items if i["metadata"]["name"] in kept],
            }
        return answer

    def _prioritize(self, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        out = []
        for name, labels in self._candidates(body):
            try:
                score = int(labels.get(SCORE_LABEL, "0"))
            except ValueError:
                score = 0
            out.append({"Host": name, "Score": score})
        return out

    def _bind(self, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.bindings.append((body["PodNamespace"], body["PodName"], body["Node"]))
        if self.binder is not None:
            try:
                self.binder(body["PodNamespace"], body["PodName"], body["PodUID"], body["Node"])
            except Exception as exc:
                return {"Error": str(exc)}
        return {"Error": ""}

    def _preempt(self, body: Mapping[str, Any]) -> dict[str, Any]:
        meta = body.get("NodeNameToMetaVictims")
        if meta is None:
            meta = {
                node: {
                    "Pods": [{"UID": p["metadata"]["uid"]} for p in (v or {}).get("Pods") or ()],
                    "NumPDBViolations": (v or {}).get("NumPDBViolations", 0),
                }
                for node, v in (body.get("NodeNameToVictims") or {}).items()
            }
        out = {}
        for node, victims in meta.items():
            if node in self.refuse_preemption:
                continue
            out[node] = {**victims, "Pods": []} if node in self.no_victims else victims
        return {"NodeNameToMetaVictims": out}

    def fail_bind(self, pod_name: str, how: str) -> None:
        """Make binding ``pod_name`` fail: ``status`` (HTTP 500) or ``error`` (``Error``)."""
        self._failing_binds[pod_name] = how

    # -- serving -------------------------------------------------------------------------------
    def start(self) -> StubExtender:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="stub-extender",
            daemon=True,
        ).start()
        return self

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub extender is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def verbs(self, verb: str) -> list[Any]:
        """The bodies of the requests for ``verb``, oldest first."""
        with self._lock:
            return [body for v, body in self.requests if v == verb]

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> StubExtender:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
