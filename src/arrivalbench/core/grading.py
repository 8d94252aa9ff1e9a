"""Grading one artifact on one task: the replay plan, schedules, and verdicts."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Failure, Limits, Table, backend
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import compare_all
from arrivalbench.core.replay import Outcome, expected_all, replay
from arrivalbench.core.schedules import CONTROLS, KINDS, Params, Schedule, make
from arrivalbench.core.task import Column, Target, TaskSpec
from arrivalbench.core.values import JSON, digest
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError

DEFAULT_SEEDS = 5

# The controls a snapshot-passing script must also pass: every control but `snapshot` itself.
CHECKED_CONTROLS: tuple[str, ...] = CONTROLS[1:]


def plan_kinds(hazards: Sequence[str]) -> tuple[str, ...]:
    """The schedules of a default grade in the one order every plan, table and explanation
    uses: `snapshot`, the checked controls, then `hazards` (a task's declared ones, or all)."""
    return ("snapshot", *CHECKED_CONTROLS, *hazards)


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
    chosen = list(kinds) or plan_kinds(spec.hazards)
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


def artifact_digest(artifact: Artifact | str) -> str:
    return digest(artifact) if isinstance(artifact, str) else artifact.digest


def grade(spec: TaskSpec, script: Artifact | str, point: Point, limits: Limits = Limits(),
          every_batch: bool = False, measure: bool = False,
          engine_name: EngineName = DEFAULT_ENGINE) -> tuple[Verdict, Outcome]:
    """The verdict of one replay: build the schedule of `point`, replay `script` on it and
    compare the target with the reference (with `every_batch`, after every completed run too).
    An `ERROR` when the replay stopped, a `FAIL` with the typed difference when the target
    differs, else `PASS`; with the replay's outcome (timings, and with `measure` its cost)
    beside it. Raises TaskError only when the task itself is broken (its reference)."""
    sched = schedule(spec, point.schedule, point.seed)
    return judge(spec, script, sched, point.schedule, point.seed, limits, every_batch,
                 measure=measure, engine_name=engine_name)


def judge(spec: TaskSpec, script: Artifact | str, sched: Schedule, kind: str, seed: int,
          limits: Limits = Limits(), every_batch: bool = False, plan: bool = False,
          measure: bool = False, engine_name: EngineName = DEFAULT_ENGINE
          ) -> tuple[Verdict, Outcome]:
    """Replay `sched` and judge its final table (and, with `every_batch`, the table after each
    completed run). A generated schedule delivers the whole log, so its final table is judged
    against the reference over the complete log; an explicit `plan` may deliver less, and is
    judged against the reference over what it delivered. The artifact runs on `engine_name`;
    the reference is always DuckDB's."""
    from arrivalbench.core.checkpoints import final_delivered, references_all, replay_checked

    checks = None
    if every_batch:
        checked = replay_checked(spec, script, sched, limits, measure, engine_name,
                                 first_only=True)
        outcome, checks = checked.outcome, checked
    else:
        outcome = replay(spec, script, sched, limits, measure=measure, engine_name=engine_name)
    detail: dict[str, JSON]
    if outcome.failure is not None:
        f = outcome.failure
        verdict, detail = "ERROR", {"phase": f.phase, "batch": f.batch, "statement": f.statement,
                                    "message": f.message}
    else:
        assert outcome.table is not None
        want = references_all(spec, [final_delivered(sched)], limits)[0] if plan else \
            expected_all(spec, limits)
        diff = compare_all(want, outcome.tables, spec.targets)
        verdict, detail = ("PASS", {}) if diff.ok else ("FAIL", diff.document())
    first = checks.first_divergence if checks is not None else None
    if first is not None:
        detail = {**detail, "first_divergence": first.document()}
        if verdict == "PASS":
            # Right at the end, wrong on the way: the contract asks for the result after
            # every run, so a lost target mid-way is an error and a wrong one a failure.
            if first.diff is None:
                verdict = "ERROR"
                detail.update(phase="read-target", batch=first.batch, statement=None,
                              message=first.error)
            else:
                verdict = "FAIL"
            detail["reconverged"] = True
    engine = backend(engine_name)
    return Verdict(spec.id, spec.digest, kind, seed, sched.digest, artifact_digest(script),
                   verdict, detail, engine.NAME, engine.version()  # type: ignore[arg-type]
                   ), outcome


def grade_all(spec: TaskSpec, script: Artifact | str, points: Iterable[Point],
              limits: Limits = Limits(), every_batch: bool = False, measure: bool = False,
              engine_name: EngineName = DEFAULT_ENGINE) -> Iterator[tuple[Verdict, Outcome]]:
    """`grade` for each point of a plan, lazily, in order. The reference is computed first, so a
    broken task raises TaskError before any replay runs."""
    expected_all(spec, limits)  # a broken reference is the task's fault: raise before replay
    for point in points:
        yield grade(spec, script, point, limits, every_batch, measure, engine_name)


@dataclass(frozen=True)
class Graded:
    """One point of a plan graded in full: its verdict, the replay's outcome and, for
    `snapshot`, what a second replay changed (None: nothing, or not checked)."""

    verdict: Verdict
    outcome: Outcome
    nondeterministic: dict[str, JSON] | None = None


def grade_point(spec: TaskSpec, script: Artifact | str, point: Point,
                limits: Limits = Limits(), every_batch: bool = False, measure: bool = False,
                engine_name: EngineName = DEFAULT_ENGINE) -> Graded:
    """`grade`, and on `snapshot` the nondeterminism check: one point graded as the CLI, the
    executors and the Inspect scorer all grade it (one more replay per artifact)."""
    verdict, outcome = grade(spec, script, point, limits, every_batch, measure, engine_name)
    differing = nondeterminism(spec, script, outcome, limits, engine_name) \
        if point.schedule == "snapshot" else None
    return Graded(verdict, outcome, differing)


def grade_artifact(spec: TaskSpec, script: Artifact | str, points: Iterable[Point],
                   limits: Limits = Limits(), every_batch: bool = False,
                   measure: bool = False, engine_name: EngineName = DEFAULT_ENGINE
                   ) -> Iterator[Graded]:
    """`grade_point` for each point of a plan, lazily, in order; a broken task raises
    TaskError before any replay runs."""
    expected_all(spec, limits)
    for point in points:
        yield grade_point(spec, script, point, limits, every_batch, measure, engine_name)


def grade_plan(spec: TaskSpec, script: str, path: Path, limits: Limits = Limits(),
               every_batch: bool = False, engine_name: EngineName = DEFAULT_ENGINE) -> Verdict:
    """Replay the explicit plan in `path`; its verdict is filed under the schedule and seed the
    plan names (a plan written by `show --json` keeps its identity), `plan` and 0 when it
    names none."""
    from arrivalbench.core import plans

    sched = plans.load(spec, path)
    try:
        count: int | None = len(backend(engine_name).split(script))
    except Failure:
        count = None  # the replay reports the parse error as its ERROR
    if count is not None:
        plans.check_statements(sched, count, str(path))
    expected_all(spec, limits)
    return judge(spec, script, sched, sched.kind, sched.seed, limits, every_batch, plan=True,
                 engine_name=engine_name)[0]


def nondeterminism(spec: TaskSpec, script: Artifact | str, first: Outcome,
                   limits: Limits = Limits(), engine_name: EngineName = DEFAULT_ENGINE
                   ) -> dict[str, JSON] | None:
    """Replay `snapshot` once more and compare with `first`, its earlier outcome: None when
    both give the same final table (as multisets) or the same error, else the rows that
    differ. A pipeline whose result depends on chance (random(), now(), LIMIT without a total
    order) gets verdicts that a regrade could contradict; one more snapshot replay per artifact
    catches the common cases at the price of one replay."""
    second = replay(spec, script, schedule(spec, "snapshot", 0), limits,
                    engine_name=engine_name)
    if first.failure is not None or second.failure is not None:
        a, b = first.failure, second.failure
        if a is not None and b is not None and (a.phase, a.batch, a.message) == \
                (b.phase, b.batch, b.message):
            return None
        return {"first": None if a is None else a.message,
                "second": None if b is None else b.message}
    assert first.table is not None and second.table is not None
    diff = compare_all(first.tables, second.tables,
                       [as_read(t, target) for t, target in zip(first.tables, spec.targets,
                                                                strict=True)])
    return None if diff.ok else diff.document()


def as_read(table: Table, target: Target) -> Target:
    """`target` as a replay left it: the columns and types read back (an extra column or an
    undeclared type is the pipeline's choice, the same in both replays, not chance), keyed on
    the task's key where the table has it, else on every column."""
    declared = {k.lower() for k in target.key}
    key = tuple(n for n, _ in table.columns if n.lower() in declared)
    if len(key) != len(declared):
        key = tuple(n for n, _ in table.columns)
    return Target(target.name, tuple(Column(n, t) for n, t in table.columns), key,
                  target.tolerance)
