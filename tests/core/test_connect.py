"""Clients for ``kubesched run``: credentials found in order, connections pooled for its threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.backends.kube.connect import CONNECTION_POOL_SIZE, api_client_for
from kubesched.errors import KubeschedError

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: not-a-real-token}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
"""


def _pool_size(api_client) -> int:
    return api_client.rest_client.pool_manager.connection_pool_kw["maxsize"]


def test_a_kubeconfig_client_keeps_a_connection_per_concurrent_caller(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    api_client = api_client_for(str(path))
    assert api_client.configuration.host == "https://127.0.0.1:6443"
    # 16 binding workers, 4 status writers, the recorder and the watches share it.
    assert _pool_size(api_client) == CONNECTION_POOL_SIZE >= 16 + 4 + 1 + 2


def test_an_in_cluster_client_is_pooled_the_same(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "token").write_text("not-a-real-token")
    (tmp_path / "ca.crt").write_text("placeholder: read only when connecting")
    monkeypatch.setenv("KUBESCHED_SERVICEACCOUNT_DIR", str(tmp_path))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    api_client = api_client_for()
    assert api_client.configuration.host == "https://10.0.0.1:443"
    assert _pool_size(api_client) == CONNECTION_POOL_SIZE


def test_a_broken_kubeconfig_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n")
    with pytest.raises(KubeschedError, match=r"kubeconfig.*cannot use this kubeconfig"):
        api_client_for(str(path))


def test_a_token_file_is_trimmed_and_read_again_when_it_changes(tmp_path: Path) -> None:
    """``kubectl create token sa > token`` ends the file with a newline; the kubelet rotates
    projected tokens: every request sends the file's current token, trimmed."""
    token = tmp_path / "token"
    token.write_text("first-token\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG.replace("{token: not-a-real-token}", "{tokenFile: token}"))
    api = api_client_for(str(kubeconfig))
    assert api.configuration.auth_settings()["BearerToken"]["value"] == "Bearer first-token"
    token.write_text("second-token-longer\n")
    assert api.configuration.auth_settings()["BearerToken"]["value"] == (
        "Bearer second-token-longer"
    )


def test_an_in_cluster_token_with_a_newline_is_trimmed(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "token").write_text("sa-token\n")
    (tmp_path / "ca.crt").write_text("placeholder: read only when connecting")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    monkeypatch.setenv("KUBESCHED_SERVICEACCOUNT_DIR", str(tmp_path))
    api = api_client_for()
    assert api.configuration.auth_settings()["BearerToken"]["value"] == "Bearer sa-token"
