"""Schedules: properties over random logs, checked on the plain data of a schedule."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, Phase, example, find, given, settings
from hypothesis import strategies as st

from arrivalbench.core.engine import Limits, Table
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import schedule as task_schedule
from arrivalbench.core.log import Event, load_log
from arrivalbench.core.replay import deliveries as staged_deliveries
from arrivalbench.core.schedules import KINDS, Batch, Ref, Schedule, make
from arrivalbench.core.task import HAZARDS, TaskSpec, load_spec
from arrivalbench.core.values import canonical_json, sort_key

EXACTLY_ONCE = ("snapshot", "in_order", "trickle", "late_arrival", "out_of_order",
                "schema_evolution")

PROPERTY = settings(deadline=None, max_examples=40,
                    suppress_health_check=[HealthCheck.too_slow])


T = TypeVar("T")


@dataclass(frozen=True)
class Draft:
    """One record of a log before it is laid out: what separates it from the previous one."""

    gap: int  # event time after the previous record
    source: str
    entity: int  # which entity a change-stream record is a version of
    untimed: bool  # no event time (NULL), as a real log may hold


def build_log(drafts: Sequence[Draft], change_stream: bool) -> list[Event]:
    """The events of `drafts`, in base order. In a change stream each record is the next
    version of its entity, versions rising with the order of the drafts: an untimed version
    sorts first in base order, so base order and version order may disagree."""
    rows: Counter[str] = Counter()
    versions: Counter[int] = Counter()
    time = 0
    events = []
    for draft in drafts:
        time += draft.gap
        row = rows[draft.source]
        rows[draft.source] += 1
        at = None if draft.untimed else time
        if change_stream:
            versions[draft.entity] += 1
            events.append(Event(draft.source, row, at, (row,), (draft.entity,),
                                versions[draft.entity]))
        else:
            events.append(Event(draft.source, row, at, (row,)))
    events.sort(key=lambda e: (sort_key(e.time), e.source, tuple(sort_key(k) for k in e.key)))
    return events


def column(n: int, values: Sequence[T]) -> st.SearchStrategy[list[T]]:
    """`n` values taken from `values`, the first one the simplest. One draw of `n` bytes rather
    than `n` draws: a log of 300 records stays cheap to generate and to shrink."""
    return st.binary(min_size=n, max_size=n).map(lambda b: [values[x % len(values)] for x in b])


@st.composite
def logs(draw: st.DrawFn, min_size: int = 2, max_size: int = 300) -> list[Event]:
    """Logs that shrink toward fewer records, tied times, one source, one entity and every
    record timed: times that often tie, one or two sources, or a change stream of entities
    with several versions each; in some logs about one record in ten has no event time."""
    n = draw(st.integers(min_size, max_size))
    change_stream = draw(st.booleans())
    sources = ("changes",) if change_stream else draw(
        st.sampled_from([("orders",), ("orders", "refunds")]))
    entities = max(1, n // draw(st.sampled_from([8, 4, 2])))  # versions per entity, on average
    untimed = [False] * 9 + [True] if draw(st.booleans()) else [False]
    fields = draw(st.tuples(column(n, [0, 0, 1, 1, 2, 7]), column(n, sources),
                            column(n, range(entities)), column(n, untimed)))
    return build_log([Draft(*f) for f in zip(*fields, strict=True)], change_stream)


seeds = st.integers(0, 2**31)


def refs(events: Sequence[Event]) -> list[Ref]:
    return [(e.source, e.row) for e in events]


def deliveries(schedule: Schedule, completed_only: bool = False) -> Counter[Ref]:
    return Counter(r for b in schedule.batches if not (completed_only and b.abort is not None)
                   for r in b.records)


def batch_index(schedule: Schedule) -> dict[Ref, list[int]]:
    """Every batch each record is delivered in, in order (aborted runs excluded)."""
    where: dict[Ref, list[int]] = {}
    for i, b in enumerate(schedule.batches):
        if b.abort is None:
            for r in b.records:
                where.setdefault(r, []).append(i)
    return where


def version_pairs(events: Sequence[Event]) -> list[tuple[Ref, Ref]]:
    """(earlier, later) references of consecutive versions of each entity, in version order."""
    versions: dict[tuple[str, tuple[object, ...]], list[Event]] = {}
    for e in events:
        if e.entity:
            versions.setdefault((e.source, e.entity), []).append(e)
    return [((a.source, a.row), (b.source, b.row)) for history in versions.values()
            for a, b in itertools.pairwise(sorted(history, key=lambda e: sort_key(e.version)))]


def shape(schedule: Schedule) -> str:
    """What the pipeline sees, without the kind and seed labels."""
    document = schedule.document()
    return canonical_json({k: v for k, v in document.items() if k not in ("kind", "seed")})


# -- the logs the properties see -----------------------------------------------------------------

# Stop at the first example found: these only show that the strategy reaches a case.
SOME = settings(max_examples=1000, phases=[Phase.generate], database=None)


def some(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    """An example of `strategy` that meets `condition`; the test fails (NoSuchExample) if
    none is generated."""
    return find(strategy, condition, settings=SOME)


def invertible(case: tuple[list[Event], int]) -> bool:
    """A later version whose earlier version is past the first batch of `in_order`: one that
    `out_of_order` can move in front of it."""
    events, seed = case
    control = {r: ws[0] for r, ws in batch_index(make(events, "in_order", seed)).items()}
    return any(control[a] > 0 for a, _b in version_pairs(events))


def test_the_logs_hold_the_cases_the_schedules_must_handle() -> None:
    some(st.tuples(logs(), seeds), invertible)
    some(logs(), lambda events: any(e.time is None for e in events))
    # an untimed later version sorts before the earlier one: base order is not version order
    some(logs(), lambda events: any(refs(events).index(a) > refs(events).index(b)
                                    for a, b in version_pairs(events)))
    some(logs(), lambda events: len({e.source for e in events}) == 2)
    some(logs(), lambda events: len(events) >= 50)  # out_of_order's check of a descent
    some(logs(min_size=8), lambda events: len(events) >= 8 and events[-1].time is not None
         and sum(e.time == events[-1].time for e in events) > len(events) // 2)  # backfill


# -- delivery ------------------------------------------------------------------------------------


@PROPERTY
@given(logs(), seeds)
def test_every_kind_delivers_every_record(events: list[Event], seed: int) -> None:
    everything = Counter(refs(events))
    for kind in KINDS:
        schedule = make(events, kind, seed)
        delivered = deliveries(schedule)
        assert set(delivered) == set(everything), kind
        completed = deliveries(schedule, completed_only=True)
        if kind in EXACTLY_ONCE or kind == "crash_retry":
            assert completed == everything, kind
        assert schedule.batches[-1].abort is None, "the last run of a replay always completes"


@PROPERTY
@given(logs(), seeds)
def test_hazards_start_from_the_in_order_plan_and_differ_from_it(events: list[Event],
                                                                 seed: int) -> None:
    control = make(events, "in_order", seed)
    assert all(b.records for b in control.batches), "in_order has no empty batch"
    assert [r for b in control.batches for r in b.records] == refs(events)
    for hazard in HAZARDS:
        perturbed = make(events, hazard, seed)
        assert perturbed.digest != control.digest, hazard
        assert shape(perturbed) != shape(control), f"{hazard} delivers exactly like in_order"
    evolved = make(events, "schema_evolution", seed)
    assert [b.records for b in evolved.batches] == [b.records for b in control.batches]
    assert evolved.evolution_from is not None
    assert 1 <= evolved.evolution_from < len(evolved.batches) or len(evolved.batches) == 1


@PROPERTY
@given(logs(), seeds)
def test_snapshot_and_trickle(events: list[Event], seed: int) -> None:
    snapshot = make(events, "snapshot", seed)
    assert [b.records for b in snapshot.batches] == [tuple(refs(events))]
    trickle = make(events, "trickle", seed)
    sizes = [len(b.records) for b in trickle.batches]
    assert 0 in sizes and 1 in sizes
    assert len(sizes) >= 40
    assert [r for b in trickle.batches for r in b.records] == refs(events)


@PROPERTY
@given(logs(), seeds)
def test_duplicates_repeat_some_records_in_batch_and_some_across(events: list[Event],
                                                                 seed: int) -> None:
    schedule = make(events, "duplicates", seed)
    counts = deliveries(schedule)
    twice = {r for r, c in counts.items() if c > 1}
    assert max(counts.values()) == 2
    assert len(twice) == max(2, round(0.1 * len(events)))
    where = batch_index(schedule)
    in_batch = {r for r in twice if where[r][0] == where[r][1]}
    across = {r for r in twice if where[r][0] < where[r][1]}
    assert in_batch and across
    # The first delivery keeps the in_order batch, so the repeat is the hazard, not a move.
    control = batch_index(make(events, "in_order", seed))
    assert all(where[r][0] == control[r][0] for r in where)


@PROPERTY
@given(logs(), seeds)
def test_late_records_are_withheld_then_arrive_last(events: list[Event], seed: int) -> None:
    schedule = make(events, "late_arrival", seed)
    position = {r: p for p, r in enumerate(refs(events))}
    late = schedule.batches[-1].records
    assert len(late) == max(1, round(0.05 * len(events)))
    counts = deliveries(schedule)
    assert all(counts[r] == 1 for r in late)
    delivered_before = [r for b in schedule.batches[:-1] for r in b.records]
    for r in late:  # something newer reached the pipeline first
        assert any(position[d] > position[r] for d in delivered_before)
    control = make(events, "in_order", seed)
    assert [tuple(r for r in b.records if r not in late) for b in control.batches] == [
        b.records for b in schedule.batches[:-1]]


TIED_AT_THE_END = [Event("orders", i, min(i // 3, 1), (i,)) for i in range(10)]
ONE_BEFORE_THE_NEWEST = [Event("orders", i, min(i, 1), (i,)) for i in range(8)]


@PROPERTY
@given(logs(min_size=8), seeds)
@example(TIED_AT_THE_END, 2)  # most records tie at the newest time: the window stops before it
@example(ONE_BEFORE_THE_NEWEST, 0)
def test_backfill_redelivers_a_window_after_newer_data(events: list[Event], seed: int) -> None:
    schedule = make(events, "backfill", seed)
    time = {r: e.time for r, e in zip(refs(events), events, strict=True)}
    window = schedule.batches[-1].records
    assert list(window) == [r for r in refs(events) if r in set(window)], "in base order"
    counts = deliveries(schedule)
    held = [r for r in window if counts[r] == 1]
    redelivered = [r for r in window if counts[r] == 2]
    older = sum(sort_key(e.time) < sort_key(events[-1].time) for e in events)
    if older == 1:  # a window of the one record before the newest time: held back, no more
        assert held and not redelivered
    else:
        assert held and redelivered
    # The window is an early stretch of time, and it comes back after newer data.
    newest = max(sort_key(time[r]) for r in window)
    assert all(sort_key(time[r]) > newest for r in refs(events) if r not in set(window))
    if len({sort_key(e.time) for e in events}) > 1:
        assert len(window) < len(events)
        before = [r for b in schedule.batches[:-1] for r in b.records]
        assert any(sort_key(time[r]) > newest for r in before)


@PROPERTY
@given(logs(), seeds)
def test_crash_retry_aborts_mid_script_and_after_the_last_statement(events: list[Event],
                                                                    seed: int) -> None:
    schedule = make(events, "crash_retry", seed)
    aborts = [(i, b) for i, b in enumerate(schedule.batches) if b.abort is not None]
    assert len(aborts) >= 2
    assert any(0 < b.abort < 1 for _, b in aborts if b.abort is not None)
    assert any(b.abort == 1.0 for _, b in aborts)
    for i, b in aborts:  # the same batch again, until a run completes
        assert schedule.batches[i + 1].records == b.records
    completed = [b.records for b in schedule.batches if b.abort is None]
    assert completed == [b.records for b in make(events, "in_order", seed).batches]


@PROPERTY
@given(logs(), seeds)
def test_out_of_order_moves_records_before_earlier_ones(events: list[Event], seed: int) -> None:
    schedule = make(events, "out_of_order", seed)
    where = {r: ws[0] for r, ws in batch_index(schedule).items()}
    arrival = [r for b in schedule.batches for r in b.records]
    assert arrival != refs(events)
    if len(events) >= 50:  # ~10% of the records moved: some lands in a batch before an older one
        batches = [where[r] for r in refs(events)]
        assert any(x > y for x, y in itertools.pairwise(batches))
    control = {r: ws[0] for r, ws in batch_index(make(events, "in_order", seed)).items()}
    # A versioned pair whose earlier version is not in the first batch, and whose later version
    # the control does not already deliver first, can be inverted. (A pair the base order
    # already inverts, as an earlier version without event time can, may end in one batch.)
    pairs = version_pairs(events)
    possible = any(control[a] > 0 and control[b] >= control[a] for a, b in pairs)
    inverted = any(where[b] < where[a] for a, b in pairs)
    assert inverted or not possible


@PROPERTY
@given(logs(), seeds)
def test_chaos_combines_every_hazard(events: list[Event], seed: int) -> None:
    schedule = make(events, "chaos", seed)
    assert set(deliveries(schedule)) == set(refs(events))
    assert max(deliveries(schedule, completed_only=True).values()) >= 2
    aborts = [b.abort for b in schedule.batches if b.abort is not None]
    assert len(aborts) >= 2 and 1.0 in aborts
    assert schedule.evolution_from is not None


# -- determinism ---------------------------------------------------------------------------------


@settings(deadline=None, max_examples=15)
@given(logs(min_size=100), seeds)
def test_different_seeds_different_schedules(events: list[Event], seed: int) -> None:
    for kind in KINDS:
        if kind == "snapshot":
            continue
        assert shape(make(events, kind, seed)) != shape(make(events, kind, seed + 1)), kind


def fixed_logs() -> tuple[list[Event], list[Event]]:
    """A change stream and a two-source log, the same in every process."""
    stream = build_log([Draft(i % 3, "changes", i % 17, i % 11 == 0) for i in range(120)], True)
    plain = build_log([Draft(i % 4 // 2, ("orders", "refunds")[i % 2], 0, i % 13 == 0)
                       for i in range(90)], False)
    return stream, plain


def test_digests_do_not_depend_on_the_process() -> None:
    """String hashing is randomised per process; schedules must not notice."""
    code = ("from arrivalbench.core.schedules import KINDS, make; "
            "from tests.test_schedules import fixed_logs; "
            "print(' '.join(make(x, k, 3).digest for k in KINDS for x in fixed_logs()))")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outputs = {subprocess.run([sys.executable, "-c", code], cwd=here, check=True,
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": hashseed}).stdout
               for hashseed in ("1", "2")}
    local = " ".join(make(x, k, 3).digest for k in KINDS for x in fixed_logs()) + "\n"
    assert outputs == {local}


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown schedule kind 'sideways'"):
        make([], "sideways")


# -- batches -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("abort", "statements", "runs"), [
    (None, 5, None),
    (1.0, 5, 5),
    (1.0, 1, 1),
    (0.5, 10, 5),
    (0.01, 10, 1),  # at least one statement runs
    (0.99, 10, 9),  # and at least one does not
    (0.5, 2, 1),
    (0.5, 1, 1),  # a one-statement script cannot stop halfway
])
def test_abort_after(abort: float | None, statements: int, runs: int | None) -> None:
    assert Batch((), abort).abort_after(statements) == runs


def incoming(spec: TaskSpec, schedule: Schedule) -> list[dict[str, Table]]:
    """What each run finds in schema `incoming`, read back through the real loader."""
    staged = staged_deliveries(spec, load_log(spec), schedule)
    out = []
    with engine.database(Limits()) as db:
        db.stage(staged.tables)
        for number in range(len(schedule.batches)):
            db.load(number, staged.columns(number))
            out.append({s.name: db.query(f'SELECT * FROM incoming."{s.name}"', "run")
                        for s in spec.sources})
    return out


def rows(table: Table) -> list[dict[str, object]]:
    names = [name for name, _type in table.columns]
    return [dict(zip(names, row, strict=True)) for row in table.rows]


def test_duplicated_records_repeat_byte_for_byte(tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    schedule = task_schedule(spec, "duplicates", 0)
    tables = incoming(spec, schedule)
    seen: dict[object, dict[str, object]] = {}
    repeats = 0
    for batch in tables:
        for row in rows(batch["orders"]):
            key = row["order_id"]
            if key in seen:
                repeats += 1
                assert row == seen[key]
            seen[key] = row
    assert repeats == sum(c - 1 for c in deliveries(schedule).values()) > 0


def test_evolution_column_is_present_from_its_batch_on() -> None:
    spec = load_spec("customer_current_address")
    assert spec.evolution is not None
    schedule = task_schedule(spec, "schema_evolution", 2)
    assert schedule.evolution_from is not None and schedule.evolution_from > 0
    tables = incoming(spec, schedule)
    column = spec.evolution.column
    for number, batch in enumerate(tables):
        names = [name for name, _type in batch["customer_changes"].columns]
        assert (column in names) == (number >= schedule.evolution_from), number
        assert names[: len(spec.sources[0].columns)] == [c.name for c in spec.sources[0].columns]
    values = [r[column] for b in tables[schedule.evolution_from:]
              for r in rows(b["customer_changes"])]
    assert None in values and any(v is not None for v in values)
