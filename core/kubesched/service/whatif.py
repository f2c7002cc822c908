"""What ``simulate`` and ``explain`` schedule: a cluster file or a live cluster, and which pods.

- ``--scheduler-name NAME`` runs the configuration's profile as the scheduler ``NAME``, so the
  pods that ask for ``NAME`` (``default-scheduler`` in an ordinary cluster's snapshot) are the
  ones scheduled; a profile already named ``NAME`` needs nothing.
- ``--kubeconfig PATH [--context NAME] [--namespace NS]...`` reads a live cluster instead of a
  file (:mod:`kubesched.backends.kube.readonly`: lists only, nothing written) and schedules its
  pending
  pods in memory: "where would my pending pods go with this profile?"
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.api.manifests import Cluster, load_cluster
from kubesched.backends.memory import InMemoryBackend
from kubesched.config import SchedulerConfiguration
from kubesched.engine.scheduler import build_frameworks
from kubesched.errors import KubeschedError
from kubesched.framework.handle import Handle
from kubesched.framework.registry import Registry
from kubesched.framework.snapshot import Snapshot

__all__ = ["add_arguments", "consulted_kinds", "read_input", "serve_as"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--scheduler-name``, ``--kubeconfig``, ``--context``, ``--namespace``."""
    parser.add_argument(
        "--scheduler-name",
        metavar="NAME",
        help="run the profile as scheduler NAME, to schedule the pods whose schedulerName is "
        "NAME (e.g. default-scheduler); with several profiles, one must already be named NAME",
    )
    parser.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="read a live cluster instead of a file (read-only: lists nodes, pods and what the "
        "plugins consult; writes nothing) and schedule its pending pods in memory",
    )
    parser.add_argument("--context", help="the kubeconfig context (default: its current one)")
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="with --kubeconfig: schedule only the pending pods of NS (repeatable, or "
        "comma-separated); bound pods of every namespace still count",
    )


def serve_as(config: SchedulerConfiguration, name: str | None) -> SchedulerConfiguration:
    """``config`` with a profile named ``name``: the one already so named, else its only
    profile renamed; a :class:`KubeschedError` when several profiles leave it ambiguous."""
    if not name or any(p.scheduler_name == name for p in config.profiles):
        return config
    if len(config.profiles) != 1:
        names = ", ".join(p.scheduler_name for p in config.profiles)
        raise KubeschedError(
            f"--scheduler-name {name}: no profile is named {name!r} and the configuration has "
            f"{len(config.profiles)} ({names}); name the one to use {name!r}"
        )
    profile = dataclasses.replace(config.profiles[0], scheduler_name=name)
    return dataclasses.replace(config, profiles=[profile])


class _Recording(InMemoryBackend):
    """An empty cluster that notes which kinds plugins ask to list."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def lister(self, kind: str) -> Callable[[], list[Mapping[str, Any]]]:
        self.asked.add(kind)
        return super().lister(kind)


def consulted_kinds(config: SchedulerConfiguration, registry: Registry) -> set[str]:
    """The kinds the profiles' plugins consult through ``Handle.lister`` (they ask for their
    listers when built): all a live what-if needs to read besides nodes and pods."""
    backend, snapshot = _Recording(), Snapshot()
    build_frameworks(config, registry, lambda name: Handle(name, backend, lambda: snapshot))
    return backend.asked


def _namespaces(values: list[str]) -> list[str]:
    return [ns for value in values for ns in value.split(",") if ns]


def read_input(
    args: argparse.Namespace,
    cluster_path: str | None,
    config: SchedulerConfiguration,
    registry: Registry,
) -> tuple[Cluster, str]:
    """The cluster to schedule and how to name it: the file, or the live cluster of
    ``--kubeconfig``."""
    kubeconfig = getattr(args, "kubeconfig", None)
    if not kubeconfig:
        if args.context or args.namespace:
            raise KubeschedError("--context and --namespace need --kubeconfig")
        if cluster_path is None:
            raise KubeschedError("give a cluster file or --kubeconfig")
        return load_cluster(cluster_path, validate=not args.no_validate), cluster_path
    if cluster_path is not None:
        raise KubeschedError(f"give a cluster file ({cluster_path}) or --kubeconfig, not both")
    # The Kubernetes client is imported only for a live cluster.
    from kubesched.backends.kube.readonly import (
        ReadOnlyTransport,
        api_client_for_context,
        read_cluster,
    )

    api_client = api_client_for_context(kubeconfig, args.context)
    source = f"{kubeconfig}" + (f" (context {args.context})" if args.context else "")
    qps, burst = config.client_connection.qps, config.client_connection.burst
    transport = ReadOnlyTransport(api_client, qps=qps, burst=burst)
    try:
        cluster = read_cluster(
            transport,
            consulted_kinds(config, registry),
            _namespaces(args.namespace),
            source=source,
        )
    finally:
        transport.close()
    return cluster, source
