"""The admissibility gate: a task enters the corpus only if every check below passes.

The gate's seed set is fixed: `GATE_SEEDS` = 0, 1, 2. Three seeds give every hazard three
different fault placements (enough for each declared negative to be caught at least once, and
for a gold that survives only a lucky placement to be caught) while the whole corpus (52 tasks,
about 4,900 replays) takes about a quarter of an hour on two cores. `snapshot` does not depend
on the seed (the whole log in one batch), so it is replayed once; every other schedule is
replayed once per gate seed.

Checks, as they are named in the gate's output:

- ``reference``     `reference.sql` runs over the complete log and is unique on the target key.
- ``gold``          `gold.sql` passes `snapshot`, `in_order`, `trickle` and every declared hazard,
                    the hazards with the every-batch check (after every completed run, not
                    only the last).
- ``negative NAME`` the negative passes `snapshot` and both controls; fails (FAIL or ERROR) every
                    hazard it declares on at least one gate seed; passes every other declared
                    hazard on every gate seed.
- ``perturbation``  every declared hazard perturbs delivery as its kind intends, visibly in the
                    schedule itself, on every gate seed (`arrivalbench.corpus.perturbation`); for
                    `late_arrival`, the gold replayed on the schedule without its final batch
                    also no longer equals the reference (the withheld records change the
                    target).
- ``coverage``      every declared hazard is failed by at least one negative control (no hazard
                    is vacuous).
- ``leakage``       the title, the ticket and the unhinted and budget prompts built from it are
                    free of hazard vocabulary (`arrivalbench.corpus.leakage`).
- ``idiom``         `gold_idiom`, when given, names one of `IDIOMS` (`arrivalbench.corpus.labels`).
- ``tier``          a built-in task names its `tier:` and a `family:` among `FAMILIES` (a user's
                    own task may leave both out: it is then core, of no family).
- ``incremental``   `incremental.sql`, when the task ships one, passes snapshot, both controls and
                    every declared hazard on every gate seed, and on `trickle` stays within the
                    task's read budget (`arrivalbench.corpus.budget`); a breach names the figure.
                    Every built-in task (a folder of the package's own corpus) must ship one,
                    proving its budget attainable; a user's own task, anywhere else, may leave it
                    out.
- ``independent``   `independent.sql`, a second reference written from the ticket and schemas
                    alone, agrees with `reference.sql` on the complete log and on the records
                    delivered after every batch of `in_order` seed 0. A built-in task must ship
                    one; a user's own task is checked when it has one
                    (`arrivalbench.corpus.independent`).

On another engine (`run(..., engine="postgres")`) the gold and the negatives are the task's
pipelines for that engine (`gold.postgres.sql`, `negatives/<name>.postgres.sql`), each negative
is held to the hazards it declares on that engine, and ``incremental`` is left out (read cost is
measured on DuckDB alone). A task without pipelines for the engine is bad input.

Each artifact (the gold and every negative) is graded once per (schedule, seed) and the verdicts
are reused by every check that needs them; a negative stops replaying a hazard it declares at the
first seed that fails it, since one failure is all the check asks for. The work runs on an
executor (`arrivalbench.study.executors`), one unit per artifact of a task (a `Job`), the biggest
tasks first; a worker that dies under a job fails that artifact's check.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from arrivalbench import words
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Failure, Limits, Table, backend
from arrivalbench.core.grading import CHECKED_CONTROLS, GradeOptions, Point, grade, plan_kinds
from arrivalbench.core.grading import schedule as make_schedule
from arrivalbench.core.oracle import compare_all
from arrivalbench.core.replay import expected_all, replay
from arrivalbench.core.schedules import Schedule
from arrivalbench.core.task import (
    HAZARDS,
    Target,
    TaskSpec,
    load_spec,
    load_specs,
    source_of,
)
from arrivalbench.core.values import canonical_json, to_json
from arrivalbench.corpus.findings import ANY_SEED, Finding
from arrivalbench.corpus.independent import independent
from arrivalbench.corpus.labels import idiom, is_builtin, tier
from arrivalbench.corpus.leakage import scan
from arrivalbench.corpus.perturbation import visible
from arrivalbench.corpus.prompts import build
from arrivalbench.errors import TaskError
from arrivalbench.study import executors
from arrivalbench.study.executors import Executor, ProtocolError, peak_rss, unit_spec

GATE_SEEDS: tuple[int, ...] = (0, 1, 2)

@dataclass(frozen=True)
class Graded:
    schedule: str
    seed: int
    verdict: str
    reason: str


@dataclass(frozen=True)
class JobResult:
    task: str
    artifact: str  # "gold" or the negative's name
    graded: tuple[Graded, ...] = ()
    findings: tuple[Finding, ...] = ()
    replays: int = 0
    broken_reference: bool = False
    cpu_seconds: float = 0.0  # process time of the job: what the work costs on one core
    peak_rss: int = 0  # bytes, of the worker process so far


DIED = "the worker grading it died (a crash or a kill) before it finished"
TIMED_OUT = "the worker grading it ran past every bound of its replays and was killed"


@dataclass(frozen=True)
class Job:
    """One artifact of one task on the gate's plan: the unit of work the executor hands a
    worker. `task` is how a worker loads the task, `task_digest` what it must find there."""

    task: str
    task_digest: str
    task_id: str
    artifact: str  # "gold", "incremental" or a negative's name
    seeds: tuple[int, ...]
    engine: EngineName = DEFAULT_ENGINE

    def where(self) -> str:
        return f"gating {self.task_id} {self.artifact}"

    def check_name(self) -> str:
        return self.artifact if self.artifact in ("gold", "incremental") \
            else f"negative {self.artifact}"

    def seconds(self) -> float:
        """Every replay of the job's plan at its bound (and the nondeterminism check's)."""
        replays = 2 + len(self.seeds) * (len(CHECKED_CONTROLS) + len(HAZARDS))
        return replays * Limits().replay_seconds

    def died(self) -> JobResult:
        """A death is the artifact's failed check, not the end of the gate."""
        return self._stopped(DIED)

    def timed_out(self) -> JobResult:
        return self._stopped(TIMED_OUT)

    def _stopped(self, why: str) -> JobResult:
        return JobResult(self.task_id, self.artifact,
                         findings=(Finding(self.task_id, self.check_name(), why),))

    def check(self, result: JobResult) -> None:
        if (result.task, result.artifact) != (self.task_id, self.artifact):
            raise ProtocolError(f"a worker answered {result.task} {result.artifact} for "
                               f"{self.task_id} {self.artifact}")


