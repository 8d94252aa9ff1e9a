"""IoT telemetry: sensor readings, device registries, hourly statistics."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, same_second, ties, ts, twins, versions

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


def gen_device_last_reading() -> dict[str, list[dict]]:
    rng = random.Random(20240722)
    start = dt.datetime(2024, 7, 22)
    devices = [f"trk-{n:04d}" for n in rng.sample(range(1, 9999), 36)]
    rows: list[dict] = []
    for device in devices:
        when = start + dt.timedelta(seconds=rng.randrange(0, 86400))
        battery = rng.randint(40, 100)
        for _ in range(rng.randint(3, 12)):
            battery = max(1, battery - rng.randint(0, 6))
            rows.append({"device_id": device,
                         "battery_pct": None if rng.random() < 0.08 else battery,
                         "signal_dbm": rng.randint(-115, -60), "reported_at": when})
            when += dt.timedelta(seconds=rng.randrange(1800, 14 * 3600))
    twins(rng, rows, 8)  # the modem sent one heartbeat twice
    ties(rng, rows, "reported_at", "device_id", 10)
    # two heartbeats of one device in the same second with different contents
    for row in rng.sample(rows, 4):
        rows.append({**row, "signal_dbm": row["signal_dbm"] - 3})
    records = []
    heartbeat_id = 0
    for row in sorted(rows, key=lambda r: (r["reported_at"], r["device_id"])):
        heartbeat_id += rng.choice([1, 1, 2])
        records.append({**row, "heartbeat_id": heartbeat_id,
                        "reported_at": ts(row["reported_at"])})
    return {"device_heartbeats": ordered(records, "reported_at", "heartbeat_id")}


SITES = ["plant-rotterdam", "plant-ghent", "dc-lille", "dc-cologne", None]
MODELS = ["TX-200", "TX-210", "HX-1", "VB-9"]


def gen_device_registry_current() -> dict[str, list[dict]]:
    rng = random.Random(20240729)
    start = dt.datetime(2024, 7, 29, 7, 0, 0)
    devices = [f"dev-{n:05d}" for n in rng.sample(range(1, 99999), 75)]
    rows: list[dict] = []
    state: dict[str, dict | None] = {}
    for device, version, when in versions(rng, devices, start, 14, [1, 2, 2, 3, 4, 5],
                                          (3600, 3 * 86400)):
        current = state.get(device)
        if current is None:
            op = "register"
            current = {"site": rng.choice(SITES), "model": rng.choice(MODELS),
                       "firmware": rng.choice(["1.4.0", "1.4.2", "2.0.1"])}
        elif rng.random() < 0.2:
            op = "decommission"
        else:
            op = "update"
            current = dict(current)
            if rng.random() < 0.5:
                current["firmware"] = rng.choice(["1.4.2", "2.0.1", "2.1.0", None])
            else:
                current["site"] = rng.choice(SITES)
        state[device] = None if op == "decommission" else current
        payload = current if op != "decommission" else {"site": None, "model": None,
                                                         "firmware": None}
        rows.append({"device_id": device, "version": version, "op": op, **payload,
                     "updated_at": when})
    same_second(rng, rows, "updated_at", "device_id", 10)
    rows.sort(key=lambda r: (r["updated_at"], r["device_id"], r["version"]))
    event_id = 0
    records = []
    for row in rows:
        event_id += rng.choice([1, 1, 2])
        records.append({**row, "event_id": event_id, "updated_at": ts(row["updated_at"])})
    return {"device_events": ordered(records, "updated_at", "event_id")}


def gen_sensor_hourly_stats() -> dict[str, list[dict]]:
    rng = random.Random(20240805)
    start = dt.datetime(2024, 8, 5, 0, 0, 0)
    meters = ["line-1", "line-2", "line-3", "compressor", "chiller"]
    rows: list[dict] = []
    for meter in meters:
        base = {"line-1": 42.0, "line-2": 38.5, "line-3": 51.0, "compressor": 17.2,
                "chiller": 23.9}[meter]
        when = start + dt.timedelta(seconds=rng.randrange(0, 900))
        while when < start + dt.timedelta(hours=30):
            kw = None if rng.random() < 0.05 else round(base * rng.uniform(0.7, 1.3), 2)
            rows.append({"meter_id": meter, "power_kw": kw, "measured_at": when})
            when += dt.timedelta(seconds=rng.choice([900, 1200, 1500, 1800, 2400]))
    twins(rng, rows, 8)
    ties(rng, rows, "measured_at", "meter_id", 10)
    # readings exactly on the hour belong to the hour they start
    for row in rng.sample(rows, 6):
        row["measured_at"] = row["measured_at"].replace(minute=0, second=0)
    rows.sort(key=lambda r: (r["measured_at"], r["meter_id"]))
    sample_id = 0
    records = []
    for row in rows:
        sample_id += rng.choice([1, 1, 2])
        records.append({**row, "sample_id": sample_id, "measured_at": ts(row["measured_at"])})
    return {"power_samples": ordered(records, "measured_at", "sample_id")}


GENERATORS = {
    "sensor_hourly_stats": gen_sensor_hourly_stats,
    "sensor_readings_calibrated": gen_sensor_readings_calibrated,
    "device_last_reading": gen_device_last_reading,
    "device_registry_current": gen_device_registry_current,
}
