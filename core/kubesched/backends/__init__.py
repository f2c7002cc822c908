"""Cluster backends: where nodes and pods come from and where decisions go."""

from kubesched.backends.base import BindError, ClusterBackend, EventHandler, ObjectWriteError
from kubesched.backends.memory import InMemoryBackend

__all__ = ["BindError", "ClusterBackend", "EventHandler", "InMemoryBackend", "ObjectWriteError"]
