"""Terminal output: tables, batch plans, progress. Rendering only; nothing here decides."""

from __future__ import annotations

import shlex
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
)
from rich.progress import Task as ProgressTask
from rich.table import Column, Table
from rich.text import Text

from arrivalbench import interrupts, words
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.grading import CHECKED_CONTROLS
from arrivalbench.core.schedules import KINDS, Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON
from arrivalbench.core.verdict import Verdict
from arrivalbench.words import count

STYLE = {"PASS": "green", "FAIL": "bold red", "ERROR": "bold yellow"}


def task_summary(spec: TaskSpec) -> dict[str, JSON]:
    return {
        "id": spec.id,
        "title": spec.title,
        "mode": spec.mode,
        "difficulty": spec.difficulty,
        "tier": spec.tier,
        "family": spec.family,
        "hazards": list(spec.hazards),
        "negatives": {n.name: list(n.fails) for n in spec.negatives},
        "gold_idiom": spec.gold_idiom,
    }


def tasks_table(specs: Sequence[TaskSpec]) -> Table:
    """One row per task, two-line cells (id over the gold's idiom, mode over difficulty) and
    the hazards last, so that at 80 columns only the hazard list wraps, and only between
    names."""
    table = Table(title=f"{len(specs)} built-in tasks", title_justify="left", box=box.SIMPLE_HEAD,
                  caption="neg.: negative controls", caption_justify="left", pad_edge=False)
    table.add_column("id\n  gold idiom", no_wrap=True)
    table.add_column("mode\n  difficulty", no_wrap=True)
    table.add_column("neg.", justify="right", no_wrap=True)
    table.add_column("hazards", min_width=len(max(KINDS, key=len)))
    for spec in specs:
        table.add_row(Text(spec.id) + Text(f"\n  {spec.gold_idiom or '-'}", style="dim"),
                      Text(spec.mode) + Text(f"\n  {spec.difficulty}", style="dim"),
                      str(len(spec.negatives)), ", ".join(spec.hazards))
    return table


def prose(text: str) -> RenderableType:
    """Markdown-like text (a ticket, a prompt) to read in a terminal: paragraphs and list items
    reflowed to the width between words, with hanging indents; nothing cut."""
    from rich.markdown import Markdown  # markdown-it: only `show` pays for its import

    return Markdown(text, hyperlinks=False)


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
    for target in spec.targets:
        grid.add_row(f"target {target.name}", f"{_columns(target.columns)}\n"
                     f"key {', '.join(target.key)}")
    for negative in spec.negatives:
        grid.add_row(f"negative {negative.name}", "fails " + ", ".join(negative.fails))
    return Group(grid, Panel(prose(spec.ticket.rstrip()), title="ticket", title_align="left"))


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


PLAIN_EVERY = 30.0  # seconds between two plain progress lines


class _Rate(ProgressColumn):
    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "-/s", style="cyan")


class _Left(ProgressColumn):
    def render(self, task: ProgressTask) -> Text:
        left = task.time_remaining
        return Text("ETA -" if left is None else f"ETA {_duration(left)}", style="cyan")


def _tally(counts: Counter[str], markup: bool = False) -> str:
    return " ".join((f"[{STYLE[k]}]{k} {counts[k]}[/]" if markup else f"{k} {counts[k]}")
                     for k in STYLE if counts[k])


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def plain_line(label: str, done: int, total: int, seconds: float, counts: Counter[str]) -> str:
    """One progress line for a log file: done/total, rate, time left, verdicts so far."""
    rate = done / seconds if seconds > 0 else 0.0
    left = _duration((total - done) / rate) if rate else "-"
    share = f" ({done / total:.0%})" if total else ""
    tally = _tally(counts)
    return (f"{label}: {done}/{total}{share}, {rate:.1f} replays/s, {left} left"
            + (f"; {tally}" if tally else ""))


