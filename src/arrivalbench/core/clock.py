"""Processing time: the clock of every batch, and how late a record is when it first lands.

A batch's clock is a pure function of the log and the schedule: the newest event time among
every record delivered so far, never less than one second past the previous batch's clock,
rounded up to the second. The first batch starts from one second before the log's oldest
event time; a log without event times runs from a fixed epoch, a minute per batch. So the
runs' cadence is the data's, and a model that builds time windows builds them over the data,
never up to the day it is graded on. The reference is computed at the newest event time of
the log (`reference_clock`).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arrivalbench.core.log import Log
    from arrivalbench.core.schedules import Schedule

SECOND = dt.timedelta(seconds=1)
# The clock of a log without event times: batch k runs at EPOCH + k minutes.
EPOCH = dt.datetime(2000, 1, 1)
TEXT_FORMAT = "%Y-%m-%d %H:%M:%S"


def instant(value: object) -> dt.datetime | None:
    """An event time as a naive UTC timestamp: a date is its midnight, an aware timestamp is
    taken to UTC; None for anything that is no time (NULL, a number)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return None


def up_to_second(t: dt.datetime) -> dt.datetime:
    whole = t.replace(microsecond=0)
    return whole if whole == t else whole + SECOND


def clocks(batches: Sequence[Iterable[object]], every: Iterable[object]) -> tuple[dt.datetime, ...]:
    """The clock of each batch, given the event times of the records each delivers and those
    of every record of the log (`every`): clock(k) = max(clock(k-1) + 1 s, the newest event
    time delivered in batches 0..k), rounded up to the second, clock(-1) being one second
    before the oldest event time of the log."""
    times = [t for t in map(instant, every) if t is not None]
    if not times:
        return tuple(EPOCH + k * dt.timedelta(minutes=1) for k in range(len(batches)))
    clock = up_to_second(min(times)) - SECOND
    newest: dt.datetime | None = None
    out = []
    for batch in batches:
        for t in map(instant, batch):
            if t is not None and (newest is None or t > newest):
                newest = t
        clock = max(clock + SECOND, up_to_second(newest) if newest is not None else clock)
        out.append(clock)
    return tuple(out)


def reference_clock(every: Iterable[object]) -> dt.datetime:
    """The clock a full recomputation runs at: the newest event time of the log, rounded up to
    the second (the epoch for a log without event times)."""
    times = [t for t in map(instant, every) if t is not None]
    return up_to_second(max(times)) if times else EPOCH


def text(t: dt.datetime) -> str:
    return t.strftime(TEXT_FORMAT)


def parse_text(value: str) -> dt.datetime | None:
    """A clock as written in a plan (`2024-03-01 09:30:00`), or None if it is not one."""
    try:
        return dt.datetime.strptime(value, TEXT_FORMAT)
    except ValueError:
        return None


def of(schedule: Schedule, log: Log) -> tuple[dt.datetime, ...]:
    """The clock of each batch of `schedule`: the plan's own where it sets one, else the
    rule's over the log's event times."""
    if schedule.clock is not None:
        return schedule.clock
    return _derived(schedule, log)


@functools.lru_cache(maxsize=1024)  # a grade asks for the clock of the same schedule often
def _derived(schedule: Schedule, log: Log) -> tuple[dt.datetime, ...]:
    times = event_times(log)
    return clocks([[times[ref] for ref in batch.records] for batch in schedule.batches],
                  times.values())


@functools.lru_cache(maxsize=64)
def event_times(log: Log) -> dict[tuple[str, int], object]:
    """Each record of `log`, by (source, row), and its event time."""
    return {(e.source, e.row): e.time for e in log.timeline}


def reference_of(log: Log) -> dt.datetime:
    """The clock of the full recomputation over `log`."""
    return reference_clock(e.time for e in log.timeline)
