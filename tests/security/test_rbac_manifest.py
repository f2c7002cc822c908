"""deploy/manifests/rbac.yaml grants no wildcard and nothing that reads secrets or hands out
power. The live permission matrix of the deployed ServiceAccount (SelfSubjectAccessReview with
its own token, and real refused attempts) is tests/deploy/test_rbac.py; this is the check that
needs no cluster, so a widened rule fails in every environment."""

from __future__ import annotations

from pathlib import Path

import yaml

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "manifests" / "rbac.yaml"
#: Resources kubesched must never be granted, whatever the verb.
NEVER = {
    "secrets",
    "configmaps",
    "serviceaccounts",
    "serviceaccounts/token",
    "pods/exec",
    "pods/attach",
    "pods/portforward",
    "pods/eviction",
    "roles",
    "rolebindings",
    "clusterroles",
    "clusterrolebindings",
    "certificatesigningrequests",
    "tokenreviews",
}
#: Verbs that hand out power rather than use it.
NEVER_VERBS = {"escalate", "bind", "impersonate", "approve", "sign", "*"}
#: Everything the scheduler writes: (apiGroup, resource) -> verbs.
WRITES = {
    ("", "pods"): {"delete"},
    ("", "pods/binding"): {"create"},
    ("", "pods/status"): {"patch"},
    ("events.k8s.io", "events"): {"create", "patch"},
    ("coordination.k8s.io", "leases"): {"create", "update"},
    # VolumeBinding's PreBind: a PV's claimRef (static binding), a claim's selected-node annotation.
    ("", "persistentvolumes"): {"update"},
    ("", "persistentvolumeclaims"): {"update"},
    # DynamicResources' PreBind: the claim's finalizer, then status.allocation and reservedFor
    # (authorized as resourceclaims/binding by the v1.37 apiserver).
    ("resource.k8s.io", "resourceclaims"): {"update"},
    ("resource.k8s.io", "resourceclaims/status"): {"update"},
    ("resource.k8s.io", "resourceclaims/binding"): {"update"},
}
READS = {"get", "list", "watch"}
#: The one non-resource rule: scraping /metrics (the secure port's SubjectAccessReview).
METRICS_READER = {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}


def _rules() -> list[dict]:
    rules = []
    for doc in yaml.safe_load_all(RBAC.read_text()):
        if doc and doc.get("kind") in ("Role", "ClusterRole"):
            rules.extend(doc.get("rules") or [])
    return rules


def test_no_wildcards_secrets_or_escalation():
    problems = []
    for rule in _rules():
        for field in ("apiGroups", "resources", "verbs"):
            if "*" in (rule.get(field) or []):
                problems.append(f"wildcard in {field}: {rule}")
        for resource in rule.get("resources") or []:
            if resource in NEVER:
                problems.append(f"grants {resource}: {rule}")
        for verb in rule.get("verbs") or []:
            if verb in NEVER_VERBS:
                problems.append(f"grants verb {verb}: {rule}")
        if rule.get("nonResourceURLs") and rule != METRICS_READER:
            problems.append(f"non-resource URLs: {rule}")
    assert not problems, "\n".join(problems)


def test_the_only_borrowed_role_is_system_auth_delegator():
    """Bindings name our own roles, and system:auth-delegator for the secure port's
    TokenReviews and SubjectAccessReviews (what kube-scheduler's role grants for them)."""
    docs = [doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc]
    ours = {doc["metadata"]["name"] for doc in docs if doc["kind"] in ("Role", "ClusterRole")}
    borrowed = {
        doc["roleRef"]["name"]
        for doc in docs
        if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")
        and doc["roleRef"]["name"] not in ours
    }
    assert borrowed == {"system:auth-delegator"}


def test_every_write_is_one_kubesched_makes():
    unexpected = []
    for rule in _rules():
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                writes = set(rule.get("verbs") or []) - READS
                allowed = WRITES.get((group, resource), set())
                if writes - allowed:
                    unexpected.append(f"{group or 'core'}/{resource}: {sorted(writes - allowed)}")
    assert not unexpected, unexpected


def test_the_lease_is_updated_by_name_only():
    for rule in _rules():
        if "leases" in (rule.get("resources") or []) and "update" in rule.get("verbs", []):
            assert rule.get("resourceNames"), f"lease update not limited by name: {rule}"
