"""Executors: where replays run. The parent process plans, dispatches and stores; workers only
compute, so every verdict is written by one process in small transactions as it arrives.

A work unit is one replay: (task, artifact, schedule, seed, engine). Its verdict is a pure
function of the unit, so the bytes are the same whatever the executor, the worker count or the
order of work. Workers keep each task's log, reference result and schedules cached between
units, and the executors hand a worker the units of the task it already holds for as long as
there are any, so a log is loaded about once per worker per task. An executor asks no more of a
unit than `Job` says, so other work runs on the same machinery with a `work` function of its own
(the gate grades one artifact of a task per unit).

- `LocalExecutor`: a pool of `spawn`ed worker processes, each running its own loop over a pipe.
  A worker announces every unit before it starts it, so when a worker dies (segfault, an
  out-of-memory kill, `os._exit`) the parent knows the one replay that killed it: that replay
  becomes an ERROR verdict (phase `run`, message `worker died (SIGKILL)`), the units queued
  behind it go back to the queue, a new worker takes the dead one's place and the run goes on.
- `RayExecutor` (the `ray` extra): units in small per-task chunks as Ray tasks; a chunk whose
  worker died is re-run one unit per Ray task to find the replay that kills it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol, TypeVar

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, backend
from arrivalbench.core.engine.cost import Cost
from arrivalbench.core.grading import Point, grade, nondeterminism, schedule
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.values import canonical_json
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError, WorkerError, missing_extra
from arrivalbench.study.store import Graded, Key, current_versions, key_of

EXECUTORS = ("local", "ray")


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

    def where(self) -> str:
        return f"grading {self.task} {self.schedule} seed {self.seed}"

    def died(self) -> Result:
        return died(self)

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
    """Peak resident memory of this process in bytes (0 where unknown)."""
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
    verdict, outcome = grade(spec, artifact, Point(unit.schedule, unit.seed),
                             measure=unit.measure, engine_name=unit.engine)
    wall = time.perf_counter() - start
    differing = None
    if unit.schedule == "snapshot":  # once per artifact: one more replay, compared
        found = nondeterminism(spec, artifact, outcome, engine_name=unit.engine)
        differing = None if found is None else canonical_json(found)
    return Result(verdict, wall, outcome.engine_seconds, peak_rss(), differing, outcome.cost)


def _artifact(unit: Unit, spec: TaskSpec) -> Artifact | str:
    if unit.project is None:
        return unit.script
    from arrivalbench.core.artifacts.dbt import load_project

    project = load_project(Path(unit.project), spec)
    if project.digest != unit.artifact:
        raise ArrivalBenchError(f"{unit.project}: the dbt project changed since it was stored "
                                f"({unit.artifact[:15]}…, now {project.digest[:15]}…); run "
                                "again with a new results file")
    return project


DIED = "worker died: the process grading this replay ended abruptly (a crash or a kill)"


def died(unit: Unit) -> Result:
    """The ERROR verdict of a replay whose worker died under it. The message is the same
    whatever the executor and however the worker died, so that the bytes are too; the cause
    (signal or exit status) is in the executor's `stats`."""
    spec = unit_spec(unit.task, unit.task_digest)
    sched = schedule(spec, unit.schedule, unit.seed)
    detail = {"phase": "run", "batch": None, "statement": None, "message": DIED}
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
        raise HarnessError(f"a worker answered {got[:4]} for {unit_key(unit)[:4]}")
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


# -- executors -------------------------------------------------------------------------------


class Executor(Protocol):
    name: str
    workers: int

    def run(self, units: Sequence[J], on_results: OnResults[J]) -> None:
        """Grade every unit, calling `on_results` in this process as results arrive."""


@dataclass
class Stats:
    """What an executor saw: worker deaths and the peak memory of each worker."""

    deaths: int = 0
    causes: list[str] = field(default_factory=list)  # e.g. SIGSEGV, SIGKILL, exit status 3
    peak_rss: dict[str, int] = field(default_factory=dict)  # worker -> bytes


def make(name: str, workers: int | None = None, work: Work = compute) -> Executor:
    if name == "local":
        return LocalExecutor(workers, work)
    if name == "ray":
        executor = RayExecutor(workers, work)
        executor._ray()  # the extra is installed, or a one-line error now
        return executor
    raise ArrivalBenchError(f"executor {name!r}: unknown; choose one of {', '.join(EXECUTORS)}")


def _by_task(units: Sequence[Job[Any]]) -> dict[tuple[str, str], deque[int]]:
    queues: dict[tuple[str, str], deque[int]] = {}
    for index, unit in enumerate(units):
        queues.setdefault((unit.task, unit.task_digest), deque()).append(index)
    return queues


