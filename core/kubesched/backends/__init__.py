"""Cluster backends: where nodes and pods come from and where decisions go."""

from .base import BindError, ClusterBackend, EventHandler
from .memory import InMemoryBackend

__all__ = ["BindError", "ClusterBackend", "EventHandler", "InMemoryBackend"]
