"""Grading at scale (DESIGN §8): cells x schedules x seeds into one results file.

A cell (arm, task, replicate) holds one artifact; its plan is `snapshot` once, then both
controls and every hazard the task declares for seeds 0..N-1. Each replay of the plan is one
work unit, keyed by (task digest, schedule, seed, artifact digest, engine version, harness
version). A unit whose key is stored is never graded again, so the same command after a crash
or Ctrl-C resumes, a second run with more arms adds to the file, and an artifact that two arms
share is graded once.

Entry points:
- `run`: the `arrivalbench run` command (built-in arms and a folder of submissions).
- `grade_arms`: grade the stored cells of some arms (model arms, after they are generated).
- `regrade`: re-run stored replays and compare the bytes.
"""

from __future__ import annotations

import random
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table

from arrivalbench import arms as armlib
from arrivalbench import executors, render
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.executors import Executor, Result, Unit, unit_key
from arrivalbench.grading import DEFAULT_SEEDS, plan
from arrivalbench.schedules import CONTROLS
from arrivalbench.store import Cell, Key, Store, StoredTask, current_versions
from arrivalbench.task import TaskSpec, builtin_ids, load_spec
from arrivalbench.values import digest
from arrivalbench.verdict import KINDS as VERDICTS

DEFAULT_RESULTS = Path("results") / "arrivalbench.duckdb"
DEFAULT_ARMS = armlib.BUILTIN_ARMS
REGRADE_SEED = 20240229  # fixes the sample `regrade --sample N` draws

Warn = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"arrivalbench: warning: {message}", file=sys.stderr)


# -- values ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArmSummary:
    """One arm's cells over the run's tasks and seeds. Counts are of cells."""

    arm: str
    cells: int
    scripts: int  # cells that hold an artifact
    snapshot_pass: int
    hazard_fail: int  # snapshot-passing cells with some hazard verdict FAIL or ERROR
    silent: int  # ... with some hazard verdict FAIL
    crash: int  # ... with some hazard verdict ERROR
    control_fail: int  # snapshot-passing cells with some control verdict FAIL or ERROR
    ungraded: int  # replays of the plan with no verdict yet (an interrupted run)
    verdicts: dict[str, int] = field(default_factory=dict)  # PASS / FAIL / ERROR replays


@dataclass(frozen=True)
class Summary:
    results: Path
    run_id: int
    executor: str
    workers: int
    seeds: int
    arms: list[ArmSummary]
    planned: int  # distinct replays in the plan
    graded: int  # graded by this run
    skipped: int  # found already graded
    deaths: int  # replays whose worker died (ERROR verdicts)
    seconds: float
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Planned:
    cell: Cell
    spec: TaskSpec
    source: str


# -- tasks -----------------------------------------------------------------------------------


def resolve_tasks(tasks: Sequence[str] | None) -> list[TaskSpec]:
    """Built-in ids or task folders, each once, in the order given (default: every built-in
    task)."""
    refs = list(tasks) if tasks else builtin_ids()
    specs: dict[str, TaskSpec] = {}
    for ref in refs:
        spec = load_spec(ref)
        other = specs.get(spec.id)
        if other is not None and other.path != spec.path:
            raise ArrivalBenchError(f"--task {ref}: task id {spec.id!r} is also the id of "
                                    f"{other.path}; grade one of them at a time")
        specs[spec.id] = spec
    if not specs:
        raise ArrivalBenchError("no task to grade: give --task with a built-in id or a task "
                                "folder")
    return list(specs.values())


# -- run -------------------------------------------------------------------------------------


def run(results: Path | str = DEFAULT_RESULTS, arms: Sequence[str] | None = None,
        submissions: Path | str | None = None, arm_name: str | None = None,
        tasks: Sequence[str] | None = None, seeds: int = DEFAULT_SEEDS,
        workers: int | None = None, executor: str | Executor = "local", progress: bool = True,
        command: str | None = None, warn: Warn = _stderr, measure: bool = False) -> Summary:
    """Store the artifacts of `arms` (built-in arm names) and of a folder of `submissions` as
    cells, then grade every replay of their plans not graded yet into `results`.

    Without `arms` and `submissions` the arms are gold, negatives and template. Cells of a
    built-in or submissions arm are rewritten for every task of the run (the arm is a function
    of the task or the folder); verdicts are only ever added."""
    if arm_name is not None and submissions is None:
        raise ArrivalBenchError("--arm-name names a folder of --submissions; give one")
    chosen = list(dict.fromkeys(arms or ()))
    for arm in chosen:
        if arm not in armlib.BUILTIN_ARMS:
            raise ArrivalBenchError(f"--arm {arm}: unknown; built-in arms: "
                                    f"{', '.join(armlib.BUILTIN_ARMS)} (a folder of scripts "
                                    "goes with --submissions)")
    if not chosen and submissions is None:
        chosen = list(DEFAULT_ARMS)
    _check_seeds(seeds)
    specs = resolve_tasks(tasks)
    artifacts = [a for arm in chosen for a in armlib.builtin(arm, specs)]
    warnings: list[str] = []
    arm_names = list(chosen)
    if submissions is not None:
        folder = armlib.submissions(Path(submissions), specs, arm_name)
        for message in folder.warnings:
            warn(message)
        warnings += folder.warnings
        artifacts += folder.artifacts
        arm_names.append(folder.arm)

    pool = _executor(executor, workers)  # a missing extra is an error before anything is written
    with Store(results) as store:
        planned = _store_artifacts(store, arm_names, specs, artifacts)
        return _grade(store, planned, arm_names, [s.id for s in specs], seeds, pool, progress,
                      command, warnings, warn, measure)


