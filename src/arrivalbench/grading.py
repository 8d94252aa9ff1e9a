"""Grading one artifact on one task: the replay plan, schedules, and verdicts."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from arrivalbench.engine import Limits
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.log import load_log
from arrivalbench.oracle import compare
from arrivalbench.replay import Outcome, expected, replay
from arrivalbench.schedules import CONTROLS, KINDS, Params, Schedule, make
from arrivalbench.task import TaskSpec
from arrivalbench.values import digest
from arrivalbench.verdict import Verdict

DEFAULT_SEEDS = 5


@dataclass(frozen=True)
class Point:
    """One replay of a plan: a schedule kind and a seed."""

    schedule: str
    seed: int


def plan(spec: TaskSpec, seeds: int = DEFAULT_SEEDS, kinds: Sequence[str] = ()) -> list[Point]:
    """`snapshot` once, then each kind for seeds 0..seeds-1. By default the kinds are both
    controls and every hazard the task declares."""
    check_seeds(seeds)
    for kind in kinds:
        check_kind(spec, kind)
    chosen = list(kinds) or ["snapshot", *CONTROLS[1:], *spec.hazards]
    points = [Point("snapshot", 0)] if "snapshot" in chosen else []
    points += [Point(k, s) for k in dict.fromkeys(chosen) if k != "snapshot"
               for s in range(seeds)]
    return points


def check_seeds(seeds: int) -> None:
    """Seeds are counted: 0..seeds-1, at least one."""
    if seeds < 1:
        raise ArrivalBenchError(f"seeds {seeds}: give a whole number of at least 1")


def check_kind(spec: TaskSpec, kind: str) -> None:
    if kind not in KINDS:
        raise ArrivalBenchError(f"unknown schedule {kind!r}; allowed: {', '.join(KINDS)}")
    if kind == "schema_evolution" and spec.evolution is None:
        raise ArrivalBenchError(f"schedule schema_evolution: task {spec.id} declares no "
                                "evolution column; choose another schedule")


@functools.lru_cache(maxsize=4096)
def schedule(spec: TaskSpec, kind: str, seed: int) -> Schedule:
    check_kind(spec, kind)
    return make(load_log(spec).timeline, kind, seed, Params(hazards=spec.hazards))


def artifact_digest(script: str) -> str:
    return digest(script)


def grade(spec: TaskSpec, script: str, point: Point, limits: Limits = Limits()
          ) -> tuple[Verdict, Outcome]:
    """The verdict of one replay: build the schedule of `point`, replay `script` on it and
    compare the target with the reference. An `ERROR` when the replay stopped, a `FAIL` with the
    typed difference when the target differs, else `PASS`; with the replay's outcome (timings)
    beside it. Raises TaskError only when the task itself is broken (its reference)."""
    sched = schedule(spec, point.schedule, point.seed)
    outcome = replay(spec, script, sched, limits)
    if outcome.failure is not None:
        f = outcome.failure
        verdict, detail = "ERROR", {"phase": f.phase, "batch": f.batch, "statement": f.statement,
                                    "message": f.message}
    else:
        assert outcome.table is not None
        diff = compare(expected(spec, limits), outcome.table, spec.target)
        verdict, detail = ("PASS", {}) if diff.ok else ("FAIL", diff.document())
    return Verdict(spec.id, spec.digest, point.schedule, point.seed, sched.digest,
                   artifact_digest(script), verdict, detail), outcome  # type: ignore[arg-type]


def grade_all(spec: TaskSpec, script: str, points: Iterable[Point], limits: Limits = Limits()
              ) -> Iterator[tuple[Verdict, Outcome]]:
    """`grade` for each point of a plan, lazily, in order. The reference is computed first, so a
    broken task raises TaskError before any replay runs."""
    expected(spec, limits)  # a broken reference is the task's fault: raise before any replay
    for point in points:
        yield grade(spec, script, point, limits)
