"""Executors: where replays run. The parent process plans, dispatches and stores; workers only
compute, so every verdict is written by one process in small transactions as it arrives.

A work unit is one replay: (task, artifact, schedule, seed, options), in `unit`; the artifact
travels as its description (`core.artifacts.ArtifactRef`), content and all. Its verdict is
a pure function of the unit, so the bytes are the same whatever the executor, the worker count
or the order of work. Workers keep each task's log, reference result and schedules cached
between units, and the executors hand a worker the units of the task it already holds for as
long as there are any, so a log is loaded about once per worker per task. An executor asks no
more of a unit than `Job` says, so other work runs on the same machinery with a `work`
function of its own (the gate grades one artifact of a task per unit).

- `local.LocalExecutor`: a pool of spawned worker processes; a dying or overdue worker costs
  its one replay an ERROR verdict and is replaced.
- `ray_tasks.RayExecutor` (the `ray` extra): units in small per-task chunks as Ray tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from arrivalbench.errors import UnknownName
from arrivalbench.study.executors.local import LocalExecutor
from arrivalbench.study.executors.ray_tasks import RayExecutor
from arrivalbench.study.executors.unit import (
    TICK,
    Answer,
    HarnessError,
    J,
    Job,
    OnResults,
    ProtocolError,
    Result,
    Stats,
    Unit,
    Work,
    compute,
    death_cause,
    peak_rss,
    raised,
    unit_spec,
)

__all__ = ["EXECUTORS", "TICK", "Answer", "Executor", "HarnessError", "Job", "LocalExecutor",
           "OnResults", "ProtocolError", "RayExecutor", "Result", "Stats", "Unit", "Work",
           "compute", "death_cause", "make", "peak_rss", "raised", "unit_spec"]

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    name: str
    workers: int

    def run(self, units: Sequence[J], on_results: OnResults[J]) -> None:
        """Grade every unit, calling `on_results` in this process as results arrive."""


def make(name: str, workers: int | None = None, work: Work = compute) -> Executor:
    if name == "local":
        return LocalExecutor(workers, work)
    if name == "ray":
        executor = RayExecutor(workers, work)
        executor._ray()  # the extra is installed, or a one-line error now
        return executor
    raise UnknownName("executor", name, EXECUTORS)
