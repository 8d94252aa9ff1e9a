"""A failed check of the admissibility gate, and the order findings are printed in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arrivalbench.core.schedules import CONTROLS
from arrivalbench.core.task import HAZARDS

CHECK_ORDER = ("tier", "reference", "independent", "gold", "negative", "perturbation", "coverage",
               "leakage", "idiom", "incremental")


@dataclass(frozen=True)
class Finding:
    """One failed check."""

    task: str
    check: str
    reason: str
    schedule: str | None = None
    seed: int | None = None

    def line(self) -> str:
        schedule = self.schedule or "-"
        seed = "-" if self.seed is None else "*" if self.seed < 0 else str(self.seed)
        return f"{self.task}: {self.check}: schedule {schedule}, seed {seed}: {self.reason}"

    def order(self, tasks: Sequence[str]) -> tuple[object, ...]:
        kinds = (*CONTROLS, *HAZARDS)
        return (tasks.index(self.task) if self.task in tasks else len(tasks),
                CHECK_ORDER.index(self.check.split()[0]), self.check,
                kinds.index(self.schedule) if self.schedule in kinds else -1,
                -2 if self.seed is None else self.seed, self.reason)


ANY_SEED = -1  # Finding.seed for "on no gate seed": printed as `*`
