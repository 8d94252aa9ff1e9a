"""The class of a cell: what its verdicts say about the script, in the words every summary uses.

A cell is one script for one task. Its verdicts are grouped by schedule kind; `classify` turns
them into the few facts the run summary, the Inspect scorer and the report all count, so that
"silent", "crash" and "passes the controls" mean one thing everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arrivalbench.core.grading import CHECKED_CONTROLS


@dataclass(frozen=True)
class CellClass:
    """Facts about one cell's verdicts.

    `silent` and `crash` are only ever true for a snapshot-passing cell: a script that fails
    the single-batch test is wrong, not fragile, and counts as neither."""

    snapshot_pass: bool  # the snapshot verdict is PASS
    hazard_graded: bool  # at least one verdict on a hazard the task declares
    silent: bool  # snapshot passes and some hazard verdict is FAIL
    crash: bool  # snapshot passes and some hazard verdict is ERROR
    controls_pass: bool  # every checked control has verdicts, and all are PASS

    @property
    def eligible(self) -> bool:
        """Snapshot-passing with at least one hazard verdict: where hazard rates are defined."""
        return self.snapshot_pass and self.hazard_graded

    @property
    def hazard_fail(self) -> bool:
        """Silent or crash (a cell can be both)."""
        return self.silent or self.crash


def classify(verdicts: Mapping[str, Sequence[str]], hazards: Iterable[str]) -> CellClass:
    """The class of a cell from its verdict kinds (PASS, FAIL, ERROR) by schedule kind, over
    every seed graded; `hazards` are the task's declared hazards."""
    snapshot_pass = list(verdicts.get("snapshot", ())) == ["PASS"]
    on_hazards = [v for h in hazards for v in verdicts.get(h, ())]
    controls_pass = all(verdicts.get(c) and set(verdicts[c]) == {"PASS"}
                        for c in CHECKED_CONTROLS)
    return CellClass(snapshot_pass, bool(on_hazards),
                     snapshot_pass and "FAIL" in on_hazards,
                     snapshot_pass and "ERROR" in on_hazards,
                     bool(controls_pass))
