"""Grading one artifact on one task: the replay plan, schedules, and every verdict's making.

`grade` is the one way to grade an artifact over the points of a plan; `judge` grades one
schedule (an explicit plan, a shrunk one); `stopped` is the verdict of a replay whose worker
did not answer. Every byte of a verdict is made here, inside the harness version.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from arrivalbench.core import lateness
from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Limits, Phase, Table, backend
from arrivalbench.core.lateness import Allowance
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import compare_all
from arrivalbench.core.replay import Outcome, expected_all, replay
from arrivalbench.core.schedules import CONTROLS, KINDS, Params, Schedule, make
from arrivalbench.core.task import Column, Landing, Target, TaskSpec
from arrivalbench.core.values import JSON, digest
from arrivalbench.core.verdict import Status, Verdict
from arrivalbench.errors import ArrivalBenchError, ParameterError

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
        raise ParameterError("seeds", seeds, "give a whole number of at least 1")


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


@dataclass(frozen=True)
class GradeOptions:
    """How a replay is graded, beside its task, artifact and schedule: the engine the artifact
    runs on (the reference is always DuckDB's), the limits it runs under, and what is checked
    or measured besides the final table."""

    engine: EngineName = DEFAULT_ENGINE
    limits: Limits = Limits()
    every_batch: bool = False  # also compare the target after every completed run
    measure: bool = False  # also measure what every run reads and writes
    landing: Landing = "batch"  # how a batch reaches the sources (part of a verdict's key)
    # The records the oracle holds the artifact to: every one (None), those at most a
    # duration late, or those inside the artifact's own allowance (`lateness.MODEL`). Part of
    # a verdict's key.
    allowance: Allowance | str | None = None


@dataclass(frozen=True)
class Graded:
    """One replay graded: `verdict` under the options asked for; `final`, the verdict of the
    final table alone (the same unless the every-batch check was asked for, then it is the
    verdict that check leaves aside); the replay's outcome; and for `snapshot`, what a second
    replay changed (None: nothing, or not checked)."""

    verdict: Verdict
    final: Verdict
    outcome: Outcome
    nondeterministic: dict[str, JSON] | None = None


def grade(spec: TaskSpec, artifact: Artifact | str, points: Iterable[Point], *,
          options: GradeOptions = GradeOptions()) -> Iterator[Graded]:
    """Grade `artifact` at each point of a plan, lazily, in order: build the point's schedule,
    replay the artifact on it and compare its target with the reference. On `snapshot`, once
    per artifact, one more replay checks that the result does not depend on chance. The
    reference is computed first, so a broken task raises TaskError before any replay runs."""
    expected_all(spec, options.limits)
    for point in points:
        graded = judge(spec, artifact, schedule(spec, point.schedule, point.seed),
                       options=options)
        if point.schedule == "snapshot":
            graded = replace(graded, nondeterministic=_chance(spec, artifact, graded.outcome,
                                                               options))
        yield graded


def judge(spec: TaskSpec, artifact: Artifact | str, sched: Schedule, *,
          options: GradeOptions = GradeOptions(), plan: bool = False) -> Graded:
    """Replay `sched` and judge its final table (and, with the every-batch check, the table
    after each completed run): an `ERROR` when the replay stopped, a `FAIL` with the typed
    difference when the target differs, else `PASS`. A generated schedule delivers the whole
    log, so its final table is judged against the reference over the complete log; an explicit
    `plan` may deliver less, and is judged against the reference over what it delivered. Under
    an allowance the reference is over the records inside it (the bounded reference); without
    one, a FAIL whose every difference the records beyond the artifact's own allowance explain
    says so (`beyond_allowance`)."""
    from arrivalbench.core.checkpoints import final_delivered, references_all, replay_checked

    limits, engine = options.limits, options.engine
    log = load_log(spec)
    bound = allowance_of(artifact, options.allowance)
    late = lateness.outside(log, sched, bound) if bound is not None else frozenset()
    if late:
        check_bounded(spec, options.allowance)
    unread = landed_columns(spec, options.landing)
    checks = None
    if options.every_batch:
        checks = replay_checked(spec, artifact, sched, limits, measure=options.measure,
                                engine_name=engine, first_only=True, landing=options.landing,
                                late=late)
        outcome = checks.outcome
    else:
        outcome = replay(spec, artifact, sched, limits, measure=options.measure,
                         engine_name=engine, landing=options.landing)
    status: Status
    detail: dict[str, JSON]
    if outcome.failure is not None:
        status, detail = "ERROR", _error_detail(outcome.failure.phase, outcome.failure.batch,
                                                outcome.failure.statement,
                                                outcome.failure.message)
    else:
        want = references_all(spec, [final_delivered(sched) - late], limits)[0] \
            if plan or late else expected_all(spec, limits)
        diff = compare_all(want, outcome.tables, spec.targets, unread=unread)
        status, detail = ("PASS", {}) if diff.ok else ("FAIL", diff.document())
        if status == "FAIL" and options.allowance is None:
            detail.update(_beyond_own(spec, artifact, sched, outcome, limits=limits,
                                      unread=unread))
    final = _verdict(spec, artifact_digest(artifact), sched, status, detail, options)
    first = checks.first_divergence if checks is not None else None
    if first is None:
        return Graded(final, final, outcome)
    detail = {**detail, "first_divergence": first.document()}
    if status == "PASS":
        # Right at the end, wrong on the way: the contract asks for the result after every
        # run, so a lost target mid-way is an error and a wrong one a failure.
        if first.diff is None:
            status = "ERROR"
            detail.update(_error_detail("read-target", first.batch, None, first.error))
        else:
            status = "FAIL"
        detail["reconverged"] = True
    return Graded(_verdict(spec, final.artifact, sched, status, detail, options), final,
                  outcome)


def allowance_of(artifact: Artifact | str, asked: Allowance | str | None) -> Allowance | None:
    """The allowance the oracle holds `artifact` to: the one asked for, the artifact's own
    for `lateness.MODEL` (a ParameterError when it declares none), or none."""
    if asked is None or isinstance(asked, Allowance):
        return asked
    own = None if isinstance(artifact, str) else artifact.allowance
    if own is None:
        raise ParameterError("allowed_lateness", asked, "the artifact declares no allowance of "
                             "its own (a dbt microbatch model's lookback); give a duration")
    return own


def check_bounded(spec: TaskSpec, allowance: Allowance | str | None) -> None:
    """A bounded reference needs a reference over a part of the log."""
    from arrivalbench.core.checkpoints import reads_its_sources

    if not reads_its_sources(spec):
        raise ParameterError("allowed_lateness", lateness.key_text(allowance),
                             f"task {spec.id}'s reference is its rows over all the data, not "
                             "a query over its sources: there is no reference over the records "
                             "inside an allowance; grade it without")


def landed_columns(spec: TaskSpec, landing: Landing) -> frozenset[str]:
    """The columns no comparison reads: under accumulating landing, the sources' load-time
    columns (a model that carries its source's load time has one in its target)."""
    if landing == "batch":
        return frozenset()
    return frozenset(s.load_time.lower() for s in spec.sources)


def _beyond_own(spec: TaskSpec, artifact: Artifact | str, sched: Schedule, outcome: Outcome,
                *, limits: Limits, unread: frozenset[str]) -> dict[str, JSON]:
    """`{"beyond_allowance": ...}` when the final table is the reference over the records
    inside the artifact's own allowance (every difference is late data the artifact
    declares it drops), else nothing."""
    from arrivalbench.core.checkpoints import final_delivered, reads_its_sources, references_all

    own = None if isinstance(artifact, str) else artifact.allowance
    if own is None or not reads_its_sources(spec):
        return {}
    log = load_log(spec)
    late = lateness.outside(log, sched, own)
    if not late:
        return {}
    bounded = references_all(spec, [final_delivered(sched) - late], limits)[0]
    if not compare_all(bounded, outcome.tables, spec.targets, unread=unread).ok:
        return {}
    return {"beyond_allowance": lateness.late_records(spec, log, sched, late, own)}


StopCause = Literal["died", "timed_out"]
# What a replay's verdict says when its worker did not answer: the same words whatever the
# executor and however the worker died (the signal or exit status is the executor's to count),
# so that the bytes are too.
STOPPED: dict[StopCause, tuple[Phase, str]] = {
    "died": ("run", "worker died: the process grading this replay ended abruptly (a crash or "
                    "a kill)"),
    "timed_out": ("timeout", "the replay ran past its wall-clock limit and its worker did not "
                             "stop it; the worker was killed"),
}


def stopped(spec: TaskSpec, artifact: str, sched: Schedule, cause: StopCause, *,
            options: GradeOptions = GradeOptions()) -> Verdict:
    """The ERROR verdict of a replay of `sched` whose worker died under it or was killed
    (`artifact` is its digest)."""
    phase, message = STOPPED[cause]
    return _verdict(spec, artifact, sched, "ERROR", _error_detail(phase, None, None, message),
                    options)


def _error_detail(phase: Phase, batch: int | None, statement: int | None,
                  message: str | None) -> dict[str, JSON]:
    return {"phase": phase, "batch": batch, "statement": statement, "message": message}


def _verdict(spec: TaskSpec, artifact: str, sched: Schedule, status: Status,
             detail: dict[str, JSON], options: GradeOptions) -> Verdict:
    engine = backend(options.engine)
    return Verdict(spec.id, spec.digest, sched.kind, sched.seed, sched.digest, artifact, status,
                   detail, engine.NAME, engine.version(), landing=options.landing,
                   allowance=lateness.key_text(options.allowance))


def _chance(spec: TaskSpec, artifact: Artifact | str, first: Outcome, options: GradeOptions
            ) -> dict[str, JSON] | None:
    """Replay `snapshot` once more and compare with `first`, its earlier outcome: None when
    both give the same final table (as multisets) or the same error, else the rows that
    differ. A pipeline whose result depends on chance (random(), now(), LIMIT without a total
    order) gets verdicts that a regrade could contradict; one more snapshot replay per artifact
    catches the common cases at the price of one replay."""
    second = replay(spec, artifact, schedule(spec, "snapshot", 0), options.limits,
                    engine_name=options.engine, landing=options.landing)
    if first.failure is not None or second.failure is not None:
        a, b = first.failure, second.failure
        if a is not None and b is not None and (a.phase, a.batch, a.message) == \
                (b.phase, b.batch, b.message):
            return None
        return {"first": None if a is None else a.message,
                "second": None if b is None else b.message}
    assert first.table is not None and second.table is not None
    diff = compare_all(first.tables, second.tables,
                       [_as_read(t, target) for t, target in zip(first.tables, spec.targets,
                                                                 strict=True)])
    return None if diff.ok else diff.document()


def _as_read(table: Table, target: Target) -> Target:
    """`target` as a replay left it: the columns and types read back (an extra column or an
    undeclared type is the pipeline's choice, the same in both replays, not chance), keyed on
    the task's key where the table has it, else on every column."""
    declared = {k.lower() for k in target.key}
    key = tuple(n for n, _ in table.columns if n.lower() in declared)
    if len(key) != len(declared):
        key = tuple(n for n, _ in table.columns)
    return Target(target.name, tuple(Column(n, t) for n, t in table.columns), key,
                  target.tolerance)
