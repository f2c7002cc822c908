"""``kubesched extender serve``: a profile's plugins behind kube-scheduler's extender API.

A stock kube-scheduler lists this server in its ``extenders[]`` and calls it over HTTP (JSON keys
are the Go field names of ``k8s.io/kube-scheduler/extender/v1``; see
:mod:`kubesched.engine.extender`):

- ``POST /filter`` (``ExtenderArgs`` -> ``ExtenderFilterResult``): the profile's PreFilter, then
  Filter on each node. A node a plugin rejects goes to ``FailedNodes`` with the plugin's reasons
  (``FailedAndUnresolvableNodes`` when the rejection is UnschedulableAndUnresolvable, as kube
  reads it for preemption); the others are kept. A PreFilter rejection rejects every node.
- ``POST /prioritize`` (``ExtenderArgs`` -> ``HostPriorityList``): PreScore, Score and
  NormalizeScore, each plugin's weight applied, then the totals scaled to the extender range
  0–10 relative to the best node (``total × 10 // best``, as kube's DefaultNormalizeScore does):
  the best node gets 10 and every other node less, so the stock scheduler's choice among the
  extender's best nodes is the same as kubesched's.
- ``POST /bind`` (``ExtenderBindingArgs`` -> ``ExtenderBindingResult``): the profile's Bind
  plugins (served only with ``--kubeconfig``: the binding is written through the API).
- ``POST /preempt`` (``ExtenderPreemptionArgs`` -> ``ExtenderPreemptionResult``), when the
  profile has a PostFilter plugin: of the candidates kube-scheduler proposes, the nodes where the
  pod passes the profile's Filter once the victims are gone, with their victims.
- ``GET /healthz``, ``/readyz`` (ready once the watch has synced), ``/metrics`` (the framework's
  extension point latencies, as ``kubesched run`` exposes them).

Nodes and pods: with ``--kubeconfig`` (or ``clientConnection.kubeconfig``) a watch keeps a cache
of every node and bound pod, as ``kubesched run`` does; requests name nodes from it, and
``nodeCacheCapable`` (``NodeNames`` only) works. Without, the nodes of each request are all there
is (no pods on them): enough for plugins that read only the node and the pod.

A bad request gets an answer, never a dropped connection: 400 with ``{"Error": ...}`` for
malformed JSON or a body without a pod, 413 past ``--max-request-bytes``, and for a node that the
cache does not hold, an ``Error`` in the filter or bind answer (kube-scheduler reports it as the
pod's scheduling error). Calls are served one at a time: plugins run on one snapshot per request.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kubesched.api.objects import Node, ObjectError, Pod
from kubesched.backends.memory import InMemoryBackend
from kubesched.config import SchedulerConfiguration
from kubesched.engine.extender import MAX_EXTENDER_PRIORITY, to_json
from kubesched.engine.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from kubesched.engine.metrics import SchedulerMetrics, status_label
from kubesched.engine.runtime import Framework
from kubesched.engine.scheduler import Scheduler
from kubesched.errors import KubeschedError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.nodeinfo import NodeInfo
from kubesched.framework.registry import Registry
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "BadRequest", "ExtenderService", "ServeOptions"]

log = logging.getLogger(__name__)

#: A NodeList of 5,000 nodes is ~50 MB of JSON; a request larger than this is refused.
DEFAULT_MAX_REQUEST_BYTES = 128 * 1024 * 1024
_TEXT = "text/plain; charset=utf-8"


class BadRequest(Exception):
    """A request that cannot be served; ``status`` is the HTTP answer's."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


class UnknownNodes(BadRequest):
    """The request names nodes the cache does not hold (filter answers it in ``Error``)."""


@dataclass
class ServeOptions:
    config: SchedulerConfiguration
    registry: Registry
    profile: str = ""
    #: A backend watching the cluster (nodes and bound pods); ``None``: the request's nodes only.
    backend: Any = None
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES


def _status_message(status: Status) -> str:
    return status.message() or status.code.name


