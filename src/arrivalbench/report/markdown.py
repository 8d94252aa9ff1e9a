"""report.md: the tables and figure links, with the method stated. No timestamps, no paths:
the same results file gives the same bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arrivalbench.report.definitions import FEW_TASKS, MARK, shown
from arrivalbench.report.figures import Chart
from arrivalbench.report.tables import Table, cell_text


def definitions(doc: Mapping[str, Any]) -> list[str]:
    """The definitions a report of `doc` shows, as Markdown list items."""
    return [f"- **{term}**: {text}" for term, text in shown(doc)]


def engines_note(doc: Mapping[str, Any]) -> str:
    """The sentence naming the engine each arm's tables read, or nothing (a DuckDB-only
    study)."""
    if "engines" not in doc:
        return ""
    arms = ", ".join(f"`{a}`: {e}" for a, e in doc["engines"].items())
    both = (" Arms graded on both engines are compared in the engine tables at the end."
            if "engine_comparison" in doc else "")
    return ("Engines: each arm's tables read the verdicts of one engine, DuckDB's (the default "
            f"engine) when the arm has any ({arms}).{both}")


def left_out(doc: Mapping[str, Any]) -> str:
    """The sentence naming arms that have no script at all, or nothing."""
    empty = doc.get("no_scripts") or {}
    if not empty:
        return ""
    return ("Left out, no script in any cell: "
            + ", ".join(f"`{a}` ({v['cells']} cells)" for a, v in empty.items())
            + " (see the table of arms without a script).")


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
           method: str, verdicts: int, extra: str = "") -> str:
    """`extra`: a section of its own (the explained cells'), before the definitions."""
    arms = list(doc["arms"])
    parts = [
        "# ArrivalBench report",
        "",
        f"Arms: {', '.join(f'`{a}`' for a in arms)}. Verdict records used: {verdicts}, "
        f"digest `{doc['results_digest']}`.",
        "",
        f"Intervals: 95% {method}; seed {doc['seed']}. A resample in which a metric is "
        "undefined (no eligible task drawn) is left out of that metric's percentiles. "
        f"{MARK} marks an interval that rests on fewer than {FEW_TASKS} tasks.",
        "",
    ]
    if left_out(doc):
        parts += [left_out(doc), ""]
    if engines_note(doc):
        parts += [engines_note(doc), ""]
    parts += [table_md(t) for t in tables[:1]]
    parts += ["## Figures", ""]
    for chart in charts:
        parts += [f"### {chart.title}", "", f"![{chart.title}](figures/{chart.name}.svg)", "",
                  chart.caption, ""]
    parts += [table_md(t) for t in tables[1:]]
    if extra:
        parts += [extra]
    parts += ["## Definitions", ""]
    parts += definitions(doc)
    return "\n".join(parts) + "\n"
