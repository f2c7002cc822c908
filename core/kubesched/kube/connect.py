"""Which cluster, as whom: the kubeconfig search order of ``kubesched run``.

``clientConnection.kubeconfig``, then ``--kubeconfig``, then ``$KUBECONFIG``, then the pod's
service account (in-cluster). Each client gets its own ``Configuration``: the client library's
global default is never touched, so several identities can live in one process.
"""

from __future__ import annotations

import os

from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from ..errors import KubeschedError

__all__ = ["api_client_for", "credentials_source"]


def credentials_source(config_kubeconfig: str = "", flag_kubeconfig: str | None = None) -> str:
    """The kubeconfig path that will be used, or ``"in-cluster"``."""
    for candidate in (config_kubeconfig, flag_kubeconfig, os.environ.get("KUBECONFIG")):
        if candidate:
            return candidate
    return "in-cluster"


def api_client_for(
    config_kubeconfig: str = "", flag_kubeconfig: str | None = None
) -> client.ApiClient:
    """An ``ApiClient`` for the first credentials found; a clear error when there are none."""
    source = credentials_source(config_kubeconfig, flag_kubeconfig)
    if source == "in-cluster":
        configuration = client.Configuration()
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise KubeschedError(
                "no cluster credentials: set clientConnection.kubeconfig, --kubeconfig or "
                f"KUBECONFIG, or run inside a pod with a service account ({exc})"
            ) from None
        return client.ApiClient(configuration)
    if not os.path.isfile(source):
        raise KubeschedError(f"{source}: kubeconfig not found")
    try:
        return config.new_client_from_config(config_file=source)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise KubeschedError(f"{source}: cannot use this kubeconfig: {exc}") from None
