"""kube-scheduler's default plugins, per configuration version.

Source: ``pkg/scheduler/apis/config/<version>/default_plugins.go`` in kubernetes/kubernetes.
The volume-limit plugins of older releases (``EBSLimits``, ``GCEPDLimits``, ``AzureDiskLimits``)
are left out: kube-scheduler removed them and rejects them in v1 files. v1.37 adds
``DynamicResources`` before ``DefaultPreemption`` and ``NodeDeclaredFeatures`` at the end through
feature gates that are on (DRA: always) in v1.37; they are listed here as kube-scheduler ends up
with them.
"""

from __future__ import annotations

from kubesched.config.types import API_GROUP, PluginRef

__all__ = ["DEFAULT_DISTRIBUTIONS", "DEFAULT_PLUGINS", "MULTI_POINT", "default_plugin_sets"]

#: The ``plugins`` field that enables a plugin at every extension point it implements.
MULTI_POINT = "multiPoint"

#: kube-scheduler v1's default ``multiPoint`` list (v1.37), in order, with its score weights.
DEFAULT_PLUGINS: list[PluginRef] = [
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeName"),
    PluginRef("NodeUnschedulable"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DynamicResources", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
    PluginRef("NodeDeclaredFeatures"),
]

#: The distribution of this project that provides each default plugin it ships (the
#: ``[project] name`` of ``plugins/<name>/pyproject.toml``): what to install when one is missing.
DEFAULT_DISTRIBUTIONS: dict[str, str] = {
    "SchedulingGates": "kubesched-scheduling-gates",
    "PrioritySort": "kubesched-priority-sort",
    "NodeName": "kubesched-node-name",
    "NodeUnschedulable": "kubesched-node-unschedulable",
    "TaintToleration": "kubesched-taint-toleration",
    "NodeAffinity": "kubesched-node-affinity",
    "NodePorts": "kubesched-node-ports",
    "NodeResourcesFit": "kubesched-node-resources-fit",
    "PodTopologySpread": "kubesched-pod-topology-spread",
    "InterPodAffinity": "kubesched-inter-pod-affinity",
    "DefaultPreemption": "kubesched-default-preemption",
    "NodeResourcesBalancedAllocation": "kubesched-node-resources-balanced-allocation",
    "ImageLocality": "kubesched-image-locality",
    "DefaultBinder": "kubesched-default-binder",
}

# v1beta2 had no multiPoint: its defaults are listed per extension point, and its score weights
# differ from v1's (TaintToleration, NodeAffinity and InterPodAffinity weigh 1, not 3/2/2).
_V1BETA2_DEFAULTS: dict[str, list[PluginRef]] = {
    "preEnqueue": [PluginRef("SchedulingGates")],
    "queueSort": [PluginRef("PrioritySort")],
    "preFilter": [
        PluginRef(name)
        for name in (
            "NodeResourcesFit",
            "NodePorts",
            "VolumeRestrictions",
            "PodTopologySpread",
            "InterPodAffinity",
            "VolumeBinding",
            "VolumeZone",
            "NodeAffinity",
            "TaintToleration",
        )
    ],
    "filter": [
        PluginRef(name)
        for name in (
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
        )
    ],
    "postFilter": [PluginRef("DefaultPreemption")],
    "preScore": [
        PluginRef(name)
        for name in ("InterPodAffinity", "PodTopologySpread", "TaintToleration", "NodeAffinity")
    ],
    "score": [
        PluginRef("NodeResourcesBalancedAllocation", 1),
        PluginRef("ImageLocality", 1),
        PluginRef("InterPodAffinity", 1),
        PluginRef("NodeResourcesFit", 1),
        PluginRef("NodeAffinity", 1),
        PluginRef("PodTopologySpread", 2),
        PluginRef("TaintToleration", 1),
    ],
    "reserve": [PluginRef("VolumeBinding")],
    "preBind": [PluginRef("VolumeBinding")],
    "bind": [PluginRef("DefaultBinder")],
}


def default_plugin_sets(api_version: str) -> dict[str, list[PluginRef]]:
    """The default enabled plugins per ``plugins`` field (``multiPoint`` or a point) for a version.

    v1beta3's defaults are v1's (the same multiPoint list and weights, less the removed plugins).
    """
    if api_version == f"{API_GROUP}/v1beta2":
        return {point: list(refs) for point, refs in _V1BETA2_DEFAULTS.items()}
    return {MULTI_POINT: list(DEFAULT_PLUGINS)}
