"""Shrinking, as pure logic: a synthetic failure predicate over plans, no database."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from arrivalbench.core.schedules import Batch, Schedule
from arrivalbench.explain.shrink import reduce, shrink

PROPERTY = settings(deadline=None, max_examples=60)

refs = st.integers(0, 30).map(lambda r: ("orders", r))
plans = st.lists(st.builds(lambda rs, abort: Batch(tuple(rs), abort),
                           st.lists(refs, max_size=8),
                           st.sampled_from([None, None, 0.5, 1.0])),
                 min_size=1, max_size=12).map(lambda bs: Schedule("plan", 0, tuple(bs)))


def twice_in_a_batch(plan: Schedule) -> bool:
    return any(n > 1 for b in plan.batches for n in Counter(b.records).values())


def aborted_late_with_record_7(plan: Schedule) -> bool:
    return any(b.aborted and (b.abort_at or 0) >= 3 for b in plan.batches) and \
        any(("orders", 7) in b.records for b in plan.batches)


PREDICATES = [twice_in_a_batch, aborted_late_with_record_7]


@PROPERTY
@given(plan=plans, which=st.sampled_from(PREDICATES), budget=st.integers(1, 400))
def test_the_result_still_fails_is_deterministic_and_within_budget(
        plan: Schedule, which: object, budget: int) -> None:
    fails = which  # type: ignore[assignment]
    pinned = replace(plan, batches=tuple(Batch(b.records, None, 4) if b.aborted else b
                                         for b in plan.batches))
    if not fails(pinned):  # type: ignore[operator]
        return
    calls: list[Schedule] = []

    def counted(p: Schedule) -> bool:
        calls.append(p)
        return bool(fails(p))  # type: ignore[operator]

    first = shrink(pinned, counted, budget, statements=5)
    again = shrink(pinned, fails, budget, statements=5)  # type: ignore[arg-type]
    assert first == again
    assert first.replays <= budget and len(calls) == first.replays
    assert fails(first.schedule)  # type: ignore[operator]
    if first.one_minimal:
        sched = first.schedule
        for i in range(len(sched.batches)):  # no single batch can go
            assert not fails(replace(sched, batches=sched.batches[:i] +  # type: ignore[operator]
                                     sched.batches[i + 1:]))
        for ref in {r for b in sched.batches for r in b.records}:  # nor a single record
            smaller = tuple(replace(b, records=tuple(r for r in b.records if r != ref))
                            for b in sched.batches)
            assert not fails(replace(sched, batches=smaller))  # type: ignore[operator]


@PROPERTY
@given(plan=plans)
def test_a_duplicate_shrinks_to_one_record_twice_in_one_batch(plan: Schedule) -> None:
    if not twice_in_a_batch(plan):
        return
    result = shrink(plan, twice_in_a_batch, 400, statements=5)
    assert result.one_minimal
    assert [len(b.records) for b in result.schedule.batches] == [2]
    assert len(set(result.schedule.batches[0].records)) == 1


@given(st.lists(st.integers(), max_size=40), st.integers(0, 40))
def test_reduce_keeps_exactly_what_the_failure_needs(items: list[int], needed: int) -> None:
    must = set(items[:needed][:3])
    kept = reduce(items, lambda k: must <= set(k))
    assert set(kept) == must