class ExtenderService:
    """The extender verbs over one profile (``ServeOptions.profile``, default the only one)."""

    def __init__(self, options: ServeOptions) -> None:
        config = options.config
        names = [p.scheduler_name for p in config.profiles]
        name = options.profile or names[0]
        if name not in names:
            raise KubeschedError(
                f"--profile {name!r}: no such profile (profiles: {', '.join(names)})"
            )
        if len(names) > 1 and not options.profile:
            raise KubeschedError(
                f"the configuration has {len(names)} profiles ({', '.join(names)}): "
                "choose the one to serve with --profile"
            )
        self.watching = options.backend is not None
        backend = options.backend if options.backend is not None else InMemoryBackend()
        self.metrics = SchedulerMetrics()
        self.scheduler = Scheduler(config, backend, options.registry, metrics=self.metrics)
        self.framework: Framework = self.scheduler.frameworks[name]
        self.max_request_bytes = options.max_request_bytes
        self._lock = threading.Lock()

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self, sync_timeout: float | None = None) -> None:
        self.scheduler.start(sync_timeout=sync_timeout)

    def ready(self) -> bool:
        synced = getattr(self.scheduler.backend, "synced", True)
        return bool(synced)

    def stop(self) -> None:
        self.scheduler.stop(wait_for_bindings=False)
        self.scheduler.backend.stop()

    # -- the nodes of a request ----------------------------------------------------------------
    def _nodes(self, args: Mapping[str, Any]) -> tuple[list[NodeInfo], list[Mapping[str, Any]]]:
        """The request's nodes as NodeInfos (with their pods when a watch keeps them), and the
        node objects as the request sent them (empty for ``NodeNames``)."""
        snapshot = self.scheduler.snapshot
        if args.get("NodeNames") is not None:
            names = args["NodeNames"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise BadRequest("NodeNames must be a list of node names")
            if not self.watching:
                raise BadRequest(
                    "NodeNames: this extender keeps no node cache (nodeCacheCapable needs "
                    "`kubesched extender serve --kubeconfig`)"
                )
            known = [snapshot.get(name) for name in names]
            unknown = [n for n, info in zip(names, known, strict=True) if info is None]
            if unknown:
                raise UnknownNodes(f"unknown node(s) {', '.join(unknown)}: not in the node cache")
            return [info for info in known if info is not None], []
        items = (
            (args.get("Nodes") or {}).get("items")
            if isinstance(args.get("Nodes"), Mapping)
            else None
        )
        if args.get("Nodes") is None:
            return [], []
        if not isinstance(items, list):
            raise BadRequest("Nodes must be a NodeList (an object with a list of items)")
        infos: list[NodeInfo] = []
        for item in items:
            try:
                node = Node(item)
            except ObjectError as exc:
                raise BadRequest(f"Nodes: {exc}") from None
            cached = snapshot.get(node.name) if self.watching else None
            infos.append(cached if cached is not None else NodeInfo(node))
        return infos, items

    def _pod(self, args: Mapping[str, Any]) -> Pod:
        raw = args.get("Pod")
        if not isinstance(raw, Mapping):
            raise BadRequest("the request has no Pod")
        try:
            return Pod(raw)
        except ObjectError as exc:
            raise BadRequest(str(exc)) from None

    def _begin(self, args: Mapping[str, Any]) -> tuple[Pod, list[NodeInfo], list[Any]]:
        if self.watching:
            self.scheduler.refresh_snapshot()
        pod = self._pod(args)
        infos, items = self._nodes(args)
        if not self.watching:
            # Plugins that look at every node (spreading, affinity) see the request's nodes.
            self.scheduler.snapshot = Snapshot(list(infos))
        return pod, infos, items

    def _timed(
        self, point: str, call: Callable[[], Any], status_of: Callable[[Any], Status]
    ) -> Any:
        started = time.perf_counter()
        result = call()
        seconds = time.perf_counter() - started
        self.metrics.extension_point(
            point, status_label(status_of(result).code), self.framework.name, seconds
        )
        return result

    # -- the verbs -----------------------------------------------------------------------------
    def filter(self, args: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            try:
                pod, infos, items = self._begin(args)
            except UnknownNodes as exc:
                return _filter_answer(args, None, [], {}, {}, str(exc))
            fw, state = self.framework, CycleState()
            state.signature = fw.sign_pod(pod)
            failed: dict[str, str] = {}
            unresolvable: dict[str, str] = {}
            result, status, narrowing = self._timed(
                "PreFilter", lambda: fw.run_pre_filter(state, pod, infos), lambda r: r[1]
            )
            if status.code is Code.ERROR:
                return _filter_answer(args, None, [], {}, {}, status.message())
            kept: list[str] = []
            if not status.is_success():
                target = (
                    unresolvable if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE else failed
                )
                target.update({info.name: _status_message(status) for info in infos})
            else:
                subset = None if result is None or result.all_nodes() else result.node_names
                started = time.perf_counter()
                worst = Status.success()
                for info in infos:
                    if subset is not None and info.name not in subset:
                        unresolvable[info.name] = (
                            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]"
                        )
                        continue
                    verdict = fw.run_filter(state, pod, info)
                    if verdict is None or verdict.is_success():
                        kept.append(info.name)
                    elif verdict.code is Code.ERROR:
                        return _filter_answer(args, None, [], {}, {}, verdict.message())
                    elif verdict.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        unresolvable[info.name] = _status_message(verdict)
                        worst = verdict
                    else:
                        failed[info.name] = _status_message(verdict)
                        worst = verdict
                self.metrics.extension_point(
                    "Filter",
                    status_label(Code.SUCCESS if kept else worst.code),
                    fw.name,
                    time.perf_counter() - started,
                )
            return _filter_answer(args, items, kept, failed, unresolvable, "")

    def prioritize(self, args: Mapping[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            pod, infos, _ = self._begin(args)
            fw, state = self.framework, CycleState()
            state.signature = fw.sign_pod(pod)
            if not infos:
                return []
            if not fw.has_score_plugins():
                return [{"Host": info.name, "Score": 0} for info in infos]
            status = self._timed(
                "PreScore", lambda: fw.run_pre_score(state, pod, infos), lambda s: s
            )
            if not status.is_success():
                raise BadRequest(f"PreScore: {status.message()}", HTTPStatus.INTERNAL_SERVER_ERROR)
            scores, status = self._timed(
                "Score", lambda: fw.run_score(state, pod, infos), lambda r: r[1]
            )
            if not status.is_success():
                raise BadRequest(f"Score: {status.message()}", HTTPStatus.INTERNAL_SERVER_ERROR)
            best = max(scores.totals, default=0)
            return [
                {
                    "Host": info.name,
                    "Score": total * MAX_EXTENDER_PRIORITY // best if best > 0 else 0,
                }
                for info, total in zip(infos, scores.totals, strict=True)
            ]

    def bind(self, args: Mapping[str, Any]) -> dict[str, Any]:
        fields = ("PodName", "PodNamespace", "PodUID", "Node")
        if not all(isinstance(args.get(f), str) and args.get(f) for f in fields):
            raise BadRequest(f"an ExtenderBindingArgs needs {', '.join(fields)} (strings)")
        if not self.watching:
            return {
                "Error": "this extender binds only with --kubeconfig (it writes through the API)"
            }
        with self._lock:
            self.scheduler.refresh_snapshot()
            if self.scheduler.snapshot.get(args["Node"]) is None:
                return {"Error": f"unknown node {args['Node']}: not in the node cache"}
            pod = self.scheduler.backend.get_pod(args["PodUID"])
        if pod is None:
            pod = Pod(
                {
                    "metadata": {
                        "name": args["PodName"],
                        "namespace": args["PodNamespace"],
                        "uid": args["PodUID"],
                    }
                }
            )
        fw = self.framework
        status = self._timed(
            "Bind", lambda: fw.run_bind(CycleState(), pod, args["Node"]), lambda s: s
        )
        return {"Error": "" if status.is_success() else status.message()}

    def preempt(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Of the candidate nodes and victims kube-scheduler proposes, those where the pod
        passes the profile's Filter once the victims are gone (``NodeNameToMetaVictims``)."""
        if not self.framework.plugins_at("postFilter"):
            raise BadRequest(
                "the profile has no PostFilter plugin: preempt is not served", HTTPStatus.NOT_FOUND
            )
        with self._lock:
            if self.watching:
                self.scheduler.refresh_snapshot()
            pod = self._pod(args)
            victims = args.get("NodeNameToMetaVictims")
            full = args.get("NodeNameToVictims")
            if victims is None and isinstance(full, Mapping):
                victims = {
                    node: {
                        "Pods": [
                            {"UID": (p.get("metadata") or {}).get("uid", "")}
                            for p in (v or {}).get("Pods") or ()
                        ],
                        "NumPDBViolations": (v or {}).get("NumPDBViolations", 0),
                    }
                    for node, v in full.items()
                }
            if not isinstance(victims, Mapping):
                raise BadRequest("the request has no NodeNameToMetaVictims or NodeNameToVictims")
            fw, out = self.framework, {}
            for node_name, meta in victims.items():
                info = self.scheduler.snapshot.get(node_name)
                if info is None:
                    continue
                uids = {p.get("UID") for p in (meta or {}).get("Pods") or ()}
                trial = info.clone()
                for victim in [p for p in info.pods.values() if p.uid in uids]:
                    trial.remove_pod(victim)
                state = CycleState()
                state.signature = fw.sign_pod(pod)
                _, status, _ = fw.run_pre_filter(state, pod, [trial])
                if status.is_success() and fw.run_filter(state, pod, trial) is None:
                    out[node_name] = meta
            return {"NodeNameToMetaVictims": out}


def _filter_answer(
    args: Mapping[str, Any],
    items: list[Any] | None,
    kept: list[str],
    failed: dict[str, str],
    unresolvable: dict[str, str],
    error: str,
) -> dict[str, Any]:
    """An ``ExtenderFilterResult`` in the form the request came in (NodeList or names)."""
    names_only = args.get("NodeNames") is not None
    if error:
        return {
            "Nodes": None,
            "NodeNames": None,
            "FailedNodes": None,
            "FailedAndUnresolvableNodes": None,
            "Error": error,
        }
    keep = set(kept)
    return {
        "Nodes": None
        if names_only
        else {
            "metadata": {},
            "items": [i for i in items or () if (i.get("metadata") or {}).get("name") in keep],
        },
        "NodeNames": kept if names_only else None,
        "FailedNodes": failed,
        "FailedAndUnresolvableNodes": unresolvable,
        "Error": "",
    }


# -- HTTP ------------------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm on, the client's delayed
    # ACK holds the body back ~40 ms on a kept-alive connection (two calls per pod).
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        service = self.server.service
        verb = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        handler = {
            "filter": service.filter,
            "prioritize": service.prioritize,
            "bind": service.bind,
            "preempt": service.preempt,
        }.get(verb)
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            self._json(HTTPStatus.BAD_REQUEST, {"Error": "bad Content-Length"}, close=True)
            return
        if length > service.max_request_bytes:
            self._json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {
                    "Error": f"request body of {length} bytes is over the limit of "
                    f"{service.max_request_bytes} (--max-request-bytes)"
                },
                close=True,
            )
            return
        body = self.rfile.read(length) if length else b""
        if handler is None:
            self._json(HTTPStatus.NOT_FOUND, {"Error": f"no verb {verb!r} here"})
            return
        try:
            args = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"Error": f"malformed JSON: {exc}"})
            return
        if not isinstance(args, Mapping):
            self._json(HTTPStatus.BAD_REQUEST, {"Error": "the body must be a JSON object"})
            return
        try:
            self._json(HTTPStatus.OK, handler(args))
        except BadRequest as exc:
            self._json(exc.status, {"Error": str(exc)})
        except Exception as exc:  # a plugin bug answers 500 naming it; the server goes on
            log.exception("extender %s failed", verb)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"Error": f"{type(exc).__name__}: {exc}"})

    def do_GET(self) -> None:
        service = self.server.service
        path = self.path.split("?", 1)[0]
        if path in ("/healthz", "/livez"):
            self._text(HTTPStatus.OK, b"ok\n")
        elif path == "/readyz":
            if service.ready():
                self._text(HTTPStatus.OK, b"ok\n")
            else:
                self._text(HTTPStatus.SERVICE_UNAVAILABLE, b"waiting for the node cache\n")
        elif path == "/metrics":
            self._text(HTTPStatus.OK, service.metrics.render(), METRICS_CONTENT_TYPE)
        else:
            self._text(HTTPStatus.NOT_FOUND, f"{path} not found\n".encode())

    def _json(self, status: HTTPStatus, answer: Any, close: bool = False) -> None:
        self._text(status, to_json(answer), "application/json", close)

    def _text(
        self, status: HTTPStatus, body: bytes, content_type: str = _TEXT, close: bool = False
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if close:  # the unread body would be taken for the next request
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: ExtenderService) -> None:
        self.service = service
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops the connection (or fails the TLS handshake) is no server error.
        log.debug("request from %s failed", client_address, exc_info=True)


class ExtenderServer:
    """Serves an :class:`ExtenderService` over HTTP (HTTPS with a certificate and key)."""

    def __init__(
        self,
        service: ExtenderService,
        address: str = "127.0.0.1",
        port: int = 0,
        *,
        tls_cert: str = "",
        tls_key: str = "",
    ) -> None:
        self.service = service
        self._server = _Server((address, port), service)
        if tls_cert:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(tls_cert, tls_key or None)
            # The handshake happens on first read, in the request's thread: a slow or non-TLS
            # client cannot hold up the accepting loop.
            self._server.socket = context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        self.scheme = "https" if tls_cert else "http"
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._server.server_address[0])
        return f"{self.scheme}://{host}:{self.port}"

    def start(self) -> ExtenderServer:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.2},
            name="extender-server",
            daemon=True,
        )
        self._thread.start()
        log.info("serving the extender API on %s", self.url)
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
