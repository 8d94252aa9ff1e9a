"""Landing and time: the clock of every batch, accumulating landing tables with their load
time, allowances, the bounded reference and failures beyond an allowance."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arrivalbench.core import clock, lateness
from arrivalbench.core.artifacts.script import Script
from arrivalbench.core.grading import GradeOptions, Point, grade, judge, schedule
from arrivalbench.core.lateness import Allowance
from arrivalbench.core.log import load_log
from arrivalbench.core.replay import replay
from arrivalbench.core.schedules import KINDS
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import ParameterError

# -- the clock -------------------------------------------------------------------------------

times = st.datetimes(min_value=dt.datetime(2020, 1, 1), max_value=dt.datetime(2030, 1, 1))


@given(st.lists(st.lists(st.one_of(times, st.none()), max_size=5), min_size=1, max_size=12),
       st.lists(times, max_size=5))
@settings(max_examples=200, deadline=None)
def test_the_clock_rises_by_whole_seconds_and_never_lags_the_data(
        batches: list[list[dt.datetime | None]], others: list[dt.datetime]) -> None:
    every = [t for b in batches for t in b] + others
    got = clock.clocks(batches, every)
    assert len(got) == len(batches)
    assert all(t.microsecond == 0 for t in got)
    assert all(b - a >= clock.SECOND for a, b in itertools.pairwise(got))
    seen = [t for t in every if t is not None]
    if not seen:
        assert got == tuple(clock.EPOCH + k * dt.timedelta(minutes=1)
                            for k in range(len(batches)))
        return
    assert got[0] >= min(seen)  # clock(-1) is a second before the oldest event time
    newest: dt.datetime | None = None
    for batch, t in zip(batches, got, strict=True):
        newest = max([x for x in batch if x is not None] + ([newest] if newest else []),
                     default=None)
        assert newest is None or t >= newest
    assert clock.clocks(batches, every) == got  # a pure function


def test_clock_of_a_small_log_by_hand() -> None:
    a, b = dt.datetime(2024, 3, 1, 9, 0, 0, 500), dt.datetime(2024, 3, 1, 9, 0, 0)
    assert clock.clocks([[a], [], [b]], [a, b]) == (
        dt.datetime(2024, 3, 1, 9, 0, 1), dt.datetime(2024, 3, 1, 9, 0, 2),
        dt.datetime(2024, 3, 1, 9, 0, 3))
    assert clock.reference_clock([a, b]) == dt.datetime(2024, 3, 1, 9, 0, 1)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "schema_evolution"])
def test_every_schedule_has_a_clock_per_batch(tiny: TaskSpec, kind: str) -> None:
    log = load_log(tiny)
    sched = schedule(tiny, kind, 1)
    at = clock.of(sched, log)
    assert len(at) == len(sched.batches)
    assert at[-1] >= max(e.time for e in log.timeline)  # type: ignore[type-var]
    assert clock.of(schedule(tiny, kind, 1), log) == at


# -- landing ---------------------------------------------------------------------------------

TARGET_ONLY = ("CREATE OR REPLACE TABLE shop_revenue AS SELECT 'x' AS shop, "
               "0::DECIMAL(12,2) AS revenue, 0::BIGINT AS orders")


def landed(tiny: TaskSpec, kind: str, landing: str) -> dict[int, list[tuple[Any, ...]]]:
    """What `incoming.orders` holds after each run that completed, by batch."""
    seen: dict[int, list[tuple[Any, ...]]] = {}

    def after_run(number: int, db: Any) -> None:
        stamp = "_landed_at" if landing == "accumulate" else "NULL::TIMESTAMP"
        seen[number] = sorted(db.query(f"SELECT order_id, {stamp} FROM incoming.orders",
                                       "read-target").rows)

    outcome = replay(tiny, TARGET_ONLY, schedule(tiny, kind, 0), after_run=after_run,
                     landing=landing)  # type: ignore[arg-type]
    assert outcome.failure is None, outcome.failure
    return seen


@pytest.mark.parametrize("kind", ["duplicates", "crash_retry", "late_arrival"])
def test_accumulating_landing_keeps_every_landed_row_stamped_with_its_clock(
        tiny: TaskSpec, kind: str) -> None:
    sched = schedule(tiny, kind, 0)
    at = clock.of(sched, load_log(tiny))
    ids = load_log(tiny).tables["orders"].column("order_id").to_pylist()
    # After batch k, every row landed in batches 0..k (an aborted run's batch landed too, and
    # lands again when it is retried), each stamped with the clock of the batch that landed it.
    got = landed(tiny, kind, "accumulate")
    plain = landed(tiny, kind, "batch")
    assert set(got) == set(plain) == {k for k, b in enumerate(sched.batches) if not b.aborted}
    for k in got:
        assert got[k] == sorted((ids[row], at[j]) for j, b in enumerate(sched.batches[:k + 1])
                                for _source, row in b.records)
        assert plain[k] == sorted((ids[row], None) for _s, row in sched.batches[k].records)


# A pipeline written for a landing table: it keeps one row per record key itself.
ACCUMULATING = """\
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM (SELECT DISTINCT order_id, shop, amount FROM incoming.orders) GROUP BY shop;
"""


@pytest.mark.parametrize("kind", ["duplicates", "crash_retry", "late_arrival", "backfill"])
def test_a_landing_table_pipeline_passes_under_accumulate_and_fails_under_batch(
        tiny: TaskSpec, kind: str) -> None:
    def status(landing: str) -> str:
        [graded] = grade(tiny, ACCUMULATING, [Point(kind, 0)],
                         options=GradeOptions(landing=landing))  # type: ignore[arg-type]
        assert graded.verdict.landing == landing
        return graded.verdict.status

    assert status("accumulate") == "PASS"
    assert status("batch") == "FAIL"


# The same, carrying each shop's newest load time in its target (a column no task declares).
CARRIED = """\
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders,
       max(_landed_at) AS _landed_at
