"""report.md: the tables and figure links, with the method stated. No timestamps, no paths:
the same results file gives the same bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arrivalbench.report.figures import Chart
from arrivalbench.report.tables import Table, cell_text

DEFINITIONS = (
    "A **cell** is one (arm, task, replicate): one script, graded on `snapshot` (seed 0), the "
    "controls `in_order` and `trickle` and every hazard the task declares, for each seed.",
    "Every rate is a **task mean**: the rate within each task (over its eligible cells, all "
    "replicates), then the unweighted mean over tasks. A task with no eligible cell is left "
    "out; **n** is the number of tasks used, and a metric with n=0 is shown as a dash.",
    "**snapshot pass**: share of graded cells whose `snapshot` verdict is PASS.",
    "**silent** / **crash** / **all-in**: a snapshot-passing cell with hazard verdicts fails "
    "silently if some hazard verdict (any hazard, any seed) is FAIL, crashes if some is ERROR; "
    "all-in is either. **gap** is the all-in failure among snapshot-passing cells (so gap = "
    "all-in); **gap (controls pass)** restricts it to cells that also pass every seed of both "
    "controls.",
    "**Per-hazard pass rate**: share of snapshot-passing cells that pass every seed of the "
    "hazard, among tasks that declare it (a task declares a hazard for a cell iff the cell has "
    "verdicts for it).",
    "**ordering** = mean of the late_arrival and out_of_order rates; **idempotency** = mean "
    "of duplicates and crash_retry (a group with one defined hazard is that hazard); "
    "backfill is reported beside both, schema_evolution on its own.",
    "Cells **without an artifact** (no script) are counted apart and enter no verdict metric; "
    "cells with an artifact but no snapshot verdict are **ungraded** and counted apart too.",
    "**Composition**: for each hazard, the shares of PASS, FAIL and ERROR among its seeds, per "
    "snapshot-passing cell, averaged per task and then over tasks.",
    "**Dedup guard**: among snapshot-passing cells with `duplicates` verdicts whose script has "
    "idiom tags, silent failure and crash on `duplicates` with and without `batch_dedup`.",
    "**Repair** (model arms): all-in failure of snapshot-passing cells whose first turn passed "
    "the snapshot, against those that passed only after feedback.",
    "**Spread**: for arms with replicates, each metric on one replicate index at a time (not "
    "for `negatives`, whose cells are distinct negative controls, not replications).",
    "Verdicts: a cell's verdicts are those of its artifact on its task digest; when a replay "
    "was graded under several harness or engine versions the newest is used; `chaos` "
    "(diagnostic) and unknown schedules are left out.",
)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_md(table: Table) -> str:
    lines = [f"## {table.title}", ""]
    if table.caption:
        lines += [table.caption, ""]
    if not table.rows:
        return "\n".join([*lines, f"_{table.empty}_", ""])
    lines.append("| " + " | ".join(_escape(c.label) for c in table.columns) + " |")
    lines.append("|" + "|".join("---" if c.kind == "text" else "--:" for c in table.columns)
                 + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_escape(cell_text(c, row[c.key])) for c in table.columns)
                     + " |")
    lines += ["", f"CSV: [`{table.name}.csv`]({table.name}.csv)", ""]
    return "\n".join(lines)


def render(doc: Mapping[str, Any], tables: Sequence[Table], charts: Sequence[Chart],
           method: str, verdicts: int) -> str:
    arms = list(doc["arms"])
    parts = [
        "# ArrivalBench report",
        "",
        f"Arms: {', '.join(f'`{a}`' for a in arms)}. Verdict records used: {verdicts}, "
        f"digest `{doc['results_digest']}`.",
        "",
        f"Intervals: 95% {method}; seed {doc['seed']}. A resample in which a metric is "
        "undefined (no eligible task drawn) is left out of that metric's percentiles.",
        "",
    ]
    parts += [table_md(t) for t in tables[:1]]
    parts += ["## Figures", ""]
    for chart in charts:
        parts += [f"### {chart.title}", "", f"![{chart.title}](figures/{chart.name}.svg)", "",
                  chart.caption, ""]
    parts += [table_md(t) for t in tables[1:]]
    parts += ["## Definitions", ""]
    parts += [f"- {d}" for d in DEFINITIONS]
    return "\n".join(parts) + "\n"
