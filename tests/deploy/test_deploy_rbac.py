"""deploy/manifests/rbac.yaml is minimal: custom-scheduler, authenticated with its own
TokenRequest token, is refused everything it must not do.

Each row of the matrix is a SelfSubjectAccessReview sent as the service account, so the
apiserver's own authorizer answers; the matrix is printed in the run's summary. A few refusals
are also tried for real, against objects that exist. That the grants suffice is proven by
test_deploy_in_cluster.py, where kubesched schedules with this identity alone.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from deploy_support import report
from kubernetes import client

NS = "kube-system"
LEASE = "custom-scheduler"


@dataclass(frozen=True)
class Access:
    verb: str
    resource: str  # "pods", "pods/binding", "leases.coordination.k8s.io"; "/metrics": a path
    namespace: str = ""
    name: str = ""
    allowed: bool = False
    why: str = ""

    @property
    def attributes(self) -> dict[str, str]:
        resource, _, subresource = self.resource.partition("/")
        resource, _, group = resource.partition(".")
        return {
            "verb": self.verb,
            "group": group,
            "resource": resource,
            "subresource": subresource,
            "namespace": self.namespace,
            "name": self.name,
        }


def granted(verb: str, resource: str, why: str, namespace: str = "", name: str = "") -> Access:
    return Access(verb, resource, namespace, name, True, why)


def refused(verb: str, resource: str, why: str, namespace: str = "", name: str = "") -> Access:
    return Access(verb, resource, namespace, name, False, why)


MATRIX = [
    # What kubesched does.
    granted("list", "nodes", "the node cache"),
    granted("watch", "nodes", "the node cache"),
    granted("list", "pods", "the pod cache and the queue"),
    granted("watch", "pods", "the pod cache and the queue"),
    granted("create", "pods/binding", "Bind", "default"),
    granted("patch", "pods/status", "PodScheduled=False, nominatedNodeName", "default"),
    granted("delete", "pods", "preemption victims", "default"),
    granted("create", "events.events.k8s.io", "Scheduled / FailedScheduling", "default"),
    granted("patch", "events.events.k8s.io", "an event's series", "default"),
    granted("list", "namespaces", "InterPodAffinity's namespace selectors"),
    granted("watch", "services", "PodTopologySpread's default constraints"),
    granted("list", "replicasets.apps", "PodTopologySpread's default constraints"),
    granted("list", "statefulsets.apps", "PodTopologySpread's default constraints"),
    granted("list", "replicationcontrollers", "PodTopologySpread's default constraints"),
    granted("list", "poddisruptionbudgets.policy", "preemption"),
    granted("watch", "podgroups.scheduling.k8s.io", "GangScheduling's PodGroups"),
    granted("list", "persistentvolumes", "VolumeBinding, VolumeZone, NodeVolumeLimits"),
    granted("watch", "persistentvolumeclaims", "the volume plugins"),
    granted("list", "storageclasses.storage.k8s.io", "VolumeBinding: binding mode, topologies"),
    granted("watch", "csinodes.storage.k8s.io", "NodeVolumeLimits: attach limits"),
    granted("list", "csidrivers.storage.k8s.io", "NodeVolumeLimits, VolumeBinding capacity"),
    granted("list", "csistoragecapacities.storage.k8s.io", "VolumeBinding: capacity"),
    granted("watch", "volumeattachments.storage.k8s.io", "NodeVolumeLimits: attached volumes"),
    granted("update", "persistentvolumes", "VolumeBinding PreBind: claimRef (static binding)"),
    granted("update", "persistentvolumeclaims", "VolumeBinding PreBind: selected-node", "default"),
    granted("list", "resourceclaims.resource.k8s.io", "DynamicResources: the pods' claims"),
    granted("watch", "deviceclasses.resource.k8s.io", "DynamicResources: class selectors"),
    granted("watch", "resourceslices.resource.k8s.io", "DynamicResources: the devices"),
    granted("update", "resourceclaims.resource.k8s.io", "DRA PreBind: finalizer", "default"),
    granted("update", "resourceclaims.resource.k8s.io/status", "DRA: allocation", "default"),
    granted("update", "resourceclaims.resource.k8s.io/binding", "DRA: reservedFor", "default"),
    granted("create", "leases.coordination.k8s.io", "its Lease, once (create has no name)", NS),
    granted("get", "leases.coordination.k8s.io", "leader election", NS, LEASE),
    granted("update", "leases.coordination.k8s.io", "leader election", NS, LEASE),
    # The secure port (system:auth-delegator, kubesched:metrics-reader).
    granted("create", "tokenreviews.authentication.k8s.io", "whose is a /metrics token"),
    granted("create", "subjectaccessreviews.authorization.k8s.io", "may they get /metrics"),
    granted("get", "/metrics", "its own token scrapes its metrics"),
    # What it must not do.
    refused("get", "secrets", "no secrets", NS),
    refused("list", "secrets", "no secrets"),
    refused("get", "configmaps", "its config is a mounted volume", NS, "custom-scheduler-config"),
    refused("get", "nodes", "the cache lists, it never gets"),
    refused("delete", "nodes", "nodes are not its to change"),
    refused("patch", "nodes", "nodes are not its to change"),
    refused("update", "nodes/status", "nodes are not its to change"),
    refused("create", "pods", "it places pods, never makes them", "default"),
    refused("patch", "pods", "only the status subresource", "default"),
    refused("create", "pods/eviction", "preemption deletes, as kube-scheduler does", "default"),
    refused("create", "pods/exec", "no way into a pod", "default"),
    refused("create", "bindings", "pods/binding only", "default"),
    refused("create", "events", "events.k8s.io only", "default"),
    refused("patch", "deployments.apps", "no workload writes", NS),
    refused("update", "replicasets.apps", "reads workload objects only", "default"),
    refused("get", "leases.coordination.k8s.io", "another scheduler's lease", NS, "kube-scheduler"),
    refused(
        "update", "leases.coordination.k8s.io", "another scheduler's lease", NS, "kube-scheduler"
    ),
    refused(
        "update", "leases.coordination.k8s.io", "its lease in another namespace", "default", LEASE
    ),
    refused(
        "delete", "leases.coordination.k8s.io", "its lease is renewed, never deleted", NS, LEASE
    ),
    refused("list", "leases.coordination.k8s.io", "no other lease is its business", NS),
    refused("get", "persistentvolumes", "the volume plugins list, never get"),
    refused("create", "resourceclaims.resource.k8s.io", "claims are the controller's", "default"),
    refused("delete", "resourceclaims.resource.k8s.io", "claims are not its to remove", "default"),
    refused("update", "resourceslices.resource.k8s.io", "slices are the drivers'"),
    refused("list", "resourceclaimtemplates.resource.k8s.io", "templates are the controller's"),
    refused("patch", "persistentvolumeclaims", "VolumeBinding updates (with a version)", "default"),
    refused("create", "persistentvolumes", "provisioning is the provisioner's"),
    refused("delete", "persistentvolumes", "volumes are not its to remove"),
    refused("delete", "persistentvolumeclaims", "claims are not its to remove", "default"),
    refused("update", "persistentvolumeclaims/status", "the PV controller binds claims", "default"),
    refused("update", "persistentvolumes/status", "the PV controller sets phases"),
    refused("update", "storageclasses.storage.k8s.io", "reads storage classes only"),
    refused("update", "csinodes.storage.k8s.io", "the kubelet's"),
    refused(
        "create", "volumeattachments.storage.k8s.io", "attaching is the attach-detach controller's"
    ),
    refused("create", "serviceaccounts/token", "mints no tokens", NS, "custom-scheduler"),
    refused("impersonate", "users", "acts as no one else"),
    refused("create", "rolebindings.rbac.authorization.k8s.io", "grants nothing", NS),
    refused("bind", "clusterroles.rbac.authorization.k8s.io", "grants nothing"),
    refused("*", "*.*", "not an admin"),
    refused("create", "localsubjectaccessreviews.authorization.k8s.io", "cluster-wide only", NS),
    refused("delete", "/metrics", "resets no apiserver's metrics"),
    refused("get", "/debug/pprof/profile", "profiles no apiserver"),
    refused("get", "/logs", "reads no apiserver logs"),
]


def review(api: client.ApiClient, access: Access) -> tuple[bool, str]:
    if access.resource.startswith("/"):
        spec = {"nonResourceAttributes": {"path": access.resource, "verb": access.verb}}
    else:
        spec = {"resourceAttributes": access.attributes}
    answer = client.AuthorizationV1Api(api).create_self_subject_access_review({"spec": spec})
    return bool(answer.status.allowed), answer.status.reason or ""


def test_who_the_token_is(sa_client, service_account):
    """The matrix below is the service account's own: the token authenticates as it."""
    review = client.AuthenticationV1Api(sa_client).create_self_subject_review({})
    user = review.status.user_info
    assert user.username == service_account
    assert "system:serviceaccounts:kube-system" in user.groups


