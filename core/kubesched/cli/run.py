"""``kubesched run``: schedule a cluster's pods as a service (the Kubernetes client is imported
only when the command runs)."""

from __future__ import annotations

import argparse
from typing import TextIO


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kubesched.service.run import (  # imports the Kubernetes client: only when running
        RunOptions,
        run,
    )

    leader_elect = None if args.leader_elect is None else args.leader_elect == "true"
    return run(
        RunOptions(
            config=args.config,
            kubeconfig=args.kubeconfig,
            leader_elect=leader_elect,
            address=args.bind_address,
            port=args.port if args.secure_port is None else args.secure_port,
            plugin_timeout=args.plugin_timeout,
            secure=args.secure_port is not None,
            tls_cert_file=args.tls_cert_file,
            tls_key_file=args.tls_private_key_file,
        )
    )


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
        "--port", type=int, default=10251, help="port of the health endpoint (0 picks a free one)"
    )
    run.add_argument(
        "--secure-port",
        type=int,
        default=None,
        metavar="N",
        help="serve /healthz, /livez, /readyz and /metrics over HTTPS on this port instead of "
        "--port (kube-scheduler's 10259), /metrics only for tokens the apiserver authorizes "
        "(TokenReview + SubjectAccessReview: get on /metrics)",
    )
    run.add_argument("--tls-cert-file", default="", help="the HTTPS certificate (else self-signed)")
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
    run.set_defaults(func=cmd_run)
