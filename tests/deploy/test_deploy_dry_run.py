"""The real apiserver accepts every manifest: a server-side dry run, through the Python client
and through ``kubectl apply --dry-run=server`` with ``-f`` and ``-k`` (the kubectl built with the
control plane). A server-side dry run goes through admission and validation like a real apply,
and stores nothing."""

from __future__ import annotations

import subprocess

import pytest
import yaml
from deploy_support import DEPLOY, MANIFESTS
from kubernetes import client, dynamic

FIELD_MANAGER = "kubesched-deploy-test"


def every_manifest() -> list[pytest.param]:
    params = []
    for path in [*sorted(MANIFESTS.glob("*.yaml")), DEPLOY / "test-pod.yaml"]:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                ident = f"{path.name}:{doc['kind']}/{doc['metadata']['name']}"
                params.append(pytest.param(doc, id=ident))
    return params


@pytest.mark.parametrize("manifest", every_manifest())
def test_server_side_dry_run_accepts(control_plane, admin_client, manifest):
    resources = dynamic.DynamicClient(admin_client).resources
    api = resources.get(api_version=manifest["apiVersion"], kind=manifest["kind"])
    namespace = manifest["metadata"].get("namespace", "default" if api.namespaced else None)
    try:
        applied = api.server_side_apply(
            body=manifest,
            name=manifest["metadata"]["name"],
            namespace=namespace,
            field_manager=FIELD_MANAGER,
            dry_run="All",
        )
    except client.ApiException as exc:
        pytest.fail(f"the apiserver refused {manifest['kind']}: {exc.status} {exc.body}")
    assert applied.metadata.name == manifest["metadata"]["name"]


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(["-f", str(MANIFESTS)], id="apply-f-deploy-manifests"),
        pytest.param(["-k", str(DEPLOY)], id="apply-k-deploy"),
        pytest.param(["-f", str(DEPLOY / "test-pod.yaml")], id="apply-f-test-pod"),
    ],
)
def test_kubectl_apply_dry_run_server_accepts(control_plane, kubectl, source):
    kubeconfig = str(control_plane.admin_kubeconfig)
    result = subprocess.run(
        [kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run=server", *source],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "(server dry run)" in result.stdout
