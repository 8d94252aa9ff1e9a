"""Shrinking a failing delivery plan to a minimal one that fails in the same way.

Delta debugging over the plan's parts, coarse first: drop batches, drop records (every delivery
of a record at once; the reference follows, computed over what is still delivered), drop single
deliveries of a repeated record, merge neighbouring batches, drop aborts, move an abort earlier.
The passes repeat until a whole round changes nothing or the replay budget runs out. Every step
is a pure function of the plan and the test's answers, so the result is deterministic. A round
that ends without a change has tried every single removal, which is what 1-minimal means here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from arrivalbench.core.schedules import Batch, Ref, Schedule

T = TypeVar("T")


class Exhausted(Exception):
    """The replay budget is spent."""


@dataclass(frozen=True)
class Shrunk:
    schedule: Schedule
    one_minimal: bool
    replays: int


class _Tester:
    def __init__(self, fails: Callable[[Schedule], bool], budget: int) -> None:
        self._fails, self.budget, self.replays = fails, budget, 0
        self._seen: dict[str, bool] = {}

    def __call__(self, schedule: Schedule) -> bool:
        key = schedule.digest
        if key not in self._seen:
            if self.replays >= self.budget:
                raise Exhausted
            self.replays += 1
            self._seen[key] = self._fails(schedule)
        return self._seen[key]


def shrink(schedule: Schedule, fails: Callable[[Schedule], bool], budget: int,
           statements: int) -> Shrunk:
    """The smallest plan found that still `fails`. `schedule` must fail; its aborts are first
    pinned to statement numbers of a script of `statements` statements."""
    test = _Tester(fails, budget)
    current = pin_aborts(schedule, statements)
    minimal = False
    try:
        while True:
            before = current
            for step in (_drop_batches, _drop_records, _drop_deliveries, _merge_batches,
                         _drop_aborts, _earlier_aborts):
                current = step(current, test)
            if current == before:
                minimal = True
                break
    except Exhausted:
        pass
    return Shrunk(current, minimal, test.replays)


def pin_aborts(schedule: Schedule, statements: int) -> Schedule:
    """Every abort as an explicit statement number, so that it can be moved one statement."""
    batches = tuple(Batch(b.records, None, b.abort_after(statements)) if b.aborted else b
                    for b in schedule.batches)
    return replace(schedule, batches=batches)


def reduce(items: Sequence[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """Remove chunks of `items`, halving the chunk size down to one, while `fails` holds;
    the last sweep removes single items until none can go."""
    kept = list(items)
    chunk = max(1, len(kept) // 2)
    while kept:
        removed, i = False, 0
        while i < len(kept):
            candidate = kept[:i] + kept[i + chunk:]
            if fails(candidate):
                kept, removed = candidate, True
            else:
                i += chunk
        if chunk == 1 and not removed:
            break
        chunk = max(1, chunk // 2)
    return kept


def _keep_batches(schedule: Schedule, keep: Sequence[int]) -> Schedule:
    evolution = schedule.evolution_from
    if evolution is not None:
        # The new column appears from the first kept batch at or after the old one.
        later = [n for n, i in enumerate(keep) if i >= evolution]
        evolution = later[0] if later else None
    return replace(schedule, batches=tuple(schedule.batches[i] for i in keep),
                   evolution_from=evolution)


def _drop_batches(schedule: Schedule, test: _Tester) -> Schedule:
    # At least one batch: a plan of none is no plan (grade --plan refuses it).
    keep = reduce(range(len(schedule.batches)),
                  lambda k: bool(k) and test(_keep_batches(schedule, k)))
    return _keep_batches(schedule, keep)


def _without(schedule: Schedule, gone: set[Ref]) -> Schedule:
    return replace(schedule, batches=tuple(replace(b, records=tuple(
        r for r in b.records if r not in gone)) for b in schedule.batches))


def _drop_records(schedule: Schedule, test: _Tester) -> Schedule:
    refs = list(dict.fromkeys(r for b in schedule.batches for r in b.records))
    keep = reduce(refs, lambda k: test(_without(schedule, set(refs) - set(k))))
    return _without(schedule, set(refs) - set(keep))


def _drop_deliveries(schedule: Schedule, test: _Tester) -> Schedule:
    """Drop one delivery of a record delivered more than once, the later ones first."""
    current = schedule
    changed = True
    while changed:
        changed = False
        seen: set[Ref] = set()
        repeats = []
        for number, batch in enumerate(current.batches):
            for position, ref in enumerate(batch.records):
                if ref in seen:
                    repeats.append((number, position))
                seen.add(ref)
        for number, position in reversed(repeats):
            batch = current.batches[number]
            records = batch.records[:position] + batch.records[position + 1:]
            candidate = replace(current, batches=(*current.batches[:number],
                                                  replace(batch, records=records),
                                                  *current.batches[number + 1:]))
            if test(candidate):
                current, changed = candidate, True
                break
    return current


def _merge_batches(schedule: Schedule, test: _Tester) -> Schedule:
    current = schedule
    i = 0
    while i + 1 < len(current.batches):
        a, b = current.batches[i], current.batches[i + 1]
        evolution = current.evolution_from
        if not a.aborted and not b.aborted and evolution != i + 1:
            merged = Batch(a.records + b.records)
            candidate = replace(current, batches=(*current.batches[:i], merged,
                                                  *current.batches[i + 2:]),
                                evolution_from=None if evolution is None else
                                evolution - (evolution > i))
            if test(candidate):
                current = candidate
                continue
        i += 1
    return current


def _set_abort(schedule: Schedule, number: int, abort_at: int | None) -> Schedule:
    batch = Batch(schedule.batches[number].records, None, abort_at)
    return replace(schedule, batches=(*schedule.batches[:number], batch,
                                      *schedule.batches[number + 1:]))


def _drop_aborts(schedule: Schedule, test: _Tester) -> Schedule:
    current = schedule
    for number, batch in enumerate(schedule.batches):
        if batch.aborted:
            candidate = _set_abort(current, number, None)
            if test(candidate):
                current = candidate
    return current


def _earlier_aborts(schedule: Schedule, test: _Tester) -> Schedule:
    current = schedule
    for number, batch in enumerate(schedule.batches):
        if batch.abort_at is None:
            continue
        for k in range(1, batch.abort_at):
            candidate = _set_abort(current, number, k)
            if test(candidate):
                current = candidate
                break
    return current