@dataclass(frozen=True)
class Report:
    tasks: tuple[str, ...]
    findings: tuple[Finding, ...]
    replays: int
    seconds: float
    seeds: tuple[int, ...] = GATE_SEEDS
    failed_tasks: tuple[str, ...] = field(default=())
    cpu_seconds: float = 0.0
    engine: EngineName = DEFAULT_ENGINE

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        seeds = ", ".join(map(str, self.seeds))
        on = "" if self.engine == DEFAULT_ENGINE else f" on {self.engine}"
        head = (f"gate{on}: {len(self.tasks)} task{'s' if len(self.tasks) != 1 else ''}, "
                f"seeds {seeds}, {self.replays} replays, {self.seconds:.1f} s "
                f"({self.cpu_seconds:.0f} s of replay work)")
        if self.ok:
            return f"{head}: every check passes"
        return (f"{head}: {len(self.findings)} failed check"
                f"{'s' if len(self.findings) != 1 else ''} in {len(self.failed_tasks)} of "
                f"{len(self.tasks)} tasks ({', '.join(self.failed_tasks)})")


# -- the plan ------------------------------------------------------------------------------------


def points(spec: TaskSpec, seeds: Sequence[int] = GATE_SEEDS) -> list[Point]:
    """`snapshot` once, then both controls and every declared hazard on each gate seed."""
    first, *kinds = plan_kinds(spec.hazards)
    return [Point(first, 0), *(Point(k, s) for k in kinds for s in seeds)]


