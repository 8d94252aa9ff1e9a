"""Grading at scale: cells x schedules x seeds into one results file.

A cell (arm, task, replicate) holds one artifact; its plan is `snapshot` once, then both
controls and every hazard the task declares for seeds 0..N-1. Each replay of the plan is one
work unit, keyed by (task digest, schedule, seed, artifact digest, engine version, harness
version); a run grades on one engine (DuckDB by default), and the built-in arms then use the
task's pipelines for that engine. A unit whose key is stored is never graded again, so the same
command after a crash or Ctrl-C resumes, a second run with more arms adds to the file, and an
artifact that two arms share is graded once per engine.

Entry points:
- `run`: the `arrivalbench run` command (built-in arms and a folder of submissions).
- `grade_arms`: grade the stored cells of some arms (model arms, after they are generated).

Re-running stored replays is `arrivalbench.study.regrade`; the summary table,
`arrivalbench.cli.summary`.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from arrivalbench import render
from arrivalbench.core.artifacts import ArtifactRef
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, check_engine
from arrivalbench.core.engine.cost import check_measurable
from arrivalbench.core.grading import DEFAULT_SEEDS, GradeOptions, check_seeds, plan
from arrivalbench.core.lateness import key_text
from arrivalbench.core.task import (
    Landing,
    TaskSpec,
    builtin_ids,
    load_spec,
    load_specs,
    source_of,
)
from arrivalbench.core.verdict import STATUSES
from arrivalbench.errors import WARNING, ArrivalBenchError, ParameterError, UnknownName, mention
from arrivalbench.study import arms as armlib
from arrivalbench.study import executors
from arrivalbench.study.cells import classify
from arrivalbench.study.executors import Executor, Result, Unit
from arrivalbench.study.keys import Key, current_versions
from arrivalbench.study.store import DEFAULT_RESULTS, Cell, Store, StoredTask
from arrivalbench.study.submissions import submissions as submitted
from arrivalbench.words import count

DEFAULT_ARMS = armlib.BUILTIN_ARMS

Warn = Callable[[str], None]


def stderr_warning(message: str) -> None:
    print(f"{WARNING}{message}", file=sys.stderr)


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
    engine: EngineName = DEFAULT_ENGINE


@dataclass(frozen=True)
class _Planned:
    cell: Cell
    spec: TaskSpec
    source: str


# -- tasks -----------------------------------------------------------------------------------


def resolve_tasks(tasks: Sequence[str] | None) -> list[TaskSpec]:
    """Built-in ids or task folders, each once, in the order given (default: the built-in
    tasks of the core tier, the paper's study)."""
    specs = load_specs(list(tasks) if tasks else builtin_ids("core"))
    if not specs:
        raise ArrivalBenchError("no task to grade: give a built-in task id or a task folder")
    return specs


# -- run -------------------------------------------------------------------------------------


def run(results: Path | str = DEFAULT_RESULTS, arms: Sequence[str] | None = None, *,
        submissions: Path | str | None = None, arm_name: str | None = None,
        tasks: Sequence[str] | None = None, seeds: int = DEFAULT_SEEDS,
        workers: int | None = None, executor: str | Executor = "local", progress: bool = True,
        command: str | None = None, warn: Warn = stderr_warning,
        allow_unmatched: bool = False, measure: bool = False, every_batch: bool = False,
        engine: EngineName = DEFAULT_ENGINE, landing: Landing = "batch") -> Summary:
    """Store the artifacts of `arms` (built-in arm names) and of a folder of `submissions` as
    cells, then grade every replay of their plans not graded yet into `results`.

    Without `arms` and `submissions` the arms are gold, negatives and template. Cells of a
    built-in or submissions arm are rewritten for every task of the run (the arm is a function
    of the task or the folder); verdicts are only ever added. Every artifact runs on `engine`;
    a task without pipelines for it in an arm that needs them (gold, negatives) stops the run
    before anything is written. With `measure` every replay's cost is stored too; with
    `every_batch` the every-batch check's verdict beside the final table's (a replay stored
    without it is graded again for it). `landing` says how each batch reaches the sources (a
    verdict of one landing is never one of the other)."""
    engine = check_engine(engine)
    if measure:
        check_measurable(engine)
    if arm_name is not None and submissions is None:
        raise ParameterError("arm_name", arm_name, "names a folder of submissions; give "
                             f"{mention('submissions')} too")
    chosen = list(dict.fromkeys(arms or ()))
    for arm in chosen:
        if arm not in armlib.BUILTIN_ARMS:
            raise UnknownName("arms", arm, armlib.BUILTIN_ARMS,
                              problem="not a built-in arm (a folder of scripts is an arm of "
                                      "submissions)")
    if not chosen and submissions is None:
        chosen = list(DEFAULT_ARMS)
    check_seeds(seeds)
    specs = resolve_tasks(tasks)
    artifacts = [a for arm in chosen for a in armlib.builtin(arm, specs, engine)]
    warnings = [f"{a.arm}: {a.spec.id}: {a.reason}" for a in artifacts if a.ref is None]
    for message in warnings:
        warn(message)
    arm_names = list(chosen)
    if submissions is not None:
        folder = submitted(Path(submissions), specs, arm_name=arm_name,
                           allow_unmatched=allow_unmatched)
        for message in folder.warnings:
            warn(message)
        warnings += folder.warnings
        artifacts += folder.artifacts
        arm_names.append(folder.arm)

    pool = make_executor(executor, workers)  # a missing extra fails before anything is written
    current_versions(engine)  # so does an engine that cannot say its version
    with Store(results) as store:
        planned = _store_artifacts(store, arm_names, specs, artifacts, engine)
        return _grade(store, planned, arm_names, [s.id for s in specs], seeds=seeds, pool=pool,
                      progress=progress, command=command, warnings=warnings, warn=warn,
                      options=GradeOptions(engine, measure=measure, every_batch=every_batch,
                                           landing=landing))


def _store_artifacts(store: Store, arms: Sequence[str], specs: Sequence[TaskSpec],
                     artifacts: Sequence[armlib.Artifact], engine: EngineName = DEFAULT_ENGINE
                     ) -> list[_Planned]:
    by_cell: dict[tuple[str, str], list[armlib.Artifact]] = {}
    for artifact in artifacts:
        by_cell.setdefault((artifact.arm, artifact.spec.id), []).append(artifact)
    planned: list[_Planned] = []
    for spec in specs:
        source = source_of(spec)
        store.add_task(spec, source)
        for arm in arms:
            cells = []
            for artifact in by_cell.get((arm, spec.id), []):
                ref = artifact.ref
                if ref is None:
                    cell = Cell(arm, spec.id, spec.digest, artifact.replicate, None,
                                artifact.reason, artifact.provenance, engine)
                    cells.append(cell)
                    planned.append(_Planned(cell, spec, source))
                    continue
                known = store.artifact_idioms(ref.digest)
                store.add_artifact(ref, armlib.idioms(ref.text, spec) if known is None else known)
                cell = Cell(arm, spec.id, spec.digest, artifact.replicate, ref.digest, None,
                            artifact.provenance, engine)
                cells.append(cell)
                planned.append(_Planned(cell, spec, source))
            if cells or arm in armlib.BUILTIN_ARMS:
                store.replace_cells(arm, spec.id, cells, engine)
    return planned


# -- grade_arms ------------------------------------------------------------------------------


def grade_arms(store_path: Path | str, arms: Sequence[str], tasks: Sequence[str] | None = None,
               seeds: int = DEFAULT_SEEDS, workers: int | None = None,
               executor: str | Executor = "local", progress: bool = True,
               warn: Warn = stderr_warning, engine: EngineName = DEFAULT_ENGINE) -> Summary:
    """Grade every stored cell of `arms` whose replays are not all graded yet; returns the
    per-arm summary (the same as `run` prints).

    For model arms: store each artifact with `Store.add_artifact` and its cell with
    `Store.add_cell` (artifact NULL and a reason when the model produced no script), then call
    this. `tasks` restricts grading to these tasks (built-in ids or task folders); a cell's task
    is loaded from the `tasks` table when `Store.add_task` recorded it, else as the built-in id
    of the cell's `task`. A cell made for another version of its task (its `task_digest` is not
    the task's digest now) cannot be graded: it gets a warning and is left out. Options are
    those of `run`: seeds 0..seeds-1, `workers` processes (default: all cores), executor
    "local" or "ray", and a progress bar on standard error; every artifact runs on `engine`."""
    engine = check_engine(engine)
    check_seeds(seeds)
    wanted = None if tasks is None else {s.id for s in resolve_tasks(tasks)}
    warnings: list[str] = []

    def note(message: str) -> None:
        warnings.append(message)
        warn(message)

    pool = make_executor(executor, workers)
    current_versions(engine)
    with Store(store_path) as store:
        known = store.tasks()
        by_id = {t.task: t for t in known.values()}
        loaded: dict[str, tuple[TaskSpec, str] | None] = {}
        planned: list[_Planned] = []
        task_ids: list[str] = []
        for cell in store.cells(list(arms), engine):
            if wanted is not None and cell.task not in wanted:
                continue
            if cell.task_digest not in loaded:
                stored = known.get(cell.task_digest) or by_id.get(cell.task)
                loaded[cell.task_digest] = load_cell_task(cell, stored, note)
            found = loaded[cell.task_digest]
            if found is None:
                continue
            spec, source = found
            store.add_task(spec, source)
            planned.append(_Planned(cell, spec, source))
            task_ids += [] if spec.id in task_ids else [spec.id]
        if not planned:
            note(f"{store.path}: no cell of arm {', '.join(arms)} to grade")
        return _grade(store, planned, list(arms), task_ids, seeds=seeds, pool=pool,
                      progress=progress, command=None, warnings=warnings, warn=warn,
                      options=GradeOptions(engine))


def load_cell_task(cell: Cell, stored: StoredTask | None, warn: Warn
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


def make_executor(executor: str | Executor, workers: int | None) -> Executor:
    return executors.make(executor, workers) if isinstance(executor, str) else executor


def _grade(store: Store, planned: Sequence[_Planned], arms: Sequence[str], tasks: Sequence[str],
           *, seeds: int, pool: Executor, progress: bool, command: str | None,
           warnings: list[str], warn: Warn, options: GradeOptions) -> Summary:
    """Grade every replay of `planned` not graded yet under `options`, into `store`."""
    engine = options.engine
    graded_before = store.graded_keys(engine=engine, every_batch=options.every_batch)
    units: dict[Key, Unit] = {}
    refs: dict[str, ArtifactRef] = {}
    for item in planned:
        artifact = item.cell.artifact
        if artifact is None:
            continue
        if artifact not in refs:
            refs[artifact] = store.artifact(artifact)
        for kind, seed in _points(item.spec, seeds):
            unit = Unit(item.source, item.spec.digest, refs[artifact], kind, seed, options)
            units.setdefault(unit.key(), unit)
    pending = [u for k, u in units.items() if k not in graded_before]
    pending.sort(key=lambda u: (u.task, u.artifact.digest, u.schedule, u.seed))
    skipped = len(units) - len(pending)

    run_id = store.start_run(pool.name, pool.workers, seeds, arms, tasks, command, engine)
    graded = 0
    start = time.perf_counter()

    with render.progress(len(pending), enabled=progress, skipped=skipped) as advance, \
            _stop_on_signals() as stop:
        def on_results(batch: list[tuple[Unit, Result]]) -> None:
            nonlocal graded
            if batch:
                graded += store.add_verdicts([r.graded() for _u, r in batch], run_id)
            for _unit, result in batch:
                if result.nondeterministic is not None:
                    store.mark_nondeterministic(result.verdict, result.nondeterministic)
            for _unit, result in batch:
                advance(result.verdict.status)
            if stop.requested:  # here, between writes, never inside one
                raise KeyboardInterrupt

        try:
            pool.run(pending, on_results)
        except BaseException as exc:
            interrupted = isinstance(exc, KeyboardInterrupt)
            store.finish_run(run_id, "interrupted" if interrupted else "failed", graded, skipped)
            if interrupted:
                warn(f"interrupted: {count(graded, 'verdict')} of this run are stored in "
                     f"{store.path}; "
                     "run the same command again to resume")
            raise
    store.finish_run(run_id, "finished", graded, skipped)
    stats = getattr(pool, "stats", None)
    deaths = getattr(stats, "deaths", 0)
    if deaths:
        causes = Counter(getattr(stats, "causes", []))
        message = (f"{count(deaths, 'replay')} killed their worker "
                   f"({', '.join(f'{c}: {n}' for c, n in sorted(causes.items()))}); each is an "
                   "ERROR verdict")
        warnings.append(message)
        warn(message)
    return Summary(store.path, run_id, pool.name, pool.workers, seeds,
                   _summarise(store, planned, arms, seeds, options), len(units), graded, skipped,
                   deaths, time.perf_counter() - start, warnings, engine)


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


def _summarise(store: Store, planned: Sequence[_Planned], arms: Sequence[str], seeds: int,
               options: GradeOptions) -> list[ArmSummary]:
    kinds = store.verdict_kinds(options.engine)
    tail = (*current_versions(options.engine), options.landing, key_text(options.allowance))
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
                key = Key(item.spec.digest, kind, seed, item.cell.artifact, *tail)
                verdict = kinds.get(key)
                if verdict is None:
                    ungraded += 1
                    continue
                tally[verdict] += 1
                got.setdefault(kind, []).append(verdict)
            cls = classify(got, item.spec.hazards)
            if not cls.snapshot_pass:
                continue
            snapshot += 1
            hazard += cls.hazard_fail
            silent += cls.silent
            crash += cls.crash
            control += not cls.controls_pass
        out.append(ArmSummary(arm, len(cells), scripts, snapshot, hazard, silent, crash, control,
                              ungraded, {k: tally[k] for k in STATUSES}))
    return out
