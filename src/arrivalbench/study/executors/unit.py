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
from typing import Any, Protocol, TypeVar

from arrivalbench.core.artifacts import ArtifactRef, load, startup_seconds
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.grading import GradeOptions, Point, StopCause, grade, schedule, stopped
from arrivalbench.core.lateness import key_text
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.values import canonical_json
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError, WorkerError
from arrivalbench.study.keys import Key, current_versions, key_of
from arrivalbench.study.store import Replayed


@dataclass(frozen=True)
class Unit:
    """One replay to grade. `task` is how a worker loads the task (a built-in id or a folder);
    `task_digest` is what it must find there."""

    task: str
    task_digest: str
    artifact: ArtifactRef
    schedule: str
    seed: int
    options: GradeOptions = GradeOptions()

    def where(self) -> str:
        return f"grading {self.task} {self.schedule} seed {self.seed}"

    def died(self) -> Result:
        return self._stopped("died")

    def timed_out(self) -> Result:
        return self._stopped("timed_out")

    def _stopped(self, cause: StopCause) -> Result:
        spec = unit_spec(self.task, self.task_digest)
        verdict = stopped(spec, self.artifact.digest, schedule(spec, self.schedule, self.seed),
                          cause, options=self.options)
        return Result(verdict, 0.0, 0.0)

    def seconds(self) -> float:
        """How long the unit's worker may take before the parent kills it: each replay's
        bound (a snapshot is replayed twice), loading the artifact, and a margin within which
        the worker's own bounds answer first, with their own message."""
        limits = self.options.limits
        replays = 2 if self.schedule == "snapshot" else 1
        return replays * limits.replay_seconds + startup_seconds(self.artifact, limits) + MARGIN

    def key(self) -> Key:
        """The key the verdict of this unit is stored under by this installation."""
        options = self.options
        return Key(self.task_digest, self.schedule, self.seed, self.artifact.digest,
                   *current_versions(options.engine), options.landing,
                   key_text(options.allowance))

    def check(self, result: Result) -> None:
        """A worker of another harness or engine version would store keys the run never asked
        for."""
        got = key_of(result.verdict)
        want = self.key()
        if got.replay != want.replay:
            raise ProtocolError(f"a worker answered {got.replay} for {want.replay}")
        if got.versions != want.versions:
            raise HarnessError(f"a worker grades on {self.options.engine} version "
                               f"{got.engine_version!r} with arrivalbench "
                               f"{got.harness_version}, this process on "
                               f"{want.engine_version!r} with {want.harness_version}; install "
                               "the same versions on every node")


@dataclass(frozen=True)
class Result:
    """What a worker sends back: the verdict under the unit's options, its timings, the
    worker's peak memory and, when the every-batch check ran, the verdict of the final table
    alone."""

    verdict: Verdict
    wall_seconds: float
    engine_seconds: float
    peak_rss: int = 0  # bytes, of the worker process so far
    nondeterministic: str | None = None  # snapshot only: what a second replay changed (JSON)
    cost: Cost | None = None
    final: Verdict | None = None

    def graded(self) -> Replayed:
        """What the results file keeps: the final-state verdict, and the every-batch one
        beside it when it was checked."""
        if self.final is None:
            return Replayed(self.verdict, self.wall_seconds, self.engine_seconds, self.cost)
        return Replayed(self.final, self.wall_seconds, self.engine_seconds, self.cost,
                      self.verdict)


class Answer(Protocol):
    """What an executor reads of a result: the peak memory of the worker that made it."""

    @property
    def peak_rss(self) -> int: ...


R = TypeVar("R", bound=Answer)


class Job(Protocol[R]):
    """What an executor needs of a unit of work: the task it belongs to (a worker keeps to one
    task while it has units, and a worker elsewhere is sent the task's files), where it stands
    in an error message, how long its worker may take, the results that stand for it when its
    worker dies under it or is killed at that bound, and a check that a result answers it
    (raises `HarnessError`)."""

    @property
    def task(self) -> str: ...

    @property
    def task_digest(self) -> str: ...

    def where(self) -> str: ...

    def seconds(self) -> float: ...

    def died(self) -> R: ...

    def timed_out(self) -> R: ...

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
    artifact = load(unit.artifact, spec, limits=unit.options.limits)
    # On snapshot, once per artifact, one more replay for the nondeterminism check.
    [graded] = grade(spec, artifact, [Point(unit.schedule, unit.seed)], options=unit.options)
    found = graded.nondeterministic
    return Result(graded.verdict, time.perf_counter() - start, graded.outcome.engine_seconds,
                  peak_rss(), None if found is None else canonical_json(found),
                  graded.outcome.cost, graded.final if unit.options.every_batch else None)


MARGIN = 10.0  # seconds past a unit's bounds before its worker is killed from outside


def death_cause(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


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
