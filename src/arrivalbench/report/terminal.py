"""The terminal summary: one column per arm, one row per headline metric, each a task mean with
its 95% interval (arms are few, metrics many: this shape fits a terminal)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.table import Table

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.report.definitions import FEW_TASKS, MARK, few
from arrivalbench.report.tables import DASH, comparison_tables, engine_title, fmt_number
from arrivalbench.words import count

HEADLINE = (("snapshot_pass", "snapshot pass"), ("gap", "gap (all-in)"),
            ("gap_controls", "gap (controls)"), ("silent", "silent"), ("crash", "crash"),
            ("ordering", "ordering"), ("idempotency", "idempotency"),
            ("ordering_minus_idempotency", "ordering \u2212 idemp."),
            ("weakest_link.ordering_minus_idempotency", "weakest: ord. \u2212 idemp."),
            ("paired.median", "paired median"),
            ("hazards.backfill", "backfill"), ("schema_evolution", "schema_evolution"))


def _at(m: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    node = m
    for key in path.split("."):
        node = node[key]
    return node


def _cell(m: Mapping[str, Any]) -> str:
    if m["value"] is None:
        return f"[dim]{DASH}[/dim]"
    return (f"{fmt_number(m['value'])} [dim]\\[{fmt_number(m['low'])},"
            f"{fmt_number(m['high'])}]{few(m)}[/dim]")


def summary_table(doc: Mapping[str, Any]) -> Table:
    arms = doc["arms"]
    table = Table(title=f"task means, 95% bootstrap intervals over tasks (seed {doc['seed']}); "
                        f"{MARK} fewer than {FEW_TASKS} tasks", title_justify="left")
    table.add_column("", no_wrap=True)
    engines = doc.get("engines", {})
    for arm in arms:  # an arm on another engine than DuckDB says so in its header
        engine = engines.get(arm, DEFAULT_ENGINE)
        table.add_column(arm if engine == DEFAULT_ENGINE else f"{arm} ({engine})",
                         justify="right")
    table.add_row("tasks", *(str(m["cells"]["tasks"]) for m in arms.values()))
    table.add_row("cells", *(str(m["cells"]["total"]) for m in arms.values()))
    table.add_row("cells without a script", *(str(m["cells"]["no_artifact"])
                                              for m in arms.values()), end_section=True)
    if any("replays" in m for m in arms.values()):  # counted apart from every metric
        for key, label in (("reconverged", "replays reconverged"),
                           ("late_by_design", "FAILs late, by design")):
            table.add_row(label, *(str(m.get("replays", {}).get(key, 0))
                                   for m in arms.values()),
                          end_section=key == "late_by_design")
    for key, label in HEADLINE:
        table.add_row(label, *(_cell(_at(m, key)) for m in arms.values()))
    return table


def comparison_table(doc: Mapping[str, Any]) -> Table:
    """The shift of every metric between the two compared arms (composition shares only in
    comparison.csv: eighteen rows that would bury the rest)."""
    shifts = comparison_tables(doc["comparison"])[0]
    c = doc["comparison"]
    table = Table(title=f"shift {c['b']} \u2212 {c['a']} on {c['tasks']} common tasks, "
                        "paired 95% bootstrap intervals",
                  caption="composition shares: comparison.csv", caption_justify="left",
                  title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("metric", no_wrap=True)
    for label in (c["a"], c["b"], "shift", "interval", "n"):
        table.add_column(label, justify="right", no_wrap=label in ("shift", "interval"))
    for row in shifts.rows:
        if row["metric"].startswith("composition."):
            continue
        m = row["shift"]
        interval = (f"[dim]\\[{fmt_number(m['low'])},{fmt_number(m['high'])}]{few(m)}[/dim]"
                    if m["value"] is not None else "")
        table.add_row(row["metric"].replace("ordering_minus_idempotency", "ord\u2212idem"),
                      fmt_number(row["a"]), fmt_number(row["b"]), fmt_number(m["value"]),
                      interval, f"{m['n']}")
    return table


def changed_lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per cell whose class changed between the compared arms, then a count."""
    c = doc["comparison"]
    cells = c["cells"]
    lines = [f"{r['task']} replicate {r['replicate']}: {r['a']} \u2192 {r['b']}"
             for r in cells["changed"]]
    lines.append(f"{len(cells['changed'])} of {cells['compared']} matched cells changed "
                 f"class ({cells['only_a']} only in {c['a']}, {cells['only_b']} only in "
                 f"{c['b']})")
    return lines


