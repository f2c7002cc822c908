"""What the informers keep of each object, read from a real kube-apiserver."""

from __future__ import annotations

import time

from kubernetes import client

from kubesched import Pod
from kubesched.backends.kube.informer import Informer
from kubesched.backends.kube.transport import Transport


def test_pods_are_kept_without_managed_fields(admin_client, core_v1, namespace):
    """The apiserver sends managedFields with every object; kept, they were ~44 % of a pod's
    parsed JSON held for the scheduler's whole life."""
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="kept", labels={"app": "informer"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="pause")]),
    )
    core_v1.create_namespaced_pod(namespace, pod)
    served = core_v1.read_namespaced_pod("kept", namespace)
    assert served.metadata.managed_fields  # the apiserver does send them

    seen: dict[str, Pod] = {}
    informer = Informer(
        Transport(admin_client),
        f"/api/v1/namespaces/{namespace}/pods",
        Pod,
        lambda p: p.uid,
        lambda p: p.resource_version,
        lambda p: seen.__setitem__(p.name, p),
        lambda _old, new: seen.__setitem__(new.name, new),
        lambda p: seen.pop(p.name, None),
    )
    informer.start()
    try:
        deadline = time.monotonic() + 30
        while "kept" not in seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "kept" in seen, "the informer never listed the pod"
        kept = seen["kept"]
        assert kept.labels == {"app": "informer"}
        assert "managedFields" not in kept.raw["metadata"]
        # An update arrives through the watch: stripped as well.
        core_v1.patch_namespaced_pod("kept", namespace, {"metadata": {"labels": {"v": "2"}}})
        while seen["kept"].labels.get("v") != "2" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen["kept"].labels.get("v") == "2"
        assert "managedFields" not in seen["kept"].raw["metadata"]
    finally:
        informer.stop()
