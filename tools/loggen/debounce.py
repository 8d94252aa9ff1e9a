"""Debounce: sensor alerts paged through a quiet period that follows every page.

Alerts come in bursts a few minutes apart, so that whether an alert pages depends on the whole
chain of pages before it; some bursts run across midnight, where the per-day page count starts
again but the quiet period does not."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ts

GENERATORS: dict = {}

ALERT_TYPES = ["temp_high", "temp_high", "humidity_high", "door_open", "power_drop"]


def gen_sensor_alert_paging() -> dict[str, list[dict]]:
    rng = random.Random(20250317)
    start = dt.datetime(2025, 3, 17, 0, 0, 0)
    sensors = [f"{rng.choice(['FRZ', 'CLR', 'DCK'])}-{n:03d}"
               for n in rng.sample(range(100, 999), 26)]
    rows: list[dict] = []
    for sensor in sensors:
        busy = rng.choice([1, 2, 2, 3, 4])  # bursts per day for this sensor, at most
        kind = rng.choice(ALERT_TYPES)
        for day in range(9):
            bursts = rng.randint(0, busy)
            for _ in range(bursts):
                if rng.random() < 0.2:  # a burst that runs across midnight
                    when = start + dt.timedelta(days=day, hours=23,
                                                minutes=rng.randint(5, 55))
                else:
                    when = start + dt.timedelta(days=day, seconds=rng.randrange(0, 22 * 3600))
                for _ in range(rng.randint(2, 12)):
                    rows.append({"sensor_id": sensor, "alert_type": kind, "raised_at": when})
                    when += dt.timedelta(seconds=rng.choice(
                        [0, 45, 120, 180, 240, 300, 360, 420, 540, 600, 660, 900, 1500]))
    rows = [r for r in rows if r["raised_at"] < start + dt.timedelta(days=9)]
    rows.sort(key=lambda r: (r["raised_at"], r["sensor_id"]))
    alert_id = 500_000
    records = []
    for row in rows:
        alert_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "alert_id": alert_id, "raised_at": ts(row["raised_at"])})
    return {"alerts": ordered(records, "raised_at", "alert_id")}


GENERATORS["sensor_alert_paging"] = gen_sensor_alert_paging
