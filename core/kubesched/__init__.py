"""kubesched: a Kubernetes scheduler whose every decision is made by plugins.

The public API for plugin authors and embedders. Everything not listed in ``__all__`` is internal
and may change.
"""

from kubesched._version import __version__
from kubesched.api import selectors, storage
from kubesched.api.objects import Container, Node, ObjectError, Pod, Taint, Toleration
from kubesched.api.quantity import InvalidQuantity, parse_quantity
from kubesched.backends import BindError, ClusterBackend, InMemoryBackend, ObjectWriteError
from kubesched.config.decode import parse_duration
from kubesched.errors import (
    ArgsError,
    ConfigError,
    FieldError,
    KubeschedError,
    ManifestError,
    PluginLoadError,
)
from kubesched.framework import helpers
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.handle import Handle
from kubesched.framework.hookspecs import hookimpl
from kubesched.framework.nodeinfo import NodeInfo, pod_requests
from kubesched.framework.results import (
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
)
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.status import Code, Status
from kubesched.framework.waiting_pods import WaitingPod

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
