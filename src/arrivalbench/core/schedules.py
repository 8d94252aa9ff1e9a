"""Delivery schedules: pure functions from (log, kind, seed, parameters) to batches.

A schedule is plain data: a list of batches, each a sequence of record references (a record may
appear twice), an optional abort point, and the batch from which the evolution column is present.
Every hazard starts from the `in_order` plan of the same seed and perturbs it, so that the
difference between a hazard and its control is exactly the hazard. Randomness comes from one
`random.Random` per (kind, seed, step), seeded by text, which Python seeds through SHA-512: the
same on every machine and independent of hash randomisation.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, get_args

from arrivalbench.core.log import Event
from arrivalbench.core.task import HAZARDS, Hazard
from arrivalbench.core.values import canonical_json, digest, sort_key

Control = Literal["snapshot", "in_order", "trickle"]
Kind = Control | Hazard | Literal["chaos"]
CONTROLS: tuple[Control, ...] = get_args(Control)
KINDS: tuple[str, ...] = (*CONTROLS, *HAZARDS, "chaos")

Ref = tuple[str, int]  # (source, row in that source's log file)


@dataclass(frozen=True)
class Params:
    """Recommended parameters; they are part of every schedule's digest."""

    batches: int = 10
    trickle_batches: int = 40
    late_fraction: float = 0.05
    reorder_fraction: float = 0.10
    duplicate_fraction: float = 0.10
    backfill_window: tuple[float, float] = (0.2, 0.4)  # share of the log in the early window
    backfill_held: float = 0.3  # share of the window held back until the backfill
    hazards: tuple[Hazard, ...] = HAZARDS  # what `chaos` combines


@dataclass(frozen=True)
class Batch:
    records: tuple[Ref, ...]
    abort: float | None = None  # abort the run after this share of its statements; 1.0 = after all
    abort_at: int | None = None  # or after exactly this many statements (explicit plans)
    # The batch's processing time, set on the batch a run is given (`core.clock.of` says what
    # it is); never part of a schedule's identity, which the clock is a function of.
    clock: dt.datetime | None = field(default=None, compare=False)

    @property
    def aborted(self) -> bool:
        return self.abort is not None or self.abort_at is not None

    def abort_after(self, statements: int) -> int | None:
        """The number of statements that run before the abort, or None for a full run."""
        if self.abort_at is not None:
            return min(self.abort_at, statements)
        if self.abort is None:
            return None
        if self.abort >= 1.0:
            return statements
        return min(max(1, math.floor(self.abort * statements)), max(1, statements - 1))


@dataclass(frozen=True)
class Schedule:
    kind: str
    seed: int
    batches: tuple[Batch, ...]
    evolution_from: int | None = None  # first batch whose evolution source has the new column
    params: Params = field(default=Params(), repr=False)
    # An explicit plan's own clock, one per batch; else the clock follows from the log
    # (`core.clock.of`), and needs no place in the schedule's identity.
    clock: tuple[dt.datetime, ...] | None = None

    def document(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "seed": self.seed,
            "params": {k: list(v) if isinstance(v, tuple) else v
                       for k, v in vars(self.params).items()},
            # `abort_at` only where an explicit plan sets it: generated schedules keep the
            # digests (and so the verdict bytes) they always had.
            "batches": [{"records": [list(r) for r in b.records], "abort": b.abort,
                         **({"abort_at": b.abort_at} if b.abort_at is not None else {})}
                        for b in self.batches],
            "evolution_from": self.evolution_from,
            # Only where an explicit plan sets it, as `abort_at`.
            **({"clock": [c.isoformat() for c in self.clock]} if self.clock is not None
               else {}),
        }

    @cached_property
    def digest(self) -> str:
        return digest(canonical_json(self.document()))

    def deliveries(self) -> int:
        return sum(len(b.records) for b in self.batches)


