"""kubesched: a Kubernetes scheduler whose every decision is made by plugins.

The public API for plugin authors and embedders. Everything not listed in ``__all__`` is internal
and may change.
"""

from kubesched import helpers, selectors, storage
from kubesched.backends import BindError, ClusterBackend, InMemoryBackend, ObjectWriteError
from kubesched.config.decode import parse_duration
from kubesched.cycle_state import CycleState
from kubesched.errors import (
    ArgsError,
    ConfigError,
    FieldError,
    KubeschedError,
    ManifestError,
    PluginLoadError,
)
from kubesched.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.handle import Handle
from kubesched.hookspecs import hookimpl
from kubesched.nodeinfo import NodeInfo, pod_requests
from kubesched.objects import Container, Node, ObjectError, Pod, Taint, Toleration
from kubesched.quantity import InvalidQuantity, parse_quantity
from kubesched.results import NodeToStatus, PostFilterResult, PreFilterResult, QueuedPodInfo
from kubesched.snapshot import Snapshot
from kubesched.status import Code, Status
from kubesched.waiting_pods import WaitingPod

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
