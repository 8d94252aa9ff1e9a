"""Re-running stored replays and comparing the verdict bytes with the stored ones: the check
that a results file is reproducible on this installation."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from arrivalbench import render
from arrivalbench.core.artifacts import ArtifactRef
from arrivalbench.core.engine import EngineName
from arrivalbench.core.grading import GradeOptions
from arrivalbench.core.lateness import from_key
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import ArrivalBenchError, ParameterError
from arrivalbench.study.executors import Executor, Result, Unit
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
    record: str = "final"  # which of the key's records: the final table's, or every-batch


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


def regrade(results: Path | str = DEFAULT_RESULTS, *, sample: int | None = None,
            workers: int | None = None, executor: str | Executor = "local",
            progress: bool = True, warn: Warn = stderr_warning) -> RegradeReport:
    """Re-run stored replays and compare the verdict bytes with the stored ones.

    Every stored verdict of this installation's engine and harness versions is re-run on the
    engine it names (DuckDB's on DuckDB, PostgreSQL's on PostgreSQL), or, with
    `sample`, that many of them drawn with a fixed seed (the same sample for the same file).
    Verdicts of other versions, and of tasks whose files changed since, cannot be reproduced
    here: they are counted as skipped, with a warning. The file is opened read-only."""
    if sample is not None and sample < 1:
        raise ParameterError("sample", sample, "give a whole number of at least 1")
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
        candidates = [v for v in current if specs[v.key.task_digest] is not None]
        refs = _artifacts(store, candidates, note)
        reproducible = [v for v in candidates if v.key.artifact in refs]
        candidates = reproducible
        if sample is not None and sample < len(candidates):
            candidates = sorted(random.Random(SAMPLE_SEED).sample(candidates, sample),
                                key=lambda v: v.key)
        marked = store.nondeterministic()
    units = [_unit(v, specs, refs) for v in candidates]
    found = _rerun(pool, units, candidates, progress)
    chance = [m for m in found if (m.key.task_digest, m.key.artifact) in marked]
    mismatches = [m for m in found if (m.key.task_digest, m.key.artifact) not in marked]
    skipped = len(stored) - len(reproducible)
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
    other = Counter((v.engine, v.key.versions) for v in stored
                    if versions[v.engine] not in (None, v.key.versions))
    for (engine, (version, harness)), count in sorted(other.items()):
        mine = versions[engine]
        assert mine is not None
        note(f"{count} verdicts were graded by {engine} {version} / arrivalbench {harness}, "
             f"not this installation's {mine[0]} / {mine[1]}; not regraded")
    return [v for v in stored if versions[v.engine] == v.key.versions]


def _tasks(store: Store, verdicts: list[StoredVerdict], note: Warn
           ) -> dict[str, tuple[TaskSpec, str] | None]:
    """The task (and its source) of each task digest, or None where it cannot be loaded as it
    was (a warning says why)."""
    tasks = store.tasks()
    by_id = {t.task: t for t in tasks.values()}
    specs: dict[str, tuple[TaskSpec, str] | None] = {}
    for v in verdicts:
        digest = v.key.task_digest
        if digest not in specs:
            task = tasks.get(digest) or by_id.get(v.task)
            specs[digest] = load_cell_task(Cell("", v.task, digest, 0, None), task, note)
    return specs


def _artifacts(store: Store, verdicts: list[StoredVerdict], note: Warn
               ) -> dict[str, ArtifactRef]:
    """The stored description of each artifact of `verdicts`; a warning for each that cannot
    be rebuilt from the file (its verdicts are skipped)."""
    refs: dict[str, ArtifactRef] = {}
    for artifact in sorted({v.key.artifact for v in verdicts}):
        try:
            refs[artifact] = store.artifact(artifact)
        except ArrivalBenchError as exc:
            count = sum(v.key.artifact == artifact for v in verdicts)
            note(f"{count} verdicts not regraded: {exc}")
    return refs


def _unit(v: StoredVerdict, specs: dict[str, tuple[TaskSpec, str] | None],
          refs: dict[str, ArtifactRef]) -> Unit:
    """The unit that grades `v` again: the final table's verdict, and the every-batch
    check's too where it was stored."""
    found = specs[v.key.task_digest]
    assert found is not None
    spec, source = found
    return Unit(source, spec.digest, refs[v.key.artifact], v.key.schedule, v.key.seed,
                GradeOptions(v.engine, every_batch=v.every_batch is not None,
                             landing=v.key.landing,  # type: ignore[arg-type]
                             allowance=from_key(v.key.allowance)))


def _rerun(pool: Executor, units: list[Unit], stored: list[StoredVerdict], progress: bool
           ) -> list[Mismatch]:
    """Grade `units` again and keep every verdict whose bytes differ from the stored ones."""
    by_key = {v.key: v for v in stored}
    mismatches: list[Mismatch] = []
    with render.progress(len(units), enabled=progress, label="regrading") as advance:
        def on_results(batch: list[tuple[Unit, Result]]) -> None:
            for unit, result in batch:
                old = by_key[unit.key()]
                replayed = result.graded()
                now = replayed.verdict.json()
                if now != old.record:
                    mismatches.append(Mismatch(old.key, old.task, old.record, now))
                checked = replayed.every_batch
                if old.every_batch is not None and checked is not None and \
                        checked.json() != old.every_batch:
                    mismatches.append(Mismatch(old.key, old.task, old.every_batch,
                                               checked.json(), "every-batch"))
                advance(result.verdict.status)

        pool.run(units, on_results)
    return sorted(mismatches, key=lambda m: m.key)