def test_permission_matrix(request, sa_client, service_account):
    rows = [("VERB", "RESOURCE", "NAMESPACE/NAME", "ALLOWED", "NEEDED", "WHY")]
    wrong = []
    for access in MATRIX:
        allowed, reason = review(sa_client, access)
        where = "/".join(part for part in (access.namespace, access.name) if part) or "(all)"
        rows.append(
            (
                access.verb,
                access.resource,
                where,
                "yes" if allowed else "no",
                "yes" if access.allowed else "no",
                access.why,
            )
        )
        if allowed != access.allowed:
            wrong.append(f"{access.verb} {access.resource} {where}: allowed={allowed} ({reason})")
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    report(
        request.config,
        f"permission matrix of {service_account} (SelfSubjectAccessReview, its own token):\n"
        + "\n".join("  " + line.rstrip() for line in lines),
    )
    assert not wrong, "RBAC differs from what kubesched needs:\n" + "\n".join(wrong)


# -- real attempts ----------------------------------------------------------------------------


def forbidden(call, *args, **kwargs) -> bool:
    try:
        call(*args, **kwargs)
    except client.ApiException as exc:
        if exc.status == 403:
            return True
        raise
    return False


def test_real_attempts_are_refused(
    request, admin_client, sa_client, namespace, nodes, other_scheduler_lease
):
    admin_core = client.CoreV1Api(admin_client)
    secret = f"s-{uuid.uuid4().hex[:6]}"
    admin_core.create_namespaced_secret(
        namespace, {"metadata": {"name": secret}, "stringData": {"password": "hunter2"}}
    )
    node = nodes().metadata.name
    deployment = {
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    client.AppsV1Api(admin_client).create_namespaced_deployment(namespace, deployment)

    core = client.CoreV1Api(sa_client)
    apps = client.AppsV1Api(sa_client)
    coordination = client.CoordinationV1Api(sa_client)
    attempts = {
        "read a Secret": lambda: core.read_namespaced_secret(secret, namespace),
        "list Secrets": lambda: core.list_secret_for_all_namespaces(),
        "delete a Node": lambda: core.delete_node(node),
        "patch a Deployment": lambda: apps.patch_namespaced_deployment(
            "web", namespace, {"spec": {"replicas": 5}}
        ),
        "read another scheduler's Lease": lambda: coordination.read_namespaced_lease(
            other_scheduler_lease, NS
        ),
        "take another scheduler's Lease": lambda: coordination.replace_namespaced_lease(
            other_scheduler_lease,
            NS,
            {
                "metadata": {"name": other_scheduler_lease, "namespace": NS},
                "spec": {"holderIdentity": "custom-scheduler", "leaseDurationSeconds": 15},
            },
        ),
        "create a Pod": lambda: core.create_namespaced_pod(
            namespace,
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
        ),
    }
    allowed = [what for what, attempt in attempts.items() if not forbidden(attempt)]
    assert not allowed, f"custom-scheduler could: {allowed}"
    # Nothing changed.
    assert admin_core.read_node(node).metadata.name == node
    web = client.AppsV1Api(admin_client).read_namespaced_deployment("web", namespace)
    assert web.spec.replicas == 1
    lease = client.CoordinationV1Api(admin_client).read_namespaced_lease(other_scheduler_lease, NS)
    assert lease.spec.holder_identity == "kube-scheduler-0"
    refusals = "\n".join(f"  403 Forbidden: {what}" for what in attempts)
    report(request.config, f"real attempts as custom-scheduler, all refused:\n{refusals}")
