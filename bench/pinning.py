"""Which CPUs each process of a benchmark runs on (``python -m bench run --pin``).

On a small machine every contender shares its cores with kube-apiserver and etcd, so a
contender's own CPU comes out of the apiserver's: the binding ceiling then measures how cheap the
client is as much as the apiserver's limit. With pinning, etcd, kube-apiserver and the harness
(its watch, the pod creator) run on the control plane's CPUs and the contender alone on the
others, as a scheduler runs on its own node or with its own CPU share in a cluster: the ceiling
is then the apiserver's binding limit, and a scheduler reaches it when its own CPUs keep up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Placement", "pin", "placement_for"]


@dataclass(frozen=True)
class Placement:
    """CPU sets: the control plane's (with the harness) and the contender's."""

    control_plane: frozenset[int]
    contender: frozenset[int]

    def describe(self) -> str:
        return (
            f"etcd, kube-apiserver and the harness on CPU {_cpus(self.control_plane)}, "
            f"each contender alone on CPU {_cpus(self.contender)}"
        )


def _cpus(cpus: Iterable[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def placement_for(cpus: Iterable[int] | None = None) -> Placement | None:
    """Half of the available CPUs (rounded up) for the control plane, the rest for the
    contender; ``None`` with a single CPU (nothing to separate)."""
    available = sorted(cpus if cpus is not None else os.sched_getaffinity(0))
    if len(available) < 2:
        return None
    split = (len(available) + 1) // 2
    return Placement(frozenset(available[:split]), frozenset(available[split:]))


def pin(pid: int, cpus: frozenset[int]) -> None:
    """Every thread of process ``pid`` onto ``cpus`` (threads it starts later inherit it).

    A thread that ends meanwhile is skipped; a process that is gone raises
    ``ProcessLookupError``.
    """
    tasks = Path(f"/proc/{pid}/task")
    if not tasks.is_dir():
        raise ProcessLookupError(f"no process {pid}")
    for task in tasks.iterdir():
        try:
            os.sched_setaffinity(int(task.name), cpus)
        except (ProcessLookupError, FileNotFoundError):
            continue