def make(events: Sequence[Event], kind: str, seed: int = 0, params: Params = Params()) -> Schedule:
    """The schedule of `kind` for a log whose records, in base order, are `events`."""
    if kind not in KINDS:
        raise ValueError(f"unknown schedule kind {kind!r}")
    if kind == "snapshot":
        return Schedule(kind, seed, (Batch(tuple((e.source, e.row) for e in events)),),
                        params=params)
    # The cuts are drawn as `in_order` draws them, whatever the kind: a hazard of seed s
    # perturbs exactly the control of seed s, so that the control isolates the hazard.
    plan = _Plan.in_order(events, _rng("in_order", seed, "cut"), params.batches)
    if kind == "trickle":
        plan = _Plan.trickle(events, _rng(kind, seed, "cut"), params.trickle_batches)
    steps = params.hazards if kind == "chaos" else (kind,) if kind in HAZARDS else ()
    # A fixed order, so that chaos composes each hazard on top of the previous ones.
    for hazard in sorted(steps, key=HAZARDS.index):
        _PERTURB[hazard](plan, _rng(kind, seed, hazard), params)
    return plan.schedule(kind, seed, params)


def _rng(kind: str, seed: int, step: str) -> random.Random:
    return random.Random(f"arrivalbench:{kind}:{seed}:{step}")


