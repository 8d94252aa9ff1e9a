"""Re-running stored replays and comparing the verdict bytes with the stored ones: the check
that a results file is reproducible on this installation."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from arrivalbench import render
from arrivalbench.core.engine import EngineName
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.executors import Executor, Result, Unit, unit_key
from arrivalbench.study.grid import Warn, load_cell_task, make_executor, stderr_warning
from arrivalbench.study.keys import Key, current_versions
from arrivalbench.study.store import DEFAULT_RESULTS, Cell, Store, StoredVerdict

SAMPLE_SEED = 20240229  # fixes the sample `regrade(sample=N)` draws


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
    # Differences in artifacts marked nondeterministic by `run`: expected, kept apart.
    nondeterministic: list[Mismatch] = field(default_factory=list)


def regrade(results: Path | str = DEFAULT_RESULTS, sample: int | None = None,
            workers: int | None = None, executor: str | Executor = "local",
            progress: bool = True, warn: Warn = stderr_warning) -> RegradeReport:
    """Re-run stored replays and compare the verdict bytes with the stored ones.

    Every stored verdict of this installation's engine and harness versions is re-run on the
    engine it names (DuckDB's on DuckDB, PostgreSQL's on PostgreSQL), or, with
    `sample`, that many of them drawn with a fixed seed (the same sample for the same file).
    Verdicts of other versions, and of tasks whose files changed since, cannot be reproduced
    here: they are counted as skipped, with a warning. The file is opened read-only."""
    if sample is not None and sample < 1:
        raise ArrivalBenchError(f"sample {sample}: give a whole number of at least 1")
    warnings: list[str] = []

    def note(message: str) -> None:
        warnings.append(message)
        warn(message)

    pool = make_executor(executor, workers)
    start = time.perf_counter()
    with Store(results, read_only=True) as store:
        path = store.path
        stored = store.verdicts()
        current = _this_installation(stored, note)
        specs = _tasks(store, current, note)
        candidates = [v for v in current if specs[v.key[0]] is not None]
        if sample is not None and sample < len(candidates):
            candidates = sorted(random.Random(SAMPLE_SEED).sample(candidates, sample),
                                key=lambda v: v.key)
        scripts = {a: store.artifact_sql(a) for a in sorted({v.key[3] for v in candidates})}
        # A dbt project's stored text is the SQL it compiled: replay the project itself.
        projects = {c.artifact: str(c.provenance["file"]) for c in store.cells()
                    if c.artifact is not None and c.provenance.get("dbt_project")}
        marked = store.nondeterministic()
    units = [_unit(v, specs, scripts, projects) for v in candidates]
    found = _rerun(pool, units, candidates, progress)
    chance = [m for m in found if (m.key[0], m.key[3]) in marked]
    mismatches = [m for m in found if (m.key[0], m.key[3]) not in marked]
    skipped = len(stored) - len([v for v in current if specs.get(v.key[0]) is not None])
    return RegradeReport(path, len(stored), len(units), mismatches, skipped,
                         time.perf_counter() - start, [v.key for v in candidates], warnings,
                         chance)


def _this_installation(stored: list[StoredVerdict], note: Warn) -> list[StoredVerdict]:
    """The verdicts this installation's engine and harness versions can reproduce, each on the
    engine it names; a warning for each other version found, and for an engine that cannot
    run here (its extra not installed)."""
    versions: dict[EngineName, tuple[str, str] | None] = {}
    for engine in sorted({v.engine for v in stored}):
        try:
            versions[engine] = current_versions(engine)
        except ArrivalBenchError as exc:
            versions[engine] = None
            note(f"{sum(v.engine == engine for v in stored)} verdicts were graded on {engine}, "
                 f"which cannot run here ({exc}); not regraded")
    other = Counter((v.engine, v.key[4:]) for v in stored
                    if versions[v.engine] not in (None, v.key[4:]))
    for (engine, (version, harness)), count in sorted(other.items()):
        mine = versions[engine]
        assert mine is not None
        note(f"{count} verdicts were graded by {engine} {version} / arrivalbench {harness}, "
             f"not this installation's {mine[0]} / {mine[1]}; not regraded")
    return [v for v in stored if versions[v.engine] == v.key[4:]]


def _tasks(store: Store, verdicts: list[StoredVerdict], note: Warn
           ) -> dict[str, tuple[TaskSpec, str] | None]:
    """The task (and its source) of each task digest, or None where it cannot be loaded as it
    was (a warning says why)."""
    tasks = store.tasks()
    by_id = {t.task: t for t in tasks.values()}
    specs: dict[str, tuple[TaskSpec, str] | None] = {}
    for v in verdicts:
        if v.key[0] not in specs:
            task = tasks.get(v.key[0]) or by_id.get(v.task)
            specs[v.key[0]] = load_cell_task(Cell("", v.task, v.key[0], 0, None), task, note)
    return specs


def _unit(v: StoredVerdict, specs: dict[str, tuple[TaskSpec, str] | None],
          scripts: dict[str, str], projects: dict[str, str]) -> Unit:
    found = specs[v.key[0]]
    assert found is not None
    spec, source = found
    return Unit(source, spec.digest, v.key[3], scripts[v.key[3]], v.key[1], v.key[2],
                projects.get(v.key[3]), engine=v.engine)


def _rerun(pool: Executor, units: list[Unit], stored: list[StoredVerdict], progress: bool
           ) -> list[Mismatch]:
    """Grade `units` again and keep every verdict whose bytes differ from the stored ones."""
    by_key = {v.key: v for v in stored}
    mismatches: list[Mismatch] = []
    with render.progress(len(units), enabled=progress, label="regrading") as advance:
        def on_results(batch: list[tuple[Unit, Result]]) -> None:
            for unit, result in batch:
                old = by_key[unit_key(unit)]
                now = result.verdict.json()
                if now != old.record:
                    mismatches.append(Mismatch(old.key, old.task, old.record, now))
                advance(result.verdict.status)

        pool.run(units, on_results)
    return sorted(mismatches, key=lambda m: m.key)
