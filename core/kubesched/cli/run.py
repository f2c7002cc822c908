"""``kubesched run``: schedule a cluster's pods as a service (the Kubernetes client is imported
only when the command runs)."""

from __future__ import annotations

import argparse
from typing import TextIO

from kubesched.engine.binding_workers import BINDING_WORKERS
from kubesched.errors import KubeschedError

#: kube-scheduler's secure port: ``kubesched run`` serves HTTPS there unless given ``--port``.
SECURE_PORT = 10259


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kubesched.service.run import (  # imports the Kubernetes client: only when running
        RunOptions,
        run,
    )

    leader_elect = None if args.leader_elect is None else args.leader_elect == "true"
    # HTTPS on --secure-port (kube-scheduler's 10259) unless plain HTTP is asked for by --port.
    plain = args.port is not None
    if plain and args.secure_port is not None:
        raise KubeschedError(
            f"--port {args.port} and --secure-port {args.secure_port}: give one (--port serves "
            "plain HTTP, --secure-port HTTPS with /metrics behind the apiserver's authorization)"
        )
    if args.binding_workers < 1:
        raise KubeschedError(
            f"--binding-workers {args.binding_workers}: must be at least 1 (binding cycles "
            "in flight at once)"
        )
    if plain and (args.tls_cert_file or args.tls_private_key_file):
        raise KubeschedError(
            "--tls-cert-file and --tls-private-key-file apply to --secure-port; --port "
            f"{args.port} serves plain HTTP"
        )
    return run(
        RunOptions(
            config=args.config,
            kubeconfig=args.kubeconfig,
            leader_elect=leader_elect,
            address=args.bind_address,
            port=args.port if plain else _or(args.secure_port, SECURE_PORT),
            plugin_timeout=args.plugin_timeout,
            binding_workers=args.binding_workers,
            secure=not plain,
            tls_cert_file=args.tls_cert_file,
            tls_key_file=args.tls_private_key_file,
        )
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def register_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = commands.add_parser("run", help="schedule the pods of a cluster (as a service)")
    run.add_argument(
        "--config", help="a KubeSchedulerConfiguration file (default: the default profile)"
    )
    run.add_argument(
        "--kubeconfig",
        help="used when the config's clientConnection.kubeconfig "
        "is empty; then $KUBECONFIG, then the in-cluster service account",
    )
    run.add_argument(
        "--leader-elect", choices=("true", "false"), help="override leaderElection.leaderElect"
    )
    run.add_argument(
        "--bind-address", default="0.0.0.0", help="address of /healthz, /readyz and /metrics"
    )
    run.add_argument(
        "--secure-port",
        type=int,
        default=None,
        metavar="N",
        help=f"serve /healthz, /livez, /readyz and /metrics over HTTPS on this port (default "
        f"{SECURE_PORT}, kube-scheduler's; 0 picks a free one), /metrics only for tokens the "
        "apiserver authorizes (TokenReview + SubjectAccessReview: get on /metrics)",
    )
    run.add_argument(
        "--port",
        type=int,
        default=None,
        metavar="N",
        help="serve them over plain HTTP on this port instead, /metrics unauthenticated "
        "(kube-scheduler's former insecure port, 10251; 0 picks a free one)",
    )
    run.add_argument(
        "--tls-cert-file",
        default="",
        help="the HTTPS certificate, PEM (default: a self-signed one made at start-up)",
    )
    run.add_argument("--tls-private-key-file", default="", help="the key of --tls-cert-file")
    run.add_argument(
        "--plugin-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="the longest the plugins of one extension point may take for a pod (the "
        "scheduling cycle's Filter and Score points together, then PostFilter, Reserve, "
        "Permit, PreBind, Bind, PostBind each) before that pod's attempt ends with an Error "
        "naming the plugin (0: no limit; default 30)",
    )
    run.add_argument(
        "--binding-workers",
        type=int,
        default=BINDING_WORKERS,
        metavar="N",
        help="binding cycles (PreBind, Bind, PostBind) in flight at once; the rest wait in "
        f"order (default {BINDING_WORKERS}; the profile's parallelism goes to the plugins, "
        "as in kube-scheduler, and does not bound binding)",
    )
    run.set_defaults(func=cmd_run)
