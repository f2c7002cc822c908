"""deploy/manifests/ and deploy/kustomization.yaml, checked without a cluster.

The manifests must agree with each other and with the profile: the ConfigMap holds
deploy/scheduler-config.yaml byte for byte, the Lease Role names the profile's Lease, the
Deployment mounts the ConfigMap where the image reads it and probes the port it serves. The
ClusterRole stays within DESIGN.md §5 (kube-scheduler's own bootstrap role), its upper bound.
(test_deploy_dry_run.py has the apiserver accept them; test_deploy_rbac.py proves the RBAC.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib

import yaml
from deploy_support import DEPLOY, MANIFESTS, ROOT, run

from kubesched.config import load_config
from kubesched.framework.registry import Registry

SEED_LABEL = {"scheduler.custom/enabled": "true"}

#: (apiGroup, resource) -> verbs of kube-scheduler's bootstrap ClusterRoles `system:kube-scheduler`
#: and `system:volume-scheduler` (DESIGN.md §5): what a scheduler may ever be granted.
UPPER_BOUND = {
    ("", "events"): {"create", "patch", "update"},
    ("events.k8s.io", "events"): {"create", "patch", "update"},
    ("coordination.k8s.io", "leases"): {"create", "get", "update"},
    ("", "nodes"): {"get", "list", "watch"},
    ("", "pods"): {"get", "list", "watch", "delete"},
    ("", "pods/binding"): {"create"},
    ("", "bindings"): {"create"},
    ("", "pods/status"): {"patch", "update"},
    ("", "namespaces"): {"get", "list", "watch"},
    ("", "services"): {"get", "list", "watch"},
    ("", "replicationcontrollers"): {"get", "list", "watch"},
    ("apps", "replicasets"): {"get", "list", "watch"},
    ("apps", "statefulsets"): {"get", "list", "watch"},
    ("policy", "poddisruptionbudgets"): {"get", "list", "watch"},
    # With the GenericWorkload gate on.
    ("scheduling.k8s.io", "podgroups"): {"get", "list", "watch"},
    ("", "persistentvolumeclaims"): {"get", "list", "watch", "patch", "update"},
    ("", "persistentvolumes"): {"get", "list", "watch", "patch", "update"},
    ("storage.k8s.io", "csinodes"): {"get", "list", "watch"},
    ("storage.k8s.io", "csidrivers"): {"get", "list", "watch"},
    ("storage.k8s.io", "csistoragecapacities"): {"get", "list", "watch"},
    ("storage.k8s.io", "volumeattachments"): {"get", "list", "watch"},
    # With `system:volume-scheduler`, which kube binds to the same user.
    ("storage.k8s.io", "storageclasses"): {"get", "list", "watch"},
    # system:kube-scheduler's DRA rules (DynamicResourceAllocation is always on in v1.37).
    ("resource.k8s.io", "deviceclasses"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceslices"): {"get", "list", "watch"},
    ("resource.k8s.io", "resourceclaims"): {"get", "list", "watch", "update", "patch"},
    ("resource.k8s.io", "resourceclaims/status"): {"get", "list", "watch", "update", "patch"},
    ("resource.k8s.io", "resourceclaims/binding"): {"update", "patch"},
}


def documents(path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def manifests() -> dict[tuple[str, str], dict]:
    """(kind, name) -> object, over every file of deploy/manifests/."""
    found = {}
    for path in sorted(MANIFESTS.glob("*.yaml")):
        for doc in documents(path):
            key = (doc["kind"], doc["metadata"]["name"])
            assert key not in found, f"{key} defined twice"
            found[key] = doc
    return found


def scheduler_config() -> dict:
    return yaml.safe_load((DEPLOY / "scheduler-config.yaml").read_text())


def deployment_container() -> dict:
    (container,) = manifests()[("Deployment", "custom-scheduler")]["spec"]["template"]["spec"][
        "containers"
    ]
    return container


def test_the_configmap_holds_deploy_scheduler_config_byte_for_byte():
    configmap = manifests()[("ConfigMap", "custom-scheduler-config")]
    text = (DEPLOY / "scheduler-config.yaml").read_text()
    assert configmap["data"] == {"scheduler-config.yaml": text}
    check = run([sys.executable, str(DEPLOY / "make-configmap.py"), "--check"])
    assert check.returncode == 0, check.stderr


def test_the_configmap_profile_is_valid_and_is_the_seeds():
    config = load_config(str(DEPLOY / "scheduler-config.yaml"), Registry.installed())
    (profile,) = config.profiles
    assert profile.scheduler_name == "custom-scheduler"
    raw = scheduler_config()["profiles"][0]
    assert raw["plugins"]["filter"]["enabled"] == [{"name": "LabelFilter"}]
    assert raw["pluginConfig"] == [{"name": "LabelFilter", "args": {"labels": SEED_LABEL}}]
    assert config.leader_election.leader_elect


def test_the_lease_role_names_the_profiles_lease():
    election = scheduler_config()["leaderElection"]
    objects = manifests()
    role = objects[("Role", "kubesched:custom-scheduler:lease")]
    assert role["metadata"]["namespace"] == election["resourceNamespace"]
    by_name = [rule for rule in role["rules"] if "resourceNames" in rule]
    assert by_name == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [election["resourceName"]],
            "verbs": ["get", "update"],
        }
    ]
    binding = objects[("RoleBinding", "kubesched:custom-scheduler:lease")]
    assert binding["metadata"]["namespace"] == election["resourceNamespace"]


def test_the_secure_port_rbac_is_kube_schedulers():
    """Delegated auth through the bootstrap system:auth-delegator (tokenreviews and
    subjectaccessreviews), and a reader role for the /metrics path, bound to the scheduler."""
    objects = manifests()
    delegator = objects[("ClusterRoleBinding", "kubesched:custom-scheduler:auth-delegator")]
    assert delegator["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:auth-delegator",
    }
    reader = objects[("ClusterRole", "kubesched:metrics-reader")]
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    bound = objects[("ClusterRoleBinding", "kubesched:metrics-reader:custom-scheduler")]
    assert bound["roleRef"]["name"] == "kubesched:metrics-reader"
    referenced = {
        doc["roleRef"]["name"]
        for (kind, _), doc in objects.items()
        if kind in ("ClusterRoleBinding", "RoleBinding")
    }
    ours = {name for (kind, name) in objects if kind in ("ClusterRole", "Role")}
    assert referenced - ours == {"system:auth-delegator"}, "no other borrowed role"


def test_the_roles_stay_within_kube_schedulers_bootstrap_role():
    objects = manifests()
    rules = objects[("ClusterRole", "kubesched:custom-scheduler")]["rules"]
    rules += objects[("Role", "kubesched:custom-scheduler:lease")]["rules"]
    beyond = []
    for rule in rules:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                extra = set(rule["verbs"]) - UPPER_BOUND.get((group, resource), set())
                if extra:
                    beyond.append(f"{group or 'core'}/{resource}: {sorted(extra)}")
    assert not beyond, f"granted beyond DESIGN.md §5: {beyond}"


def test_every_binding_names_the_deployments_service_account():
    objects = manifests()
    service_account = objects[("ServiceAccount", "custom-scheduler")]["metadata"]
    pod = objects[("Deployment", "custom-scheduler")]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == service_account["name"]
    bindings = [
        doc for (k, _), doc in objects.items() if k in ("ClusterRoleBinding", "RoleBinding")
    ]
    assert len(bindings) == 4
    for binding in bindings:
        assert binding["subjects"] == [
            {
                "kind": "ServiceAccount",
                "name": service_account["name"],
                "namespace": service_account["namespace"],
            }
        ]


def test_the_deployment_is_two_hardened_replicas_with_probes_and_limits():
    deployment = manifests()[("Deployment", "custom-scheduler")]
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = deployment_container()
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert set(container["resources"]) == {"requests", "limits"}
    for kind in ("requests", "limits"):
        assert set(container["resources"][kind]) == {"cpu", "memory"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/tmp"]], "a writable /tmp on a read-only root"
    assert volumes[mounts["/etc/kubesched"]]["configMap"]["name"] == "custom-scheduler-config"


def test_the_probes_ask_the_secure_port_kubesched_serves():
    """kube-scheduler's secure port, 10259, over HTTPS; no plain --port."""
    container = deployment_container()
    args = dict(arg.removeprefix("--").split("=", 1) for arg in container["args"])
    assert args == {"bind-address": "0.0.0.0", "secure-port": "10259"}
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    probes = {
        kind: container[kind]["httpGet"]
        for kind in ("startupProbe", "livenessProbe", "readinessProbe")
    }
    assert probes["livenessProbe"]["path"] == "/healthz"
    assert probes["startupProbe"]["path"] == "/healthz"
    assert probes["readinessProbe"]["path"] == "/readyz"
    for probe in probes.values():
        assert named[probe["port"]] == int(args["secure-port"])
        assert probe["scheme"] == "HTTPS"
    assert list(named.values()) == [10259]


