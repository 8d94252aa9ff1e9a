"""The report's tables, built once from the metrics document and rendered as Markdown, HTML, CSV
and in the terminal. Rendering only; every number comes from `metrics`."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from arrivalbench.core.engine import FACTS
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import JSON
from arrivalbench.report.definitions import DEFINITIONS, ENGINE_DEFINITIONS, FEW_TASKS, few

Format = Literal["text", "int", "metric", "number"]
DASH = "\u2013"  # an undefined value

LABELS = {
    "snapshot_pass": "snapshot pass",
    "gradeable": "gradeable",
    "gap": "gap",
    "gap_controls": "gap (controls pass)",
    "silent": "silent",
    "crash": "crash",
    "all_in": "all-in",
    "ordering": "ordering",
    "idempotency": "idempotency",
    "ordering_minus_idempotency": "ordering \u2212 idempotency",
    "schema_evolution": "schema_evolution",
}


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: Format


@dataclass(frozen=True)
class Table:
    name: str  # the CSV file stem and the HTML anchor
    title: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[Mapping[str, Any], ...]
    empty: str = "Nothing to show."


def fmt_number(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}"



def fmt_metric(m: Mapping[str, Any]) -> str:
    """`0.67 [0.33, 1.00] n=3†` (marked: fewer than 10 tasks); a dash and `n=0` when
    undefined."""
    if m["value"] is None:
        return f"{DASH} n={m['n']}"
    return (f"{fmt_number(m['value'])} [{fmt_number(m['low'])}, {fmt_number(m['high'])}] "
            f"n={m['n']}{few(m)}")


def caption(term: str) -> str:
    """The definition of `term`, as a table caption."""
    text = dict(DEFINITIONS + ENGINE_DEFINITIONS)[term]
    return text[0].upper() + text[1:]


def _metric_cols(keys: Sequence[str]) -> tuple[Column, ...]:
    return tuple(Column(k, LABELS.get(k, k), "metric") for k in keys)


def build(doc: Mapping[str, Any]) -> list[Table]:
    """Every table of the report, in report order."""
    arms: Mapping[str, Mapping[str, Any]] = doc["arms"]
    tables = [
        Table("summary", "Summary",
              "Task means with 95% bootstrap intervals and the number of tasks used. `gap` is "
              "the all-in failure (some hazard verdict FAIL or ERROR) among snapshot-passing "
              "cells; `silent` counts FAIL, `crash` counts ERROR.",
              (Column("arm", "arm", "text"), Column("tasks", "tasks", "int"),
               Column("cells", "cells", "int"),
               *_metric_cols(("snapshot_pass", "gap", "gap_controls", "silent", "crash"))),
              tuple({"arm": a, "tasks": m["cells"]["tasks"], "cells": m["cells"]["total"],
                     **{k: m[k] for k in ("snapshot_pass", "gap", "gap_controls", "silent",
                                          "crash")}} for a, m in arms.items())),
        Table("hazards", "Pass rate per hazard",
              "Share of snapshot-passing cells that pass every seed of the hazard, among tasks "
              "that declare it; task means.",
              (Column("arm", "arm", "text"), *_metric_cols(HAZARDS)),
              tuple({"arm": a, **m["hazards"]} for a, m in arms.items())),
        Table("groups", "Ordering against idempotency",
              "ordering = mean of late_arrival and out_of_order; idempotency = mean of "
              "duplicates and crash_retry; backfill beside both; schema_evolution on its own.",
              (Column("arm", "arm", "text"),
               *_metric_cols(("ordering", "idempotency", "ordering_minus_idempotency")),
               Column("backfill", "backfill", "metric"),
               Column("schema_evolution", "schema_evolution", "metric")),
              tuple({"arm": a, "ordering": m["ordering"], "idempotency": m["idempotency"],
                     "ordering_minus_idempotency": m["ordering_minus_idempotency"],
                     "backfill": m["hazards"]["backfill"],
                     "schema_evolution": m["schema_evolution"]} for a, m in arms.items())),
        Table("weakest_link", "Weakest link",
              caption("Weakest link"),
              (Column("arm", "arm", "text"),
               Column("ordering", "weakest ordering", "metric"),
               Column("idempotency", "weakest idempotency", "metric"),
               Column("ordering_minus_idempotency", "weakest: ordering \u2212 idempotency",
                      "metric"),
               Column("group", "group means: ordering \u2212 idempotency", "metric")),
              tuple({"arm": a, **m["weakest_link"], "group": m["ordering_minus_idempotency"]}
                    for a, m in arms.items())),
        Table("paired", "Paired differences per task (ordering \u2212 idempotency)",
              caption("Paired differences"),
              (Column("arm", "arm", "text"),
               Column("ordering_better", "tasks favouring ordering", "int"),
               Column("idempotency_better", "tasks favouring idempotency", "int"),
               Column("ties", "ties", "int"),
               *_metric_cols(("median", "mean"))),
              tuple({"arm": a, **m["paired"]} for a, m in arms.items())),
        Table("composition", "Verdict composition per hazard",
              "Share of PASS, FAIL and ERROR among the hazard's replays (seeds) of "
              "snapshot-passing cells; task means.",
              (Column("arm", "arm", "text"), Column("hazard", "hazard", "text"),
               *_metric_cols(("PASS", "FAIL", "ERROR"))),
              tuple({"arm": a, "hazard": h, **m["composition"][h]} for a, m in arms.items()
                    for h in HAZARDS if m["composition"][h]["PASS"]["n"] > 0)),
        Table("repair", "Repair effect (model arms)",
              "All-in failure among snapshot-passing cells whose script passed the snapshot on "
              "the first turn, against those that passed only after repair.",
              (Column("arm", "arm", "text"), Column("first_turn_cells", "cells, turn 1", "int"),
               Column("first_turn", "all-in, turn 1", "metric"),
               Column("repaired_cells", "cells, repaired", "int"),
               Column("repaired", "all-in, repaired", "metric"),
               Column("repaired_minus_first_turn", "repaired \u2212 turn 1", "metric")),
              tuple({"arm": a, "first_turn_cells": m["cells"]["first_turn"],
                     "repaired_cells": m["cells"]["repaired"], **m["repair"]}
                    for a, m in arms.items() if "repair" in m),
              "No arm has repair turns (model arms only)."),
        Table("batch_dedup", "Dedup guard and duplicates",
              "Silent failure (some FAIL) and crash (some ERROR) on `duplicates` among "
              "snapshot-passing cells, by whether the script carries the `batch_dedup` idiom.",
              (Column("arm", "arm", "text"), Column("guard", "batch_dedup", "text"),
               Column("cells", "cells", "int"), *_metric_cols(("silent", "crash"))),
              tuple({"arm": a, "guard": side, "cells": m["cells"][f"{side}_batch_dedup"],
                     **m["batch_dedup"][side]} for a, m in arms.items() if "batch_dedup" in m
                    for side in ("with", "without")),
              "No artifact carries idiom tags."),
        Table("spread", "Spread across replicates",
              "Each metric and each hazard's pass rate computed on one replicate index at a "
              "time: per-replicate values, range and sample standard deviation.",
              (Column("arm", "arm", "text"), Column("metric", "metric", "text"),
               Column("values", "per replicate", "text"), Column("min", "min", "number"),
               Column("max", "max", "number"), Column("sd", "sd", "number")),
              tuple({"arm": a, "metric": k,
                     "values": ", ".join(f"r{r} {fmt_number(v)}"
                                         for r, v in zip(s["replicates"], s["values"],
                                                         strict=True)),
                     "min": s["min"], "max": s["max"], "sd": s["sd"]}
                    for a, m in arms.items() for k, s in _spread_rows(m.get("spread", {}))),
              "No arm has replicates."),
        Table("cells", "Cells",
              "Cells without an artifact are counted apart and take part in no verdict metric; "
              "ungraded cells have an artifact but no snapshot verdict yet; eligible cells pass "
              "the snapshot and have hazard verdicts.",
              (Column("arm", "arm", "text"), Column("total", "cells", "int"),
               Column("gradeable", "with artifact", "int"),
               Column("no_artifact", "no artifact", "int"),
               Column("ungraded", "ungraded", "int"),
               Column("snapshot_pass", "snapshot pass", "int"),
               Column("eligible", "eligible", "int"),
               Column("gradeable_rate", "gradeable (task mean)", "metric")),
              tuple({"arm": a, **{k: v for k, v in m["cells"].items()
                                  if not isinstance(v, dict)},
                     "gradeable_rate": m["gradeable"]} for a, m in arms.items())),
        Table("no_artifact", "Cells without an artifact, by reason", "",
              (Column("arm", "arm", "text"), Column("reason", "reason", "text"),
               Column("cells", "cells", "int")),
              tuple({"arm": a, "reason": r, "cells": k} for a, m in arms.items()
                    for r, k in m["cells"]["no_artifact_reasons"].items()),
              "Every cell has an artifact."),
        Table("per_task", "Small arms, cell by cell",
              caption("Small arms"),
              (Column("arm", "arm", "text"), Column("task", "task", "text"),
               Column("replicate", "replicate", "int"), Column("snapshot", "snapshot", "text"),
               Column("in_order", "in_order", "text"), Column("trickle", "trickle", "text"),
               *(Column(h, h, "text") for h in HAZARDS), Column("class", "class", "text")),
              tuple({"arm": a, "task": r["task"], "replicate": r["replicate"],
                     **{k: r[k] or DASH for k in ("snapshot", "in_order", "trickle")},
                     **{h: r["hazards"][h] or DASH for h in HAZARDS}, "class": r["class"]}
                    for a, m in arms.items() for r in m.get("per_task", ())),
              f"Every arm has at least {FEW_TASKS} tasks."),
    ]
    if doc.get("no_scripts"):
        tables.append(Table(
            "no_scripts", "Arms without a script (left out)",
            "No cell of these arms has a script, so they have no verdict and no column; a "
            "trial run belongs in its own results file (`--results`).",
            (Column("arm", "arm", "text"), Column("cells", "cells", "int"),
             Column("reasons", "reasons", "text")),
            tuple({"arm": a, "cells": v["cells"],
                   "reasons": "; ".join(f"{r} ({k})" for r, k in v["reasons"].items())}
                  for a, v in doc["no_scripts"].items())))
    if "comparison" in doc:
        tables += comparison_tables(doc["comparison"])
    if "engine_comparison" in doc:
        tables += engine_tables(doc["engine_comparison"])
    return tables


ENGINE_NAMES: dict[str, str] = {name: f.title for name, f in FACTS.items()}


def engine_title(c: Mapping[str, Any]) -> str:
    a, b = (ENGINE_NAMES.get(e, e) for e in c["engines"])
    return f"Engines: {a} against {b}"


def engine_tables(c: Mapping[str, Any]) -> list[Table]:
    """The engine comparison: agreement, pass rates side by side, the cells that differ and
    the (cell, schedule) pairs that pass on one engine only."""
    a, b = c["engines"]
    arms: Mapping[str, Mapping[str, Any]] = c["arms"]
    counts = "; ".join(f"`{arm}`: {e['cells']['compared']} cells ({e['replays']} replays) on "
                       f"{e['tasks']} tasks, {e['cells']['one_engine']} graded on one engine "
                       "only" for arm, e in arms.items())
    return [
        Table("engine_agreement", engine_title(c),
              f"{caption('Engine comparison')} Compared: {counts}. `all`: agreement over "
              "every schedule's replays.",
              (Column("arm", "arm", "text"), Column("schedule", "schedule", "text"),
               Column("agreement", "agreement", "metric")),
              tuple({"arm": arm, "schedule": s, "agreement": m}
                    for arm, e in arms.items() for s, m in e["agreement"].items()
                    if m["n"] > 0)),
        Table("engine_pass_rates", "Pass rates on each engine",
              "Snapshot pass and per-hazard pass rates on the compared replays, each task kept "
              "only where both engines define the rate; the difference has a paired interval.",
              (Column("arm", "arm", "text"), Column("rate", "rate", "text"),
               Column(a, ENGINE_NAMES.get(a, a), "metric"),
               Column(b, ENGINE_NAMES.get(b, b), "metric"),
               Column("difference", f"{ENGINE_NAMES.get(b, b)} \u2212 {ENGINE_NAMES.get(a, a)}",
                      "metric")),
              tuple({"arm": arm, "rate": r, **sides} for arm, e in arms.items()
                    for r, sides in e["pass_rates"].items() if sides[a]["n"] > 0)),
        Table("engine_cells", "Cells whose verdicts differ between engines",
              "Compared replays of the cell, and how many of them have the same verdict on "
              "both engines; cells that agree on every replay are not listed (metrics.json "
              "`per_cell` has them all).",
              (Column("arm", "arm", "text"), Column("task", "task", "text"),
               Column("replicate", "replicate", "int"), Column("replays", "replays", "int"),
               Column("agree", "agree", "int")),
              tuple({"arm": arm, **row} for arm, e in arms.items() for row in e["per_cell"]
                    if row["agree"] < row["replays"]),
              "The engines agree on every compared replay."),
        Table("engine_split", "Passing on one engine only",
              "Each (cell, schedule) that passes every compared seed on one engine and has a "
              "FAIL or ERROR on the other: verdict letters per seed on each.",
              (Column("arm", "arm", "text"), Column("task", "task", "text"),
               Column("replicate", "replicate", "int"), Column("schedule", "schedule", "text"),
               Column(a, ENGINE_NAMES.get(a, a), "text"),
               Column(b, ENGINE_NAMES.get(b, b), "text")),
              tuple({"arm": arm, **row} for arm, e in arms.items() for row in e["split"]),
              "No compared cell passes on one engine and fails on the other."),
    ]


def _leaves(node: Mapping[str, Any], prefix: tuple[str, ...] = ()
            ) -> list[tuple[str, Mapping[str, Any]]]:
    if "shift" in node:
        return [(".".join(prefix), node)]
    return [leaf for k, v in node.items() for leaf in _leaves(v, (*prefix, k))]


def comparison_tables(c: Mapping[str, Any]) -> list[Table]:
    a, b = c["a"], c["b"]
    cells = c["cells"]
    return [
        Table("comparison", f"Comparison: {b} against {a}",
              f"{caption('Comparison')} Common tasks: {c['tasks']}.",
              (Column("metric", "metric", "text"), Column("a", a, "number"),
               Column("b", b, "number"), Column("shift", f"shift ({b} \u2212 {a})", "metric")),
              tuple({"metric": name, "a": leaf["a"], "b": leaf["b"], "shift": leaf["shift"]}
                    for name, leaf in _leaves(c["metrics"]))),
        Table("changed_cells", f"Cells whose class changed from {a} to {b}",
              f"{cells['compared']} cells matched on (task, replicate); "
              f"{len(cells['changed'])} changed class; {cells['only_a']} only in {a}, "
              f"{cells['only_b']} only in {b}.",
              (Column("task", "task", "text"), Column("replicate", "replicate", "int"),
               Column("a", a, "text"), Column("b", b, "text")),
              tuple(cells["changed"]), "No matched cell changed class."),
    ]


def _spread_rows(spread: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    rows = [(k, v) for k, v in spread.items() if k != "hazards"]
    return rows + [(f"hazards.{h}", v) for h, v in spread.get("hazards", {}).items()]


def cell_text(column: Column, value: Any) -> str:
    if column.kind == "metric":
        return fmt_metric(value)
    if column.kind == "number":
        return fmt_number(value)
    return str(value)


def to_csv(table: Table) -> str:
    """One row per table row; a metric column becomes four: X, X_low, X_high, X_n."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header: list[str] = []
    for c in table.columns:
        header += [c.key, f"{c.key}_low", f"{c.key}_high", f"{c.key}_n"] \
            if c.kind == "metric" else [c.key]
    writer.writerow(header)
    for row in table.rows:
        out: list[JSON] = []
        for c in table.columns:
            v = row[c.key]
            if c.kind == "metric":
                out += [_csv_num(v["value"]), _csv_num(v["low"]), _csv_num(v["high"]), v["n"]]
            elif c.kind == "number":
                out.append(_csv_num(v))
            else:
                out.append(v)
        writer.writerow(out)
    return buffer.getvalue()


def _csv_num(x: float | None) -> str:
    return "" if x is None else repr(float(x))