FROM (SELECT order_id, shop, amount, min(_landed_at) AS _landed_at FROM incoming.orders
      GROUP BY ALL) GROUP BY shop;
"""


def test_a_target_carrying_the_load_time_is_compared_without_it(tiny: TaskSpec) -> None:
    [graded] = grade(tiny, CARRIED, [Point("duplicates", 0)],
                     options=GradeOptions(landing="accumulate"))
    assert graded.verdict.status == "PASS", graded.verdict.detail


# -- allowances ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "seconds"), [("36h", 129600), ("1d12h", 129600),
                                               ("90m", 5400), ("0s", 0), ("1w", 604800),
                                               ("1.5h", 5400), (" 2D ", 172800)])
def test_durations(text: str, seconds: float) -> None:
    assert lateness.parse(text) == Allowance(seconds=seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "h", "-1h", "1h 3", "model 1", "inf"])
def test_a_bad_allowance_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(ParameterError) as raised:
        lateness.parse(text)
    assert str(raised.value).startswith(f"allowed_lateness {text}: give a duration")


def test_model_is_the_artifacts_own() -> None:
    assert lateness.parse("Model") == lateness.MODEL


def test_a_lookback_keeps_what_it_re_reads() -> None:
    day = Allowance(lookback=1, batch_size="day")
    t = dt.datetime(2024, 3, 10, 12, 0, 0)
    assert day.inside(t, dt.datetime(2024, 3, 9, 0, 0, 0))
    assert not day.inside(t, dt.datetime(2024, 3, 8, 23, 59, 59))
    assert day.inside(t, None)  # no event time: never late
    month = Allowance(lookback=2, batch_size="month")
    assert month.inside(dt.datetime(2024, 3, 10), dt.datetime(2024, 1, 1))
    assert not month.inside(dt.datetime(2024, 3, 10), dt.datetime(2023, 12, 31, 23))
    year = Allowance(lookback=0, batch_size="year")
    assert year.inside(dt.datetime(2024, 3, 10), dt.datetime(2024, 1, 1))
    assert not Allowance(lookback=3, batch_size="hour").inside(
        dt.datetime(2024, 3, 10, 12, 30), dt.datetime(2024, 3, 10, 8, 59))


# Keeps only what arrives within a day of its landing window, as a microbatch model with a
# lookback of one day does, and says so.
WINDOWED = """\
CREATE TABLE IF NOT EXISTS kept (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2));
INSERT INTO kept SELECT DISTINCT order_id, shop, amount FROM incoming.orders
WHERE placed_at >= date_trunc('day', _landed_at) - INTERVAL 1 DAY ON CONFLICT DO NOTHING;
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM kept GROUP BY shop;
"""


@dataclasses.dataclass(frozen=True)
class Windowed(Script):
    """A script that declares the allowance of a one-day lookback."""

    @property
    def allowance(self) -> Allowance:  # type: ignore[override]
        return Allowance(lookback=1, batch_size="day")


def late_arrival(tiny: TaskSpec) -> Any:
    return schedule(tiny, "late_arrival", 0)


def test_a_failure_by_late_records_alone_is_beyond_the_allowance(tiny: TaskSpec) -> None:
    sched = late_arrival(tiny)
    graded = judge(tiny, Windowed(WINDOWED), sched, options=GradeOptions(landing="accumulate"))
    assert graded.verdict.status == "FAIL"
    beyond = graded.verdict.detail["beyond_allowance"]
    late = lateness.outside(load_log(tiny), sched, Allowance(lookback=1, batch_size="day"))
    assert isinstance(beyond, dict) and beyond["late"] == len(late) > 0
    assert beyond["allowance"] == {"lookback": 1, "batch_size": "day"}
    first = beyond["records"][0]  # type: ignore[index]
    assert set(first) == {"source", "key", "event_time", "batch", "landed_at", "lateness"}
    # The same script without the declaration fails the same way, unexplained.
    plain = judge(tiny, Script(WINDOWED), sched, options=GradeOptions(landing="accumulate"))
    assert plain.verdict.status == "FAIL" and "beyond_allowance" not in plain.verdict.detail


def test_under_its_own_allowance_it_passes_and_the_key_says_so(tiny: TaskSpec) -> None:
    options = GradeOptions(landing="accumulate", allowance=lateness.MODEL)
    for kind in ("late_arrival", "in_order", "duplicates"):
        graded = judge(tiny, Windowed(WINDOWED), schedule(tiny, kind, 0), options=options)
        assert graded.verdict.status == "PASS", (kind, graded.verdict.detail)
        assert graded.verdict.allowance == "model"


def test_a_bug_inside_the_allowance_is_not_explained(tiny: TaskSpec) -> None:
    lossy = WINDOWED.replace("INTERVAL 1 DAY", "INTERVAL 0 DAY")  # keeps less than it says
    graded = judge(tiny, Windowed(lossy), late_arrival(tiny),
                   options=GradeOptions(landing="accumulate"))
    assert graded.verdict.status == "FAIL"
    assert "beyond_allowance" not in graded.verdict.detail
    bounded = judge(tiny, Windowed(lossy), late_arrival(tiny),
                    options=GradeOptions(landing="accumulate", allowance=lateness.MODEL))
    assert bounded.verdict.status == "FAIL"


def test_a_duration_bounds_the_reference_and_the_every_batch_check(tiny: TaskSpec) -> None:
    sched = late_arrival(tiny)
    wide = GradeOptions(landing="accumulate", every_batch=True,
                        allowance=Allowance(seconds=3600))
    graded = judge(tiny, WINDOWED.replace("date_trunc('day', _landed_at) - INTERVAL 1 DAY",
                                          "_landed_at - INTERVAL 1 HOUR"), sched, options=wide)
    assert graded.verdict.status == "PASS", graded.verdict.detail
    assert graded.verdict.allowance == "3600s"
    everything = judge(tiny, ACCUMULATING, sched, options=wide)
    assert everything.verdict.status == "FAIL"  # it keeps the late records the bound drops


def test_model_on_an_artifact_without_its_own_is_refused(tiny: TaskSpec) -> None:
    with pytest.raises(ParameterError, match="declares no allowance of its own"):
        judge(tiny, WINDOWED, late_arrival(tiny),
              options=GradeOptions(landing="accumulate", allowance=lateness.MODEL))


# The fixture is a task folder read, never written: one for every example is safe.
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from([k for k in KINDS if k != "schema_evolution"]),
       seed=st.integers(0, 50), lookback=st.integers(0, 2),
       batch_size=st.sampled_from(lateness.BATCH_SIZES))
def test_a_microbatch_models_first_run_builds_every_window(
        tiny: TaskSpec, kind: str, seed: int, lookback: int, batch_size: str) -> None:
    """Under a lookback allowance no record of the first batch is late, however old: the
    first run builds from `begin`. A duration has no first run: it bounds every batch."""
    sched = schedule(tiny, kind, seed)
    log = load_log(tiny)
    first = lateness.first_landing(sched)
    late = lateness.outside(log, sched, Allowance(lookback=lookback, batch_size=batch_size))
    assert all(first[ref] > 0 for ref in late)
    strict = lateness.outside(log, sched, Allowance(seconds=0))
    times = clock.event_times(log)
    at = clock.of(sched, log)
    assert {ref for ref in first if first[ref] == 0 and clock.instant(times[ref]) is not None
            and clock.instant(times[ref]) < at[0]} <= strict
