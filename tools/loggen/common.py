"""Helpers shared by the generators: timestamps, money, ids, and the shapes real logs have
(identical payloads under different keys, several records in the same second)."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Sequence

TS_FORMAT = "%Y-%m-%d %H:%M:%S"


def ts(value: dt.datetime) -> str:
    return value.strftime(TS_FORMAT)


def day(value: dt.date) -> str:
    return value.isoformat()


def money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def hexid(rng: random.Random, prefix: str = "", digits: int = 12) -> str:
    return f"{prefix}{rng.getrandbits(4 * digits):0{digits}x}"


def weighted(rng: random.Random, table: Sequence[tuple[object, int]]) -> object:
    total = sum(w for _, w in table)
    pick = rng.randint(1, total)
    for value, weight in table:
        pick -= weight
        if pick <= 0:
            return value
    raise AssertionError("unreachable")


def at(start: dt.datetime, rng: random.Random, days: int, hours: tuple[int, int] = (0, 24)
       ) -> dt.datetime:
    """A random second within `days` days from `start`, between the given hours of the day."""
    low, high = hours
    return start + dt.timedelta(days=rng.randrange(days),
                                seconds=rng.randrange(low * 3600, high * 3600))


def twins(rng: random.Random, rows: list[dict], count: int) -> None:
    """Append copies of `count` rows: the same payload, to be given different record keys."""
    for index in rng.sample(range(len(rows)), count):
        rows.append(dict(rows[index]))


def ties(rng: random.Random, rows: list[dict], time: str, group: str, count: int) -> None:
    """Give `count` rows the event time of a row of another `group`: same-second records."""
    done = 0
    while done < count:
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a][group] != rows[b][group]:
            rows[b][time] = rows[a][time]
            done += 1


def ordered(records: list[dict], time: str, *keys: str) -> list[dict]:
    return sorted(records, key=lambda r: (r[time], *(r[k] for k in keys)))


def versions(rng: random.Random, entities: Sequence[object], start: dt.datetime, days: float,
             count: Sequence[int], gap: tuple[int, int]) -> list[tuple[object, int, dt.datetime]]:
    """(entity, version, time) for a change stream: each entity gets a number of versions drawn
    from `count`, strictly increasing in time, `gap` seconds apart at least/most."""
    out = []
    for entity in entities:
        when = start + dt.timedelta(seconds=rng.randrange(0, int(days * 86400)))
        for version in range(1, rng.choice(count) + 1):
            out.append((entity, version, when))
            when += dt.timedelta(seconds=rng.randrange(*gap))
    return out


def same_second(rng: random.Random, rows: list[dict], time: str, entity: str, count: int) -> None:
    """Move `count` rows to the time of a row of another entity, where that keeps the moved row
    strictly between its own entity's neighbours (version order stays time order)."""
    moved = 0
    for _ in range(count * 50):
        if moved == count:
            break
        a, b = rng.sample(range(len(rows)), 2)
        ra, rb = rows[a], rows[b]
        if ra[entity] == rb[entity]:
            continue
        mine = sorted(r[time] for r in rows if r[entity] == rb[entity])
        index = mine.index(rb[time])
        low = mine[index - 1] if index else dt.datetime.min
        high = mine[index + 1] if index + 1 < len(mine) else dt.datetime.max
        if low < ra[time] < high:
            rb[time] = ra[time]
            moved += 1


def numbered(rng: random.Random, rows: list[dict], sort_key: Callable[[dict], tuple],
             id_column: str, first: int, steps: Sequence[int], time: str) -> list[dict]:
    """The rows in `sort_key` order as records: ids from `first` up by a step drawn from
    `steps` (other tables' ids interleave), the time column formatted."""
    records = []
    number = first
    for row in sorted(rows, key=sort_key):
        number += rng.choice(steps)
        records.append({**row, id_column: number, time: ts(row[time])})
    return records
