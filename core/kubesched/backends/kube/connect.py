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
import threading
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import InClusterConfigLoader

from kubesched.errors import KubeschedError

__all__ = [
    "CONNECTION_POOL_SIZE",
    "SERVICEACCOUNT_DIR",
    "SERVICEACCOUNT_DIR_ENV",
    "TokenFile",
    "api_client_for",
    "credentials_source",
    "serviceaccount_dir",
]

#: Where the kubelet mounts a pod's service-account token and the cluster's CA certificate.
SERVICEACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Another directory holding ``token`` and ``ca.crt``: for a token projected elsewhere, and for
#: exercising the in-cluster path outside a pod.
SERVICEACCOUNT_DIR_ENV = "KUBESCHED_SERVICEACCOUNT_DIR"
#: Connections kept open to the apiserver: at least the threads that talk at once (64 binding
#: workers, 4 status writers, 8 event writers, about 20 watches, leader election): with fewer,
#: connections are dropped when handed back and TLS handshakes redone under load (the client's
#: default, 5 per core, did so).
CONNECTION_POOL_SIZE = 128


class TokenFile:
    """A bearer token kept in a file: trimmed (``kubectl create token > file`` ends it with a
    newline, which would otherwise make a broken header) and read again whenever the file
    changes (the kubelet rotates projected tokens; an operator may replace one), checked on
    every request through the configuration's ``refresh_api_key_hook``. A file that cannot be
    read or is empty keeps the last good token."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._seen: tuple[int, int, int] | None = None
        self._token = ""
        self._lock = threading.Lock()

    def token(self) -> str:
        try:
            stat = os.stat(self.path)
        except OSError:
            return self._token
        seen = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self._lock:
            if seen != self._seen:
                try:
                    with open(self.path, encoding="utf-8") as f:
                        token = f.read().strip()
                except (OSError, UnicodeDecodeError):
                    return self._token
                self._seen = seen
                if token:
                    self._token = token
            return self._token

    def install(self, configuration: client.Configuration) -> None:
        """Make ``configuration`` send this file's token (read now, and on each change)."""

        def refresh(target: client.Configuration) -> None:
            target.api_key["BearerToken"] = self.token()

        # auth_settings() reads "BearerToken" first, then the "authorization" alias.
        configuration.api_key = {
            k: v for k, v in (configuration.api_key or {}).items() if k != "authorization"
        }
        configuration.api_key_prefix = {
            **{k: v for k, v in (configuration.api_key_prefix or {}).items()},
            "BearerToken": "Bearer",
        }
        configuration.api_key_prefix.pop("authorization", None)
        refresh(configuration)
        configuration.refresh_api_key_hook = refresh  # type: ignore[assignment]  # typed None


def _trim_token(configuration: client.Configuration) -> None:
    """A token given inline (kubeconfig ``token``) without surrounding whitespace."""
    for key in ("BearerToken", "authorization"):
        value = (configuration.api_key or {}).get(key)
        if isinstance(value, str):
            configuration.api_key[key] = value.strip()


def _kubeconfig_token_file(path: str) -> str | None:
    """The current user's ``tokenFile`` in the kubeconfig at ``path`` (relative to its
    directory), when it has one and no inline ``token``."""
    try:
        with open(path, encoding="utf-8") as f:
            document: Any = yaml.safe_load(f)
        context_name = document.get("current-context")
        contexts = {c.get("name"): c.get("context") or {} for c in document.get("contexts") or ()}
        user_name = contexts.get(context_name, {}).get("user")
        users = {u.get("name"): u.get("user") or {} for u in document.get("users") or ()}
        user = users.get(user_name) or {}
    except (OSError, yaml.YAMLError, AttributeError, TypeError):
        return None
    token_file = user.get("tokenFile")
    if not isinstance(token_file, str) or not token_file or user.get("token"):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(path)), token_file)


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
    TokenFile(directory / "token").install(configuration)  # read on change, not once a minute
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
    token_file = _kubeconfig_token_file(source)
    if token_file is not None:
        TokenFile(token_file).install(configuration)
    else:
        _trim_token(configuration)
    configuration.connection_pool_maxsize = CONNECTION_POOL_SIZE
    return client.ApiClient(configuration)
