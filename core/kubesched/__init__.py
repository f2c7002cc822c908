"""kubesched: a Kubernetes scheduler whose every decision is made by plugins.

The public API for plugin authors and embedders. Everything not listed in ``__all__`` is internal
and may change.
"""

from . import helpers, selectors, storage
from .backends import BindError, ClusterBackend, InMemoryBackend, ObjectWriteError
from .config.decode import parse_duration
from .cycle_state import CycleState
from .errors import (
    ArgsError,
    ConfigError,
    FieldError,
    KubeschedError,
    ManifestError,
    PluginLoadError,
)
from .events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from .handle import Handle
from .hookspecs import hookimpl
from .nodeinfo import NodeInfo, pod_requests
from .objects import Container, Node, ObjectError, Pod, Taint, Toleration
from .quantity import InvalidQuantity, parse_quantity
from .results import NodeToStatus, PostFilterResult, PreFilterResult, QueuedPodInfo
from .snapshot import Snapshot
from .status import Code, Status
from .waiting_pods import WaitingPod

__version__ = "0.1.0"

__all__ = [
    "ActionType",
    "ArgsError",
    "BindError",
    "ClusterBackend",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "ConfigError",
    "Container",
    "CycleState",
    "EventResource",
    "FieldError",
    "Handle",
    "InMemoryBackend",
    "InvalidQuantity",
    "KubeschedError",
    "ManifestError",
    "Node",
    "NodeInfo",
    "NodeToStatus",
    "ObjectError",
    "ObjectWriteError",
    "PluginLoadError",
    "Pod",
    "PostFilterResult",
    "PreFilterResult",
    "QueuedPodInfo",
    "QueueingHint",
    "Snapshot",
    "Status",
    "Taint",
    "Toleration",
    "WaitingPod",
    "__version__",
    "helpers",
    "hookimpl",
    "parse_duration",
    "parse_quantity",
    "pod_requests",
    "selectors",
    "storage",
]