# -- the jobs (run in worker processes) ----------------------------------------------------------


def _grade_artifact(spec: TaskSpec, script: str, seeds: Sequence[int],
                    enough: frozenset[str] = frozenset(), every_batch: bool = False,
                    engine: EngineName = DEFAULT_ENGINE) -> list[Graded]:
    """Every point of the plan, except that a schedule kind in `enough` stops at its first
    failing seed: a negative need only fail a declared hazard once, and nothing else is read
    from those verdicts."""
    out: list[Graded] = []
    done: set[str] = set()
    for point in points(spec, seeds):
        if point.schedule in done:
            continue
        options = GradeOptions(engine, every_batch=every_batch and point.schedule in spec.hazards)
        [graded] = grade(spec, script, [point], options=options)
        verdict = graded.verdict
        out.append(Graded(point.schedule, point.seed, verdict.status,
                          "" if verdict.status == "PASS" else words.line(verdict)))
        if point.schedule in enough and verdict.status != "PASS":
            done.add(point.schedule)
    return out


def key_repeats(target: Target, reference: Table) -> str | None:
    """Why a reference's result is not unique on its target's key ("not unique on the target
    key (..): 2 keys repeat, e.g. .."), or None when it is: the gate's check, and `grade`'s
    on a user's task folder."""
    key_at = [i for i, (name, _t) in enumerate(reference.columns)
              if name.lower() in {k.lower() for k in target.key}]
    keys = Counter(canonical_json([to_json(row[i]) for i in key_at]) for row in reference.rows)
    repeated = [k for k, n in keys.items() if n > 1]
    if not repeated:
        return None
    return (f"not unique on the target key ({', '.join(target.key)}): "
            f"{words.count(len(repeated), 'key')} repeat, e.g. {sorted(repeated)[0]}")


def run_job(path: str, artifact: str, seeds: tuple[int, ...] = GATE_SEEDS,
            engine: EngineName = DEFAULT_ENGINE) -> JobResult:
    """Grade one artifact of one task on the gate's plan on `engine`; the gold job also runs
    the reference and the perturbation checks."""
    return _run_job(load_spec(path), artifact, seeds, engine)


def _run_job(spec: TaskSpec, artifact: str, seeds: tuple[int, ...],
             engine: EngineName = DEFAULT_ENGINE) -> JobResult:
    try:
        expected_all(spec)
    except TaskError as exc:
        broken = (Finding(spec.id, "reference", str(exc)),) if artifact == "gold" else ()
        return JobResult(spec.id, artifact, findings=broken, broken_reference=True)
    if artifact == "incremental":
        return _incremental_job(spec, seeds)
    if artifact != "gold":
        negative = next(n for n in spec.negatives if n.name == artifact)
        sql = negative.sql_for(engine)
        if sql is None:
            raise spec.missing(engine, negative.file_for(engine))
        graded = _grade_artifact(spec, sql, seeds, frozenset(negative.fails_on(engine)),
                                 engine=engine)
        return JobResult(spec.id, artifact, tuple(graded), replays=len(graded))

    findings: list[Finding] = []
    for target, table in zip(spec.targets, expected_all(spec), strict=True):
        repeats = key_repeats(target, table)
        if repeats is not None:
            which = "" if len(spec.targets) == 1 else f"{target.reference_file}: "
            findings.append(Finding(spec.id, "reference", which + repeats))
    findings += independent(spec)
    gold = spec.gold_for(engine)
    graded = _grade_artifact(spec, gold, seeds, every_batch=True, engine=engine)
    findings += [Finding(spec.id, "gold", g.reason, g.schedule, g.seed)
                 for g in graded if g.verdict != "PASS"]
    statements = _statement_count(gold, engine)
    replays = len(graded)
    for hazard in spec.hazards:
        for seed in seeds:
            sched = make_schedule(spec, hazard, seed)
            reason = visible(spec, sched, statements)
            if reason is None and hazard == "late_arrival":
                reason = _withheld_changes_target(spec, sched, engine)
                replays += 1
            if reason is not None:
                findings.append(Finding(spec.id, "perturbation", reason, hazard, seed))
    return JobResult(spec.id, "gold", tuple(graded), tuple(findings), replays)


