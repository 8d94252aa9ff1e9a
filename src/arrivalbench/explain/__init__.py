"""Why a pipeline fails: the first divergent batch, a minimal failing plan, a timeline, a repro.

`explain` replays one (schedule, seed) with the every-batch check, twice, to rule out a
pipeline whose result depends on chance (then it reports the rows that differ and stops); it
shrinks the plan to a minimal one that fails in the same way and describes that plan batch by
batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arrivalbench.core import lateness
from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.checkpoints import Checked, final_delivered, references_all, replay_checked
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Failure, Limits, Table, backend
from arrivalbench.core.grading import (
    DEFAULT_SEEDS,
    GradeOptions,
    allowance_of,
    artifact_digest,
    check_bounded,
    check_kind,
    judge,
    landed_columns,
    plan_kinds,
    schedule,
)
from arrivalbench.core.lateness import Allowance
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import Diff, compare_all
from arrivalbench.core.plans import document as plan_document
from arrivalbench.core.schedules import Ref, Schedule
from arrivalbench.core.task import Landing, TaskSpec
from arrivalbench.core.values import JSON, row_sort_key
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.explain.shrink import Shrunk, shrink
from arrivalbench.explain.timeline import timeline

DEFAULT_BUDGET = 400

Signature = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Explanation:
    spec: TaskSpec
    script: Artifact | str
    kind: str
    seed: int
    verdict: str
    signature: Signature
    checked: Checked
    nondeterministic: Diff | None = None
    shrunk: Shrunk | None = None
    minimal_checked: Checked | None = None
    statements: tuple[str, ...] = ()
    engine: EngineName = DEFAULT_ENGINE
    landing: Landing = "batch"
    allowance: Allowance | str | None = None

    @property
    def needs_every_batch(self) -> bool:
        """The minimal plan fails only on the way, not in its final table."""
        return self.signature[0].endswith("-midway")

    def document(self, repro: str | None = None) -> dict[str, JSON]:
        first = self.checked.first_divergence
        doc: dict[str, JSON] = {
            "task": self.spec.id,
            "artifact": artifact_digest(self.script),
            "schedule": self.kind,
            "seed": self.seed,
            "verdict": self.verdict,
            "failure": {"kind": self.signature[0], "as": list(self.signature[1])},
            "nondeterministic": self.nondeterministic is not None,
            "first_divergence": None if first is None else {
                **first.document(), "reconverged": self.checked.checks[-1].ok
                if self.checked.checks else False},
            "minimal": None,
            "timeline": [],
            "repro": repro,
        }
        # The defaults' documents keep the bytes they had.
        if self.engine != DEFAULT_ENGINE:
            doc["engine"] = self.engine
        if self.landing != "batch":
            doc["landing"] = self.landing
        if self.allowance is not None:
            doc["allowed_lateness"] = lateness.key_text(self.allowance)
        if self.nondeterministic is not None:
            doc["differing"] = self.nondeterministic.document()
        if self.shrunk is not None and self.minimal_checked is not None:
            plan = self.shrunk.schedule
            doc["minimal"] = {
                "plan": plan_document(self.spec, plan),
                "records": len({r for b in plan.batches for r in b.records}),
                "deliveries": plan.deliveries(),
                "batches": len(plan.batches),
                "aborts": sum(1 for b in plan.batches if b.aborted),
                "one_minimal": self.shrunk.one_minimal,
                "replays": self.shrunk.replays,
            }
            own = None if isinstance(self.script, str) else self.script.allowance
            late = lateness.outside(load_log(self.spec), plan, own) if own else frozenset()
            if own is not None and late and self.allowance is None:
                # What a reader needs to tell late data from a bug: the plan's records that
                # land beyond the model's lookback.
                doc["minimal"]["late"] = lateness.late_records(
                    self.spec, load_log(self.spec), plan, late, own)
            doc["timeline"] = timeline(self.spec, plan, self.minimal_checked, self.statements)
        return doc


def signature(spec: TaskSpec, plan: Schedule, checked: Checked, *, limits: Limits = Limits(),
              landing: Landing = "batch", late: frozenset[Ref] = frozenset()) -> Signature:
    """How a replay fails: the verdict, with the diff kinds of a FAIL or the phase of an
    ERROR; `-midway` when only the every-batch check sees it. The final table is judged as
    `grade --plan` judges it (against the reference over what it delivered, but the `late`
    records), so that a repro bundle reproduces the same failure."""
    outcome = checked.outcome
    if outcome.failure is not None:
        return ("ERROR", (outcome.failure.phase,))
    assert outcome.table is not None
    final = compare_all(references_all(spec, [final_delivered(plan) - late], limits)[0],
                        outcome.tables, spec.targets, unread=landed_columns(spec, landing))
    if not final.ok:
        return ("FAIL", kinds(final))
    first = checked.first_divergence
    if first is None:
        return ("PASS", ())
    if first.diff is None:
        return ("ERROR-midway", ("read-target",))
    return ("FAIL-midway", kinds(first.diff))


def kinds(diff: Diff | None) -> tuple[str, ...]:
    if diff is None:
        return ()
    found = {str(p["problem"]) for p in diff.schema} | {k for k, n in diff.counts.items() if n}
    return tuple(sorted(found))


def pick(spec: TaskSpec, script: Artifact | str, kind: str | None, seed: int | None, *,
         limits: Limits = Limits(), engine: EngineName = DEFAULT_ENGINE,
         landing: Landing = "batch", allowance: Allowance | str | None = None
         ) -> tuple[str, int] | None:
    """The first failing (schedule, seed) of a default grade, with the every-batch check."""
    kinds_ = [kind] if kind is not None else plan_kinds(spec.hazards)
    seeds = [seed] if seed is not None else list(range(DEFAULT_SEEDS))
    options = GradeOptions(engine, limits, every_batch=True, landing=landing,
                           allowance=allowance)
    for k in kinds_:
        for s in ([0] if k == "snapshot" and seed is None else seeds):
            graded = judge(spec, script, schedule(spec, k, s), options=options)
            if graded.verdict.status != "PASS":
                return k, s
    return None


def check_schedule(spec: TaskSpec, kind: str) -> None:
    check_kind(spec, kind)
    allowed = [*plan_kinds(spec.hazards), "chaos"]
    if kind not in allowed:
        raise ArrivalBenchError(f"schedule {kind!r}: task {spec.id} does not declare it; "
                                f"allowed: {', '.join(allowed)}")


def statement_texts(script: Artifact | str, engine: EngineName = DEFAULT_ENGINE
                    ) -> tuple[str, ...]:
    """A script's statements; none for a dbt project, whose runs send what dbt renders."""
    if not isinstance(script, str):
        return ()
    try:
        return tuple(s.query.strip() for s in backend(engine).split(script).parsed)
    except Failure:  # an unparsable or refused script is explained too: its ERROR is the story
        return ()


