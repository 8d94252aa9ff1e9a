"""Lateness: how late a record is when it first lands, and which records a pipeline promises to
include.

A record's lateness is the clock of the batch that first delivers it minus its event time. An
*allowance* says which records a pipeline promises to include: under a duration D, those at
most D late; under a microbatch model's own (`lookback` windows of `batch_size`), those whose
event time is at or after the start of their landing clock's window, moved back `lookback`
windows: what the model re-reads when it runs (its first run builds every window, so the
records of the first batch are all inside). The reference over the records inside an
allowance is the *bounded reference*; a failure whose every difference is explained by the
records outside it is late data, by design, not a bug.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

from arrivalbench.core import clock as clocks
from arrivalbench.core.log import Log
from arrivalbench.core.schedules import Ref, Schedule
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import JSON, to_json
from arrivalbench.errors import ParameterError

BATCH_SIZES = ("hour", "day", "month", "year")
MODEL = "model"  # the allowance an artifact declares itself
SHOWN = 5  # late records a verdict names


@dataclass(frozen=True)
class Allowance:
    """Which records a pipeline promises to include: those at most `seconds` late, or, for a
    microbatch model, those inside its `lookback` windows of `batch_size`."""

    seconds: float | None = None
    lookback: int | None = None
    batch_size: str | None = None

    def __post_init__(self) -> None:
        if (self.seconds is None) == (self.lookback is None or self.batch_size is None):
            raise ValueError("an allowance is a duration or a lookback and a batch size")

    def inside(self, landed_at: dt.datetime, event_time: object) -> bool:
        t = clocks.instant(event_time)
        if t is None:
            return True  # no event time: never late
        if self.seconds is not None:
            return (landed_at - t).total_seconds() <= self.seconds
        assert self.lookback is not None and self.batch_size is not None
        start = window_start(landed_at, self.batch_size)
        return t >= windows_back(start, self.batch_size, self.lookback)

    def document(self) -> JSON:
        if self.seconds is not None:
            return {"duration": duration_text(self.seconds)}
        return {"lookback": self.lookback, "batch_size": self.batch_size}

    def words(self) -> str:
        if self.seconds is not None:
            return f"at most {duration_text(self.seconds)} late"
        return f"inside the model's lookback of {self.lookback} {self.batch_size}(s)"


def key_text(allowance: Allowance | str | None) -> str:
    """An allowance as a verdict's key holds it: "" for none, `model` for an artifact's own
    (its lookback is in the artifact's digest), else the duration in seconds."""
    if allowance is None:
        return ""
    if isinstance(allowance, str):
        return allowance
    assert allowance.seconds is not None
    return f"{allowance.seconds:g}s"


def from_key(text: str) -> Allowance | str | None:
    """The allowance a verdict's key holds (`key_text`'s inverse)."""
    if not text:
        return None
    return MODEL if text == MODEL else Allowance(seconds=float(text.removesuffix("s")))


_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(w|d|h|m|s)")
_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}


def parse(text: str) -> Allowance | str:
    """`model`, or a duration: whole or decimal numbers of w, d, h, m, s (`36h`, `1d12h`,
    `90m`, `0s`); a one-line ParameterError naming the value otherwise."""
    value = text.strip().lower()
    if value == MODEL:
        return MODEL
    pos, total = 0, 0.0
    for match in _PART.finditer(value):
        if match.start() != pos and value[pos:match.start()].strip():
            break
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if not value or pos != len(value) or not math.isfinite(total):
        raise ParameterError("allowed_lateness", text, "give a duration such as 36h, 1d12h, "
                             "90m or 0s, or model (a microbatch model's own lookback)")
    return Allowance(seconds=total)


def duration_text(seconds: float) -> str:
    """A duration in words: `3d 4h 5m 6s`, `0s`."""
    sign = "-" if seconds < 0 else ""
    left = math.ceil(abs(seconds))
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size or (unit == "s" and not parts):
            parts.append(f"{left // size}{unit}")
            left %= size
    return sign + " ".join(parts)


def window_start(t: dt.datetime, size: str) -> dt.datetime:
    """The start of the `size` window holding `t`, as dbt's microbatch truncates it."""
    if size == "hour":
        return t.replace(minute=0, second=0, microsecond=0)
    if size == "day":
        return t.replace(hour=0, minute=0, second=0, microsecond=0)
    if size == "month":
        return t.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return t.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)


def windows_back(start: dt.datetime, size: str, count: int) -> dt.datetime:
    """The window start `count` windows of `size` before `start`."""
    if size == "hour":
        return start - dt.timedelta(hours=count)
    if size == "day":
        return start - dt.timedelta(days=count)
    months = start.year * 12 + start.month - 1 - (count if size == "month" else 12 * count)
    return start.replace(year=months // 12, month=months % 12 + 1)


# -- the records of a schedule ---------------------------------------------------------------


def first_landing(schedule: Schedule) -> dict[Ref, int]:
    """Each record delivered, and the batch that first delivers it (aborted or not: what
    landed stays landed)."""
    first: dict[Ref, int] = {}
    for number, batch in enumerate(schedule.batches):
        for ref in batch.records:
            first.setdefault(ref, number)
    return first


def outside(log: Log, schedule: Schedule, allowance: Allowance) -> frozenset[Ref]:
    """The records `schedule` delivers that are beyond `allowance` when they first land. Under
    a microbatch model's own allowance the first batch's records are all inside: the model's
    first run builds every window from its `begin`, not from its lookback."""
    times = clocks.event_times(log)
    at = clocks.of(schedule, log)
    first_run = 0 if allowance.lookback is not None else -1
    return frozenset(ref for ref, number in first_landing(schedule).items()
                     if number != first_run and not allowance.inside(at[number], times[ref]))


def late_records(spec: TaskSpec, log: Log, schedule: Schedule, late: frozenset[Ref],
                 allowance: Allowance) -> dict[str, JSON]:
    """What a verdict says of the records beyond `allowance`: how many, and the first few
    (in landing order) with their event time, when they landed and how late they were."""
    first = first_landing(schedule)
    times = clocks.event_times(log)
    at = clocks.of(schedule, log)
    shown: list[JSON] = []
    for ref in sorted(late, key=lambda r: (first[r], r))[:SHOWN]:
        source, row = ref
        table = log.tables[source]
        landed_at = at[first[ref]]
        event = clocks.instant(times[ref])
        assert event is not None
        shown.append({"source": source,
                      "key": {c: to_json(table.column(c)[row].as_py())
                              for c in spec.source(source).record_key},
                      "event_time": clocks.text(event), "batch": first[ref],
                      "landed_at": clocks.text(landed_at),
                      "lateness": duration_text((landed_at - event).total_seconds())})
    return {"allowance": allowance.document(), "late": len(late), "records": shown}
