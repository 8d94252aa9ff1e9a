"""Small arms cell by cell: an arm on fewer than `FEW_TASKS` tasks (a handful of people on five
tasks) has task means too unstable to read alone, so the report also lists each of its cells with
its verdicts, one letter per seed, and the class of the cell.

The class is the one word a reader compares between two runs of the same cell (`--compare`):
`no script`, `ungraded` (a script without a snapshot verdict yet), `snapshot FAIL` / `snapshot
ERROR`, `no hazard` (snapshot passes, no hazard verdict), then `pass`, `silent`, `crash` or
`silent+crash` from the cell's hazard verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from arrivalbench.core.grading import CHECKED_CONTROLS
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import JSON
from arrivalbench.report.definitions import FEW_TASKS
from arrivalbench.report.metrics import CellFacts

LETTERS = {"PASS": "P", "FAIL": "F", "ERROR": "E"}


def letters(verdicts: Sequence[str] | None) -> str | None:
    """`PPF` for PASS, PASS, FAIL by seed; None when there is no verdict."""
    return "".join(LETTERS.get(v, "?") for v in verdicts) if verdicts else None


def verdict_class(f: CellFacts) -> str:
    """The class of a cell in one word (see the module docstring)."""
    if not f.gradeable:
        return "no script"
    if not f.graded:
        return "ungraded"
    if not f.snapshot_pass:
        return f"snapshot {f.snapshot}"
    if not f.eligible:
        return "no hazard"
    if f.silent and f.crash:
        return "silent+crash"
    return "silent" if f.silent else "crash" if f.crash else "pass"


def is_small(facts: Sequence[CellFacts]) -> bool:
    return len({f.task for f in facts}) < FEW_TASKS


def cell_rows(facts: Sequence[CellFacts]) -> list[JSON]:
    """One row per cell, by task and replicate: its verdict letters and its class."""
    rows: list[JSON] = []
    for f in sorted(facts, key=lambda f: (f.task, f.replicate)):
        rows.append({
            "task": f.task, "replicate": f.replicate,
            "snapshot": letters([f.snapshot] if f.snapshot is not None else None),
            **{c: letters(f.controls.get(c)) for c in CHECKED_CONTROLS},
            "hazards": {h: letters(f.hazards.get(h)) for h in HAZARDS},
            "class": verdict_class(f),
        })
    return rows