class LocalExecutor:
    """A pool of spawned worker processes on this machine (default: one per core)."""

    name = "local"
    PREFETCH = 2  # units queued at a worker, so it never waits on the parent

    def __init__(self, workers: int | None = None, work: Work = compute) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.work = work
        self.stats = Stats()
        self._context = multiprocessing.get_context("spawn")

    def run(self, units: Sequence[J], on_results: OnResults[J]) -> None:
        if not units:
            return
        run = _LocalRun(self, units)
        remaining = len(units)
        try:
            run.pool = [run.spawn() for _ in range(min(self.workers, remaining))]
            while remaining:
                run.feed()
                batch, error = run.collect()
                remaining -= len(batch)
                on_results(batch)
                if error is not None:
                    raise error
        finally:
            for worker in run.pool:
                worker.stop()
            for worker in run.pool:
                worker.close()
                self._retire(worker)

    def _retire(self, worker: _Worker) -> None:
        if worker.peak_rss:
            self.stats.peak_rss[worker.name] = worker.peak_rss


class _LocalRun:
    """The state of one `LocalExecutor.run`: the queues of units per task and the workers."""

    def __init__(self, executor: LocalExecutor, units: Sequence[Job[Any]]) -> None:
        self.executor = executor
        self.units = units
        self.queues = _by_task(units)
        self.pool: list[_Worker] = []
        self.serial = 0
        self.barren = 0  # workers in a row that died before grading anything

    def spawn(self) -> _Worker:
        self.serial += 1
        return _Worker(self.executor._context, self.executor.work, f"local-{self.serial}")

    def next_unit(self, worker: _Worker) -> int | None:
        """The next unit of the task the worker holds; else of the task with most work left
        that no other worker holds; else share one."""
        queues = self.queues
        if worker.task is not None and queues.get(worker.task):
            return queues[worker.task].popleft()
        live = [t for t, q in queues.items() if q]
        if not live:
            return None
        held = {w.task for w in self.pool if w is not worker}
        task = max(live, key=lambda t: (t not in held, len(queues[t])))
        worker.task = task
        return queues[task].popleft()

    def feed(self) -> None:
        """Keep PREFETCH units queued at every worker."""
        for worker in self.pool:
            while len(worker.inflight) < self.executor.PREFETCH:
                index = self.next_unit(worker)
                if index is None:
                    break
                worker.send(index, self.units[index])

    def collect(self) -> tuple[list[tuple[Any, Any]], Exception | None]:
        """Wait up to TICK for results or deaths; the results that arrived, and the error that
        stops the run, if any."""
        pool = self.pool
        ready = set(wait([w.conn for w in pool] + [w.process.sentinel for w in pool],
                         timeout=TICK))
        batch: list[tuple[Any, Any]] = []
        error: Exception | None = None
        for worker in list(pool):
            if worker.conn not in ready and worker.process.sentinel not in ready:
                continue
            closed = worker.drain(self.units, batch)
            error = error or worker.error
            if not closed and worker.process.is_alive():
                continue
            buried = self.bury(worker, batch)  # always: it requeues and replaces
            error = error or buried
        return batch, error

    def bury(self, worker: _Worker, batch: list[tuple[Any, Any]]) -> Exception | None:
        """A dead worker: its started unit becomes an ERROR verdict, the units queued behind it
        go back to the queue, and a new worker takes its place while there is work."""
        worker.process.join()
        self.executor._retire(worker)
        self.pool.remove(worker)
        culprit = worker.started
        stats = self.executor.stats
        if culprit is not None:
            batch.append((self.units[culprit], self.units[culprit].died()))
            stats.deaths += 1
            stats.causes.append(death_cause(worker.process.exitcode))
        self.barren = 0 if culprit is not None or worker.completed else self.barren + 1
        error = None
        if self.barren >= 3:
            error = HarnessError(
                "worker processes die before grading anything "
                f"({death_cause(worker.process.exitcode)}); check that arrivalbench "
                "imports in a fresh Python process")
        for index in reversed(worker.inflight):
            if index != culprit:
                unit = self.units[index]
                self.queues[(unit.task, unit.task_digest)].appendleft(index)
        if any(self.queues.values()):
            self.pool.append(self.spawn())
        return error


