"""``kubesched extender serve``: run a profile's plugins as an extender of a stock kube-scheduler.

See :mod:`kubesched.service.extender_server` for what each verb runs, and docs/extenders.md for the
KubeSchedulerConfiguration that points kube-scheduler at it.
"""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from typing import Any, TextIO

from kubesched.config import load_config
from kubesched.errors import KubeschedError
from kubesched.framework.registry import Registry
from kubesched.service.extender_server import (
    DEFAULT_MAX_REQUEST_BYTES,
    ExtenderServer,
    ExtenderService,
    ServeOptions,
)

__all__ = ["cmd_extender_serve", "register_commands"]

log = logging.getLogger(__name__)

EXIT_OK = 0


def register_commands(commands: Any) -> None:
    """Add ``extender serve`` to the ``kubesched`` sub-commands."""
    extender = commands.add_parser(
        "extender",
        help="serve a profile's plugins over kube-scheduler's extender API",
        description="Run a profile's Python plugins inside a stock kube-scheduler: the "
        "scheduler calls them over its HTTP extender API (see docs/extenders.md).",
    )
    actions = extender.add_subparsers(dest="extender_command", required=True, metavar="ACTION")
    serve = actions.add_parser(
        "serve",
        help="answer a stock kube-scheduler's filter/prioritize/bind/preempt calls",
        description="Serve the profile's PreFilter/Filter as filter, its PreScore/Score/"
        "NormalizeScore as prioritize (scaled to 0-10), its Bind as bind and its PostFilter as "
        "preempt, with /healthz, /readyz and /metrics, until SIGTERM.",
    )
    serve.add_argument("--config", required=True, help="a KubeSchedulerConfiguration file")
    serve.add_argument(
        "--profile", default="", help="the profile to serve (needed when the file has several)"
    )
    serve.add_argument("--bind-address", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8888, help="port (0 picks a free one)")
    serve.add_argument("--tls-cert", default="", help="serve HTTPS with this certificate (PEM)")
    serve.add_argument("--tls-key", default="", help="the certificate's private key (PEM)")
    serve.add_argument(
        "--kubeconfig",
        default=None,
        help="watch the cluster's nodes and pods (needed for nodeCacheCapable, bind, preempt "
        "and for plugins that count the pods on a node); without it, and without "
        "clientConnection.kubeconfig, each request's nodes are all there is",
    )
    serve.add_argument(
        "--max-request-bytes",
        type=int,
        default=DEFAULT_MAX_REQUEST_BYTES,
        help=f"largest request body accepted (default {DEFAULT_MAX_REQUEST_BYTES})",
    )
    serve.set_defaults(func=cmd_extender_serve)


def _backend(kubeconfig: str, qps: float, burst: int) -> Any:
    from kubesched.backends.kube.backend import (
        KubernetesBackend,  # the Kubernetes client: only when watching
    )
    from kubesched.backends.kube.connect import api_client_for
    from kubesched.backends.kube.transport import Transport

    return KubernetesBackend(Transport(api_client_for(kubeconfig), qps, burst))


def cmd_extender_serve(
    args: argparse.Namespace,
    out: TextIO,
    err: TextIO,
    registry: Registry | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Serve until SIGTERM/SIGINT (or ``stop`` is set)."""
    if bool(args.tls_cert) != bool(args.tls_key):
        raise KubeschedError("--tls-cert and --tls-key go together: give both or neither")
    registry = registry if registry is not None else Registry.installed()
    config = load_config(args.config, registry)
    for warning in config.warnings:
        print(f"warning: {warning}", file=err)
    if config.extenders:
        raise KubeschedError(
            f"{args.config}: extenders[] are not called by `extender serve` (it is an extender "
            "itself); remove them"
        )
    kubeconfig = args.kubeconfig or config.client_connection.kubeconfig
    connection = config.client_connection
    backend = _backend(kubeconfig, connection.qps, connection.burst) if kubeconfig else None
    service = ExtenderService(
        ServeOptions(
            config,
            registry,
            profile=args.profile,
            backend=backend,
            max_request_bytes=args.max_request_bytes,
        )
    )
    try:
        server = ExtenderServer(
            service,
            args.bind_address,
            args.port,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
        )
    except OSError as exc:
        raise KubeschedError(f"cannot serve on {args.bind_address}:{args.port}: {exc}") from None
    stop = stop or threading.Event()
    # The handler only assigns (no lock): setting the Event from it could wait forever for the
    # lock the main thread holds inside stop.wait (see kubesched.service.run.Service.request_stop).
    signalled: list[int] = []
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda number, _frame: signalled.append(number))
    server.start()
    print(f"serving profile {service.framework.name} as an extender on {server.url}", file=err)
    try:
        service.start(sync_timeout=60 if backend is not None else None)
        while not stop.wait(0.5) and not signalled:
            pass
    finally:
        server.stop()
        service.stop()
    return EXIT_OK
