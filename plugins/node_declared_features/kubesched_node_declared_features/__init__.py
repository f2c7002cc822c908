"""NodeDeclaredFeatures: a pod goes only to nodes that declare every feature its spec needs.

kube-scheduler's PreFilter/Filter plugin of the same name (``pkg/scheduler/framework/plugins/
nodedeclaredfeatures``, GA in v1.37) over the feature registry of
``k8s.io/component-helpers/nodedeclaredfeatures``: the kubelet publishes the features it supports
in ``status.declaredFeatures``; the scheduler infers from the pod's spec the features it needs
(e.g. a container restart rule with action ``RestartAllContainers``) and rejects nodes that do
not declare them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    FieldError,
    Handle,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = [
    "DEFAULT_FEATURES",
    "ERR_REASON_UNSATISFIED_REQUIREMENTS",
    "KUBE_VERSION",
    "NAME",
    "Feature",
    "NodeDeclaredFeatures",
    "declared_features",
    "infer_for_pod_scheduling",
]

NAME = "NodeDeclaredFeatures"
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
#: The component version requirements are inferred for (kube's ``version.Get()``): a feature
#: whose ``max_version`` is older is assumed everywhere and no longer required.
KUBE_VERSION = (1, 37, 2)

_STATE_KEY = f"PreFilter{NAME}"

Spec = Mapping[str, Any]


@dataclass(frozen=True)
class Feature:
    """One entry of kube's feature registry (``types.Feature``), as far as scheduling uses it."""

    name: str
    #: Whether a pod with this spec needs a node that declares the feature.
    infer_for_scheduling: Callable[[Spec], bool]
    #: The last version in which the feature is checked; ``None``: no limit.
    max_version: tuple[int, int, int] | None = None


def _never(spec: Spec) -> bool:
    return False


def _entries(spec: Spec, field: str) -> list[Mapping[str, Any]]:
    value = spec.get(field)
    if not isinstance(value, list):
        return []
    return [entry for entry in value if isinstance(entry, Mapping)]


def _needs_restart_all_containers(spec: Spec) -> bool:
    """A container or init container rule with action ``RestartAllContainers``."""
    return any(
        isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers"
        for field in ("containers", "initContainers")
        for container in _entries(spec, field)
        for rule in container.get("restartPolicyRules") or ()
    )


def _needs_user_namespaces_host_network(spec: Spec) -> bool:
    """``hostNetwork: true`` together with ``hostUsers: false``."""
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _needs_volume_bind_mount_options(spec: Spec) -> bool:
    """A volume mount with ``bindMountOptions``, in any kind of container."""
    return any(
        isinstance(mount, Mapping) and bool(mount.get("bindMountOptions"))
        for field in ("containers", "initContainers", "ephemeralContainers")
        for container in _entries(spec, field)
        for mount in container.get("volumeMounts") or ()
    )


#: kube v1.37's ``features.AllFeatures``, sorted by name as its framework sorts them. The features
#: that only matter to pod updates (in-place resize) or to the kubelet are listed with a
#: scheduling inference that is always false, as in kube.
DEFAULT_FEATURES: tuple[Feature, ...] = tuple(
    sorted(
        (
            Feature("DRANodeAllocatableResources", _never),
            Feature("DRAOptionalNodeOperations", _never),
            Feature("ExtendWebSocketsToKubelet", _never),
            Feature("InPlacePodLevelResourcesVerticalScaling", _never),
            Feature("InPlacePodVerticalScalingInitContainers", _never),
            Feature("InPlacePodVerticalScalingMemoryBackedVolumes", _never),
            Feature("RestartAllContainersOnContainerExits", _needs_restart_all_containers),
            Feature("UserNamespacesHostNetworkSupport", _needs_user_namespaces_host_network),
            Feature("VolumeBindMountOptions", _needs_volume_bind_mount_options),
        ),
        key=lambda feature: feature.name,
    )
)


def infer_for_pod_scheduling(
    spec: Spec, features: Iterable[Feature], version: tuple[int, int, int] = KUBE_VERSION
) -> frozenset[str]:
    """The features a pod with ``spec`` needs of its node (kube's ``InferForPodScheduling``)."""
    return frozenset(
        feature.name
        for feature in features
        if (feature.max_version is None or version <= feature.max_version)
        and feature.infer_for_scheduling(spec)
    )


def declared_features(node: Node) -> tuple[str, ...]:
    """The node's ``status.declaredFeatures`` (the kubelet keeps them sorted)."""
    value = (node.raw.get("status") or {}).get("declaredFeatures")
    if not isinstance(value, list):
        return ()
    return tuple(name for name in value if isinstance(name, str))


def _spec(pod: Pod) -> Spec:
    spec = pod.raw.get("spec")
    return spec if isinstance(spec, Mapping) else {}


class NodeDeclaredFeatures:
    """Built once per profile; ``features`` and ``version`` are for tests (kube's mock registry)."""

    name = NAME

    def __init__(
        self,
        args: Mapping[str, Any],
        handle: Handle,
        *,
        features: Sequence[Feature] = DEFAULT_FEATURES,
        version: tuple[int, int, int] = KUBE_VERSION,
    ) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )
        self.features = tuple(features)
        self.version = version

    def requirements(self, pod: Pod) -> frozenset[str]:
        return infer_for_pod_scheduling(_spec(pod), self.features, self.version)

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | None:
        """Infer the pod's feature requirements; a pod that needs none skips Filter."""
        required = self.requirements(pod)
        if not required:
            return Status.skip()
        state.write(_STATE_KEY, required)
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node that does not declare every required feature (preemption cannot help)."""
        required = state.get(_STATE_KEY)
        if required is None:
            return Status.error(f'error reading "{_STATE_KEY}" from cycle-state: not found')
        node = node_info.node
        if node is None:
            return Status.error("node not found")
        if required.issubset(declared_features(node)):
            return None
        return Status.unresolvable(ERR_REASON_UNSATISFIED_REQUIREMENTS)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter reads only the features the pod needs."""
        return sorted(self.requirements(pod))

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """A node added or declaring other features; the rejected pod needing other features."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
                ),
                self._hint_node_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
                self._hint_target_pod_update,
            ),
        ]

    def _hint_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
            return QueueingHint.QUEUE  # kube queues on objects it cannot read
        if old is not None and declared_features(old) == declared_features(new):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def _hint_target_pod_update(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(new, Pod) or not isinstance(old, Pod):
            return QueueingHint.QUEUE
        # kube registers this for the target pod only (TargetPod); the uid check does the same.
        if new.uid != pod.uid:
            return QueueingHint.SKIP
        if self.requirements(old) == self.requirements(new):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
