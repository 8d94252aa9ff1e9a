"""One SQL script graded on one task in worker processes, never in the grader's own.

In the grader's process the engine's bounds would hold but not the process's: a single huge
value (`repeat('x', 2e9)`) allocated outside DuckDB's buffer manager takes a process past 4 GB.
Here every replay runs in the local executor's workers, whose data is bounded and where a dying
or overdue replay costs one ERROR verdict, as under `run` and the gate. A unit's verdict does
not depend on where it runs, so the bytes are those of `core.grading` in-process.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from arrivalbench.core import plans
from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.containment import limit_self
from arrivalbench.core.engine import EngineName, Limits, backend
from arrivalbench.core.grading import Point, grade_plan
from arrivalbench.core.task import TaskSpec, source_of
from arrivalbench.core.values import JSON
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import WorkerError
from arrivalbench.study.executors import (
    DIED,
    LocalExecutor,
    ProtocolError,
    Result,
    Unit,
    peak_rss,
    unit_spec,
)
from arrivalbench.study.executors.local import WORKER_DATA
from arrivalbench.study.executors.unit import MARGIN

T = TypeVar("T")

OnGraded = Callable[[int, Result, "dict[str, JSON] | None"], None]


def grade_points(spec: TaskSpec, artifact: Artifact, points: Sequence[Point], limits: Limits,
                 every_batch: bool, measure: bool, engine: EngineName, on_graded: OnGraded,
                 workers: int | None = None) -> None:
    """Grade `artifact` at each point, one unit per point, calling `on_graded(index, result,
    nondeterministic)` in this process as results arrive (in any order). A dbt project is
    loaded again in each worker (a parse there), and its replays share the workers as a
    script's do."""
    from arrivalbench.core.artifacts.dbt import DbtProject

    task = source_of(spec)
    dbt = artifact if isinstance(artifact, DbtProject) else None
    units = [Unit(task, spec.digest, artifact.digest, artifact.text, p.schedule, p.seed,
                  None if dbt is None else str(dbt.path), measure, engine, limits, every_batch,
                  None if dbt is None else dbt.model, () if dbt is None else dbt.passed_env)
             for p in points]
    index = {id(unit): i for i, unit in enumerate(units)}

    def arrived(batch: list[tuple[Unit, Any]]) -> None:
        for unit, result in batch:
            found = None if result.nondeterministic is None else \
                json.loads(result.nondeterministic)
            on_graded(index[id(unit)], result, found)

    LocalExecutor(min(workers or os.cpu_count() or 1, len(units))).run(units, arrived)


@dataclass(frozen=True)
class PlanUnit:
    """One explicit plan to replay: the job of `grade --plan`."""

    task: str
    task_digest: str
    artifact: str
    script: str
    plan: str  # the plan file's path, read by the worker as by this process
    every_batch: bool
    engine: EngineName
    limits: Limits

    def where(self) -> str:
        return f"grading {self.task} on plan {self.plan}"

    def seconds(self) -> float:
        return self.limits.replay_seconds + MARGIN

    def died(self) -> Result:
        return self._stopped("run", DIED)

    def timed_out(self) -> Result:
        from arrivalbench.study.executors import TIMED_OUT

        return self._stopped("timeout", TIMED_OUT)

    def _stopped(self, phase: str, message: str) -> Result:
        spec = unit_spec(self.task, self.task_digest)
        sched = plans.load(spec, Path(self.plan))
        detail: dict[str, JSON] = {"phase": phase, "batch": None, "statement": None,
                                   "message": message}
        engine = backend(self.engine)
        return Result(Verdict(spec.id, spec.digest, sched.kind, sched.seed, sched.digest,
                              self.artifact, "ERROR", detail, engine.NAME, engine.version()),
                      0.0, 0.0)

    def check(self, result: Result) -> None:
        v = result.verdict
        if (v.task_digest, v.artifact) != (self.task_digest, self.artifact):
            raise ProtocolError(f"a worker answered task {v.task_digest[:15]}… artifact "
                                f"{v.artifact[:15]}… for {self.where()}")


def replay_plan(unit: PlanUnit) -> Result:
    """The work of a `PlanUnit`, in a worker."""
    spec = unit_spec(unit.task, unit.task_digest)
    verdict = grade_plan(spec, unit.script, Path(unit.plan), unit.limits, unit.every_batch,
                         engine_name=unit.engine)
    return Result(verdict, 0.0, 0.0, peak_rss())


def grade_plan_file(spec: TaskSpec, artifact: str, script: str, plan: Path,
                    limits: Limits, every_batch: bool, engine: EngineName) -> Verdict:
    """`core.grading.grade_plan` in a worker process. The plan is checked here first, so that
    a bad plan is a one-line error before any worker starts."""
    plans.load(spec, plan)
    unit = PlanUnit(source_of(spec), spec.digest, artifact, script, str(plan), every_batch,
                    engine, limits)
    verdicts: list[Verdict] = []
    LocalExecutor(1, replay_plan).run(
        [unit], lambda batch: verdicts.extend(r.verdict for _, r in batch))
    return verdicts[0]


def bounded(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a spawned child process under the workers' data bound, for work that
    replays an artifact many times in a row (`explain`'s shrinking): what the child raises is
    raised here, with its traceback."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context, initializer=limit_self,
                             initargs=(WORKER_DATA, None)) as pool:
        try:
            return pool.submit(fn, *args).result()
        except BrokenProcessPool:
            raise WorkerError(f"the process running {fn.__name__} died (a crash or a kill)",
                              "") from None
