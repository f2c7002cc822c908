"""NodePorts: the host ports a pod asks for must be free on the node.

kube-scheduler's plugin of the same name (``pkg/scheduler/framework/plugins/nodeports``):
PreFilter collects the pod's host ports (containers and sidecars, as ``util.GetHostPorts``) or
skips the plugin when there are none; Filter checks them against the node's used ports with
``HostPortInfo.CheckConflict``'s rules. The rejection is plain Unschedulable: evicting the pod
that holds the port (preemption) can make room.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched import (
    ActionType,
    ArgsError,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    FieldError,
    Handle,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    hookimpl,
)

__all__ = [
    "DEFAULT_BIND_ALL_HOST_IP",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "REASON",
    "HostPort",
    "NodePorts",
    "check_conflict",
    "fits_ports",
    "host_ports",
]

NAME = "NodePorts"
REASON = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"

#: ``(host_ip, protocol, port)``, the key of :attr:`kubesched.NodeInfo.used_ports`.
HostPort = tuple[str, str, int]


def _sanitize(host_ip: str, protocol: str, port: int) -> HostPort:
    return (host_ip or DEFAULT_BIND_ALL_HOST_IP, protocol or "TCP", port)


def host_ports(pod: Pod) -> list[HostPort]:
    """The pod's host ports: sidecars (restartable init containers) first, then containers.

    Regular init containers have exited before the pod runs, so their ports are not held.
    """
    containers = [c for c in pod.init_containers if c.is_sidecar] + list(pod.containers)
    return [
        _sanitize(port.host_ip, port.protocol, port.host_port)
        for container in containers
        for port in container.host_ports
        if port.host_port > 0
    ]


def check_conflict(used: Mapping[HostPort, Any], host_ip: str, protocol: str, port: int) -> bool:
    """Whether ``(host_ip, protocol, port)`` clashes with ``used`` (``HostPortInfo`` rules).

    ``0.0.0.0`` binds every address, so it clashes with the same protocol and port on any IP; a
    specific IP clashes with itself and with ``0.0.0.0``.
    """
    if port <= 0:
        return False
    host_ip, protocol, port = _sanitize(host_ip, protocol, port)
    if host_ip == DEFAULT_BIND_ALL_HOST_IP:
        return any(p == port and proto == protocol for _, proto, p in used)
    return (DEFAULT_BIND_ALL_HOST_IP, protocol, port) in used or (host_ip, protocol, port) in used


def fits_ports(wanted: Iterable[HostPort], used: Mapping[HostPort, Any]) -> bool:
    """Whether none of the ``wanted`` ports clash with ``used`` (:func:`check_conflict`'s
    rules). A wanted ``0.0.0.0`` port clashes with its protocol and port on any IP: those are
    looked up in a set built once, as kube's ``HostPortInfo`` keeps ports by IP, instead of
    scanning every used port for each wanted one."""
    on_any_ip: set[tuple[str, int]] | None = None
    for host_ip, protocol, port in wanted:
        if port <= 0:
            continue
        host_ip, protocol, port = _sanitize(host_ip, protocol, port)
        if host_ip == DEFAULT_BIND_ALL_HOST_IP:
            if on_any_ip is None:
                on_any_ip = {(proto, number) for _, proto, number in used}
            if (protocol, port) in on_any_ip:
                return False
        elif (DEFAULT_BIND_ALL_HOST_IP, protocol, port) in used or (
            host_ip,
            protocol,
            port,
        ) in used:
            return False
    return True


class NodePorts:
    """Rejects nodes where a host port the pod needs is taken."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, f"unknown field; {NAME} takes no args") for key in args]
            )

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        """Collect the pod's host ports; Skip (no Filter) when it has none."""
        ports = host_ports(pod)
        if not ports:
            return Status.skip()
        state.write(PRE_FILTER_STATE_KEY, tuple(ports))
        return None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Reject a node where one of the pod's host ports is in use (Unschedulable)."""
        try:
            wanted = state.read(PRE_FILTER_STATE_KEY)
        except KeyError as exc:
            return Status.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: {exc}')
        if fits_ports(wanted, node_info.used_ports):
            return None
        return Status.unschedulable(REASON)

    @hookimpl
    def sign_pod(self, pod: Pod) -> object:
        """Filter reads the pod's host ports only."""
        return [list(port) for port in host_ports(pod)]

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        """An assigned pod deleted (it may free a port), or a new node."""
        return [
            # Pod ports are immutable: updates cannot free a port, only deletions can.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                self._hint_assigned_pod_deleted,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    def _hint_assigned_pod_deleted(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        if not isinstance(old, Pod):
            return QueueingHint.QUEUE  # kube queues on objects it cannot read
        if not old.node_name and not old.nominated_node_name:
            return QueueingHint.SKIP  # an unscheduled pod held no port
        freed = host_ports(old)
        if not freed:
            return QueueingHint.SKIP
        # If the pod would fit beside the deleted pod alone, the deletion freed nothing it needs.
        if fits_ports(host_ports(pod), dict.fromkeys(freed)):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
