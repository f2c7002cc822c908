"""Cluster backends: where nodes and pods come from and where decisions go."""

from .base import BindError, ClusterBackend, EventHandler, ObjectWriteError
from .memory import InMemoryBackend

__all__ = ["BindError", "ClusterBackend", "EventHandler", "InMemoryBackend", "ObjectWriteError"]