def _check_seeds(seeds: int) -> None:
    if seeds < 1:
        raise ArrivalBenchError(f"--seeds {seeds}: give a whole number of at least 1")


def _store_artifacts(store: Store, arms: Sequence[str], specs: Sequence[TaskSpec],
                     artifacts: Sequence[armlib.Artifact]) -> list[_Planned]:
    by_cell: dict[tuple[str, str], list[armlib.Artifact]] = {}
    for artifact in artifacts:
        by_cell.setdefault((artifact.arm, artifact.spec.id), []).append(artifact)
    planned: list[_Planned] = []
    for spec in specs:
        source = armlib.task_source(spec)
        store.add_task(spec, source)
        for arm in arms:
            cells = []
            for artifact in by_cell.get((arm, spec.id), []):
                known = store.artifact_idioms(digest(artifact.sql))
                tags = known if known is not None else armlib.idioms(artifact.sql, spec)
                store.add_artifact(artifact.sql, tags)
                cell = Cell(arm, spec.id, spec.digest, artifact.replicate,
                            digest(artifact.sql), None, artifact.provenance)
                cells.append(cell)
                planned.append(_Planned(cell, spec, source))
            if cells or arm in armlib.BUILTIN_ARMS:
                store.replace_cells(arm, spec.id, cells)
    return planned


# -- grade_arms ------------------------------------------------------------------------------


def grade_arms(store_path: Path | str, arms: Sequence[str], tasks: Sequence[str] | None = None,
               seeds: int = DEFAULT_SEEDS, workers: int | None = None,
               executor: str | Executor = "local", progress: bool = True,
               warn: Warn = _stderr) -> Summary:
    """Grade every stored cell of `arms` whose replays are not all graded yet; returns the
    per-arm summary (the same as `run` prints).

    For model arms: store each artifact with `Store.add_artifact` and its cell with
    `Store.add_cell` (artifact NULL and a reason when the model produced no script), then call
    this. `tasks` restricts grading to these tasks (built-in ids or task folders); a cell's task
    is loaded from the `tasks` table when `Store.add_task` recorded it, else as the built-in id
    of the cell's `task`. A cell made for another version of its task (its `task_digest` is not
    the task's digest now) cannot be graded: it gets a warning and is left out. Options are
    those of `run`: seeds 0..seeds-1, `workers` processes (default: all cores), executor
    "local" or "ray", and a progress bar on standard error."""
    _check_seeds(seeds)
    wanted = None if tasks is None else {s.id for s in resolve_tasks(tasks)}
    warnings: list[str] = []

    def note(message: str) -> None:
        warnings.append(message)
        warn(message)

    pool = _executor(executor, workers)
    with Store(store_path) as store:
        known = store.tasks()
        by_id = {t.task: t for t in known.values()}
        loaded: dict[str, tuple[TaskSpec, str] | None] = {}
        planned: list[_Planned] = []
        task_ids: list[str] = []
        for cell in store.cells(list(arms)):
            if wanted is not None and cell.task not in wanted:
                continue
            if cell.task_digest not in loaded:
                stored = known.get(cell.task_digest) or by_id.get(cell.task)
                loaded[cell.task_digest] = _load_cell_task(cell, stored, note)
            found = loaded[cell.task_digest]
            if found is None:
                continue
            spec, source = found
            store.add_task(spec, source)
            planned.append(_Planned(cell, spec, source))
            task_ids += [] if spec.id in task_ids else [spec.id]
        if not planned:
            note(f"{store.path}: no cell of arm {', '.join(arms)} to grade")
        return _grade(store, planned, list(arms), task_ids, seeds, pool, progress, None,
                      warnings, warn)


