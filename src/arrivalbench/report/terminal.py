"""The terminal summary: one column per arm, one row per headline metric, each a task mean with
its 95% interval (arms are few, metrics many: this shape fits a terminal)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table

from arrivalbench.report.tables import DASH, fmt_number

HEADLINE = (("snapshot_pass", "snapshot pass"), ("gap", "gap (all-in)"),
            ("gap_controls", "gap (controls)"), ("silent", "silent"), ("crash", "crash"),
            ("ordering", "ordering"), ("idempotency", "idempotency"),
            ("ordering_minus_idempotency", "ordering \u2212 idemp."), ("backfill", "backfill"),
            ("schema_evolution", "schema_evolution"))


def _cell(m: Mapping[str, Any]) -> str:
    if m["value"] is None:
        return f"[dim]{DASH}[/dim]"
    return (f"{fmt_number(m['value'])} [dim]\\[{fmt_number(m['low'])},"
            f"{fmt_number(m['high'])}][/dim]")


def summary_table(doc: Mapping[str, Any]) -> Table:
    arms = doc["arms"]
    table = Table(title=f"task means, 95% bootstrap intervals over tasks (seed {doc['seed']})",
                  title_justify="left")
    table.add_column("", no_wrap=True)
    for arm in arms:
        table.add_column(arm, justify="right")
    table.add_row("tasks", *(str(m["cells"]["tasks"]) for m in arms.values()))
    table.add_row("cells (no script)", *(
        f"{m['cells']['total']}" + (f" ({m['cells']['no_artifact']})"
                                    if m["cells"]["no_artifact"] else "")
        for m in arms.values()), end_section=True)
    for key, label in HEADLINE:
        table.add_row(label, *(_cell(m["hazards"][key] if key == "backfill" else m[key])
                               for m in arms.values()))
    return table


def notes(doc: Mapping[str, Any]) -> list[str]:
    """Lines worth a reader's attention below the table: cells left out of every metric."""
    lines = []
    for arm, m in doc["arms"].items():
        cells = m["cells"]
        if cells["ungraded"]:
            lines.append(f"{arm}: {cells['ungraded']} cell(s) with a script but no snapshot "
                         "verdict (an unfinished run?) are left out")
        if cells["no_artifact"]:
            lines.append(f"{arm}: {cells['no_artifact']} cell(s) without a script are counted "
                         "apart (see cells.csv, no_artifact.csv)")
    return lines
