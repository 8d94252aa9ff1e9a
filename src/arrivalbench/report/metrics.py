"""Metrics: pure functions from plain rows to task-mean rates with intervals.

What each metric means is written once, in `definitions` (the report renders it, and
docs/metrics.md is generated from it); this module implements those definitions. Intervals: see
`bootstrap`. Numbers are rounded to 6 decimals in every output.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, astuple, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arrivalbench.core.engine import DEFAULT_ENGINE
from arrivalbench.core.grading import CHECKED_CONTROLS, plan_kinds
from arrivalbench.core.task import HAZARDS
from arrivalbench.core.values import JSON, digest
from arrivalbench.core.verdict import STATUSES
from arrivalbench.report.bootstrap import RESAMPLES, interval, resample_indices
from arrivalbench.report.load import CellRow, Results, TurnRow, VerdictRow
from arrivalbench.study.cells import CellClass, classify

ORDERING = ("late_arrival", "out_of_order")
IDEMPOTENCY = ("duplicates", "crash_retry")
SCHEDULES = plan_kinds(HAZARDS)  # the schedules the metrics read, in report order
NOT_REPLICATES = frozenset({"negatives"})
SPREAD_METRICS = ("gradeable", "snapshot_pass", "gap", "gap_controls", "silent", "crash",
                  "ordering", "idempotency", "ordering_minus_idempotency", "schema_evolution")
DIGITS = 6

Vector = NDArray[np.float64]


# -- cells ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayCounts:
    """Replays of a cell counted apart from its verdicts: those the every-batch check read,
    those among them that passed at the end but diverged on the way (`reconverged`), and the
    FAILs made only of data later than the artifact's own allowance (`late_by_design`)."""

    every_batch_checked: int = 0
    reconverged: int = 0
    late_by_design: int = 0

    def __add__(self, other: ReplayCounts) -> ReplayCounts:
        return ReplayCounts(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


def replay_counts(v: VerdictRow) -> ReplayCounts:
    late = v.verdict == "FAIL" and "beyond_allowance" in _detail(v.record)
    if v.every_batch is None:
        return ReplayCounts(late_by_design=int(late))
    reconverged = v.verdict == "PASS" and bool(_detail(v.every_batch).get("reconverged"))
    return ReplayCounts(1, int(reconverged), int(late))


def _detail(record: str) -> dict[str, Any]:
    if not record:
        return {}
    detail = json.loads(record).get("detail")
    return detail if isinstance(detail, dict) else {}


@dataclass(frozen=True)
class CellFacts:
    """What the metrics need to know about one cell."""

    arm: str
    task: str
    replicate: int
    gradeable: bool
    snapshot: str | None = None  # the snapshot verdict; None: not graded on snapshot
    controls: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hazards: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # by seed
    idioms: tuple[str, ...] | None = None
    repair: str | None = None  # "first_turn" | "repaired" | None
    incremental: bool | None = None  # every replay within budget; None: some cost unmeasured
    replays: ReplayCounts = field(default_factory=ReplayCounts)

    @property
    def graded(self) -> bool:
        return self.gradeable and self.snapshot is not None

    @property
    def snapshot_pass(self) -> bool:
        return self.gradeable and self.snapshot == "PASS"

    @property
    def eligible(self) -> bool:
        """Gradeable, snapshot-passing, with at least one hazard verdict."""
        return self.snapshot_pass and bool(self.hazards)

    @property
    def kind(self) -> CellClass:
        verdicts = {"snapshot": () if self.snapshot is None else (self.snapshot,),
                    **self.controls, **self.hazards}
        return classify(verdicts, self.hazards)

    @property
    def silent(self) -> bool:
        return self.kind.silent

    @property
    def crash(self) -> bool:
        return self.kind.crash

    @property
    def all_in(self) -> bool:
        return self.kind.hazard_fail

    @property
    def controls_pass(self) -> bool:
        return self.kind.controls_pass

    def passes(self, hazard: str) -> bool:
        return set(self.hazards.get(hazard, ())) == {"PASS"}


def stored_order(v: VerdictRow) -> tuple[bool, int, str, str]:
    """Later for a verdict stored by a later run. Versions are `<release>+<hash>`, so their
    text says nothing about which is newer; the run that stored a verdict does. A verdict
    whose run is unknown (a hand-made file) counts as older than any with a run, and among
    those the version text only breaks the tie, deterministically."""
    return (v.run_id is not None, v.run_id or 0, v.harness_version, v.engine_version)


def newest_verdicts(verdicts: Iterable[VerdictRow]) -> list[VerdictRow]:
    """One verdict per (task digest, artifact, schedule, seed, engine): the one the latest run
    stored. Engines are kept apart: each engine's newest is its own."""
    chosen: dict[tuple[str, str, str, int, str], VerdictRow] = {}
    for v in verdicts:
        key = (v.task_digest, v.artifact, v.schedule, v.seed, v.engine)
        old = chosen.get(key)
        if old is None or stored_order(v) > stored_order(old):
            chosen[key] = v
    return [chosen[k] for k in sorted(chosen)]


def repair_class(turns: Sequence[TurnRow]) -> str | None:
    """`first_turn` when turn 1 passed the snapshot, `repaired` when only a later turn did."""
    passed = sorted(t.turn for t in turns if t.snapshot_verdict == "PASS")
    if not passed:
        return None
    return "first_turn" if passed[0] == 1 else "repaired"


def cell_facts(cells: Iterable[CellRow], verdicts: Iterable[VerdictRow],
               idioms: Mapping[str, tuple[str, ...] | None] | None = None,
               turns: Iterable[TurnRow] = (),
               engines: Mapping[str, str] | None = None) -> list[CellFacts]:
    """Join cells with their verdicts (newest version per key), idiom tags and repair turns.
    A cell reads the verdicts of one engine: its arm's in `engines`, DuckDB by default."""
    by_cell: dict[tuple[str, str, str], list[VerdictRow]] = defaultdict(list)
    for v in newest_verdicts(verdicts):
        by_cell[(v.engine, v.task_digest, v.artifact)].append(v)
    engines = engines or {}
    by_turns: dict[tuple[str, str, int], list[TurnRow]] = defaultdict(list)
    for t in turns:
        by_turns[(t.arm, t.task, t.replicate)].append(t)
    idioms = idioms or {}
    facts = []
    for c in cells:
        snapshot = None
        controls: dict[str, list[tuple[int, str]]] = defaultdict(list)
        hazards: dict[str, list[tuple[int, str]]] = defaultdict(list)
        mine = by_cell.get((engines.get(c.arm, DEFAULT_ENGINE), c.task_digest, c.artifact or ""),
                           [])
        if c.artifact is not None:
            for v in mine:
                if v.schedule == "snapshot" and v.seed == 0:
                    snapshot = v.verdict
                elif v.schedule in CHECKED_CONTROLS:
                    controls[v.schedule].append((v.seed, v.verdict))
                elif v.schedule in HAZARDS:
                    hazards[v.schedule].append((v.seed, v.verdict))
        cell_turns = by_turns.get((c.arm, c.task, c.replicate), [])
        mine = [v for v in mine if v.schedule in SCHEDULES] if c.artifact else []
        facts.append(CellFacts(
            c.arm, c.task, c.replicate, c.artifact is not None, snapshot,
            {k: tuple(x for _, x in sorted(vs)) for k, vs in sorted(controls.items())},
            {k: tuple(x for _, x in sorted(vs)) for k, vs in sorted(hazards.items(),
                                                                     key=lambda kv:
                                                                     HAZARDS.index(kv[0]))},
            idioms.get(c.artifact) if c.artifact is not None else None,
            repair_class(cell_turns) if cell_turns else None,
            incremental(mine), sum(map(replay_counts, mine), ReplayCounts())))
    return facts


def incremental(verdicts: Sequence[VerdictRow]) -> bool | None:
    """Every replay within its task's read budget; None when some replay's cost is unknown."""
    flags = [v.within_budget for v in verdicts]
    if not flags or any(f is None for f in flags):
        return None
    return all(flags)


# -- per-task rates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """A per-cell indicator (or share) and the cells it is defined on."""

    eligible: Callable[[CellFacts], bool]
    value: Callable[[CellFacts], float]


def per_task(facts: Sequence[CellFacts], tasks: Sequence[str], rate: Rate) -> Vector:
    """The rate of each task (mean over its eligible cells), NaN for a task without one."""
    index = {t: i for i, t in enumerate(tasks)}
    sums = np.zeros(len(tasks))
    counts = np.zeros(len(tasks))
    for f in facts:
        if rate.eligible(f):
            sums[index[f.task]] += rate.value(f)
            counts[index[f.task]] += 1
    out: Vector = np.full(len(tasks), np.nan)
    np.divide(sums, counts, out=out, where=counts > 0)
    return out


def _guard(tagged: bool) -> Callable[[CellFacts], bool]:
    return lambda f: (f.snapshot_pass and "duplicates" in f.hazards and f.idioms is not None
                      and ("batch_dedup" in f.idioms) == tagged)


def _declares(hazard: str) -> Callable[[CellFacts], bool]:
    return lambda f: f.snapshot_pass and hazard in f.hazards


def _passes(hazard: str) -> Callable[[CellFacts], float]:
    return lambda f: float(f.passes(hazard))


def _repair(kind: str) -> Callable[[CellFacts], bool]:
    return lambda f: f.eligible and f.repair == kind


def _share(hazard: str, verdict: str) -> Callable[[CellFacts], float]:
    return lambda f: f.hazards[hazard].count(verdict) / len(f.hazards[hazard])


def rates(facts: Sequence[CellFacts]) -> dict[str, Rate]:
    """Every per-task rate an arm needs, by name. Repair and guard rates only when the arm's
    cells have turns or idiom tags."""
    out = {
        "gradeable": Rate(lambda f: True, lambda f: float(f.gradeable)),
        "snapshot_pass": Rate(lambda f: f.graded, lambda f: float(f.snapshot_pass)),
        "silent": Rate(lambda f: f.eligible, lambda f: float(f.silent)),
        "crash": Rate(lambda f: f.eligible, lambda f: float(f.crash)),
        "all_in": Rate(lambda f: f.eligible, lambda f: float(f.all_in)),
        "all_in_controls": Rate(lambda f: f.eligible and f.controls_pass,
                                lambda f: float(f.all_in)),
    }
    for h in HAZARDS:
        out[f"hazard:{h}"] = Rate(_declares(h), _passes(h))
        for v in STATUSES:
            out[f"composition:{h}:{v}"] = Rate(_declares(h), _share(h, v))
    if any(f.incremental is not None for f in facts):
        out["correct_and_incremental"] = Rate(
            lambda f: f.eligible and f.incremental is not None,
            lambda f: float(not f.all_in and bool(f.incremental)))
    if any(f.repair is not None for f in facts):
        for kind in ("first_turn", "repaired"):
            out[f"repair:{kind}"] = Rate(_repair(kind), lambda f: float(f.all_in))
    if any(_guard(True)(f) or _guard(False)(f) for f in facts):
        for tagged, name in ((True, "with"), (False, "without")):
            out[f"guard:{name}:silent"] = Rate(
                _guard(tagged), lambda f: float("FAIL" in f.hazards["duplicates"]))
            out[f"guard:{name}:crash"] = Rate(
                _guard(tagged), lambda f: float("ERROR" in f.hazards["duplicates"]))
    return out


# -- estimators over (resamples of) per-task rates ------------------------------------------------


def task_mean(v: Vector) -> Vector:
    """Mean over the last axis (tasks) of the finite entries; NaN where there is none."""
    ok = np.isfinite(v)
    count = ok.sum(axis=-1)
    total = np.where(ok, v, 0.0).sum(axis=-1)
    out: Vector = np.full(np.shape(total), np.nan)
    np.divide(total, count, out=out, where=count > 0)
    return out


def mean_of(*parts: Vector) -> Vector:
    """Elementwise mean of the defined parts; NaN where none is defined."""
    return task_mean(np.stack(parts, axis=-1))


@dataclass(frozen=True)
class Metric:
    """A metric: where it goes in metrics.json, the per-task rates it reads, and how."""

    path: tuple[str, ...]
    inputs: tuple[str, ...]
    estimate: Callable[..., Vector]  # one argument per input, each (..., tasks)
    # the tasks the metric rests on (its `n`); default: tasks where some input is defined
    used: Callable[..., NDArray[np.bool_]] | None = None


def _mean(path: tuple[str, ...], name: str) -> Metric:
    return Metric(path, (name,), task_mean)


def _group(*vs: Vector) -> Vector:
    return mean_of(*(task_mean(v) for v in vs))


def _diff(a: Vector, b: Vector, c: Vector, d: Vector) -> Vector:
    return _group(a, b) - _group(c, d)


def task_min(v: Vector) -> Vector:
    """Minimum over the last axis of the finite entries; NaN where there is none."""
    ok = np.isfinite(v)
    low = np.where(ok, v, np.inf).min(axis=-1, initial=np.inf)
    out: Vector = np.where(ok.any(axis=-1), low, np.nan)
    return out


def task_median(v: Vector) -> Vector:
    """Median over the last axis of the finite entries; NaN where there is none."""
    rows = np.atleast_2d(v)
    ok = np.isfinite(rows)
    out: Vector = np.full(rows.shape[:-1], np.nan)
    some = ok.any(axis=-1)
    if some.any():
        out[some] = np.nanmedian(np.where(ok, rows, np.nan)[some], axis=-1)
    return out.reshape(np.shape(v)[:-1])


def _weakest(*vs: Vector) -> Vector:
    """The weakest hazard of a group: the smallest of its hazards' task means."""
    return task_min(np.stack([task_mean(v) for v in vs], axis=-1))


def _weakest_diff(a: Vector, b: Vector, c: Vector, d: Vector) -> Vector:
    return _weakest(a, b) - _weakest(c, d)


def paired_differences(a: Vector, b: Vector, c: Vector, d: Vector) -> Vector:
    """Per task: its ordering rate (mean of its late_arrival and out_of_order rates) minus its
    idempotency rate; NaN for a task without both groups."""
    return mean_of(a, b) - mean_of(c, d)


def _paired_used(a: Vector, b: Vector, c: Vector, d: Vector) -> NDArray[np.bool_]:
    return np.isfinite(paired_differences(a, b, c, d))


def _paired_median(a: Vector, b: Vector, c: Vector, d: Vector) -> Vector:
    return task_median(paired_differences(a, b, c, d))


def _paired_mean(a: Vector, b: Vector, c: Vector, d: Vector) -> Vector:
    return task_mean(paired_differences(a, b, c, d))


def paired_counts(vectors: Mapping[str, Vector]) -> dict[str, JSON]:
    """How many tasks favour each group (a positive per-task difference favours ordering)."""
    d = paired_differences(*(vectors[f"hazard:{h}"] for h in (*ORDERING, *IDEMPOTENCY)))
    d = d[np.isfinite(d)]
    return {"ordering_better": int((d > 0).sum()), "idempotency_better": int((d < 0).sum()),
            "ties": int((d == 0).sum())}


def metric_specs(available: Iterable[str]) -> list[Metric]:
    """The metrics of an arm, in metrics.json order, given the names of its per-task rates."""
    have = set(available)
    specs = [
        _mean(("gradeable",), "gradeable"),
        _mean(("snapshot_pass",), "snapshot_pass"),
        _mean(("gap",), "all_in"),
        _mean(("gap_controls",), "all_in_controls"),
        _mean(("silent",), "silent"),
        _mean(("crash",), "crash"),
        _mean(("all_in",), "all_in"),
        Metric(("ordering",), tuple(f"hazard:{h}" for h in ORDERING), _group),
        Metric(("idempotency",), tuple(f"hazard:{h}" for h in IDEMPOTENCY),
               _group),
        Metric(("ordering_minus_idempotency",),
               tuple(f"hazard:{h}" for h in (*ORDERING, *IDEMPOTENCY)), _diff),
        _mean(("schema_evolution",), "hazard:schema_evolution"),
        Metric(("weakest_link", "ordering"), tuple(f"hazard:{h}" for h in ORDERING), _weakest),
        Metric(("weakest_link", "idempotency"), tuple(f"hazard:{h}" for h in IDEMPOTENCY),
               _weakest),
        Metric(("weakest_link", "ordering_minus_idempotency"),
               tuple(f"hazard:{h}" for h in (*ORDERING, *IDEMPOTENCY)), _weakest_diff),
        Metric(("paired", "median"), tuple(f"hazard:{h}" for h in (*ORDERING, *IDEMPOTENCY)),
               _paired_median, _paired_used),
        Metric(("paired", "mean"), tuple(f"hazard:{h}" for h in (*ORDERING, *IDEMPOTENCY)),
               _paired_mean, _paired_used),
    ]
    specs += [_mean(("hazards", h), f"hazard:{h}") for h in HAZARDS]
    specs += [_mean(("composition", h, v), f"composition:{h}:{v}")
              for h in HAZARDS for v in STATUSES]
    if "correct_and_incremental" in have:
        specs.append(_mean(("correct_and_incremental",), "correct_and_incremental"))
    if "repair:first_turn" in have:
        specs += [_mean(("repair", "first_turn"), "repair:first_turn"),
                  _mean(("repair", "repaired"), "repair:repaired"),
                  Metric(("repair", "repaired_minus_first_turn"),
                         ("repair:repaired", "repair:first_turn"),
                         lambda a, b: task_mean(a) - task_mean(b))]
    if "guard:with:silent" in have:
        specs += [_mean(("batch_dedup", side, kind), f"guard:{side}:{kind}")
                  for side in ("with", "without") for kind in ("silent", "crash")]
    return specs


# -- an arm --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A task-mean rate with its 95% bootstrap interval and the number of tasks it used."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    def document(self) -> dict[str, JSON]:
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}


