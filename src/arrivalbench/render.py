"""Terminal output: tables, batch plans, progress. Rendering only; nothing here decides."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as ProgressTask
from rich.table import Table
from rich.text import Text

from arrivalbench.engine import duckdb as duckdb_engine
from arrivalbench.engine.cost import Cost
from arrivalbench.schedules import Schedule
from arrivalbench.task import TaskSpec
from arrivalbench.values import JSON, canonical_json
from arrivalbench.verdict import Verdict

STYLE = {"PASS": "green", "FAIL": "bold red", "ERROR": "bold yellow"}


def task_summary(spec: TaskSpec) -> dict[str, JSON]:
    return {
        "id": spec.id,
        "title": spec.title,
        "mode": spec.mode,
        "difficulty": spec.difficulty,
        "hazards": list(spec.hazards),
        "negatives": {n.name: list(n.fails) for n in spec.negatives},
        "gold_idiom": spec.gold_idiom,
    }


def tasks_table(specs: Sequence[TaskSpec]) -> Table:
    table = Table(title=f"{len(specs)} built-in tasks", title_justify="left")
    table.add_column("id", no_wrap=True)
    for column in ("mode", "difficulty", "hazards", "negatives", "gold idiom"):
        table.add_column(column, overflow="fold")
    for spec in specs:
        table.add_row(spec.id, spec.mode, spec.difficulty, ", ".join(spec.hazards),
                      str(len(spec.negatives)), spec.gold_idiom or "")
    return table


def _columns(columns: Sequence[object]) -> str:
    return ", ".join(f"{c.name} {c.type}" for c in columns)  # type: ignore[attr-defined]


def task_details(spec: TaskSpec) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("task", f"{spec.id} — {spec.title}")
    grid.add_row("mode", f"{spec.mode}, {spec.difficulty}")
    grid.add_row("hazards", ", ".join(spec.hazards))
    for source in spec.sources:
        extra = f"; entity {', '.join(source.entity_key)} by {source.version}" \
            if source.is_change_stream else ""
        grid.add_row(f"source {source.name}", f"{_columns(source.columns)}\n"
                     f"record key {', '.join(source.record_key)}; event time "
                     f"{source.event_time or '-'}{extra}")
    target = spec.target
    grid.add_row(f"target {target.name}", f"{_columns(target.columns)}\n"
                 f"key {', '.join(target.key)}")
    for negative in spec.negatives:
        grid.add_row(f"negative {negative.name}", "fails " + ", ".join(negative.fails))
    return Group(grid, Panel(spec.ticket, title="ticket", title_align="left"))


def schedule_plan(spec: TaskSpec, schedule: Schedule) -> RenderableType:
    """A readable batch plan: what each run of the pipeline sees."""
    table = Table(title=f"{spec.id}: {schedule.kind}, seed {schedule.seed} — "
                  f"{len(schedule.batches)} runs, {schedule.deliveries()} deliveries\n"
                  f"{schedule.digest}", title_justify="left")
    table.add_column("run", justify="right")
    table.add_column("records", justify="right")
    table.add_column("delivered (source:rows)", overflow="fold")
    table.add_column("note")
    seen: Counter[tuple[str, int]] = Counter()
    for number, batch in enumerate(schedule.batches):
        repeats = sum(1 for r in batch.records if seen[r]) + \
            sum(c - 1 for c in Counter(batch.records).values())
        notes = []
        if batch.abort is not None:
            notes.append("aborted after the last statement" if batch.abort >= 1 else
                         f"aborted after {batch.abort:.0%} of the statements")
        if repeats:
            notes.append(f"{repeats} delivered before")
        if schedule.evolution_from == number and spec.evolution is not None:
            notes.append(f"{spec.evolution.source} gains {spec.evolution.column}")
        seen.update(batch.records)
        table.add_row(str(number), str(len(batch.records)), _runs(batch.records),
                      "; ".join(notes))
    return table


def _runs(records: Sequence[tuple[str, int]]) -> str:
    """`orders:0-41 orders:44`: consecutive rows of one source folded into a range."""
    runs: list[list[object]] = []
    for source, row in records:
        if runs and runs[-1][0] == source and runs[-1][2] == row - 1:
            runs[-1][2] = row
        else:
            runs.append([source, row, row])
    return " ".join(f"{s}:{a}" if a == b else f"{s}:{a}-{b}" for s, a, b in runs)


class _Rate(ProgressColumn):
    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:5.1f} replays/s" if speed else "    - replays/s", style="cyan")


@contextmanager
def progress(total: int, enabled: bool = True, label: str = "grading", skipped: int = 0,
             console: Console | None = None) -> Iterator[Callable[[str], None]]:
    """A progress bar (on standard error unless `console` is given) with rate, ETA and live
    verdict counts; shown only on a terminal. `advance(verdict)` after each replay."""
    console = console or Console(stderr=True)
    counts: Counter[str] = Counter()
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   _Rate(), TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                   TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
                   disable=not enabled or not console.is_terminal)
    description = label if not skipped else f"{label} ({skipped} already graded)"

    def advance(verdict: str) -> None:
        counts[verdict] += 1
        text = "  ".join(f"[{STYLE[k]}]{k} {counts[k]}[/]" for k in STYLE if counts[k])
        bar.update(job, advance=1, counts=text)

    with bar:
        job = bar.add_task(description, total=total, counts="")
        yield advance


def grade_document(spec: TaskSpec, verdicts: Sequence[Verdict],
                   costs: Sequence[Cost | None] | None = None) -> dict[str, JSON]:
    """With `costs` (one per verdict), each entry also carries its cost."""
    entries: list[JSON] = []
    for index, v in enumerate(verdicts):
        entry: dict[str, JSON] = {"schedule": v.schedule, "seed": v.seed, "verdict": v.verdict,
                                  "detail": v.detail}
        cost = costs[index] if costs is not None else None
        if cost is not None:
            entry["cost"] = dict(cost.document())
        entries.append(entry)
    return {
        "task": spec.id,
        "artifact": verdicts[0].artifact if verdicts else None,
        "engine": f"{duckdb_engine.NAME} {duckdb_engine.VERSION}",
        "verdicts": entries,
    }


def cost_table(verdicts: Sequence[Verdict], costs: Sequence[Cost | None]) -> Table:
    """Rows read and written and read amplification per replay."""
    table = Table(title="cost (rows of tables in main)", title_justify="left")
    for name in ("schedule", "seed", "rows read", "rows written", "records",
                 "read amplification"):
        table.add_column(name, justify="left" if name == "schedule" else "right")
    for v, cost in zip(verdicts, costs, strict=True):
        if cost is None:
            continue
        amplification = f"{cost.read_amplification:.2f}" + ("" if cost.complete else
                                                             " (incomplete)")
        table.add_row(v.schedule, str(v.seed), f"{cost.rows_read:,}",
                      f"{cost.rows_written:,}", f"{cost.records:,}", amplification)
    return table


def grade_table(spec: TaskSpec, pipeline: Path, verdicts: Sequence[Verdict]) -> Table:
    seeds = sorted({v.seed for v in verdicts})
    table = Table(title=f"{pipeline} on {spec.id}", title_justify="left")
    table.add_column("schedule")
    for seed in seeds:
        table.add_column(f"seed {seed}", justify="center")
    rows: dict[str, dict[int, str]] = {}
    for v in verdicts:
        rows.setdefault(v.schedule, {})[v.seed] = v.verdict
    for schedule, cells in rows.items():
        table.add_row(schedule, *(Text(cells[s], STYLE[cells[s]]) if s in cells else ""
                                  for s in seeds))
    tally: Counter[str] = Counter(v.verdict for v in verdicts)
    table.caption = "  ".join(f"{k} {tally[k]}" for k in STYLE if tally[k])
    return table


def failure_details(verdicts: Sequence[Verdict]) -> list[RenderableType]:
    """The first failing verdict of each schedule, explained."""
    blocks: list[RenderableType] = []
    shown: set[str] = set()
    for v in verdicts:
        if v.verdict == "PASS" or v.schedule in shown:
            continue
        shown.add(v.schedule)
        header = Text(f"{v.schedule}, seed {v.seed}: {v.verdict}", STYLE[v.verdict])
        blocks.append(Group(header, Text(explain(v)), Text("")))
    return blocks


def explain(v: Verdict) -> str:
    d = v.detail
    if v.verdict == "ERROR":
        where = [f"batch {d['batch']}" if d.get("batch") is not None else None,
                 f"statement {d['statement']}" if d.get("statement") is not None else None]
        return f"{d['phase']} error at {', '.join(w for w in where if w) or 'start'}: " \
               f"{d['message']}"
    lines = [f"schema: {p['problem']} column {p['column']}" +
             (f" (got {p['got']}, expected {p['expected']})" if "got" in p and "expected" in p
              else "") for p in d.get("schema", [])]
    rows = d.get("rows", {})
    if rows:
        lines.append(f"rows: expected {rows['expected']}, got {rows['got']}")
    counts = d.get("counts", {})
    lines.append(", ".join(f"{n} {k}" for k, n in counts.items() if n))
    for kind, examples in d.get("examples", {}).items():
        for ex in examples:
            key = canonical_json(ex["key"])
            if kind == "changed":
                lines.append(f"  changed {key} {ex['column']}: got {ex['got']!r}, "
                             f"expected {ex['expected']!r}")
            elif kind == "duplicated":
                lines.append(f"  duplicated {key}: +{ex['copies']} copies")
            else:
                lines.append(f"  {kind} {key}")
    return "\n".join(line for line in lines if line)
