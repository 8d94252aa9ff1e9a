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
    controls and every hazard the task declares (DESIGN §10)."""
    if seeds < 1:
        raise ArrivalBenchError(f"--seeds {seeds}: give a whole number of at least 1")
    for kind in kinds:
        check_kind(spec, kind)
    chosen = list(kinds) or ["snapshot", *CONTROLS[1:], *spec.hazards]
    points = [Point("snapshot", 0)] if "snapshot" in chosen else []
    points += [Point(k, s) for k in dict.fromkeys(chosen) if k != "snapshot"
               for s in range(seeds)]
    return points


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


def grade(spec: TaskSpec, script: str, point: Point, limits: Limits = Limits(),
          measure: bool = False) -> tuple[Verdict, Outcome]:
    """With `measure`, the outcome carries the replay's cost; the verdict is the same."""
    sched = schedule(spec, point.schedule, point.seed)
    outcome = replay(spec, script, sched, limits, measure)
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


def grade_all(spec: TaskSpec, script: str, points: Iterable[Point], limits: Limits = Limits(),
              measure: bool = False) -> Iterator[tuple[Verdict, Outcome]]:
    expected(spec, limits)  # a broken reference is the task's fault: raise before any replay
    for point in points:
        yield grade(spec, script, point, limits, measure)
