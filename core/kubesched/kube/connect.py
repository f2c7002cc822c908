"""Which cluster, as whom: the kubeconfig search order of ``kubesched run``.

``clientConnection.kubeconfig``, then ``--kubeconfig``, then ``$KUBECONFIG``, then the pod's
service account (in-cluster: ``KUBERNETES_SERVICE_HOST``/``KUBERNETES_SERVICE_PORT``, and the
``token`` and ``ca.crt`` that the kubelet mounts in ``/var/run/secrets/kubernetes.io/
serviceaccount`` or that ``$KUBESCHED_SERVICEACCOUNT_DIR`` holds). Each client gets its own
``Configuration``: the client library's global default is never touched, so several identities
can live in one process.
"""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import InClusterConfigLoader

from ..errors import KubeschedError

__all__ = [
    "CONNECTION_POOL_SIZE",
    "SERVICEACCOUNT_DIR",
    "SERVICEACCOUNT_DIR_ENV",
    "api_client_for",
    "credentials_source",
    "serviceaccount_dir",
]

#: Where the kubelet mounts a pod's service-account token and the cluster's CA certificate.
SERVICEACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Another directory holding ``token`` and ``ca.crt``: for a token projected elsewhere, and for
#: exercising the in-cluster path outside a pod.
SERVICEACCOUNT_DIR_ENV = "KUBESCHED_SERVICEACCOUNT_DIR"
#: Connections kept open to the apiserver. The client's default (5 per core) is smaller than the
#: threads that talk at once (16 binding workers, 4 status writers, the event recorder, the
#: watches): connections were dropped and TLS handshakes redone under load.
CONNECTION_POOL_SIZE = 32


def serviceaccount_dir() -> Path:
    """The directory the in-cluster credentials are read from."""
    return Path(os.environ.get(SERVICEACCOUNT_DIR_ENV) or SERVICEACCOUNT_DIR)


def credentials_source(config_kubeconfig: str = "", flag_kubeconfig: str | None = None) -> str:
    """The kubeconfig path that will be used, or ``"in-cluster"``."""
    for candidate in (config_kubeconfig, flag_kubeconfig, os.environ.get("KUBECONFIG")):
        if candidate:
            return candidate
    return "in-cluster"


def _in_cluster_client() -> client.ApiClient:
    directory = serviceaccount_dir()
    configuration = client.Configuration()
    # The loader re-reads the token file every minute: the kubelet rotates projected tokens.
    loader = InClusterConfigLoader(
        token_filename=str(directory / "token"), cert_filename=str(directory / "ca.crt")
    )
    try:
        loader.load_and_set(configuration)
    except ConfigException as exc:
        raise KubeschedError(
            "no cluster credentials: set clientConnection.kubeconfig, --kubeconfig or "
            "KUBECONFIG, or run inside a pod with a service account (KUBERNETES_SERVICE_HOST "
            f"and KUBERNETES_SERVICE_PORT set, token and ca.crt in {directory}): {exc}"
        ) from None
    except OSError as exc:
        raise KubeschedError(f"{directory}: cannot read the service-account token: {exc}") from None
    configuration.connection_pool_maxsize = CONNECTION_POOL_SIZE
    return client.ApiClient(configuration)


def api_client_for(
    config_kubeconfig: str = "", flag_kubeconfig: str | None = None
) -> client.ApiClient:
    """An ``ApiClient`` for the first credentials found; a clear error when there are none."""
    source = credentials_source(config_kubeconfig, flag_kubeconfig)
    if source == "in-cluster":
        return _in_cluster_client()
    if not os.path.isfile(source):
        raise KubeschedError(f"{source}: kubeconfig not found")
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=source, client_configuration=configuration, persist_config=False
        )
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise KubeschedError(f"{source}: cannot use this kubeconfig: {exc}") from None
    configuration.connection_pool_maxsize = CONNECTION_POOL_SIZE
    return client.ApiClient(configuration)
