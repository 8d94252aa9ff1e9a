"""The admissibility gate (DESIGN §6): a task enters the corpus only if every check below passes.

The gate's seed set is fixed: `GATE_SEEDS` = 0, 1, 2. Three seeds give every hazard three
different fault placements (enough for each declared negative to be caught at least once, and
for a gold that survives only a lucky placement to be caught) while the whole corpus stays at a
few minutes on two cores. `snapshot` does not depend on the seed (the whole log in one batch), so
it is replayed once; every other schedule is replayed once per gate seed.

Checks, as they are named in the gate's output:

- ``reference``     `reference.sql` runs over the complete log and is unique on the target key.
- ``gold``          `gold.sql` passes `snapshot`, `in_order`, `trickle` and every declared hazard.
- ``negative NAME`` the negative passes `snapshot` and both controls; fails (FAIL or ERROR) every
                    hazard it declares on at least one gate seed; passes every other declared
                    hazard on every gate seed.
- ``perturbation``  every declared hazard perturbs delivery as its kind intends, visibly in the
                    schedule itself, on every gate seed:
                    `duplicates` repeats a record inside one batch and another in a later batch;
                    `out_of_order` delivers a record in an earlier batch than one that precedes it
                    in event time (in a change stream: a later version of an entity in an earlier
                    batch than an earlier version of it);
                    `late_arrival` withholds records older than data already delivered, and the
                    gold replayed on the schedule without its final batch no longer equals the
                    reference (the withheld records change the target);
                    `crash_retry` aborts a run in the middle of the gold script and another after
                    its last statement, each followed by a run of the same batch;
                    `backfill` ends with a batch that redelivers records delivered before together
                    with records held back, after data newer than any of them;
                    `schema_evolution` adds the declared column from a batch after the first.
- ``coverage``      every declared hazard is failed by at least one negative control (no hazard
                    is vacuous).
- ``leakage``       the title, the ticket and the unhinted and budget prompts built from it are
                    free of hazard vocabulary (`arrivalbench.leakage`).
- ``idiom``         `gold_idiom`, when given, names one of `IDIOMS`.
- ``incremental``   `incremental.sql`, when the task ships one, passes snapshot, both controls and
                    every declared hazard on every gate seed, and on `trickle` stays within the
                    task's read budget (`arrivalbench.budget`); a breach names the figure.

Each artifact (the gold and every negative) is graded once per (schedule, seed) and the verdicts
are reused by every check that needs them; a negative stops replaying a hazard it declares at the
first seed that fails it, since one failure is all the check asks for. Work is spread over
processes, one job per artifact, the biggest first.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from arrivalbench.engine import Failure, Limits
from arrivalbench.engine import duckdb as engine
from arrivalbench.errors import TaskError
from arrivalbench.grading import Point, grade
from arrivalbench.grading import schedule as make_schedule
from arrivalbench.leakage import scan
from arrivalbench.log import Event, load_log
from arrivalbench.oracle import compare
from arrivalbench.prompts import build
from arrivalbench.replay import expected, replay
from arrivalbench.schedules import CONTROLS, Schedule
from arrivalbench.task import TaskSpec, load_spec
from arrivalbench.values import canonical_json, sort_key, to_json
from arrivalbench.verdict import Verdict

GATE_SEEDS: tuple[int, ...] = (0, 1, 2)

IDIOMS: tuple[str, ...] = (
    "anti_join_history",  # anti-join staging into a history table
    "versioned_upsert",  # ON CONFLICT ... DO UPDATE ... WHERE, or MERGE, guarded by version
    "batch_transaction",  # one transaction per batch
    "recompute_from_history",  # keep every record, recompute from a deduplicated history
    "delete_reinsert",  # delete the affected keys of the target and insert them again
)

CHECK_ORDER = ("reference", "gold", "negative", "perturbation", "coverage", "leakage", "idiom",
               "incremental")


@dataclass(frozen=True)
class Finding:
    """One failed check."""

    task: str
    check: str
    reason: str
    schedule: str | None = None
    seed: int | None = None

    def line(self) -> str:
        schedule = self.schedule or "-"
        seed = "-" if self.seed is None else "*" if self.seed < 0 else str(self.seed)
        return f"{self.task}: {self.check}: schedule {schedule}, seed {seed}: {self.reason}"

    def order(self, tasks: Sequence[str]) -> tuple[object, ...]:
        kinds = ("snapshot", *CONTROLS[1:], "late_arrival", "out_of_order", "duplicates",
                 "crash_retry", "backfill", "schema_evolution")
        return (tasks.index(self.task) if self.task in tasks else len(tasks),
                CHECK_ORDER.index(self.check.split()[0]), self.check,
                kinds.index(self.schedule) if self.schedule in kinds else -1,
                -2 if self.seed is None else self.seed, self.reason)


ANY_SEED = -1  # Finding.seed for "on no gate seed": printed as `*`


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


@dataclass(frozen=True)
class Report:
    tasks: tuple[str, ...]
    findings: tuple[Finding, ...]
    replays: int
    seconds: float
    seeds: tuple[int, ...] = GATE_SEEDS
    failed_tasks: tuple[str, ...] = field(default=())
    cpu_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        seeds = ", ".join(map(str, self.seeds))
        head = (f"gate: {len(self.tasks)} task{'s' if len(self.tasks) != 1 else ''}, "
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
    kinds = [*CONTROLS[1:], *spec.hazards]
    return [Point("snapshot", 0), *(Point(k, s) for k in kinds for s in seeds)]


def describe(verdict: Verdict) -> str:
    """One line on why a verdict is not PASS."""
    d = verdict.detail
    if verdict.verdict == "ERROR":
        where = ", ".join(w for w in (
            f"batch {d['batch']}" if d.get("batch") is not None else "",
            f"statement {d['statement']}" if d.get("statement") is not None else "") if w)
        return f"ERROR ({d.get('phase')}{', ' + where if where else ''}): {d.get('message')}"
    if verdict.verdict == "PASS":
        return "PASS"
    parts = [f"{p['problem']} column {p['column']}" for p in d.get("schema", [])]
    parts += [f"{n} {kind}" for kind, n in d.get("counts", {}).items() if n]
    rows = d.get("rows", {})
    text = "FAIL: " + ", ".join(parts)
    if rows:
        text += f" (expected {rows['expected']} rows, got {rows['got']})"
    for kind, examples in d.get("examples", {}).items():
        example = examples[0]
        text += f"; e.g. {kind} {canonical_json(example.get('key'))}"
        if kind == "changed":
            text += (f" {example['column']}: got {canonical_json(example['got'])}, expected "
                     f"{canonical_json(example['expected'])}")
        break
    return text


# -- the jobs (run in worker processes) ----------------------------------------------------------


def _grade_artifact(spec: TaskSpec, script: str, seeds: Sequence[int],
                    enough: frozenset[str] = frozenset()) -> list[Graded]:
    """Every point of the plan, except that a schedule kind in `enough` stops at its first
    failing seed: a negative need only fail a declared hazard once, and nothing else is read
    from those verdicts."""
    out: list[Graded] = []
    done: set[str] = set()
    for point in points(spec, seeds):
        if point.schedule in done:
            continue
        verdict, _outcome = grade(spec, script, point)
        out.append(Graded(point.schedule, point.seed, verdict.verdict,
                          "" if verdict.verdict == "PASS" else describe(verdict)))
        if point.schedule in enough and verdict.verdict != "PASS":
            done.add(point.schedule)
    return out


def run_job(path: str, artifact: str, seeds: tuple[int, ...] = GATE_SEEDS) -> JobResult:
    """Grade one artifact of one task on the gate's plan; the gold job also runs the reference
    and the perturbation checks."""
    spec = load_spec(path)
    try:
        reference = expected(spec)
    except TaskError as exc:
        broken = (Finding(spec.id, "reference", str(exc)),) if artifact == "gold" else ()
        return JobResult(spec.id, artifact, findings=broken, broken_reference=True)
    if artifact == "incremental":
        return _incremental_job(spec, seeds)
    if artifact != "gold":
        negative = next(n for n in spec.negatives if n.name == artifact)
        graded = _grade_artifact(spec, negative.sql, seeds, frozenset(negative.fails))
        return JobResult(spec.id, artifact, tuple(graded), replays=len(graded))

    findings: list[Finding] = []
    key_at = [i for i, (name, _t) in enumerate(reference.columns)
              if name.lower() in {k.lower() for k in spec.target.key}]
    keys = Counter(canonical_json([to_json(row[i]) for i in key_at]) for row in reference.rows)
    repeated = [k for k, n in keys.items() if n > 1]
    if repeated:
        findings.append(Finding(spec.id, "reference", f"not unique on the target key "
                                f"({', '.join(spec.target.key)}): {len(repeated)} key"
                                f"{'s' if len(repeated) > 1 else ''} repeat, e.g. "
                                f"{sorted(repeated)[0]}"))
    graded = _grade_artifact(spec, spec.gold_sql, seeds)
    findings += [Finding(spec.id, "gold", g.reason, g.schedule, g.seed)
                 for g in graded if g.verdict != "PASS"]
    statements = _statement_count(spec.gold_sql)
    replays = len(graded)
    for hazard in spec.hazards:
        for seed in seeds:
            sched = make_schedule(spec, hazard, seed)
            reason = visible(spec, sched, statements)
            if reason is None and hazard == "late_arrival":
                reason = _withheld_changes_target(spec, sched)
                replays += 1
            if reason is not None:
                findings.append(Finding(spec.id, "perturbation", reason, hazard, seed))
    return JobResult(spec.id, "gold", tuple(graded), tuple(findings), replays)


def _incremental_job(spec: TaskSpec, seeds: tuple[int, ...]) -> JobResult:
    from arrivalbench.budget import check_incremental

    breaches, replays = check_incremental(spec, points(spec, seeds))
    return JobResult(spec.id, "incremental", findings=tuple(
        Finding(spec.id, "incremental", b.reason, b.schedule, b.seed) for b in breaches),
        replays=replays)


def _run_job_args(args: tuple[str, str, tuple[int, ...]]) -> JobResult:
    return _timed(*args)


def _timed(path: str, artifact: str, seeds: tuple[int, ...]) -> JobResult:
    start = time.process_time()
    result = run_job(path, artifact, seeds)
    return replace(result, cpu_seconds=time.process_time() - start)


def _statement_count(script: str) -> int:
    with engine.database(Limits()) as db:
        try:
            return len(db.split(script))
        except Failure:
            return 0


def _withheld_changes_target(spec: TaskSpec, sched: Schedule) -> str | None:
    """The gold on the schedule without its final batch must differ from the reference."""
    truncated = replace(sched, batches=sched.batches[:-1])
    outcome = replay(spec, spec.gold_sql, truncated)
    if outcome.failure is not None:
        return (f"the gold without the final batch stops with an error, so the withheld records "
                f"cannot be judged: {outcome.failure.message}")
    assert outcome.table is not None
    if compare(expected(spec), outcome.table, spec.target).ok:
        return ("the withheld records do not change the target: the gold without the final "
                "batch already equals the reference")
    return None


# -- perturbation, read from the schedule (pure) -------------------------------------------------


def visible(spec: TaskSpec, sched: Schedule, statements: int) -> str | None:
    """None if `sched` perturbs delivery as its kind intends, else why not. `statements` is the
    gold's statement count (an abort is mid-script only relative to a script)."""
    events = {(e.source, e.row): e for e in load_log(spec).timeline}
    check = _VISIBLE.get(sched.kind)
    return None if check is None else check(spec, sched, events, statements)