def test_the_image_is_custom_scheduler_at_the_project_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    container = deployment_container()
    assert container["image"] == f"custom-scheduler:{version}"
    assert container["imagePullPolicy"] == "IfNotPresent"


def test_the_test_pod_is_the_seeds():
    (pod,) = documents(DEPLOY / "test-pod.yaml")
    assert pod["metadata"] == {"name": "test-pod"}
    assert pod["spec"]["schedulerName"] == "custom-scheduler"
    assert pod["spec"]["containers"] == [{"name": "nginx", "image": "nginx"}]


def test_the_kustomization_lists_every_manifest():
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    listed = sorted(kustomization["resources"])
    assert listed == sorted(f"manifests/{p.name}" for p in MANIFESTS.glob("*.yaml"))
    assert set(kustomization) == {"apiVersion", "kind", "resources"}, "generates nothing"
    assert not list(MANIFESTS.glob("kustomization.y*ml")), "`kubectl apply -f` would choke on it"


def test_kubectl_kustomize_renders_the_same_objects(kubectl):
    rendered = subprocess.run(
        [kubectl, "kustomize", str(DEPLOY)], capture_output=True, text=True, timeout=120
    )
    assert rendered.returncode == 0, rendered.stderr
    objects = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(rendered.stdout)}
    assert objects == manifests()


