"""DefaultBinder: binds the pod to the chosen node through the cluster backend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import ArgsError, BindError, CycleState, FieldError, Handle, Pod, Status, hookimpl

__all__ = ["NAME", "DefaultBinder"]

NAME = "DefaultBinder"


class DefaultBinder:
    """Kube-scheduler's default Bind plugin."""

    name = NAME

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        if args:
            raise ArgsError(
                [FieldError(key, "unknown field; DefaultBinder takes no args") for key in args]
            )
        self.handle = handle

    @hookimpl
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Post the binding; a refusal becomes an Error status carrying the backend's reason."""
        try:
            self.handle.backend.bind(pod, node_name)
        except BindError as exc:
            return Status.from_error(exc)
        return None
