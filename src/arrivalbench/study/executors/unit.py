"""The unit of work of every executor: one replay to grade, what a worker sends back, and
the rules both sides keep (a result answers its unit, a worker's error is bad input or a bug).
"""

from __future__ import annotations

import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Limits, Phase, backend
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.grading import Point, grade_point, schedule
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.values import canonical_json
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError, WorkerError
from arrivalbench.study.keys import Key, current_versions, key_of
from arrivalbench.study.store import Graded


@dataclass(frozen=True)
class Unit:
    """One replay to grade. `task` is how a worker loads the task (a built-in id or a folder);
    `task_digest` is what it must find there."""

    task: str
    task_digest: str
    artifact: str
    script: str
    schedule: str
    seed: int
    project: str | None = None  # a dbt project folder; `script` is then the SQL it compiled
    measure: bool = False  # also measure the replay's cost
    engine: EngineName = DEFAULT_ENGINE  # the engine the artifact runs on
    limits: Limits = Limits()  # not part of the verdict's key: the harness's configuration
    every_batch: bool = False  # also compare the target after every completed run
    select: str | None = None  # the dbt model graded as the target (default: named after it)
    passed_env: tuple[str, ...] = ()  # variables of the grader's environment the project reads

    def where(self) -> str:
        return f"grading {self.task} {self.schedule} seed {self.seed}"

    def died(self) -> Result:
        return stopped(self, "run", DIED)

    def timed_out(self) -> Result:
        return stopped(self, "timeout", TIMED_OUT)

    def seconds(self) -> float:
        """How long the unit's worker may take before the parent kills it: each replay's
        bound (a snapshot is replayed twice), a dbt project's load, and a margin within which
        the worker's own bounds answer first, with their own message."""
        replays = 2 if self.schedule == "snapshot" else 1
        load = self.limits.load_seconds if self.project is not None else 0.0
        return replays * self.limits.replay_seconds + load + MARGIN

    def check(self, result: Result) -> None:
        check_key(self, result)


@dataclass(frozen=True)
class Result:
    """What a worker sends back: the verdict, its timings, and the worker's peak memory."""

    verdict: Verdict
    wall_seconds: float
    engine_seconds: float
    peak_rss: int = 0  # bytes, of the worker process so far
    nondeterministic: str | None = None  # snapshot only: what a second replay changed (JSON)
    cost: Cost | None = None

    def graded(self) -> Graded:
        return Graded(self.verdict, self.wall_seconds, self.engine_seconds, self.cost)


class Answer(Protocol):
    """What an executor reads of a result: the peak memory of the worker that made it."""

    @property
    def peak_rss(self) -> int: ...


R = TypeVar("R", bound=Answer)


class Job(Protocol[R]):
    """What an executor needs of a unit of work: the task it belongs to (a worker keeps to one
    task while it has units), where it stands in an error message, the result that stands
    for it when its worker dies under it, and a check that a result answers it (raises
    `HarnessError`)."""

    @property
    def task(self) -> str: ...

    @property
    def task_digest(self) -> str: ...

    def where(self) -> str: ...

    def died(self) -> R: ...

    def check(self, result: R) -> None: ...


J = TypeVar("J", bound=Job[Any])
Work = Callable[[Any], Any]  # a unit to its result, in a worker; `compute` for a `Unit`
# Called in the executor's process with each batch of results as it arrives, and with an empty
# batch at least every TICK seconds while waiting: raising there stops the run.
OnResults = Callable[[list[tuple[J, Any]]], None]
TICK = 0.5


class HarnessError(ArrivalBenchError):
    """A worker could not grade a unit because of its input (a task whose files changed or
    do not load, workers of another version): the run stops. A bug in a worker is a
    `WorkerError` instead, with the worker's traceback."""


class ProtocolError(WorkerError):
    """A worker answered something other than what it was asked: a bug of the harness (exit
    3), never the user's input."""


# -- the work function -----------------------------------------------------------------------

_specs: dict[tuple[str, str], TaskSpec] = {}


def unit_spec(task: str, task_digest: str) -> TaskSpec:
    """The task of a unit, loaded once per process, and checked to be the one planned."""
    spec = _specs.get((task, task_digest))
    if spec is None:
        spec = load_spec(task)
        if spec.digest != task_digest:
            raise HarnessError(f"task {task}: its files changed since the run was planned "
                               f"({task_digest[:15]}… is now {spec.digest[:15]}…); run again")
        _specs[(task, task_digest)] = spec
    return spec