def notes(doc: Mapping[str, Any]) -> list[str]:
    """Lines worth a reader's attention below the table: cells left out of every metric."""
    lines = []
    for arm, v in doc.get("no_scripts", {}).items():
        reasons = ", ".join(f"{r} ({k})" for r, k in v["reasons"].items())
        lines.append(f"{arm}: no cell has a script ({v['cells']} cells: {reasons}); left out "
                     "of every table")
    for arm, m in doc["arms"].items():
        cells = m["cells"]
        if cells["ungraded"]:
            lines.append(f"{arm}: {count(cells['ungraded'], 'cell')} with a script but no "
                         "snapshot verdict (an unfinished run?) left out")
        if cells["no_artifact"]:
            lines.append(f"{arm}: {count(cells['no_artifact'], 'cell')} without a script, "
                         "counted apart (see cells.csv, no_artifact.csv)")
    return lines


MAX_SPLIT_LINES = 20  # the rest are in engine_split.csv


def engine_table(doc: Mapping[str, Any]) -> Table:
    """Per arm graded on both engines: agreement over all compared replays and per schedule,
    and beside each schedule its pass rate on each engine and their difference."""
    c = doc["engine_comparison"]
    a, b = c["engines"]
    table = Table(title=f"{engine_title(c).replace('Engines', 'engines')}: agreement on the "
                        "replays both graded, pass rates side by side (task means, 95% "
                        "intervals)",
                  caption=f"difference: {b} \u2212 {a}; every rate with its interval: "
                          "engine_pass_rates.csv",
                  caption_justify="left", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("agreement", justify="right", no_wrap=True)
    for label in (a, b):
        table.add_column(label, justify="right")
    table.add_column("difference", justify="right", no_wrap=True)
    for arm, e in c["arms"].items():
        table.add_row(f"[bold]{arm}[/bold]", _cell(e["agreement"]["all"]), "", "", "")
        for schedule, m in e["agreement"].items():
            if schedule == "all" or m["n"] == 0:
                continue
            rate = e["pass_rates"].get("snapshot_pass" if schedule == "snapshot" else schedule)
            sides = ("", "", "") if rate is None or rate[a]["value"] is None else (
                fmt_number(rate[a]["value"]), fmt_number(rate[b]["value"]),
                _cell(rate["difference"]))
            table.add_row(f" {schedule}", _cell(m), *sides)
        table.add_section()
    return table


def split_lines(doc: Mapping[str, Any]) -> list[str]:
    """One line per (cell, schedule) that passes on one engine only (the first few), then a
    count."""
    c = doc["engine_comparison"]
    a, b = c["engines"]
    rows = [(arm, r) for arm, e in c["arms"].items() for r in e["split"]]
    lines = [f"{arm} {r['task']} replicate {r['replicate']} {r['schedule']}: {a} {r[a]}, "
             f"{b} {r[b]}" for arm, r in rows[:MAX_SPLIT_LINES]]
    more = f" ({len(rows) - MAX_SPLIT_LINES} not shown: engine_split.csv)" \
        if len(rows) > MAX_SPLIT_LINES else ""
    counts = "; ".join(f"{arm} {e['cells']['compared']} cells ({e['replays']} replays), "
                       f"{e['cells']['one_engine']} on one engine only"
                       for arm, e in c["arms"].items())
    return [f"compared: {counts}", *lines,
            f"{len(rows)} (cell, schedule) pairs pass on one engine only{more}"]