Events = dict[tuple[str, int], Event]


def _first_batch(sched: Schedule) -> dict[tuple[str, int], int]:
    first: dict[tuple[str, int], int] = {}
    for number, batch in enumerate(sched.batches):
        for ref in batch.records:
            first.setdefault(ref, number)
    return first


def _duplicates(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    in_batch = any(c > 1 for b in sched.batches for c in Counter(b.records).values())
    batches_of: dict[tuple[str, int], set[int]] = {}
    for number, batch in enumerate(sched.batches):
        for ref in batch.records:
            batches_of.setdefault(ref, set()).add(number)
    across = any(len(b) > 1 for b in batches_of.values())
    missing = [what for what, ok in (("inside one batch", in_batch),
                                     ("in a later batch", across)) if not ok]
    return f"no record is delivered again {' or '.join(missing)}" if missing else None


def _out_of_order(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    first = _first_batch(sched)
    streams = [s for s in spec.sources if s.is_change_stream]
    if streams:
        names = {s.name for s in streams}
        versions: dict[tuple[str, tuple[object, ...]], list[Event]] = {}
        for event in events.values():
            if event.source in names:
                versions.setdefault((event.source, event.entity), []).append(event)
        for history in versions.values():
            history.sort(key=lambda e: sort_key(e.version))
            arrivals = [first[(e.source, e.row)] for e in history if (e.source, e.row) in first]
            if any(later < earlier for earlier, later in _pairs_any(arrivals)):
                return None
        return ("no later version of an entity arrives in an earlier batch than an earlier "
                "version of it")
    newest: list[object] = []  # the newest event time of the batches so far
    for batch in sched.batches:
        times = [events[r].time for r in batch.records if events[r].time is not None]
        if newest and any(sort_key(t) < sort_key(newest[0]) for t in times):
            return None
        if times:
            top = max(times, key=sort_key)
            if not newest or sort_key(top) > sort_key(newest[0]):
                newest = [top]
    return "no record arrives after a record that is newer in event time"


def _pairs_any(values: list[int]) -> Iterable[tuple[int, int]]:
    """(an earlier value, a later value) for the running maximum: enough to find a descent."""
    top = None
    for value in values:
        if top is not None:
            yield top, value
        top = value if top is None else max(top, value)


def _late_arrival(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if len(sched.batches) < 2 or not sched.batches[-1].records:
        return "no final batch of withheld records"
    last = sched.batches[-1].records
    before = [r for b in sched.batches[:-1] for r in b.records]
    seen = set(before)
    if any(r in seen for r in last):
        return "the final batch repeats records delivered before instead of withholding them"
    times = [events[r].time for r in before if events[r].time is not None]
    if not times:
        return "nothing is delivered before the withheld records"
    newest = max(times, key=sort_key)
    if not any(events[r].time is not None and sort_key(events[r].time) < sort_key(newest)
               for r in last):
        return "no withheld record is older than data delivered before it"
    return None


def _crash_retry(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    mid = after = False
    batches = sched.batches
    for i, batch in enumerate(batches):
        if batch.abort is None:
            continue
        ran = batch.abort_after(n)
        mid = mid or (ran is not None and ran < n)
        after = after or ran == n
        retry = next((b for b in batches[i + 1:] if b.abort is None), None)
        if retry is None or retry.records != batch.records:
            return f"the run aborted at batch {i} is not followed by a run of the same batch"
    missing = [what for what, ok in ((f"in the middle of the gold's {n} statements", mid),
                                     ("after the last statement", after)) if not ok]
    return f"no run is aborted {' or '.join(missing)}" if missing else None


def _backfill(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if len(sched.batches) < 2:
        return "no final backfill batch"
    last = sched.batches[-1].records
    before = [r for b in sched.batches[:-1] for r in b.records]
    seen = set(before)
    again = [r for r in last if r in seen]
    held = [r for r in last if r not in seen]
    problems = []
    if not again:
        problems.append("redelivers no record delivered before")
    if not held:
        problems.append("holds no record held back")
    window = [events[r].time for r in last if events[r].time is not None]
    if window:
        edge = max(window, key=sort_key)
        if not any(events[r].time is not None and sort_key(events[r].time) > sort_key(edge)
                   for r in before):
            problems.append("does not come after newer data")
    return f"the final batch {' and '.join(problems)}" if problems else None


def _schema_evolution(spec: TaskSpec, sched: Schedule, events: Events, n: int) -> str | None:
    if spec.evolution is None:
        return "the task declares no evolution column"
    start = sched.evolution_from
    if start is None or not 0 < start < len(sched.batches):
        return (f"the column {spec.evolution.column} does not appear from a batch after the "
                f"first (evolution_from = {start})")
    return None


_VISIBLE: dict[str, Callable[[TaskSpec, Schedule, Events, int], str | None]] = {
    "duplicates": _duplicates,
    "out_of_order": _out_of_order,
    "late_arrival": _late_arrival,
    "crash_retry": _crash_retry,
    "backfill": _backfill,
    "schema_evolution": _schema_evolution,
}


# -- checks made in the parent -------------------------------------------------------------------


def leakage(spec: TaskSpec) -> list[Finding]:
    findings = []
    for what, text in (("title", spec.title), ("ticket", spec.ticket),
                       ("unhinted prompt", build(spec, "unhinted")),
                       ("budget prompt", build(spec, "budget"))):
        for leak in scan(text):
            findings.append(Finding(spec.id, "leakage", f"the {what} names a hazard: "
                                    f"{leak.describe()}"))
    return findings


def idiom(spec: TaskSpec) -> list[Finding]:
    if spec.gold_idiom is None or spec.gold_idiom in IDIOMS:
        return []
    return [Finding(spec.id, "idiom", f"gold_idiom {spec.gold_idiom!r} is not one of "
                                      f"{', '.join(IDIOMS)}")]


def negative_findings(spec: TaskSpec, result: JobResult,
                      seeds: Sequence[int] = GATE_SEEDS) -> list[Finding]:
    negative = next(n for n in spec.negatives if n.name == result.artifact)
    check = f"negative {negative.name}"
    findings = []
    for g in result.graded:
        if g.schedule not in spec.hazards and g.verdict != "PASS":
            findings.append(Finding(spec.id, check, f"must pass every control, got {g.reason}",
                                    g.schedule, g.seed))
    for hazard in spec.hazards:
        verdicts = [g for g in result.graded if g.schedule == hazard]
        if hazard in negative.fails:
            if verdicts and all(g.verdict == "PASS" for g in verdicts):
                findings.append(Finding(
                    spec.id, check, f"declared to fail {hazard}, but passes it on every gate "
                    f"seed ({', '.join(map(str, seeds))})", hazard, ANY_SEED))
        else:
            findings += [Finding(spec.id, check, f"fails {hazard}, which it does not declare: "
                                 f"{g.reason}", hazard, g.seed)
                         for g in verdicts if g.verdict != "PASS"]
    return findings


def coverage(spec: TaskSpec, results: Sequence[JobResult]) -> list[Finding]:
    findings = []
    for hazard in spec.hazards:
        caught = any(g.schedule == hazard and g.verdict != "PASS"
                     for r in results if r.artifact != "gold" for g in r.graded)
        if not caught:
            names = [n.name for n in spec.negatives if hazard in n.fails]
            why = (f"declared by {', '.join(names)} but failed on no gate seed" if names
                   else "no negative control declares it")
            findings.append(Finding(spec.id, "coverage", f"no negative control fails {hazard} "
                                    f"({why}): the hazard is vacuous", hazard, ANY_SEED))
    return findings


# -- the gate ------------------------------------------------------------------------------------


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def run(specs: Sequence[TaskSpec], workers: int | None = None,
        seeds: tuple[int, ...] = GATE_SEEDS) -> Report:
    """Every check on every task. Jobs (one per artifact) run in `workers` processes."""
    start = time.perf_counter()
    jobs = [(str(spec.path), artifact, seeds) for spec in specs
            for artifact in ("gold", *(n.name for n in spec.negatives),
                             *(("incremental",) if spec.incremental_sql else ()))]
    # The biggest jobs first, so that no worker is left with a long one at the end.
    weight = {str(s.path): sum(f.stat().st_size for f in s.log_files) * len(points(s, seeds))
              for s in specs}
    jobs.sort(key=lambda job: -weight[job[0]])
    workers = min(workers or default_workers(), len(jobs)) or 1
    results: list[JobResult]
    if workers == 1:
        results = [_timed(*job) for job in jobs]
    else:
        # `spawn`: a worker imports the package afresh instead of inheriting the parent's
        # DuckDB instances and watchdog thread through fork.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            results = list(pool.map(_run_job_args, jobs))

    by_task: dict[str, list[JobResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    findings: list[Finding] = []
    for spec in specs:
        mine = by_task.get(spec.id, [])
        findings += leakage(spec) + idiom(spec)
        for result in mine:
            findings += result.findings
        if any(r.broken_reference for r in mine):
            continue
        for result in mine:
            if result.artifact not in ("gold", "incremental"):
                findings += negative_findings(spec, result, seeds)
        findings += coverage(spec, mine)
    ids = [s.id for s in specs]
    findings.sort(key=lambda f: f.order(ids))
    failed = tuple(dict.fromkeys(f.task for f in findings))
    return Report(tuple(ids), tuple(findings), sum(r.replays for r in results),
                  time.perf_counter() - start, seeds, failed,
                  sum(r.cpu_seconds for r in results))


def load(refs: Iterable[str | Path]) -> list[TaskSpec]:
    """The tasks to gate; a bad reference raises TaskError (bad input, exit status 2)."""
    specs = [load_spec(ref) for ref in refs]
    seen: dict[str, Path] = {}
    for spec in specs:
        if spec.id in seen and seen[spec.id] != spec.path:
            raise TaskError(f"two tasks share the id {spec.id!r} ({seen[spec.id]} and "
                            f"{spec.path}); gate them one at a time")
        seen[spec.id] = spec.path
    return list({s.path: s for s in specs}.values())