def peak_rss() -> int:
    """Peak resident memory of this process in bytes (0 where unknown). On Linux it is VmHWM:
    ru_maxrss carries across exec the peak of the process that spawned this one."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) * 1024 for line in status
                        if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        pass
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def compute(unit: Unit) -> Result:
    """Grade one unit: schedule, replay, oracle. The default work of every executor."""
    spec = unit_spec(unit.task, unit.task_digest)
    start = time.perf_counter()
    artifact = _artifact(unit, spec)
    # On snapshot, once per artifact, one more replay for the nondeterminism check.
    graded = grade_point(spec, artifact, Point(unit.schedule, unit.seed), unit.limits,
                         every_batch=unit.every_batch, measure=unit.measure,
                         engine_name=unit.engine)
    outcome, found = graded.outcome, graded.nondeterministic
    wall = time.perf_counter() - start
    return Result(graded.verdict, wall, outcome.engine_seconds, peak_rss(),
                  None if found is None else canonical_json(found), outcome.cost)


def _artifact(unit: Unit, spec: TaskSpec) -> Artifact | str:
    if unit.project is None:
        return unit.script
    from arrivalbench.core.artifacts.dbt import load_project

    project = load_project(Path(unit.project), spec, unit.select, unit.passed_env, unit.limits)
    if project.digest != unit.artifact:
        raise ArrivalBenchError(f"{unit.project}: the dbt project changed since it was stored "
                                f"({unit.artifact[:15]}…, now {project.digest[:15]}…); run "
                                "again with a new results file")
    return project


DIED = "worker died: the process grading this replay ended abruptly (a crash or a kill)"
TIMED_OUT = ("the replay ran past its wall-clock limit and its worker did not stop it; the "
             "worker was killed")
MARGIN = 10.0  # seconds past a unit's bounds before its worker is killed from outside


def died(unit: Unit) -> Result:
    return stopped(unit, "run", DIED)


def stopped(unit: Unit, phase: Phase, message: str) -> Result:
    """The ERROR verdict of a replay whose worker died under it or was killed. The message is
    the same whatever the executor and however the worker died, so that the bytes are too;
    the cause (signal or exit status) is in the executor's `stats`."""
    spec = unit_spec(unit.task, unit.task_digest)
    sched = schedule(spec, unit.schedule, unit.seed)
    detail = {"phase": phase, "batch": None, "statement": None, "message": message}
    engine = backend(unit.engine)
    return Result(Verdict(spec.id, spec.digest, unit.schedule, unit.seed, sched.digest,
                          unit.artifact, "ERROR", detail, engine.NAME, engine.version()),
                  0.0, 0.0)


def death_cause(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


def unit_key(unit: Unit) -> Key:
    """The key the verdict of `unit` is stored under by this installation."""
    return (unit.task_digest, unit.schedule, unit.seed, unit.artifact,
            *current_versions(unit.engine))


def check_key(unit: Unit, result: Result) -> None:
    """A worker of another harness or engine version would store keys the run never asked
    for."""
    got = key_of(result.verdict)
    if got[:4] != (unit.task_digest, unit.schedule, unit.seed, unit.artifact):
        raise ProtocolError(f"a worker answered {got[:4]} for {unit_key(unit)[:4]}")
    here = current_versions(unit.engine)
    if got[4:] != here:
        raise HarnessError(f"a worker grades on {unit.engine} version {got[4]!r} with "
                           f"arrivalbench {got[5]}, this process on {here[0]!r} with "
                           f"{here[1]}; install the same versions on every node")


def raised(unit: Job[Any], bad_input: bool, message: str, worker_traceback: str) -> Exception:
    """The error a run stops with when a worker raised while grading `unit`: bad input (the
    task) keeps its one-line message; anything else is a bug and keeps the worker's
    traceback."""
    where = unit.where()
    if bad_input:
        return HarnessError(f"{where}: {message.split(': ', 1)[-1]}")
    return WorkerError(f"{where}: {message}", worker_traceback)


def by_task(units: Sequence[Job[Any]]) -> dict[tuple[str, str], deque[int]]:
    queues: dict[tuple[str, str], deque[int]] = {}
    for index, unit in enumerate(units):
        queues.setdefault((unit.task, unit.task_digest), deque()).append(index)
    return queues


@dataclass
class Stats:
    """What an executor saw: worker deaths and the peak memory of each worker."""

    deaths: int = 0
    causes: list[str] = field(default_factory=list)  # e.g. SIGSEGV, SIGKILL, timeout
    peak_rss: dict[str, int] = field(default_factory=dict)  # worker -> bytes