def _load_cell_task(cell: Cell, stored: StoredTask | None, warn: Warn
                    ) -> tuple[TaskSpec, str] | None:
    source = stored.source if stored is not None else cell.task
    try:
        spec = load_spec(source)
    except ArrivalBenchError as exc:
        warn(f"cells of task {cell.task!r} cannot be graded: {exc}")
        return None
    if spec.digest != cell.task_digest:
        warn(f"cells of task {cell.task!r} were made for another version of it "
             f"({cell.task_digest[:15]}…, now {spec.digest[:15]}…); regenerate them")
        return None
    return spec, source


# -- the grading loop ------------------------------------------------------------------------


def _points(spec: TaskSpec, seeds: int) -> list[tuple[str, int]]:
    return [(p.schedule, p.seed) for p in plan(spec, seeds)]


def _executor(executor: str | Executor, workers: int | None) -> Executor:
    return executors.make(executor, workers) if isinstance(executor, str) else executor


def _grade(store: Store, planned: Sequence[_Planned], arms: Sequence[str], tasks: Sequence[str],
           seeds: int, pool: Executor, progress: bool, command: str | None,
           warnings: list[str], warn: Warn, measure: bool = False) -> Summary:
    """With `measure`, every replay graded also stores its cost (see `engine.cost`)."""
    graded_before = store.graded_keys()
    units: dict[Key, Unit] = {}
    scripts: dict[str, str] = {}
    for item in planned:
        artifact = item.cell.artifact
        if artifact is None:
            continue
        if artifact not in scripts:
            scripts[artifact] = store.artifact_sql(artifact)
        for kind, seed in _points(item.spec, seeds):
            unit = Unit(item.source, item.spec.digest, artifact, scripts[artifact], kind, seed,
                        measure)
            units.setdefault(unit_key(unit), unit)
    pending = [u for k, u in units.items() if k not in graded_before]
    pending.sort(key=lambda u: (u.task, u.artifact, u.schedule, u.seed))
    skipped = len(units) - len(pending)

    run_id = store.start_run(pool.name, pool.workers, seeds, arms, tasks, command)
    graded = 0
    start = time.perf_counter()

    with render.progress(len(pending), enabled=progress, skipped=skipped) as advance, \
            _stop_on_signals() as stop:
        def on_results(batch: list[tuple[Unit, Result]]) -> None:
            nonlocal graded
            if batch:
                graded += store.add_verdicts([r.graded() for _u, r in batch], run_id)
            for _unit, result in batch:
                advance(result.verdict.verdict)
            if stop.requested:  # here, between writes, never inside one
                raise KeyboardInterrupt

        try:
            pool.run(pending, on_results)
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            store.finish_run(run_id, "interrupted" if interrupted else "failed", graded, skipped)
            if interrupted:
                warn(f"interrupted: {graded} verdicts of this run are stored in {store.path}; "
                     "run the same command again to resume")
            raise
    store.finish_run(run_id, "finished", graded, skipped)
    stats = getattr(pool, "stats", None)
    deaths = getattr(stats, "deaths", 0)
    if deaths:
        causes = Counter(getattr(stats, "causes", []))
        message = (f"{deaths} replays killed their worker "
                   f"({', '.join(f'{c}: {n}' for c, n in sorted(causes.items()))}); each is an "
                   "ERROR verdict")
        warnings.append(message)
        warn(message)
    return Summary(store.path, run_id, pool.name, pool.workers, seeds,
                   _summarise(store, planned, arms, seeds), len(units), graded, skipped, deaths,
                   time.perf_counter() - start, warnings)


@dataclass
class _Stop:
    requested: bool = False


