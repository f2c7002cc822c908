"""The suite's settings (from the environment) and its running tally of agreements."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity_reference import ScenarioRun, _name


@dataclass(frozen=True)
class ParitySettings:
    """The session's settings, from ``KUBESCHED_PARITY_*`` (see README.md)."""

    scenarios: int
    seed: int
    shrink_seconds: float
    shrink_max: int
    report_dir: Path | None

    @classmethod
    def from_environment(cls) -> ParitySettings:
        report_dir = os.environ.get("KUBESCHED_PARITY_REPORT_DIR")
        return cls(
            scenarios=_env_int("KUBESCHED_PARITY_SCENARIOS", 200),
            seed=_env_int("KUBESCHED_PARITY_SEED", 0),
            shrink_seconds=float(_env_int("KUBESCHED_PARITY_SHRINK_SECONDS", 60)),
            shrink_max=_env_int("KUBESCHED_PARITY_SHRINK_MAX", 5),
            report_dir=Path(report_dir) if report_dir else None,
        )


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a whole number") from None


@dataclass
class ParityStats:
    """What the session compared, for the summary line and the report file."""

    settings: ParitySettings
    scenarios: int = 0
    scenarios_agreeing: int = 0
    runs_failed: int = 0
    pods: int = 0
    pods_agreeing: int = 0
    #: What was compared: ``bound (unique)``, ``bound (tie)``, ``unschedulable``, ``gated``,
    #: ``preempting (bound)`` / ``preempting (not bound in time)`` (unschedulable, nominated to a
    #: node whose victims were evicted, then bound there or not within the settle time).
    compared: Counter[str] = field(default_factory=Counter)
    #: Of the pods bound to the same node on both sides, how many had their claims' volumes,
    #: and their allocated devices, compared: ``volumes``, ``devices`` (of which ``templates``:
    #: claims made from a ResourceClaimTemplate).
    claims: Counter[str] = field(default_factory=Counter)
    mismatches: Counter[str] = field(default_factory=Counter)
    shrunk: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def add(self, run: ScenarioRun) -> None:
        self.scenarios += 1
        self.seconds += run.seconds
        if run.error:
            self.runs_failed += 1
            self.failures.append(f"{run.scenario.name}: {run.error}")
            return
        self.scenarios_agreeing += run.ok
        templated = {
            _name(p)
            for p in run.scenario.pods
            for c in p["spec"].get("resourceClaims") or ()
            if "resourceClaimTemplateName" in c
        }
        for comparison in run.comparisons:
            self.pods += 1
            self.pods_agreeing += comparison.ok
            reference = comparison.reference
            if reference.gated:
                self.compared["gated"] += 1
            elif reference.nominated:
                bound = "bound" if reference.final_node is not None else "not bound in time"
                self.compared[f"preempting ({bound})"] += 1
            elif reference.node is None:
                self.compared["unschedulable"] += 1
            else:
                self.compared[f"bound ({comparison.node_check or 'not compared'})"] += 1
                if reference.node == comparison.kubesched.node:
                    self.claims["volumes"] += bool(reference.volumes)
                    self.claims["devices"] += bool(reference.devices)
                    self.claims["templates"] += (
                        bool(reference.devices) and comparison.pod in templated
                    )
            if not comparison.ok:
                self.mismatches[comparison.mismatch] += 1
                self.failures.append(
                    f"{run.scenario.name} {comparison.pod}: {comparison.mismatch} differs"
                )

    def rate(self) -> float:
        return 100.0 * self.pods_agreeing / self.pods if self.pods else 100.0

    def summary(self) -> str:
        settings = self.settings
        compared = ", ".join(f"{n} {kind}" for kind, n in sorted(self.compared.items()))
        differing = ", ".join(f"{n} {kind}" for kind, n in sorted(self.mismatches.items()))
        return (
            f"parity with kube-scheduler: {self.pods_agreeing}/{self.pods} pods agree "
            f"({self.rate():.2f}%), {self.scenarios_agreeing}/{self.scenarios} scenarios "
            f"(seed {settings.seed}); compared: {compared or 'nothing'}; bound pods whose "
            f"claims' volumes / allocated devices were compared: {self.claims['volumes']} / "
            f"{self.claims['devices']} ({self.claims['templates']} from templates); "
            f"differing: {differing or 'none'}; runs that could not complete: "
            f"{self.runs_failed}; {self.seconds:.0f}s in scenarios"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.settings.seed,
            "scenarios": self.scenarios,
            "scenariosAgreeing": self.scenarios_agreeing,
            "runsFailed": self.runs_failed,
            "pods": self.pods,
            "podsAgreeing": self.pods_agreeing,
            "ratePercent": round(self.rate(), 3),
            "compared": dict(self.compared),
            "claimsCompared": dict(self.claims),
            "mismatches": dict(self.mismatches),
            "failures": self.failures,
            "seconds": round(self.seconds, 1),
        }


# -- shrinking and reporting ----------------------------------------------------------------------
