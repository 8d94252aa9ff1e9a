"""IoT telemetry: sensor readings, device registries, hourly statistics."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ties, ts, twins

SENSORS = ["gh1-north", "gh1-south", "gh2-east", "gh2-west", "cold-room-a", "cold-room-b",
           "loading-dock"]


def gen_sensor_readings_calibrated() -> dict[str, list[dict]]:
    rng = random.Random(20240715)
    start = dt.datetime(2024, 7, 15, 6, 0, 0)
    rows: list[dict] = []
    for sensor in SENSORS:
        cold = sensor.startswith("cold")
        when = start + dt.timedelta(seconds=rng.randrange(0, 600))
        for _ in range(rng.randint(30, 40)):
            when += dt.timedelta(seconds=rng.choice([600, 900, 900, 1200, 1800]))
            for metric in ("temp_c", "humidity_pct"):
                if rng.random() < 0.4:
                    continue
                if metric == "temp_c":
                    raw = rng.randint(-220, -150) if cold else rng.randint(140, 330)
                    if rng.random() < 0.03:
                        raw = rng.choice([-500, 900, 1270])  # a glitching probe
                else:
                    raw = rng.randint(300, 950)
                    if rng.random() < 0.03:
                        raw = rng.choice([1010, 1200, -10])
                if rng.random() < 0.05:
                    raw = None  # the probe answered without a value
                rows.append({"sensor_id": sensor, "metric": metric, "raw_value": raw,
                             "read_at": when})
    twins(rng, rows, 9)  # the gateway forwarded one reading under two ids
    ties(rng, rows, "read_at", "sensor_id", 10)
    rows.sort(key=lambda r: (r["read_at"], r["sensor_id"], r["metric"]))
    reading_id = 7_200_000
    records = []
    for row in rows:
        reading_id += rng.choice([1, 1, 1, 2, 5])
        records.append({**row, "reading_id": reading_id, "read_at": ts(row["read_at"])})
    return {"readings": ordered(records, "read_at", "reading_id")}


GENERATORS = {
    "sensor_readings_calibrated": gen_sensor_readings_calibrated,
}