@contextmanager
def progress(total: int, enabled: bool = True, label: str = "grading", skipped: int = 0,
             console: Console | None = None, clock: Callable[[], float] = time.monotonic,
             every: float = PLAIN_EVERY) -> Iterator[Callable[[str], None]]:
    """Progress on standard error (unless `console` is given); `advance(verdict)` after each
    replay. On a terminal: a bar with rate, time left and live verdict counts that fits in 80
    columns. Otherwise (a log file, a pipe): a plain line every `every` seconds of `clock`,
    and a last one at the end once any was printed; a run shorter than that prints nothing.
    Either way `advance` raises KeyboardInterrupt once Ctrl-C was pressed (see `interrupts`)."""
    with interrupts.watching(), _progress(total, enabled, label, skipped, console, clock,
                                          every) as advance:
        yield advance


@contextmanager
def _progress(total: int, enabled: bool, label: str, skipped: int, console: Console | None,
              clock: Callable[[], float], every: float) -> Iterator[Callable[[str], None]]:
    console = console or Console(stderr=True)
    counts: Counter[str] = Counter()
    if not enabled:
        yield lambda _verdict: interrupts.check()
        return
    note = f"{label}: {count(skipped, 'replay')} already graded, {total} to go"
    if not console.is_terminal:
        started = last = clock()
        done = printed = 0

        def advance_plain(verdict: str) -> None:
            nonlocal done, last, printed
            interrupts.check()
            counts[verdict] += 1
            done += 1
            now = clock()
            if now - last >= every:
                last = now
                if skipped and not printed:
                    console.print(note, highlight=False, soft_wrap=True)
                printed += 1
                console.print(plain_line(label, done, total, now - started, counts),
                              highlight=False, soft_wrap=True)

        yield advance_plain
        if printed and done > 0:
            console.print(plain_line(label, done, total, clock() - started, counts),
                          highlight=False, soft_wrap=True)
        return
    # Only the bar gives way when the line is too long.
    bar = Progress(TextColumn("{task.description}", table_column=Column(no_wrap=True)),
                   BarColumn(bar_width=None),
                   MofNCompleteColumn(table_column=Column(no_wrap=True)),
                   _Rate(table_column=Column(no_wrap=True)),
                   TextColumn("{task.fields[counts]}", table_column=Column(no_wrap=True)),
                   _Left(table_column=Column(no_wrap=True)),
                   console=console, transient=True, expand=True)

    if skipped:
        console.print(note, highlight=False, soft_wrap=True)

    def advance(verdict: str) -> None:
        interrupts.check()
        counts[verdict] += 1
        bar.update(job, advance=1, counts=_tally(counts, markup=True))

    with bar:
        job = bar.add_task(label, total=total, counts="")
        yield advance


def cost_table(verdicts: Sequence[Verdict], costs: Sequence[Cost | None],
               over: Sequence[bool] = (), budget: float | None = None) -> RenderableType:
    """Rows read and written and read amplification per replay; with `over` (one per verdict)
    and the task's `budget`, the replays over it marked and counted in the caption."""
    table = Table(title="cost (rows of tables in main)", title_justify="left",
                  caption_justify="left")
    for name in ("schedule", "seed", "rows read", "rows written", "records",
                 "read amplification"):
        table.add_column(name, justify="left" if name == "schedule" else "right")
    marked = list(over) or [False] * len(verdicts)
    for v, cost, beyond in zip(verdicts, costs, marked, strict=True):
        if cost is None:
            continue
        amplification = f"{cost.read_amplification:.2f}" + ("" if cost.complete else
                                                             " (incomplete)")
        table.add_row(v.schedule, str(v.seed), f"{cost.rows_read:,}",
                      f"{cost.rows_written:,}", f"{cost.records:,}",
                      Text(amplification + " over", style="bold red") if beyond
                      else amplification)
    if budget is not None:
        beyond_count = sum(marked)
        table.caption = (
            f"{count(beyond_count, 'replay')} over the task's read budget of {budget:g} rows "
            "read per record delivered (the exit status does not count cost: it is not "
            "correctness)" if beyond_count else
            f"every replay within the task's read budget of {budget:g} rows read per record "
            "delivered")
    return table


