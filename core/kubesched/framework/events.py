"""Cluster events: what can make a pod that a plugin rejected schedulable again.

Each plugin declares, through the ``events_to_register`` hook, the events that may help the pods it
rejected (kube-scheduler's ``EnqueueExtensions``), optionally with a hint function that looks at
the changed object and says whether this particular change helps. On an event the queue moves back
only the pods rejected by a plugin that registered it and whose hint says ``QUEUE``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "QueueingHintFn",
]


class EventResource(enum.StrEnum):
    """The kind of object an event is about."""

    POD = "Pod"
    #: A pod bound to a node (kube-scheduler's ``AssignedPod``): load that came or went.
    ASSIGNED_POD = "AssignedPod"
    #: A pod still waiting to be scheduled (kube-scheduler's ``UnscheduledPod``).
    UNSCHEDULED_POD = "UnscheduledPod"
    NODE = "Node"
    # Objects plugins consult (``Handle.lister``); the values are kube-scheduler's names, and
    # each is also the object's kind, so a consulted kind's events carry ``EventResource(kind)``.
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    STORAGE_CLASS = "StorageClass"
    CSI_NODE = "CSINode"
    CSI_DRIVER = "CSIDriver"
    CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
    VOLUME_ATTACHMENT = "VolumeAttachment"
    RESOURCE_CLAIM = "ResourceClaim"
    DEVICE_CLASS = "DeviceClass"
    RESOURCE_SLICE = "ResourceSlice"
    WILDCARD = "*"

    @classmethod
    def of_kind(cls, kind: str) -> EventResource | None:
        """The resource whose events a consulted ``kind`` raises, or ``None`` when no plugin can
        register events for it (Namespaces, Services, … are read, never waited for)."""
        try:
            resource = cls(kind)
        except ValueError:
            return None
        return resource if resource not in _NOT_KINDS else None


#: Resources that are not kinds of their own (pod states, the wildcard).
_NOT_KINDS = frozenset(
    {
        EventResource.POD,
        EventResource.ASSIGNED_POD,
        EventResource.UNSCHEDULED_POD,
        EventResource.NODE,
        EventResource.WILDCARD,
    }
)


class ActionType(enum.IntFlag):
    """What happened to the object; update actions are split so hints can be precise."""

    ADD = enum.auto()
    DELETE = enum.auto()
    UPDATE_NODE_ALLOCATABLE = enum.auto()
    UPDATE_NODE_LABEL = enum.auto()
    UPDATE_NODE_TAINT = enum.auto()
    UPDATE_NODE_CONDITION = enum.auto()
    UPDATE_NODE_ANNOTATION = enum.auto()
    UPDATE_POD_LABEL = enum.auto()
    UPDATE_POD_SCALE_DOWN = enum.auto()
    UPDATE_POD_TOLERATIONS = enum.auto()
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = enum.auto()
    UPDATE_POD_OTHER = enum.auto()
    UPDATE_NODE_OTHER = enum.auto()
    #: An update of any other object (kube's plain ``Update``): a PV, a PVC, a CSINode, …
    UPDATE_OBJECT = enum.auto()
    #: ``status.declaredFeatures`` changed (kube-scheduler's ``UpdateNodeDeclaredFeature``).
    UPDATE_NODE_DECLARED_FEATURE = enum.auto()
    #: A pod's ``status.resourceClaimStatuses`` changed (``UpdatePodGeneratedResourceClaim``).
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = enum.auto()

    UPDATE = (
        UPDATE_NODE_ALLOCATABLE
        | UPDATE_NODE_LABEL
        | UPDATE_NODE_TAINT
        | UPDATE_NODE_CONDITION
        | UPDATE_NODE_ANNOTATION
        | UPDATE_NODE_OTHER
        | UPDATE_NODE_DECLARED_FEATURE
        | UPDATE_POD_LABEL
        | UPDATE_POD_SCALE_DOWN
        | UPDATE_POD_TOLERATIONS
        | UPDATE_POD_SCHEDULING_GATES_ELIMINATED
        | UPDATE_POD_OTHER
        | UPDATE_POD_GENERATED_RESOURCE_CLAIM
        | UPDATE_OBJECT
    )
    ALL = ADD | DELETE | UPDATE


class QueueingHint(enum.Enum):
    """A hint function's answer: does this change make the rejected pod worth retrying?"""

    QUEUE = "Queue"
    SKIP = "Skip"


#: ``hint(pod, old_object, new_object) -> QueueingHint``; old is None on add, new None on delete.
QueueingHintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """An event kind: a resource and the actions on it."""

    resource: EventResource
    action: ActionType

    def matches(self, other: ClusterEvent) -> bool:
        """Whether a registered event (``self``) covers an event that happened (``other``)."""
        resource_ok = self.resource in (EventResource.WILDCARD, other.resource) or (
            self.resource is EventResource.POD
            and other.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)
        )
        return resource_ok and bool(self.action & other.action)

    def __str__(self) -> str:
        return f"{self.resource.value}/{self.action!r}"


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registered event, with an optional hint; no hint means every such event queues."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None
