"""The local executor: a pool of `spawn`ed worker processes, each running its own loop over a
pipe.

A worker announces every unit before it starts it, so when a worker dies (segfault, an
out-of-memory kill, `os._exit`) the parent knows the one replay that killed it: that replay
becomes an ERROR verdict (phase `run`, message `worker died (SIGKILL)`), the units queued
behind it go back to the queue, a new worker takes the dead one's place and the run goes on.
The parent also keeps each unit's wall clock (`Unit.seconds`): a worker stuck past it is
killed, its unit is an ERROR with phase `timeout`, and the run goes on the same way.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
import traceback
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from arrivalbench.core.containment import limit_self
from arrivalbench.errors import ArrivalBenchError, WorkerError
from arrivalbench.study.executors.unit import (
    TICK,
    Answer,
    HarnessError,
    J,
    Job,
    OnResults,
    Stats,
    Work,
    by_task,
    compute,
    death_cause,
    raised,
)

# The data a worker process may allocate: the replay database's own bound (512 MB by default)
# and the harness's share (the task's log, references, Python) with room to spare.
WORKER_DATA = 2 * 1024 * 1024 * 1024


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
        self.queues = by_task(units)
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

    def overdue(self) -> None:
        """Kill every worker whose started unit outlived its wall-clock bound: a replay stuck
        where the worker's own bounds cannot reach it."""
        now = time.monotonic()
        for worker in self.pool:
            if worker.started is None or worker.killed:
                continue
            if now - worker.since > self.units[worker.started].seconds():
                worker.killed = True
                worker.process.kill()

    def collect(self) -> tuple[list[tuple[Any, Any]], Exception | None]:
        """Wait up to TICK for results or deaths; the results that arrived, and the error that
        stops the run, if any."""
        self.overdue()
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
            unit = self.units[culprit]
            batch.append((unit, unit.timed_out() if worker.killed else unit.died()))
            stats.deaths += 1
            stats.causes.append("timeout" if worker.killed
                                else death_cause(worker.process.exitcode))
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
        self.since = 0.0  # when the started unit started (time.monotonic)
        self.killed = False  # by the parent, at the started unit's wall-clock bound
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
                    self.started, self.since = index, time.monotonic()
                    continue
                self.inflight.remove(index)
                self.started = None
                if kind == "done":
                    result: Answer = rest[0]
                    self.completed += 1
                    self.peak_rss = max(self.peak_rss, result.peak_rss)
                    try:
                        units[index].check(result)
                    except (HarnessError, WorkerError) as exc:
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
    # A replay's memory past what its engine bounds (a huge value DuckDB allocates outside
    # its buffer manager) fails an allocation here, as an ERROR, instead of taking the machine.
    limit_self(WORKER_DATA, None)
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
