"""The summary table of a run: one row per arm, in the terminal, within a given width."""

from __future__ import annotations

import re

from rich.console import Group
from rich.table import Table
from rich.text import Text

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.core.verdict import STATUSES
from arrivalbench.study.grid import Summary
from arrivalbench.words import count


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} {part / whole:4.0%}" if whole else "-"


def _arm_cell(arm: str, width: int) -> str:
    """An arm's name in lines of at most `width`, broken only after `/` or `-` or before `:`
    (a model arm is `provider/model:variant`), so that no word is cut."""
    lines: list[str] = []
    for part in re.findall(r"[^/:-]*[/-]|:?[^/:-]+|:", arm):
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return "\n".join(lines)


def summary_table(summary: Summary, width: int = 80) -> Group:
    """One row per arm: cells, snapshot pass rate, and among snapshot-passing cells those with a
    hazard FAIL or ERROR (the silent and loud failures a single-execution test misses). Fits
    in `width` columns."""
    on = "" if summary.engine == DEFAULT_ENGINE else f", on {summary.engine}"
    heading = Text(f"{summary.results}: run {summary.run_id}, seeds 0..{summary.seeds - 1}{on}")
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("arm", min_width=9, ratio=1, overflow="fold")
    for header in ("cells", "snapshot\nPASS", "hazard\nFAIL|ERROR", "silent", "loud", "ctrl",
                   "replays\nP/F/E"):
        table.add_column(header, justify="right", no_wrap=True)
    notes = []
    rows = [[str(arm.cells), _share(arm.snapshot_pass, arm.cells),
             _share(arm.hazard_fail, arm.snapshot_pass), str(arm.silent), str(arm.crash),
             str(arm.control_fail), "/".join(str(arm.verdicts.get(k, 0)) for k in STATUSES)]
            for arm in summary.arms]
    others = [max([len(line) for line in str(c.header).splitlines()] +
                  [len(row[i]) for row in rows]) for i, c in enumerate(table.columns[1:])]
    room = max(9, width - sum(others) - 2 * len(others))
    for arm, row in zip(summary.arms, rows, strict=True):
        table.add_row(_arm_cell(arm.arm, room), *row)
        if arm.scripts < arm.cells:
            notes.append(f"{arm.arm}: {count(arm.cells - arm.scripts, 'cell')} without a script")
        if arm.ungraded:
            notes.append(f"{arm.arm}: {count(arm.ungraded, 'replay')} not graded yet")
    rate = summary.graded / summary.seconds if summary.seconds > 0 and summary.graded else 0.0
    table.caption = "\n".join([
        "Counts of cells. hazard FAIL|ERROR: snapshot-passing cells with some hazard verdict "
        "FAIL (silent) or ERROR (loud); ctrl: snapshot-passing cells with a control not PASS; "
        "replays: PASS/FAIL/ERROR verdicts.", *notes,
        f"{count(summary.graded, 'replay')} graded, {summary.skipped} already graded, in "
        f"{summary.seconds:.1f} s",
        f"({rate:.1f}/s; {summary.executor} executor, {count(summary.workers, 'worker')})."])
    table.caption_justify = "left"
    return Group(heading, table)
