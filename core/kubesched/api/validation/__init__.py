"""kube-apiserver's validation of the Pod and Node fields the scheduler reads.

A cluster file is scheduled as the same objects applied to a cluster would be, so what the
apiserver refuses on create (``ValidatePodCreate``, ``ValidateNode`` in
``pkg/apis/core/validation``) is refused here too, worded as the apiserver words it
(``spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable
resources``). Covered: container and pod-level requests and limits, ``spec.nodeSelector``, node
affinity terms (``matchExpressions``, ``matchFields``, preferred weights), tolerations, topology
spread constraints, inter-pod (anti-)affinity (:func:`kubesched.api.objects.pod_affinity_errors`),
node taints and node capacity/allocatable.

The functions take the raw mapping (after the API's defaulting, ``manifests.with_api_defaults``)
and never raise: a part that is not shaped as the API says is left to the object parser, which
names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.objects import pod_affinity_errors
from kubesched.api.validation._fields import each_mapping
from kubesched.api.validation._placement import (
    node_affinity_errors,
    node_selector_errors,
    spread_errors,
    taint_errors,
    toleration_errors,
)
from kubesched.api.validation._resources import parse_amount, quantity_errors, requirements_errors

__all__ = ["node_errors", "pod_errors"]


def pod_errors(pod: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver refuses in the scheduling fields of ``pod`` (already defaulted), each
    as ``field.path: problem`` in its wording; empty when it would accept them."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return []
    errors: list[str] = []
    for field in ("containers", "initContainers"):
        for index, container in each_mapping(spec.get(field)):
            errors += requirements_errors(
                container.get("resources"), f"spec.{field}[{index}].resources", container=True
            )
    errors += requirements_errors(spec.get("resources"), "spec.resources", container=False)
    errors += node_selector_errors(spec.get("nodeSelector"))
    affinity = spec.get("affinity")
    if isinstance(affinity, Mapping):
        errors += node_affinity_errors(affinity.get("nodeAffinity"), "spec.affinity.nodeAffinity")
        if all(
            isinstance(affinity.get(k), Mapping | None) for k in ("podAffinity", "podAntiAffinity")
        ):
            errors += pod_affinity_errors(affinity)  # else the parser names the bad part
    errors += toleration_errors(spec.get("tolerations"))
    errors += spread_errors(spec.get("topologySpreadConstraints"))
    return errors


def node_errors(node: Mapping[str, Any]) -> list[str]:
    """What kube-apiserver refuses in the scheduling fields of ``node``: taints, and the
    quantities of its capacity and allocatable (``ValidateNodeResources``)."""
    errors: list[str] = []
    spec = node.get("spec")
    if isinstance(spec, Mapping):
        errors += taint_errors(spec.get("taints"))
    status = node.get("status")
    if isinstance(status, Mapping):
        for field in ("capacity", "allocatable"):
            resources = status.get(field)
            if not isinstance(resources, Mapping):
                continue
            for name, raw in resources.items():
                value = parse_amount(raw)
                if value is not None:
                    errors += quantity_errors(str(name), raw, value, f"status.{field}.{name}")
    return errors