def test_the_readme_overlay_pins_the_image_by_digest(kubectl, tmp_path):
    """deploy/README.md's kustomize overlay, rendered: the Deployment names the image by digest."""
    readme = (DEPLOY / "README.md").read_text()
    after = readme.split("overlays/production/kustomization.yaml", 1)[1]
    block = after.split("```yaml\n", 1)[1].split("```", 1)[0]
    overlay = yaml.safe_load(block)
    assert overlay["resources"] == ["../../deploy"]
    overlay_dir = tmp_path / "overlays" / "production"
    overlay_dir.mkdir(parents=True)
    overlay["resources"] = [os.path.relpath(DEPLOY, overlay_dir)]
    (overlay_dir / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    rendered = subprocess.run(
        [kubectl, "kustomize", str(overlay_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rendered.returncode == 0, rendered.stderr
    (deployment,) = [d for d in yaml.safe_load_all(rendered.stdout) if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    (image,) = overlay["images"]
    assert container["image"] == f"{image['newName']}@{image['digest']}"
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", image["digest"])


def test_the_network_policy_admits_only_the_secure_port():
    """Ingress to the scheduler's pods only on the port its container serves health and
    metrics on; the policy selects exactly the Deployment's pods."""
    policy = manifests()[("NetworkPolicy", "custom-scheduler")]
    deployment = manifests()[("Deployment", "custom-scheduler")]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert policy["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    served = {p["containerPort"] for p in deployment_container()["ports"]}
    (rule,) = policy["spec"]["ingress"]
    assert "from" not in rule  # probes and scrapes come from anywhere in the cluster
    assert {p["port"] for p in rule["ports"]} == served