def rounded(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), DIGITS) + 0.0  # no -0.0


def estimate(metric: Metric, vectors: Mapping[str, Vector],
             indices: NDArray[np.intp] | None) -> Estimate:
    """The point value on the arm's tasks and, with `indices` (resamples x tasks), the interval
    of the same estimator over the resampled tasks."""
    inputs = [vectors[name] for name in metric.inputs]
    n = int((metric.used(*inputs) if metric.used is not None
             else np.any(np.isfinite(np.stack(inputs)), axis=0)).sum())
    value = float(metric.estimate(*inputs))
    if indices is None or not np.isfinite(value):
        low = high = float("nan")
    else:
        low, high = interval(metric.estimate(*(v[indices] for v in inputs)))
    return Estimate(rounded(value), rounded(low), rounded(high), n)


def tree(items: Iterable[tuple[tuple[str, ...], JSON]]) -> dict[str, JSON]:
    root: dict[str, JSON] = {}
    for path, value in items:
        node = root
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return root


def point_values(facts: Sequence[CellFacts]) -> dict[tuple[str, ...], float | None]:
    """Point estimates only (no bootstrap) of every metric of these cells."""
    tasks = sorted({f.task for f in facts})
    rs = rates(facts)
    vectors = {name: per_task(facts, tasks, r) for name, r in rs.items()}
    return {m.path: estimate(m, vectors, None).value for m in metric_specs(rs)}


