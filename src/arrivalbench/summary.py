"""The summary table of a run: one row per arm, in the terminal."""

from __future__ import annotations

from rich.table import Table

from arrivalbench.grid import Summary
from arrivalbench.verdict import KINDS as VERDICTS


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} {part / whole:4.0%}" if whole else "-"


def summary_table(summary: Summary) -> Table:
    """One row per arm: cells, snapshot pass rate, and among snapshot-passing cells those with a
    hazard FAIL or ERROR (the silent and loud failures a single-execution test misses)."""
    table = Table(title=f"{summary.results}: run {summary.run_id}, seeds 0..{summary.seeds - 1}",
                  title_justify="left", box=None, pad_edge=False, header_style="bold")
    table.add_column("arm", overflow="fold", min_width=9, ratio=1)
    for header in ("cells", "snapshot\nPASS", "hazard\nFAIL|ERROR", "silent", "loud", "ctrl",
                   "replays\nP/F/E"):
        table.add_column(header, justify="right", no_wrap=True)
    notes = []
    for arm in summary.arms:
        table.add_row(arm.arm, str(arm.cells), _share(arm.snapshot_pass, arm.cells),
                      _share(arm.hazard_fail, arm.snapshot_pass), str(arm.silent),
                      str(arm.crash), str(arm.control_fail),
                      "/".join(str(arm.verdicts.get(k, 0)) for k in VERDICTS))
        if arm.scripts < arm.cells:
            notes.append(f"{arm.arm}: {arm.cells - arm.scripts} cells without a script")
        if arm.ungraded:
            notes.append(f"{arm.arm}: {arm.ungraded} replays not graded yet")
    rate = summary.graded / summary.seconds if summary.seconds > 0 and summary.graded else 0.0
    table.caption = "\n".join([
        "Counts of cells. hazard FAIL|ERROR: snapshot-passing cells with some hazard verdict "
        "FAIL (silent) or ERROR (loud); ctrl: snapshot-passing cells with a control not PASS; "
        "replays: PASS/FAIL/ERROR verdicts.", *notes,
        f"{summary.graded} replays graded in {summary.seconds:.1f} s ({rate:.1f}/s, "
        f"{summary.executor} executor, {summary.workers} workers); {summary.skipped} already "
        "graded."])
    table.caption_justify = "left"
    return table
