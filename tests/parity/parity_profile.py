"""The profile both schedulers run in the parity suite (kube-scheduler v1.37's defaults, less the
plugins whose objects the scenarios lack, plus the extra profiles the scenarios name)."""

from __future__ import annotations

from typing import Any

from parity_scenarios import (
    BINPACK_SCHEDULER_NAME,
    GPU,
    RATIO_SCHEDULER_NAME,
    SCHEDULER_NAME,
    ZONE,
)

#: kube-scheduler v1.37's default plugins that need objects the scenarios do not have: both
#: schedulers run the profile without them, so both run exactly the same plugins, in their
#: default order.
DISABLED_PLUGINS = ("NodeDeclaredFeatures",)
_DISABLED = {"disabled": [{"name": name} for name in DISABLED_PLUGINS]}
_NOT_GREEN = {"key": "pool", "operator": "NotIn", "values": ["green"]}
#: The KubeSchedulerConfiguration both schedulers run, word for word: kube-scheduler's default
#: plugins less the disabled ones, with their default args; then the same plugins bin-packing
#: (other weights, MostAllocated over cpu, memory and GPUs); then with a RequestedToCapacityRatio
#: shape, GPUs left to the node, and a node affinity the scheduler enforces.
PROFILE: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {"schedulerName": SCHEDULER_NAME, "plugins": {"multiPoint": _DISABLED}},
        {
            "schedulerName": BINPACK_SCHEDULER_NAME,
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "NodeAffinity", "weight": 5},
                        {"name": "ImageLocality", "weight": 3},
                    ],
                    **_DISABLED,
                }
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [
                                {"name": "cpu", "weight": 2},
                                {"name": "memory", "weight": 1},
                                {"name": GPU, "weight": 3},
                            ],
                        }
                    },
                },
                {
                    "name": "NodeResourcesBalancedAllocation",
                    "args": {
                        "resources": [
                            {"name": "cpu", "weight": 1},
                            {"name": "memory", "weight": 1},
                            {"name": GPU, "weight": 1},
                        ]
                    },
                },
            ],
        },
        {
            "schedulerName": RATIO_SCHEDULER_NAME,
            "plugins": {"multiPoint": _DISABLED},
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResources": [GPU],
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 2},
                            ],
                            "requestedToCapacityRatio": {
                                "shape": [
                                    {"utilization": 0, "score": 10},
                                    {"utilization": 60, "score": 3},
                                    {"utilization": 100, "score": 0},
                                ]
                            },
                        },
                    },
                },
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchExpressions": [_NOT_GREEN]}]
                            },
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 40,
                                    "preference": {
                                        "matchExpressions": [
                                            {"key": ZONE, "operator": "In", "values": ["zone-a"]}
                                        ]
                                    },
                                }
                            ],
                        }
                    },
                },
            ],
        },
    ],
}