def cell_counts(facts: Sequence[CellFacts], reasons: Mapping[str, int]) -> dict[str, JSON]:
    return {
        "total": len(facts),
        "gradeable": sum(f.gradeable for f in facts),
        "no_artifact": sum(not f.gradeable for f in facts),
        "ungraded": sum(f.gradeable and not f.graded for f in facts),
        "snapshot_pass": sum(f.snapshot_pass for f in facts),
        "eligible": sum(f.eligible for f in facts),
        "first_turn": sum(f.eligible and f.repair == "first_turn" for f in facts),
        "repaired": sum(f.eligible and f.repair == "repaired" for f in facts),
        "with_batch_dedup": sum(_guard(True)(f) for f in facts),
        "without_batch_dedup": sum(_guard(False)(f) for f in facts),
        "tasks": len({f.task for f in facts}),
        "no_artifact_reasons": dict(sorted(reasons.items())),
    }


def spread(arm: str, facts: Sequence[CellFacts]) -> dict[str, JSON] | None:
    """Per-replicate values of the headline metrics and of each hazard's pass rate, for arms
    with replicates."""
    replicates = sorted({f.replicate for f in facts})
    if arm in NOT_REPLICATES or len(replicates) < 2:
        return None
    per_rep = {r: point_values([f for f in facts if f.replicate == r]) for r in replicates}
    items = []
    for path in [*((name,) for name in SPREAD_METRICS), *(("hazards", h) for h in HAZARDS)]:
        values = [per_rep[r].get(path) for r in replicates]
        defined = [v for v in values if v is not None]
        items.append((path, {
            "replicates": replicates,
            "values": values,
            "min": min(defined) if defined else None,
            "max": max(defined) if defined else None,
            "sd": rounded(float(np.std(defined, ddof=1))) if len(defined) >= 2 else None,
        }))
    return tree(items)