def _incremental_job(spec: TaskSpec, seeds: tuple[int, ...]) -> JobResult:
    from arrivalbench.corpus.budget import check_incremental

    breaches, replays = check_incremental(spec, points(spec, seeds))
    return JobResult(spec.id, "incremental", findings=tuple(
        Finding(spec.id, "incremental", b.reason, b.schedule, b.seed) for b in breaches),
        replays=replays)


def work(job: Job) -> JobResult:
    """The executor's work function for the gate: one job, with what it cost."""
    start = time.process_time()
    result = _run_job(unit_spec(job.task, job.task_digest), job.artifact, job.seeds, job.engine)
    return replace(result, cpu_seconds=time.process_time() - start, peak_rss=peak_rss())


def _statement_count(script: str, engine: EngineName = DEFAULT_ENGINE) -> int:
    try:
        return len(backend(engine).split(script))
    except Failure:
        return 0


def _withheld_changes_target(spec: TaskSpec, sched: Schedule,
                             engine: EngineName = DEFAULT_ENGINE) -> str | None:
    """The gold on the schedule without its final batch must differ from the reference."""
    truncated = replace(sched, batches=sched.batches[:-1])
    outcome = replay(spec, spec.gold_for(engine), truncated, engine_name=engine)
    if outcome.failure is not None:
        return (f"the gold without the final batch stops with an error, so the withheld records "
                f"cannot be judged: {outcome.failure.message}")
    assert outcome.table is not None
    if compare_all(expected_all(spec), outcome.tables, spec.targets).ok:
        return ("the withheld records do not change the target: the gold without the final "
                "batch already equals the reference")
    return None


# -- checks made in the parent -------------------------------------------------------------------


def leakage(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Finding]:
    """The prompts scanned are those a model writing for `engine` gets."""
    findings = []
    for what, text in (("title", spec.title), ("ticket", spec.ticket),
                       ("unhinted prompt", build(spec, "unhinted", engine=engine)),
                       ("budget prompt", build(spec, "budget", engine=engine))):
        for leak in scan(text):
            findings.append(Finding(spec.id, "leakage", f"the {what} names a hazard: "
                                    f"{leak.describe()}"))
    return findings


def missing_incremental(spec: TaskSpec) -> list[Finding]:
    """A built-in task must ship `incremental.sql`: the corpus proves every budget it states
    attainable. A user's own task may leave it out (its budget is then unproven, not wrong)."""
    if spec.incremental_sql is not None or not is_builtin(spec):
        return []
    return [Finding(spec.id, "incremental", "no incremental.sql: a built-in task ships a gold "
                    "that passes every declared hazard within its read budget on trickle "
                    f"({spec.budget.read_amplification:g})")]


def negative_findings(spec: TaskSpec, result: JobResult,
                      seeds: Sequence[int] = GATE_SEEDS, engine: EngineName = DEFAULT_ENGINE
                      ) -> list[Finding]:
    negative = next(n for n in spec.negatives if n.name == result.artifact)
    fails = negative.fails_on(engine)
    check = f"negative {negative.name}"
    findings = []
    for g in result.graded:
        if g.schedule not in spec.hazards and g.verdict != "PASS":
            findings.append(Finding(spec.id, check, f"must pass every control, got {g.reason}",
                                    g.schedule, g.seed))
    for hazard in spec.hazards:
        verdicts = [g for g in result.graded if g.schedule == hazard]
        if hazard in fails:
            if verdicts and all(g.verdict == "PASS" for g in verdicts):
                findings.append(Finding(
                    spec.id, check, f"declared to fail {hazard}, but passes it on every gate "
                    f"seed ({', '.join(map(str, seeds))})", hazard, ANY_SEED))
        else:
            findings += [Finding(spec.id, check, f"fails {hazard}, which it does not declare: "
                                 f"{g.reason}", hazard, g.seed)
                         for g in verdicts if g.verdict != "PASS"]
    return findings


