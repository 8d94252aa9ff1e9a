"""One artifact graded on one task in worker processes, never in the grader's own.

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
from arrivalbench.core.artifacts import (
    TRAITS,
    ArtifactRef,
    kind_of,
    load,
    read,
    startup_seconds,
    traits,
)
from arrivalbench.core.containment import limit_self
from arrivalbench.core.engine import Failure, Limits, backend
from arrivalbench.core.grading import GradeOptions, Point, StopCause, judge, stopped
from arrivalbench.core.task import TaskSpec, load_spec, source_of
from arrivalbench.core.values import JSON
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import WorkerError
from arrivalbench.study.executors import (
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


def grade_points(spec: TaskSpec, artifact: ArtifactRef, points: Sequence[Point], *,
                 options: GradeOptions, on_graded: OnGraded, workers: int | None = None
                 ) -> None:
    """Grade `artifact` at each point, one unit per point, calling `on_graded(index, result,
    nondeterministic)` in this process as results arrive (in any order). Each worker loads
    the artifact from its description (a project is parsed there once)."""
    task = source_of(spec)
    units = [Unit(task, spec.digest, artifact, p.schedule, p.seed, options) for p in points]
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
    artifact: ArtifactRef
    plan: str  # the plan file's path, read by the worker as by this process
    options: GradeOptions

    def where(self) -> str:
        return f"grading {self.task} on plan {self.plan}"

    def seconds(self) -> float:
        limits = self.options.limits
        return limits.replay_seconds + startup_seconds(self.artifact, limits) + MARGIN

    def died(self) -> Result:
        return self._stopped("died")

    def timed_out(self) -> Result:
        return self._stopped("timed_out")

    def _stopped(self, cause: StopCause) -> Result:
        spec = unit_spec(self.task, self.task_digest)
        return Result(stopped(spec, self.artifact.digest, plans.load(spec, Path(self.plan)),
                              cause, options=self.options), 0.0, 0.0)

    def check(self, result: Result) -> None:
        v = result.verdict
        if (v.task_digest, v.artifact) != (self.task_digest, self.artifact.digest):
            raise ProtocolError(f"a worker answered task {v.task_digest[:15]}… artifact "
                                f"{v.artifact[:15]}… for {self.where()}")


def replay_plan(unit: PlanUnit) -> Result:
    """The work of a `PlanUnit`, in a worker."""
    spec = unit_spec(unit.task, unit.task_digest)
    artifact = load(unit.artifact, spec, limits=unit.options.limits)
    graded = judge(spec, artifact, plans.load(spec, Path(unit.plan)), options=unit.options,
                   plan=True)
    return Result(graded.verdict, 0.0, 0.0, peak_rss())


def grade_plan_file(spec: TaskSpec, artifact: ArtifactRef, plan: Path, *,
                    options: GradeOptions) -> Verdict:
    """The verdict of replaying the explicit plan in `plan`, in a worker process; the verdict
    is filed under the schedule and seed the plan names (`plan` and 0 when it names none). The
    plan is checked here first, against the artifact's statements where it counts them, so
    that a bad plan is a one-line error before any worker starts."""
    sched = plans.load(spec, plan)
    if traits(artifact).statements:
        try:
            count: int | None = len(backend(options.engine).split(artifact.text))
        except Failure:
            count = None  # the replay reports the parse error as its ERROR
        if count is not None:
            plans.check_statements(sched, count, str(plan))
    unit = PlanUnit(source_of(spec), spec.digest, artifact, str(plan), options)
    verdicts: list[Verdict] = []
    LocalExecutor(1, replay_plan).run(
        [unit], lambda batch: verdicts.extend(r.verdict for _, r in batch))
    return verdicts[0]


def describe(path: Path, spec: TaskSpec, *, models: Sequence[str] = (),
             passed_env: Sequence[str] = (), limits: Limits = Limits()) -> ArtifactRef:
    """The description of the artifact at `path` for `spec`. A kind whose loading runs code
    (a dbt project's parse and compile, whose SQL runs too) is read in a bounded child, like
    its replays; a script is only read."""
    kind = kind_of(path)
    if kind is not None and TRAITS[kind].loads:
        return bounded(_described, path, source_of(spec), tuple(models), tuple(passed_env),
                       limits)
    return read(path, spec, models=models, passed_env=passed_env, limits=limits).ref


def _described(path: Path, task: str, models: tuple[str, ...], passed_env: tuple[str, ...],
               limits: Limits) -> ArtifactRef:
    return read(path, load_spec(task), models=models, passed_env=passed_env, limits=limits).ref


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
