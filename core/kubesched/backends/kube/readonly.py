"""A read-only snapshot of a live cluster, for ``kubesched simulate --kubeconfig``.

Lists (``GET``, paginated) the nodes, the non-terminal pods and the kinds the profile's plugins
consult through ``Handle.lister``, and returns them as a :class:`~kubesched.api.manifests.Cluster`
that ``simulate`` schedules in memory. Nothing is ever written: :class:`ReadOnlyTransport`
refuses every verb but ``GET`` before anything is sent, so the what-if runs under a role with
``list`` alone (``deploy/simulate-readonly-rbac.yaml``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from kubesched.api.manifests import Cluster, parse_cluster
from kubesched.backends.kube.backend import KIND_PATHS, NON_TERMINAL_PODS
from kubesched.backends.kube.connect import CONNECTION_POOL_SIZE
from kubesched.backends.kube.transport import ApiError, Transport
from kubesched.errors import KubeschedError

__all__ = ["ReadOnlyTransport", "api_client_for_context", "read_cluster"]

#: Objects per page of a list: a page is one request, and a large cluster many pages.
PAGE_SIZE = 500


class ReadOnlyTransport(Transport):
    """A :class:`Transport` that sends ``GET`` requests only."""

    def request(self, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if method != "GET":
            raise KubeschedError(f"{method} {path}: a read-only what-if sends no writes")
        return super().request(method, path, *args, **kwargs)


def api_client_for_context(kubeconfig: str, context: str | None = None) -> client.ApiClient:
    """An ``ApiClient`` for ``kubeconfig`` (at ``context``, else its current context), leaving
    the client library's global configuration alone."""
    if not os.path.isfile(kubeconfig):
        raise KubeschedError(f"{kubeconfig}: kubeconfig not found")
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=kubeconfig,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise KubeschedError(f"{kubeconfig}: cannot use this kubeconfig: {exc}") from None
    configuration.connection_pool_maxsize = CONNECTION_POOL_SIZE
    return client.ApiClient(configuration)


def _list(transport: Transport, path: str, kind: str, field_selector: str = "") -> list[Any]:
    """Every object at ``path``, page by page, each with its ``kind`` (lists leave it out)."""
    items: list[Any] = []
    token = ""
    while True:
        query: list[tuple[str, Any]] = [("limit", PAGE_SIZE)]
        if token:
            query.append(("continue", token))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        try:
            page = transport.request("GET", path, query)
        except ApiError as exc:
            hint = (
                " (the identity may list nothing there: see deploy/simulate-readonly-rbac.yaml)"
                if exc.status == 403
                else ""
            )
            raise KubeschedError(f"cannot list {kind} objects ({path}): {exc}{hint}") from None
        for item in (page or {}).get("items") or ():
            if isinstance(item, dict):
                items.append({"kind": kind, **item})
        token = ((page or {}).get("metadata") or {}).get("continue") or ""
        if not token:
            return items


def read_cluster(
    transport: Transport,
    kinds: Iterable[str] = (),
    namespaces: Sequence[str] = (),
    *,
    source: str = "cluster",
) -> Cluster:
    """Nodes, non-terminal pods and the objects of ``kinds`` (each one :data:`KIND_PATHS` knows).

    With ``namespaces``, only the pending pods of those namespaces are kept for scheduling;
    bound pods of every namespace stay, as they hold their nodes' resources. The objects were
    validated by the apiserver that stored them, so they are read as a snapshot.
    """
    objects = _list(transport, "/api/v1/nodes", "Node")
    wanted = set(namespaces)
    for pod in _list(transport, "/api/v1/pods", "Pod", NON_TERMINAL_PODS):
        bound = bool((pod.get("spec") or {}).get("nodeName"))
        if bound or not wanted or (pod.get("metadata") or {}).get("namespace") in wanted:
            objects.append(pod)
    consulted = sorted(set(kinds))
    if unknown := [kind for kind in consulted if kind not in KIND_PATHS]:
        raise KubeschedError(
            f"a plugin consults {', '.join(unknown)}, which a live what-if cannot list "
            f"(it lists {', '.join(KIND_PATHS)})"
        )
    for kind in consulted:
        objects += _list(transport, KIND_PATHS[kind], kind)
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    return parse_cluster(text, source, validate=False)
