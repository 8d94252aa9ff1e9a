"""The Ray executor (the `ray` extra): units in small per-task chunks as Ray tasks. A chunk
whose worker died, or in which a unit raised, is run again one unit per Ray task, so that the
death or the error is told of the unit that caused it, never of the chunk's first unit.

Nodes share no filesystem: each task's files go into Ray's object store once, and a worker
grades from its own copy (`content`); an artifact travels as its own content. Before anything
is scheduled, every node is asked which arrivalbench and DuckDB it runs; a node that differs
from this process is bad input, named in one line.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from arrivalbench.errors import ArrivalBenchError, missing_extra
from arrivalbench.study.executors import content
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
    unit_spec,
)


def _ray_chunk(units: list[Job[Any]], work: Work, refs: dict[str, Any]) -> list[Any]:
    """A chunk in a Ray worker: each unit graded from this node's copy of its files."""
    import ray

    return [work(content.localize(unit, ray.get, refs)) for unit in units]


Versions = tuple[tuple[str, str], ...]  # (what, version): arrivalbench, harness, DuckDB


def versions() -> Versions:
    """What must be the same on every node for verdicts to be the same: the release, the
    harness version (a digest of the code that decides a verdict) and DuckDB's version."""
    from arrivalbench import __version__
    from arrivalbench.core.engine import duckdb as duckdb_engine
    from arrivalbench.core.version import harness_version

    return (("arrivalbench", __version__), ("DuckDB", duckdb_engine.VERSION),
            ("harness", harness_version()))


def differs(node: str, theirs: Versions, ours: Versions) -> str | None:
    """One line naming what a node runs that this process does not, or None."""
    for (what, version), (_what, mine) in zip(theirs, ours, strict=True):
        if version != mine:
            return (f"Ray node {node} runs {what} {version}, this process {mine}; install the "
                    "same arrivalbench and DuckDB on every node")
    return None


def reachable(address: str) -> None:
    """A `RAY_ADDRESS` of the form host:port (or ray://host:port) answers, or a one-line
    error now (Ray itself would retry for a long while)."""
    text = address.removeprefix("ray://")
    if text in ("auto", "local", "") or ":" not in text:
        return
    host, _, port = text.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            return
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ArrivalBenchError(
            f"RAY_ADDRESS {address}: no Ray cluster answers there ({reason or 'timed out'}); "
            "start its head with 'ray start --head' or unset RAY_ADDRESS to run on this "
            "machine") from None


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
            address = os.environ.get("RAY_ADDRESS")
            if address:
                reachable(address)
                try:
                    ray.init(log_to_driver=False)
                except ConnectionError as exc:
                    raise ArrivalBenchError(
                        f"RAY_ADDRESS {address}: cannot join the cluster ({exc}); check the "
                        "address 'ray start --head' printed") from None
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
            self.check_nodes(ray)
            self._run(ray, units, on_results)

    def check_nodes(self, ray: Any) -> None:
        """Every alive node runs this process's versions (`versions`), or a one-line error
        before any replay is scheduled."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        probe = ray.remote(num_cpus=0, max_retries=0)(versions)
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        refs = {probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(): n for n in nodes}
        ours = versions()
        for ref, node in refs.items():
            theirs = tuple(tuple(pair) for pair in ray.get(ref, timeout=120))
            found = differs(node.get("NodeManagerAddress", node["NodeID"]), theirs, ours)
            if found:
                raise ArrivalBenchError(found)

    def _run(self, ray: Any, units: Sequence[J], on_results: OnResults[J]) -> None:
        remote = ray.remote(num_cpus=1, max_retries=0)(_ray_chunk)
        for task in {(u.task, u.task_digest) for u in units}:  # a dead worker's verdict needs
            with contextlib.suppress(ArrivalBenchError):  # its task here; told of by a worker
                unit_spec(*task)
        # Read now, once: the folders may be gone by the time a worker needs them.
        refs = {digest: ray.put(bundle) for digest, bundle in content.bundles(units).items()}

        def needed(chunk: list[int]) -> dict[str, Any]:
            keys = {units[i].task_digest for i in chunk}
            return {k: refs[k] for k in keys if k in refs}

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
                running[remote.remote([units[i] for i in chunk], self.work,
                                       needed(chunk))] = chunk
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