def grade_table(spec: TaskSpec, pipeline: Path, verdicts: Sequence[Verdict]) -> RenderableType:
    """The heading (wrapped to the terminal, not to the table) over a schedule x seed table."""
    seeds = sorted({v.seed for v in verdicts})
    table = Table(caption_justify="left")
    table.add_column("schedule")
    for seed in seeds:
        table.add_column(f"seed {seed}", justify="center")
    rows: dict[str, dict[int, Verdict]] = {}
    for v in verdicts:
        rows.setdefault(v.schedule, {})[v.seed] = v
    for schedule, cells in rows.items():
        late = all(words.beyond_allowance(v) for v in cells.values() if v.status != "PASS") \
            and any(v.status != "PASS" for v in cells.values())
        table.add_row(f"{schedule} (late, by design)" if late else schedule,
                      *(Text(cells[s].status, STYLE[cells[s].status]) if s in cells else ""
                        for s in seeds))
    tally: Counter[str] = Counter(v.status for v in verdicts)
    late_fails = sum(map(words.beyond_allowance, verdicts))
    table.caption = "  ".join(f"{k} {tally[k]}" + (f" ({late_fails} late, by design)"
                                                   if k == "FAIL" and late_fails else "")
                              for k in STYLE if tally[k])
    return Group(Text(f"{pipeline} on {spec.id}"), table)


def command_lines(lead: str, argv: Sequence[str], width: int) -> list[str]:
    """A shell command in lines of at most `width` (unless one word is longer), continued with
    a backslash, so that it fits the terminal and still pastes as one command; an option stays
    on the line of its value."""
    words_: list[str] = []
    for word in map(shlex.quote, argv):
        if words_ and words_[-1].startswith("--") and " " not in words_[-1] and \
                not word.startswith("--"):
            words_[-1] += " " + word
        else:
            words_.append(word)
    if not words_:
        return []
    lines = [lead + words_[0]]
    for word in words_[1:]:
        if len(lines[-1]) + 1 + len(word) + 2 <= width:
            lines[-1] += " " + word
        else:
            lines[-1] += " \\"
            lines.append("  " + word)
    return lines


def control_advice(verdicts: Sequence[Verdict]) -> str | None:
    """After a grade's table, when a control is not PASS: no hazard is needed to break the
    pipeline, so that comes first."""
    controls = list(dict.fromkeys(v.schedule for v in verdicts
                                  if v.schedule in CHECKED_CONTROLS and v.status != "PASS"))
    if not controls:
        return None
    return (f"{' and '.join(controls)} {'fails' if len(controls) == 1 else 'fail'}: "
            f"{'a control delivers' if len(controls) == 1 else 'controls deliver'} every "
            "record once, with no hazard, so the pipeline is wrong even on clean batches; fix "
            "that first")


def failure_details(verdicts: Sequence[Verdict]) -> list[RenderableType]:
    """The first failing verdict of each schedule, explained."""
    blocks: list[RenderableType] = []
    shown: set[str] = set()
    said: dict[str, str] = {}  # explanation -> the first "schedule, seed n" that gave it
    for v in verdicts:
        if v.status == "PASS" or v.schedule in shown:
            continue
        shown.add(v.schedule)
        where = f"{v.schedule}, seed {v.seed}"
        header = Text(f"{where}: {v.status}", STYLE[v.status])
        text = words.terminal(v)
        if text in said:
            blocks.append(header + Text(f", the same as {said[text]}"))
            continue
        said[text] = where
        blocks.append(Group(header, indented(text), Text("")))
    return blocks


def indented(text: str) -> RenderableType:
    """Lines that, wrapped to the terminal, keep their indent: a folded example row stays
    under its own line, not back at the margin."""
    rows = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        rows.append(Padding(Text(body), (0, 0, 0, len(line) - len(body))))
    return Group(*rows)
