"""Status: the outcome of one plugin at one extension point.

Expected outcomes (a node that does not fit, a pod that must wait) are ``Status`` values, never
exceptions. The codes and their meaning follow kube-scheduler's ``framework.Code``.
"""

from __future__ import annotations

import enum

__all__ = ["Code", "Status"]


class Code(enum.IntEnum):
    """What a plugin decided; the numeric order matches kube-scheduler's."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def kube_name(self) -> str:
        """The code as kube-scheduler's ``Code.String()`` spells it
        (``UnschedulableAndUnresolvable``): the ``status`` label of its metrics and the verdict
        ``explain`` shows."""
        return _KUBE_NAMES[self]


_KUBE_NAMES = {code: "".join(w.capitalize() for w in code.name.split("_")) for code in Code}


class Status:
    """A code, the reasons behind it, and the plugin that returned it.

    ``None`` returned by a hook means Success everywhere the hookspec says so; plugins rarely need
    to build a Success ``Status`` themselves.
    """

    __slots__ = ("code", "err", "plugin", "reasons", "timeout")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        plugin: str = "",
        timeout: float | None = None,
    ) -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin
        #: Permit only: how long a ``WAIT`` may last, in seconds.
        self.timeout = timeout
        #: The exception behind an ``ERROR``, when there is one (kube's ``Status.AsError``).
        self.err: BaseException | None = None

    # Constructors named after the codes read better in plugins than ``Status(Code.X, ...)``.
    @classmethod
    def success(cls) -> Status:
        return cls(Code.SUCCESS)

    @classmethod
    def error(cls, *reasons: str) -> Status:
        return cls(Code.ERROR, *reasons)

    @classmethod
    def from_error(cls, err: BaseException) -> Status:
        """An ``ERROR`` carrying ``err`` (its message is the reason)."""
        status = cls(Code.ERROR, str(err))
        status.err = err
        return status

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        """UnschedulableAndUnresolvable: preemption on this node cannot help."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @classmethod
    def wait(cls, timeout: float, *reasons: str) -> Status:
        """Permit only: hold the pod until allowed or rejected, at most ``timeout`` seconds."""
        return cls(Code.WAIT, *reasons, timeout=timeout)

    @classmethod
    def pending(cls, *reasons: str) -> Status:
        return cls(Code.PENDING, *reasons)

    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod cannot go here now."""
        return self.code in _REJECTED

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    def message(self) -> str:
        """The reasons joined as kube-scheduler joins them (``", "``)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        """Record which plugin returned this status (the framework does it for every result)."""
        if not self.plugin:
            self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        who = f" plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.name}{who} {list(self.reasons)!r})"


_REJECTED = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