def coverage(spec: TaskSpec, results: Sequence[JobResult],
             engine: EngineName = DEFAULT_ENGINE) -> list[Finding]:
    findings = []
    for hazard in spec.hazards:
        caught = any(g.schedule == hazard and g.verdict != "PASS"
                     for r in results if r.artifact != "gold" for g in r.graded)
        if not caught:
            names = [n.name for n in spec.negatives if hazard in n.fails_on(engine)]
            why = (f"declared by {', '.join(names)} but failed on no gate seed" if names
                   else "no negative control declares it")
            findings.append(Finding(spec.id, "coverage", f"no negative control fails {hazard} "
                                    f"({why}): the hazard is vacuous", hazard, ANY_SEED))
    return findings


# -- the gate ------------------------------------------------------------------------------------


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def jobs(specs: Sequence[TaskSpec], seeds: tuple[int, ...] = GATE_SEEDS,
         engine: EngineName = DEFAULT_ENGINE) -> list[Job]:
    """One job per artifact, the biggest tasks first, so that no worker is left with a long
    one at the end (an executor takes the tasks in this order when it has a choice). The
    incremental check runs on DuckDB only, where read cost is measured."""
    weight = {s.digest: sum(f.stat().st_size for f in s.log_files) * len(points(s, seeds))
              for s in specs}
    measured = engine == DEFAULT_ENGINE
    out = [Job(source_of(spec), spec.digest, spec.id, artifact, seeds, engine) for spec in specs
           for artifact in ("gold", *(n.name for n in spec.negatives),
                            *(("incremental",) if spec.incremental_sql and measured else ()))]
    return sorted(out, key=lambda job: -weight[job.task_digest])


def run(specs: Sequence[TaskSpec], workers: int | None = None,
        seeds: tuple[int, ...] = GATE_SEEDS, engine: EngineName = DEFAULT_ENGINE, *,
        executor: str | Executor = "local") -> Report:
    """Every check on every task, its pipelines run on `engine`. Jobs (one per artifact) run on
    `executor` (a name in `executors.EXECUTORS` with `workers` workers, or one made with `work`
    as its work). A task without pipelines for `engine` raises TaskError first."""
    start = time.perf_counter()
    for spec in specs:  # bad input before any replay
        spec.gold_for(engine)
        spec.negatives_for(engine)
    planned = jobs(specs, seeds, engine)
    results: list[JobResult] = []
    if isinstance(executor, str):
        executor = executors.make(executor, min(workers or default_workers(),
                                                len(planned)) or 1, work)
    executor.run(planned, lambda batch: results.extend(r for _job, r in batch))

    by_task: dict[str, list[JobResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    findings: list[Finding] = []
    for spec in specs:
        mine = by_task.get(spec.id, [])
        findings += tier(spec) + leakage(spec, engine) + idiom(spec)
        if engine == DEFAULT_ENGINE:  # read cost is measured on DuckDB alone
            findings += missing_incremental(spec)
        for result in mine:
            findings += result.findings
        if any(r.broken_reference for r in mine):
            continue
        for result in mine:
            if result.artifact not in ("gold", "incremental"):
                findings += negative_findings(spec, result, seeds, engine)
        findings += coverage(spec, mine, engine)
    ids = [s.id for s in specs]
    findings.sort(key=lambda f: f.order(ids))
    failed = tuple(dict.fromkeys(f.task for f in findings))
    return Report(tuple(ids), tuple(findings), sum(r.replays for r in results),
                  time.perf_counter() - start, seeds, failed,
                  sum(r.cpu_seconds for r in results), engine)


def load(refs: Iterable[str | Path]) -> list[TaskSpec]:
    """The tasks to gate; a bad reference raises TaskError (bad input, exit status 2)."""
    return load_specs(refs)