class _Worker:
    def __init__(self, context: Any, work: Work, name: str) -> None:
        self.name = name
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, work), daemon=True,
                                       name=f"arrivalbench-{name}")
        self.process.start()
        child.close()
        self.inflight: deque[int] = deque()
        self.started: int | None = None
        self.task: tuple[str, str] | None = None
        self.completed = 0
        self.peak_rss = 0
        self.error: Exception | None = None

    def send(self, index: int, unit: Job[Any]) -> None:
        self.inflight.append(index)
        with contextlib.suppress(OSError):  # a dead worker is noticed by its sentinel
            self.conn.send((index, unit))

    def drain(self, units: Sequence[Job[Any]], batch: list[tuple[Any, Any]]) -> bool:
        """Collect every message waiting; True when the worker's end is closed."""
        try:
            while self.conn.poll():
                kind, index, *rest = self.conn.recv()
                if kind == "start":
                    self.started = index
                    continue
                self.inflight.remove(index)
                self.started = None
                if kind == "done":
                    result: Answer = rest[0]
                    self.completed += 1
                    self.peak_rss = max(self.peak_rss, result.peak_rss)
                    try:
                        units[index].check(result)
                    except HarnessError as exc:
                        self.error = self.error or exc
                        continue
                    batch.append((units[index], result))
                else:
                    self.error = self.error or raised(units[index], *rest)
        except (EOFError, OSError):
            return True
        return False

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)

    def close(self) -> None:
        self.process.join(timeout=2)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def _worker_main(conn: Connection, work: Work) -> None:
    """A worker's loop: announce a unit, grade it, send the result; stop on None or EOF.
    Interrupts are the parent's business: a Ctrl-C must not look like a dying worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        while True:
            message = conn.recv()
            if message is None:
                return
            index, unit = message
            conn.send(("start", index))
            try:
                result = work(unit)
            except Exception as exc:
                conn.send(("raise", index, isinstance(exc, ArrivalBenchError),
                           f"{type(exc).__name__}: {exc}", traceback.format_exc()))
                continue
            conn.send(("done", index, result))
    except (EOFError, OSError):  # the parent is gone
        return


# -- Ray -------------------------------------------------------------------------------------


def _ray_chunk(units: list[Job[Any]], work: Work) -> list[Any]:
    return [work(unit) for unit in units]


class RayExecutor:
    """Ray tasks (`pip install 'arrivalbench[ray]'`). With `RAY_ADDRESS` set it joins that
    cluster, whose nodes need the same arrivalbench and DuckDB; otherwise it starts a local
    Ray with `workers` CPUs (default: all) and shuts it down at the end. A Ray already
    initialised by the caller is used as it is and left running."""

    name = "ray"
    CHUNK = 4  # units of one task per Ray task

    def __init__(self, workers: int | None = None, work: Work = compute,
                 chunk: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.work = work
        self.chunk = chunk or self.CHUNK
        self.stats = Stats()

    def _ray(self) -> Any:
        try:
            import ray
        except ImportError:
            raise missing_extra("the ray executor", "ray", "ray") from None
        return ray

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        ray = self._ray()
        started = False
        if not ray.is_initialized():
            if os.environ.get("RAY_ADDRESS"):
                ray.init(log_to_driver=False)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
            started = True
        try:
            yield ray
        finally:
            if started:
                ray.shutdown()

    def run(self, units: Sequence[J], on_results: OnResults[J]) -> None:
        if not units:
            return
        with self.session() as ray:
            self._run(ray, units, on_results)

    def _run(self, ray: Any, units: Sequence[J], on_results: OnResults[J]) -> None:
        remote = ray.remote(num_cpus=1, max_retries=0)(_ray_chunk)
        crashed = (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                   ray.exceptions.OutOfMemoryError, ray.exceptions.LocalRayletDiedError)
        todo: deque[list[int]] = deque()
        for queue in _by_task(units).values():
            indices = list(queue)
            todo += [indices[i:i + self.chunk] for i in range(0, len(indices), self.chunk)]
        capacity = max(2, int(ray.available_resources().get("CPU", self.workers)) * 2)
        running: dict[Any, list[int]] = {}
        while todo or running:
            while todo and len(running) < capacity:
                chunk = todo.popleft()
                running[remote.remote([units[i] for i in chunk], self.work)] = chunk
            done, _ = ray.wait(list(running), num_returns=1, timeout=TICK)
            if not done:
                on_results([])
            for ref in done:
                chunk = running.pop(ref)
                try:
                    results: list[Answer] = ray.get(ref)
                except crashed as exc:
                    if len(chunk) > 1:  # find the replay that kills its worker
                        todo.extendleft([i] for i in reversed(chunk))
                        continue
                    self.stats.deaths += 1
                    self.stats.causes.append(type(exc).__name__)
                    results = [units[chunk[0]].died()]
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if exc.cause else exc
                    raise raised(units[chunk[0]], isinstance(cause, ArrivalBenchError),
                                 f"{type(cause).__name__}: {cause}", str(exc)) from None
                batch = []
                for index, result in zip(chunk, results, strict=True):
                    units[index].check(result)
                    batch.append((units[index], result))
                    if result.peak_rss:
                        self.stats.peak_rss["ray"] = max(self.stats.peak_rss.get("ray", 0),
                                                         result.peak_rss)
                on_results(batch)