@contextmanager
def _stop_on_signals() -> Iterator[_Stop]:
    """Ctrl-C and SIGTERM (a scheduler's or `kill`'s polite stop) only ask the run to stop: it
    stops at the next result, after storing what arrived, so that no write to the results file
    is cut in the middle (DuckDB turns a signal during a statement into an error of its own).
    A second signal stops at once."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def request(signum: int, frame: object) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True

    previous = {s: signal.signal(s, request) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _summarise(store: Store, planned: Sequence[_Planned], arms: Sequence[str], seeds: int
               ) -> list[ArmSummary]:
    kinds = store.verdict_kinds()
    versions = current_versions()
    out = []
    for arm in arms:
        cells = [p for p in planned if p.cell.arm == arm]
        scripts = snapshot = hazard = silent = crash = control = ungraded = 0
        tally: Counter[str] = Counter()
        for item in cells:
            if item.cell.artifact is None:
                continue
            scripts += 1
            got: dict[str, list[str]] = {}
            for kind, seed in _points(item.spec, seeds):
                key = (item.spec.digest, kind, seed, item.cell.artifact, *versions)
                verdict = kinds.get(key)
                if verdict is None:
                    ungraded += 1
                    continue
                tally[verdict] += 1
                got.setdefault(kind, []).append(verdict)
            if got.get("snapshot") != ["PASS"]:
                continue
            snapshot += 1
            hazards = [v for k in item.spec.hazards for v in got.get(k, [])]
            fails, errors = "FAIL" in hazards, "ERROR" in hazards
            hazard += fails or errors
            silent += fails
            crash += errors
            control += any(v != "PASS" for k in CONTROLS[1:] for v in got.get(k, []))
        out.append(ArmSummary(arm, len(cells), scripts, snapshot, hazard, silent, crash, control,
                              ungraded, {k: tally[k] for k in VERDICTS}))
    return out


# -- regrade ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    key: Key
    task: str
    stored: str
    now: str


@dataclass(frozen=True)
class RegradeReport:
    results: Path
    stored: int  # verdicts in the file
    checked: int  # verdicts re-run
    mismatches: list[Mismatch]
    skipped: int  # verdicts this installation cannot reproduce (other versions, changed tasks)
    seconds: float
    keys: list[Key] = field(default_factory=list)  # the keys re-run, in key order
    warnings: list[str] = field(default_factory=list)


def regrade(results: Path | str = DEFAULT_RESULTS, sample: int | None = None,
            workers: int | None = None, executor: str | Executor = "local",
            progress: bool = True, warn: Warn = _stderr) -> RegradeReport:
    """Re-run stored replays and compare the verdict bytes with the stored ones.

    Every stored verdict of this installation's DuckDB and harness versions is re-run, or, with
    `sample`, that many of them drawn with a fixed seed (the same sample for the same file).
    Verdicts of other versions, and of tasks whose files changed since, cannot be reproduced
    here: they are counted as skipped, with a warning. The file is opened read-only."""
    if sample is not None and sample < 1:
        raise ArrivalBenchError(f"--sample {sample}: give a whole number of at least 1")
    warnings: list[str] = []

    def note(message: str) -> None:
        warnings.append(message)
        warn(message)

    pool = _executor(executor, workers)
    start = time.perf_counter()
    with Store(results, read_only=True) as store:
        path = store.path
        stored = store.verdicts()
        tasks = store.tasks()
        versions = current_versions()
        current = [v for v in stored if v.key[4:] == versions]
        other = Counter(v.key[4:] for v in stored if v.key[4:] != versions)
        for (engine, harness), count in sorted(other.items()):
            note(f"{count} verdicts were graded by duckdb {engine} / arrivalbench {harness}, "
                 f"not this installation's {versions[0]} / {versions[1]}; not regraded")
        specs: dict[str, tuple[TaskSpec, str] | None] = {}
        candidates = []
        by_id = {t.task: t for t in tasks.values()}
        for v in current:
            if v.key[0] not in specs:
                task = tasks.get(v.key[0]) or by_id.get(v.task)
                cell = Cell("", v.task, v.key[0], 0, None)
                specs[v.key[0]] = _load_cell_task(cell, task, note)
            if specs[v.key[0]] is not None:
                candidates.append(v)
        if sample is not None and sample < len(candidates):
            candidates = sorted(random.Random(REGRADE_SEED).sample(candidates, sample),
                                key=lambda v: v.key)
        scripts = {a: store.artifact_sql(a) for a in sorted({v.key[3] for v in candidates})}
    units = []
    for v in candidates:
        found = specs[v.key[0]]
        assert found is not None
        spec, source = found
        units.append(Unit(source, spec.digest, v.key[3], scripts[v.key[3]], v.key[1], v.key[2]))
    by_key = {v.key: v for v in candidates}
    mismatches: list[Mismatch] = []
    with render.progress(len(units), enabled=progress, label="regrading") as advance:
        def on_results(batch: list[tuple[Unit, Result]]) -> None:
            for unit, result in batch:
                old = by_key[unit_key(unit)]
                now = result.verdict.json()
                if now != old.record:
                    mismatches.append(Mismatch(old.key, old.task, old.record, now))
                advance(result.verdict.verdict)

        pool.run(units, on_results)
    mismatches.sort(key=lambda m: m.key)
    skipped = len(stored) - len([v for v in current if specs.get(v.key[0]) is not None])
    return RegradeReport(path, len(stored), len(units), mismatches, skipped,
                         time.perf_counter() - start, [v.key for v in candidates], warnings)


# -- terminal output -------------------------------------------------------------------------

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
