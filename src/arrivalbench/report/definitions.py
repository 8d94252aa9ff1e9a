"""What every reported number means, written once: report.md and report.html render these
definitions, `docs/metrics.md` is generated from them (a test keeps it in step), and `metrics`
implements them.

`DEFINITIONS` are (term, text) pairs in reading order; `KEYS` document every key of
metrics.json, a `*` standing for any arm or hazard name, `a, b` and `a|b` for alternatives.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arrivalbench.report.bootstrap import LEVEL, RESAMPLES

FEW_TASKS = 10  # an interval over fewer tasks is marked (a dagger) in every output
MARK = "\u2020"


def few(m: Mapping[str, Any]) -> str:
    """The mark of a defined interval that rests on fewer than FEW_TASKS tasks, else ''."""
    return MARK if m["value"] is not None and m["n"] < FEW_TASKS else ""


DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Cell", "one (arm, task, replicate): one script, graded on `snapshot` (seed 0), the "
     "controls `in_order` and `trickle` and every hazard the task declares, for each seed. A "
     "cell's verdicts are those of its artifact on its task digest; when a replay was graded "
     "under several harness or engine versions the newest is used (the one the latest run "
     "stored); `chaos` (diagnostic) and unknown schedules are left out."),
    ("Task mean", "every rate is the rate within each task (over its eligible cells, all "
     "replicates), then the unweighted mean over tasks. A task with no eligible cell is left "
     "out; **n** is the number of tasks used, and a metric with n=0 is shown as a dash."),
    ("Interval", f"{LEVEL:.0%} percentile bootstrap over tasks: {RESAMPLES} resamples of an "
     "arm's tasks with replacement, every metric of the arm recomputed from the drawn tasks' "
     "rates (so a difference is resampled jointly with its parts); a resample in which a "
     "metric is undefined is left out of its percentiles. An interval that rests on fewer "
     f"than {FEW_TASKS} tasks is marked {MARK}: with so few tasks it is rough."),
    ("No script", "a cell without an artifact (a reply with no script, ...) is counted apart, "
     "by reason, and enters no verdict metric; **gradeable** is the task mean of the share of "
     "a task's cells that have one. A cell with a script but no `snapshot` verdict (an "
     "unfinished run) is **ungraded**, counted apart too. An arm none of whose cells has a "
     "script gets no column: the report names it instead."),
    ("Snapshot pass", "share of graded cells whose `snapshot` verdict is PASS."),
    ("Silent, crash, all-in", "among snapshot-passing cells with at least one hazard verdict "
     "(the **eligible** cells), **silent**: some hazard verdict (any hazard, any seed) is "
     "FAIL; **crash**: some is ERROR; **all-in**: either (a cell can be both)."),
    ("Gap", "the all-in failure among snapshot-passing cells (so gap = all-in); **gap "
     "(controls pass)** restricts it to eligible cells that also pass every seed of both "
     "controls."),
    ("Per-hazard pass rate", "share of snapshot-passing cells that pass every seed of the "
     "hazard, among tasks that declare it (a task declares a hazard for a cell iff the cell "
     "has verdicts for it)."),
    ("Groups", "**ordering** = mean of the late_arrival and out_of_order rates; "
     "**idempotency** = mean of duplicates and crash_retry; a group with one defined hazard is "
     "that hazard (its n counts the tasks that contribute to any of its hazards); "
     "**ordering \u2212 idempotency** is their difference. backfill is reported beside both, "
     "schema_evolution on its own. The group mean is the primary statistic."),
    ("Weakest link", "per group, the pass rate of its weakest hazard (the minimum of its "
     "hazards' rates), and the difference of the two minima, with intervals from the same "
     "bootstrap. A minimum over more hazards is biased downward (each rate is an estimate, and "
     "the smallest of several noisy estimates tends to fall below the true rate), so a "
     "weakest-link margin leans against the group with more (or noisier) hazards by "
     "construction; that is why the group mean is primary."),
    ("Paired differences", "per task, its ordering rate (mean of its late_arrival and "
     "out_of_order rates) minus its idempotency rate, over tasks with both groups: how many "
     "tasks favour each side (and ties), the median and the mean, each with its interval. It "
     "compares the groups within tasks, so it holds for small arms where task means are "
     "unstable."),
    ("Correct and incremental", "for results graded with cost measurement: among eligible "
     "cells whose every replay has a measured cost, the share that pass every hazard (no FAIL "
     "or ERROR on any seed) and are **incremental**: every replay reads, summed over its runs, "
     "at most the task's budget of rows from tables in `main` per record delivered (its read "
     "amplification), with no statement whose reads the profiler cannot see. Task mean with "
     "the same bootstrap intervals as every other rate."),
    ("Composition", "for each hazard, the shares of PASS, FAIL and ERROR among its seeds, per "
     "snapshot-passing cell, averaged per task and then over tasks."),
    ("Dedup guard", "among snapshot-passing cells with `duplicates` verdicts whose script has "
     "idiom tags, silent failure (some FAIL) and crash (some ERROR) on `duplicates`, with and "
     "without the `batch_dedup` tag."),
    ("Repair", "model arms: all-in failure of eligible cells whose first turn passed the "
     "snapshot, against those that passed only after feedback, and their difference."),
    ("Spread", "for arms with replicates, each headline metric and each hazard's pass rate on "
     "one replicate index at a time: the values, min, max and sample standard deviation (not "
     "for `negatives`, whose cells are distinct negative controls, not replications)."),
    ("Small arms", f"an arm on fewer than {FEW_TASKS} tasks is also listed cell by cell: each "
     "verdict as one letter per seed (P, F, E) and the cell's class: `no script`, `ungraded`, "
     "`snapshot FAIL` / `snapshot ERROR`, `no hazard`, `pass`, `silent`, `crash` or "
     "`silent+crash`."),
    ("Comparison", "`--compare A B`: on the tasks both arms have cells on, every metric of A "
     "and of B and the shift B \u2212 A, each metric input kept only on tasks where both arms "
     "define it; the interval is a paired bootstrap (the same drawn tasks for both arms). "
     "Cells matched on (task, replicate) whose class differs are listed."),
)

# Shown in a report only when its results file holds verdicts of an engine other than DuckDB
# (a DuckDB-only report keeps its bytes); docs/metrics.md always has them.
ENGINE_DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("Engines", "a results file may hold verdicts of the same replays on DuckDB and on "
     "PostgreSQL (the verdict record names its engine). Every table but the engine comparison "
     "reads one engine per arm: DuckDB's verdicts, DuckDB being the default engine and the "
     "engine of every reference, when the arm has any; the engine it was graded on when it has "
     "none (the report names each arm's engine). Engines are never mixed within an arm, and "
     "versions are compared within an engine only."),
    ("Engine comparison", "for every arm graded on both engines, on the replays both graded "
     "(same task digest, artifact, schedule and seed; the newest version on each engine; a "
     "replay graded on one engine only is left out, so both sides rest on the same replays): "
     "**agreement**, per cell the share of its compared replays whose verdict (PASS, FAIL or "
     "ERROR) is the same on both engines, as a task mean over all schedules and per schedule; "
     "the **snapshot pass** and **per-hazard pass rates** on each engine side by side, each "
     "task kept only where both engines define the rate, and their difference (PostgreSQL "
     "\u2212 DuckDB) with a paired interval; the cells whose replays differ, and each (cell, "
     "schedule) that passes every compared seed on one engine and not on the other. Intervals: "
     "the same bootstrap over the arm's compared tasks."),
)


def shown(doc: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The definitions a report of `doc` prints."""
    return DEFINITIONS + (ENGINE_DEFINITIONS if "engines" in doc else ())


