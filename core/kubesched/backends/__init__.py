"""Cluster backends: where nodes and pods come from and where decisions go."""

from kubesched.backends.memory import InMemoryBackend
from kubesched.framework.backend import BindError, ClusterBackend, EventHandler, ObjectWriteError

__all__ = ["BindError", "ClusterBackend", "EventHandler", "InMemoryBackend", "ObjectWriteError"]
