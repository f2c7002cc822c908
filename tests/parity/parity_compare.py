"""What each scheduler decided for one pod, and the pure comparison of the two (no cluster)."""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEDULED = "scheduled"
MESSAGE = "message"
NODE = "node"
GATED = "gated"
ERROR = "error"
NOMINATED = "nominated node"
PREEMPTION = "after preemption"
VOLUMES = "claims' volumes"
DEVICES = "allocated devices"
# -- outcomes -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What happened to one pod: its node (logical name) or why it is not bound."""

    #: The node of the first attempt, or why that attempt left the pod unschedulable.
    node: str | None = None
    message: str = ""
    gated: bool = False
    #: Not an outcome at all: the pod was refused or never decided (the reason).
    error: str = ""
    #: After an unschedulable first attempt: the node preemption nominated (``""``: none), and
    #: once the preemption settled, the node the pod was bound to and the pods it evicted.
    nominated: str = ""
    final_node: str | None = None
    victims: tuple[str, ...] = ()
    #: Once bound: each claim of the pod -> the PersistentVolume it is bound to; each
    #: ResourceClaim -> its allocated devices (``request=driver/pool/device``, sorted).
    volumes: dict[str, str] = field(default_factory=dict)
    devices: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def describe(self) -> str:
        if self.error:
            return f"error: {self.error}"
        if self.gated:
            return "gated (not attempted)"
        if self.node is not None:
            text = f"bound to {self.node}"
            if self.volumes:
                text += "; volumes " + ", ".join(f"{c}={v}" for c, v in self.volumes.items())
            if self.devices:
                text += "; devices " + ", ".join(
                    f"{c}=[{' '.join(d)}]" for c, d in self.devices.items()
                )
            return text
        text = f"unschedulable: {self.message}"
        if self.nominated:
            evicted = ", ".join(self.victims) or "none"
            then = f"bound to {self.final_node}" if self.final_node else "still not bound"
            text += f" [nominated to {self.nominated}; evicted: {evicted}; then {then}]"
        return text


@dataclass
class KubeschedOutcome(Outcome):
    #: Nodes that passed every Filter, and each scored node's weighted total.
    feasible: list[str] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    #: Node -> Score plugin -> weighted score, for the scored nodes.
    scores: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def best(self) -> list[str]:
        """The nodes the pod may go to: the only feasible one, or those with the top total."""
        if len(self.feasible) <= 1 or not self.totals:
            return list(self.feasible)
        top = max(self.totals.values())
        return [n for n in self.feasible if self.totals.get(n) == top]

    def describe(self) -> str:
        text = super().describe()
        if self.totals:
            scores = ", ".join(f"{n}={t}" for n, t in sorted(self.totals.items()))
            text += f" (totals: {scores})"
        return text


@dataclass
class Comparison:
    """One pod's outcome under both schedulers, and what differs."""

    pod: str
    reference: Outcome
    kubesched: KubeschedOutcome
    #: ``scheduled``, ``message``, ``node``, ``gated`` or ``error``; empty when they agree.
    mismatch: str = ""
    #: How the node was compared when both bound it: ``unique`` (one best node) or ``tie``.
    node_check: str = ""

    @property
    def ok(self) -> bool:
        return not self.mismatch


def compare(pod: str, reference: Outcome, kubesched: KubeschedOutcome) -> Comparison:
    """Compare one pod's first attempt: scheduled or not; the message; the node when
    kubesched's choice is forced (one feasible node or a unique top total), or membership among
    its tied best. After a preemption also the nominated node, the victims and, when the
    reference scheduler bound the pod within :data:`SETTLE_SECONDS`, where."""
    result = Comparison(pod, reference, kubesched)
    if reference.error or kubesched.error:
        result.mismatch = ERROR
    elif reference.gated or kubesched.gated:
        result.mismatch = "" if reference.gated == kubesched.gated else GATED
    elif (reference.node is None) != (kubesched.node is None):
        result.mismatch = SCHEDULED
    elif reference.node is None:
        if reference.message != kubesched.message:
            result.mismatch = MESSAGE
        elif reference.nominated != kubesched.nominated:
            result.mismatch = NOMINATED
        elif sorted(reference.victims) != sorted(kubesched.victims) or (
            # kube-scheduler may leave a preemptor waiting for minutes (README.md): only
            # where it did bind it within the settle time is compared.
            reference.final_node is not None and reference.final_node != kubesched.final_node
        ):
            result.mismatch = PREEMPTION
    else:
        best = kubesched.best
        result.node_check = "unique" if len(best) == 1 else "tie"
        result.mismatch = "" if reference.node in best else NODE
        if not result.mismatch and reference.node == kubesched.node:
            # On the same node the claims must end bound to the same volumes, and the devices
            # be the same (one pool per driver and node: kube's random pool order cannot
            # change the choice).
            if reference.volumes != kubesched.volumes:
                result.mismatch = VOLUMES
            elif reference.devices != kubesched.devices:
                result.mismatch = DEVICES
    return result