def arm_metrics(arm: str, facts: Sequence[CellFacts], seed: int,
                reasons: Mapping[str, int] | None = None,
                resamples: int = RESAMPLES) -> dict[str, JSON]:
    """Every metric of one arm as the metrics.json object of that arm."""
    tasks = sorted({f.task for f in facts})
    rs = rates(facts)
    vectors = {name: per_task(facts, tasks, r) for name, r in rs.items()}
    indices = resample_indices(len(tasks), seed, resamples)
    doc = tree((m.path, estimate(m, vectors, indices).document()) for m in metric_specs(rs))
    paired = doc["paired"]
    assert isinstance(paired, dict)
    paired.update(paired_counts(vectors))
    doc["cells"] = cell_counts(facts, reasons or {})
    replays = sum((f.replays for f in facts), ReplayCounts())
    if replays != ReplayCounts():  # results without either keep the document they had
        doc["replays"] = dict(asdict(replays))
    extra = spread(arm, facts)
    if extra is not None:
        doc["spread"] = extra
    return doc


def results_digest(verdicts: Iterable[VerdictRow]) -> str:
    """sha256 over the sorted canonical records of the verdicts the metrics used."""
    return digest("\n".join(sorted({v.record for v in verdicts})))


def used_verdicts(results: Results) -> list[VerdictRow]:
    """The verdicts the report reads: the newest version of each key on each engine, of the
    selected cells, on snapshot, the controls and the hazards (an arm's other engine's verdicts
    are read by the engine comparison)."""
    used = {(c.task_digest, c.artifact) for c in results.cells if c.artifact is not None}
    return [v for v in newest_verdicts(results.verdicts) if (v.task_digest, v.artifact) in used
            and v.schedule in SCHEDULES]


def study(results: Results, seed: int, resamples: int = RESAMPLES,
          engines: Mapping[str, str] | None = None) -> dict[str, JSON]:
    """The metrics.json document of a results file; each arm on its engine in `engines`."""
    facts = cell_facts(results.cells, results.verdicts, results.idioms, results.turns, engines)
    arms: dict[str, JSON] = {}
    for arm in results.arms:
        reasons = Counter(c.reason or "no reason given" for c in results.cells
                          if c.arm == arm and c.artifact is None)
        arms[arm] = arm_metrics(arm, [f for f in facts if f.arm == arm], seed, reasons,
                                resamples)
    return {"arms": arms, "seed": seed, "results_digest": results_digest(used_verdicts(results))}