@dataclass
class _Plan:
    """A mutable plan under construction; batches hold positions in the base order."""

    events: Sequence[Event]
    batches: list[list[int]]
    aborts: dict[int, list[float]] = field(default_factory=dict)  # batch -> abort points in order
    evolution_from: int | None = None

    @classmethod
    def in_order(cls, events: Sequence[Event], rng: random.Random, count: int) -> _Plan:
        n = len(events)
        count = max(1, min(count, n))
        # Even cuts moved by up to a quarter batch: seeds differ, sizes stay comparable.
        width = n / count
        cuts = sorted({min(n - 1, max(1, round(i * width + rng.uniform(-width, width) / 4)))
                       for i in range(1, count)}) if n > 1 else []
        return cls(events, [list(range(a, b)) for a, b in zip([0, *cuts], [*cuts, n],
                                                               strict=True)])

    @classmethod
    def trickle(cls, events: Sequence[Event], rng: random.Random, count: int) -> _Plan:
        n = len(events)
        # Cut points drawn with replacement give uneven batches, some empty.
        cuts = sorted(rng.randint(0, n) for _ in range(count - 1))
        batches = [list(range(a, b)) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
        if all(batches):
            batches.insert(rng.randint(0, len(batches)), [])
        if n > 1 and not any(len(b) == 1 for b in batches):
            i = max(range(len(batches)), key=lambda j: (len(batches[j]), -j))
            batches[i:i + 1] = [batches[i][:1], batches[i][1:]]
        return cls(events, batches)

    def batch_of(self) -> dict[int, int]:
        return {p: i for i, b in enumerate(self.batches) for p in b}

    def schedule(self, kind: str, seed: int, params: Params) -> Schedule:
        out: list[Batch] = []
        evolution_from = None
        for i, positions in enumerate(self.batches):
            if i == self.evolution_from:
                evolution_from = len(out)
            refs = tuple((self.events[p].source, self.events[p].row) for p in positions)
            out += [Batch(refs, abort) for abort in self.aborts.get(i, [])]
            out.append(Batch(refs))
        return Schedule(kind, seed, tuple(out), evolution_from, params)


def _late_arrival(plan: _Plan, rng: random.Random, params: Params) -> None:
    """Withhold ~5% of records, never all from the final batch, and deliver them last."""
    pool = [p for b in plan.batches[:-1] for p in b] or [p for b in plan.batches for p in b]
    if not pool:
        return
    count = min(len(pool), max(1, round(params.late_fraction * len(plan.events))))
    withheld = set(rng.sample(pool, count))
    plan.batches = [[p for p in b if p not in withheld] for b in plan.batches]
    plan.batches.append(sorted(withheld))


def _out_of_order(plan: _Plan, rng: random.Random, params: Params) -> None:
    """Move records into batches before the ones they belong to, and shuffle every batch.

    For a change stream at least one later version of an entity is moved before a batch that
    holds an earlier version of it, so that arrival order inverts version order.
    """
    where = plan.batch_of()
    movable = [p for p in where if where[p] > 0]
    if not movable:  # one batch: the only reordering left is within it
        for b in plan.batches:
            _shuffle_distinct(b, rng)
        return
    count = min(len(movable), max(1, round(params.reorder_fraction * len(plan.events))))
    chosen = {p: rng.randrange(where[p]) for p in rng.sample(movable, count)}
    inversions = [(earlier, later) for earlier, later in _version_pairs(plan.events)
                  if where.get(earlier, 0) > 0 and later in where and
                  where[later] >= where[earlier]]
    if inversions:
        earlier, later = inversions[rng.randrange(len(inversions))]
        chosen[later] = rng.randrange(where[earlier])
        chosen.pop(earlier, None)  # moving the earlier version as well could undo the inversion
    for p, destination in chosen.items():
        plan.batches[where[p]].remove(p)
        plan.batches[destination].append(p)
    for b in plan.batches:
        _shuffle_distinct(b, rng)


def _shuffle_distinct(batch: list[int], rng: random.Random) -> None:
    """Shuffle, and make sure a batch of two or more records really changes order."""
    if len(batch) < 2:
        return
    before = list(batch)
    rng.shuffle(batch)
    if batch == before:
        batch.reverse()


def _version_pairs(events: Sequence[Event]) -> list[tuple[int, int]]:
    """(earlier, later) positions of consecutive versions of the same entity."""
    by_entity: dict[tuple[str, tuple[object, ...]], list[int]] = {}
    for p, e in enumerate(events):
        if e.entity:
            by_entity.setdefault((e.source, e.entity), []).append(p)
    pairs = []
    for positions in by_entity.values():
        ordered = sorted(positions, key=lambda p: (sort_key(events[p].version), p))
        pairs += list(itertools.pairwise(ordered))
    return pairs


def _duplicates(plan: _Plan, rng: random.Random, params: Params) -> None:
    """Deliver ~10% of records twice: half again in the same batch, half in a later one."""
    where = plan.batch_of()
    if not where:
        return
    count = max(2, round(params.duplicate_fraction * len(plan.events)))
    chosen = rng.sample(sorted(where), min(count, len(where)))
    in_batch, across = chosen[: (len(chosen) + 1) // 2], chosen[(len(chosen) + 1) // 2:]
    if not across:  # a log of one record: it is repeated both ways
        across = in_batch
    last = len(plan.batches) - 1
    if any(where[p] == last for p in across):
        plan.batches.append([])
        last += 1
    for p in in_batch:
        b = plan.batches[where[p]]
        b.insert(rng.randint(b.index(p) + 1, len(b)), p)
    for p in across:
        later = plan.batches[rng.randint(where[p] + 1, last)]
        later.insert(rng.randint(0, len(later)), p)


def _crash_retry(plan: _Plan, rng: random.Random, params: Params) -> None:
    """Abort two or three runs: one mid-script, one after its last statement, then re-run them."""
    candidates = [i for i, b in enumerate(plan.batches) if b] or [0]
    picks = rng.sample(candidates, min(len(candidates), 3 if len(candidates) >= 6 else 2))
    points = [round(rng.uniform(0.2, 0.8), 3), 1.0, rng.choice([0.5, 1.0])]
    if len(picks) == 1:  # a single batch is aborted twice before it succeeds
        plan.aborts[picks[0]] = points[:2]
        return
    for i, point in zip(picks, points, strict=False):
        plan.aborts[i] = [point]


def _backfill(plan: _Plan, rng: random.Random, params: Params) -> None:
    """Hold back part of an early time window; after the newest data, deliver the whole window."""
    n = len(plan.events)
    if n == 0:
        return
    low, high = params.backfill_window
    end = max(1, min(n - 1, round(rng.uniform(low, high) * n))) if n > 1 else 1
    cut = plan.events[end - 1].time
    if _not_after(plan.events[-1].time, cut):
        # Records tied at the newest time would put the whole log in the window, and then no
        # newer data precedes the backfill: end the window before the newest time if there is one.
        older = [e.time for e in plan.events if not _not_after(plan.events[-1].time, e.time)]
        cut = older[-1] if older else cut
    window = [p for p in range(n) if _not_after(plan.events[p].time, cut)]
    held = set(rng.sample(window, max(1, round(params.backfill_held * len(window)))))
    plan.batches = [[p for p in b if p not in held] for b in plan.batches]
    plan.batches.append(sorted(window))


def _not_after(time: object, cut: object) -> bool:
    return sort_key(time) <= sort_key(cut)


def _schema_evolution(plan: _Plan, rng: random.Random, params: Params) -> None:
    plan.evolution_from = rng.randrange(1, len(plan.batches)) if len(plan.batches) > 1 else 0


_PERTURB: dict[str, Callable[[_Plan, random.Random, Params], None]] = {
    "late_arrival": _late_arrival,
    "out_of_order": _out_of_order,
    "duplicates": _duplicates,
    "crash_retry": _crash_retry,
    "backfill": _backfill,
    "schema_evolution": _schema_evolution,
}
