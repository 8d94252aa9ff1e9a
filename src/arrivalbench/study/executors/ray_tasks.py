"""The Ray executor (the `ray` extra): units in small per-task chunks as Ray tasks. A chunk
whose worker died, or in which a unit raised, is run again one unit per Ray task, so that the
death or the error is told of the unit that caused it, never of the chunk's first unit.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from arrivalbench.errors import ArrivalBenchError, missing_extra
from arrivalbench.study.executors.unit import (
    TICK,
    Answer,
    J,
    Job,
    OnResults,
    Stats,
    Work,
    by_task,
    compute,
    raised,
)


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
        for queue in by_task(units).values():
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
                    if len(chunk) > 1:  # find the unit that raised: one per Ray task
                        todo.extendleft([i] for i in reversed(chunk))
                        continue
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