def _rows(table: Table | None) -> Counter[tuple[object, ...]]:
    return Counter(sorted((tuple(r) for r in table.rows), key=row_sort_key)) if table else \
        Counter()


def explain(spec: TaskSpec, script: Artifact | str, kind: str, seed: int, *,
            budget: int = DEFAULT_BUDGET, limits: Limits = Limits(),
            on_step: Callable[[str], None] | None = None,
            engine: EngineName = DEFAULT_ENGINE, landing: Landing = "batch",
            allowance: Allowance | str | None = None) -> Explanation:
    """Explain `script`'s failure on (kind, seed), every replay on `engine` with `landing`,
    held to the records inside `allowance` (as `grade` holds it)."""
    note = on_step or (lambda _m: None)
    original = schedule(spec, kind, seed)
    statements = statement_texts(script, engine)
    bound = allowance_of(script, allowance)
    if bound is not None:
        check_bounded(spec, allowance)
    log = load_log(spec)

    def outside(plan: Schedule) -> frozenset[Ref]:
        return lateness.outside(log, plan, bound) if bound is not None else frozenset()

    def checked(plan: Schedule) -> Checked:
        return replay_checked(spec, script, plan, limits, engine_name=engine, landing=landing,
                              late=outside(plan))

    def signed(plan: Schedule, found: Checked) -> Signature:
        return signature(spec, plan, found, limits=limits, landing=landing,
                         late=outside(plan))

    note(f"replaying {kind}, seed {seed}, twice")
    first = checked(original)
    second = checked(original)
    sig = signed(original, first)
    verdict = sig[0].split("-")[0]
    a, b = first.outcome, second.outcome
    differs = (a.failure is None) != (b.failure is None) or \
        (a.failure is not None and b.failure is not None and
         (a.failure.phase, a.failure.batch) != (b.failure.phase, b.failure.batch)) or \
        [_rows(t) for t in a.tables] != [_rows(t) for t in b.tables]
    if differs:
        diff = compare_all(a.tables, b.tables, spec.targets) if a.table and b.table else Diff(
            ({"problem": "error", "column": (a.failure or b.failure).message  # type: ignore[union-attr]
              },))
        return Explanation(spec, script, kind, seed, verdict, sig, first, diff,
                           statements=statements, engine=engine, landing=landing,
                           allowance=allowance)
    if sig[0] == "PASS":
        return Explanation(spec, script, kind, seed, "PASS", sig, first, statements=statements,
                           engine=engine, landing=landing, allowance=allowance)

    def fails(plan: Schedule) -> bool:
        return signed(plan, checked(plan)) == sig

    note(f"shrinking (budget {budget} replays)")
    shrunk = shrink(original, fails, budget, max(1, len(statements)))
    minimal = checked(shrunk.schedule)
    return Explanation(spec, script, kind, seed, verdict, sig, first, None, shrunk, minimal,
                       statements, engine, landing, allowance)


def first_line(statement: str) -> str:
    return next((line.strip() for line in statement.splitlines() if line.strip()), "")


__all__: Sequence[str] = ("DEFAULT_BUDGET", "Explanation", "explain", "pick", "signature")
