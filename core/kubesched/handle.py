"""The framework handle: what a plugin may reach besides its own arguments.

kube-scheduler's ``framework.Handle``, trimmed to what Python plugins use: the current snapshot,
the waiting pods (to allow or reject pods held at Permit), the cluster backend (to bind, or to
read objects a plugin needs), the profile's name and its parallelism.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from .waiting_pods import WaitingPods

if TYPE_CHECKING:
    from .backends.base import ClusterBackend
    from .snapshot import Snapshot

__all__ = ["Handle"]


class Handle:
    """Given to every plugin factory; one per profile."""

    def __init__(
        self,
        profile_name: str,
        backend: ClusterBackend,
        snapshot: Callable[[], Snapshot],
        waiting_pods: WaitingPods | None = None,
        parallelism: int = 16,
        rng: random.Random | None = None,
    ) -> None:
        self.profile_name = profile_name
        self.backend = backend
        self._snapshot = snapshot
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods()
        self.parallelism = parallelism
        self.rng = rng or random.Random()

    def snapshot(self) -> Snapshot:
        """The snapshot the current scheduling cycle reads (nodes with their pods)."""
        return self._snapshot()