KEYS: tuple[tuple[str, str], ...] = (
    ("arms", "one object per reported arm (arms with a script), in name order"),
    ("arms.*", "an arm; each metric in it is an object of `value`, `low`, `high` (the interval) "
     "and `n` (tasks used), with null value and bounds when undefined"),
    ("arms.*.gradeable, snapshot_pass, gap, gap_controls, silent, crash, all_in", "metrics"),
    ("arms.*.ordering, idempotency, ordering_minus_idempotency, schema_evolution",
     "group means and their difference; schema_evolution on its own"),
    ("arms.*.hazards", "per-hazard pass rates"),
    ("arms.*.hazards.*", "the pass rate of one hazard"),
    ("arms.*.composition", "verdict composition per hazard"),
    ("arms.*.composition.*", "the verdict composition of one hazard"),
    ("arms.*.composition.*.PASS|FAIL|ERROR", "the share of one verdict among a hazard's seeds"),
    ("arms.*.weakest_link", "the weakest hazard of each group"),
    ("arms.*.weakest_link.ordering, idempotency, ordering_minus_idempotency",
     "the weakest hazard's pass rate per group, and the difference of the two"),
    ("arms.*.paired", "per-task differences, ordering minus idempotency"),
    ("arms.*.paired.median, mean", "median and mean of the per-task differences (metrics)"),
    ("arms.*.paired.ordering_better, idempotency_better, ties",
     "tasks whose difference is positive, negative, zero"),
    ("arms.*.correct_and_incremental", "results graded with cost measurement only: passes "
     "every hazard within the read budget (metric)"),
    ("arms.*.repair", "model arms only"),
    ("arms.*.repair.first_turn, repaired, repaired_minus_first_turn",
     "all-in failure by repair class, and the difference"),
    ("arms.*.batch_dedup", "arms whose scripts carry idiom tags"),
    ("arms.*.batch_dedup.with|without", "cells with and without the `batch_dedup` tag"),
    ("arms.*.batch_dedup.with|without.silent|crash", "silent failure and crash on duplicates"),
    ("arms.*.cells", "cell counts: total, gradeable, no_artifact, ungraded, snapshot_pass, "
     "eligible, first_turn, repaired, with_batch_dedup, without_batch_dedup, tasks, "
     "no_artifact_reasons (reason: cells)"),
    ("arms.*.replays", "results with every-batch verdicts or lateness explained: replays "
     "`every_batch_checked` (the every-batch check's verdict stored beside the final one), "
     "`reconverged` (among them: final table PASS, diverged after an earlier run) and "
     "`late_by_design` (FAILs whose every difference is data beyond the artifact's own "
     "allowance); counted apart, never in a metric"),
    ("arms.*.spread", "arms with replicates: per metric (and `hazards.*`) `replicates`, "
     "`values`, `min`, `max`, `sd`"),
    ("arms.*.per_task", f"arms on fewer than {FEW_TASKS} tasks: one row per cell with `task`, "
     "`replicate`, `snapshot`, `in_order`, `trickle`, `hazards.*` (letters per seed, null: "
     "no verdict) and `class`"),
    ("no_scripts", "arms left out for having no script, each with `cells` and `reasons`"),
    ("comparison", "with `--compare A B` only"),
    ("comparison.a, b, tasks", "the two arms and the number of tasks both have cells on"),
    ("comparison.metrics", "every metric both arms have, at the path it has in an arm, as "
     "`a` and `b` (each arm on the paired tasks) and `shift` (B \u2212 A: `value`, `low`, "
     "`high`, `n`)"),
    ("comparison.cells", "`compared` (cells matched on task and replicate), `only_a`, "
     "`only_b`, `changed` (rows of `task`, `replicate`, `a`, `b`: the two classes)"),
    ("engines", "only when some arm has verdicts of an engine other than DuckDB: the engine "
     "whose verdicts each arm's metrics read (`duckdb` or `postgres`)"),
    ("engines.*", "an arm's engine"),
    ("engine_comparison", "only when some arm has replays graded on both engines"),
    ("engine_comparison.engines", "the two engines compared: `[\"duckdb\", \"postgres\"]`"),
    ("engine_comparison.arms", "one object per arm graded on both engines, in arm order"),
    ("engine_comparison.arms.*", "an arm's comparison"),
    ("engine_comparison.arms.*.tasks", "tasks with a compared cell (the bootstrap's tasks)"),
    ("engine_comparison.arms.*.cells", "cell counts"),
    ("engine_comparison.arms.*.cells.compared, one_engine", "cells with a replay graded on "
     "both engines, and cells graded on one engine only (left out)"),
    ("engine_comparison.arms.*.replays", "replays compared (graded on both engines)"),
    ("engine_comparison.arms.*.agreement", "share of compared replays with the same verdict, "
     "per cell, task mean (metric)"),
    ("engine_comparison.arms.*.agreement.all, snapshot, in_order, trickle, late_arrival, "
     "out_of_order, duplicates, crash_retry, backfill, schema_evolution",
     "over every compared replay, and over one schedule's (metrics)"),
    ("engine_comparison.arms.*.pass_rates", "snapshot pass and per-hazard pass rates on both "
     "engines"),
    ("engine_comparison.arms.*.pass_rates.snapshot_pass, late_arrival, out_of_order, "
     "duplicates, crash_retry, backfill, schema_evolution", "one rate"),
    ("engine_comparison.arms.*.pass_rates.*.duckdb, postgres, difference", "the rate on "
     "each engine over the tasks where both define it, and PostgreSQL \u2212 DuckDB with a "
     "paired interval (metrics)"),
    ("engine_comparison.arms.*.per_cell", "every compared cell: `task`, `replicate`, "
     "`replays` (compared) and `agree` (of them, with the same verdict)"),
    ("engine_comparison.arms.*.split", "each (cell, schedule) that passes every compared seed "
     "on one engine only: `task`, `replicate`, `schedule`, `duckdb`, `postgres` (letters per "
     "seed)"),
    ("seed", "the bootstrap seed"),
    ("results_digest", "sha256 over the sorted canonical records of the verdicts used"),
)


def markdown_doc() -> str:
    """docs/metrics.md."""
    lines = ["# Metrics", "",
             "Generated from `src/arrivalbench/report/definitions.py` (the report renders the "
             "same text); `tests/test_report_docs.py` checks that this file is up to date.", "",
             "## Definitions", ""]
    lines += [f"- **{term}**: {text}" for term, text in DEFINITIONS + ENGINE_DEFINITIONS]
    lines += ["", "## metrics.json", "", "| key | meaning |", "| --- | --- |"]
    # a pipe splits a table cell even inside a code span
    lines += [f"| `{_cell(key)}` | {_cell(text)} |" for key, text in KEYS]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """A pipe splits a Markdown table cell even inside a code span."""
    return text.replace("|", "\\|")
