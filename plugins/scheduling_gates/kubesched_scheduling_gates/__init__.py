"""SchedulingGates: a pod that carries ``spec.schedulingGates`` waits until every gate is removed.

kube-scheduler's PreEnqueue plugin of the same name (``pkg/scheduler/framework/plugins/
schedulinggates``): a gated pod is parked without counting as a scheduling attempt and without an
Unschedulable condition, and comes back when an update removes its last gate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    FieldError,
    Handle,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = ["NAME", "SchedulingGates", "reason_waiting_for_gates"]

NAME = "SchedulingGates"


def reason_waiting_for_gates(gates: Iterable[str]) -> str:
    """The PreEnqueue reason, the gates listed as Go prints a ``[]string`` (``[a b]``)."""
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates:
    """Keeps gated pods out of the active queue."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        """Gate a pod that still lists scheduling gates (UnschedulableAndUnresolvable)."""
        if not pod.scheduling_gates:
            return None
        return Status.unresolvable(reason_waiting_for_gates(pod.scheduling_gates))

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """The gated pod itself losing its last gate."""
        return [
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD,
                    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
                ),
                self._hint_gates_eliminated,
            )
        ]

    def _hint_gates_eliminated(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        # kube-scheduler registers this for the target pod only (its TargetPod resource); the
        # uid check gives the same guarantee here, where a pod's update may be replayed to
        # another pod that was in its scheduling cycle at the time.
        if not isinstance(new, Pod):
            return QueueingHint.QUEUE  # kube queues on objects it cannot read
        if new.uid != pod.uid or new.scheduling_gates:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
