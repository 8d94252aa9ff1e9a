"""Sessionization: delivery drivers' shifts from the GPS pings of their phones."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ts, weighted

# What follows a ping: the next ping on the road, a lull (a ping that alone holds two stretches
# together, since a lull next to an ordinary step spans 45 minutes or more), a break that ends
# the shift, or a gap right at the 45-minute boundary.
NEXT = [("drive", 760), ("lull", 150), ("split", 40), ("edge_in", 15), ("edge_out", 15),
        ("twice", 20)]


def gen_driver_shift_hours() -> dict[str, list[dict]]:
    rng = random.Random(20250611)
    drivers = [f"DRV-{n:04d}" for n in sorted(rng.sample(range(1000, 9999), 24))]
    rows: list[dict] = []
    for driver in drivers:
        # Some drivers work the late shift, so that their shifts run over midnight.
        late = rng.random() < 0.5
        for day in range(3):
            hour = rng.randint(20, 22) if late else rng.randint(7, 12)
            when = dt.datetime(2025, 6, 9 + day, hour, rng.randrange(60), rng.randrange(60))
            midnight = dt.datetime(2025, 6, 10 + day) - dt.timedelta(minutes=40)
            lulls = 0
            for _ in range(rng.randint(10, 18)):
                rows.append({"driver_id": driver, "pinged_at": when,
                             "speed_kmh": rng.randrange(0, 700) / 10})
                step = weighted(rng, NEXT)
                if late and when >= midnight and lulls < 2:
                    # Around midnight the orders thin out: two lulls in a row, so that the
                    # ping between them alone holds the shift together across the day.
                    lulls += 1
                    step = "lull"
                if step == "twice":  # the phone sends two fixes in the same second
                    rows.append({**rows[-1], "speed_kmh": rng.randrange(0, 700) / 10})
                    seconds = rng.randrange(240, 1200)
                elif step == "lull":
                    seconds = rng.randrange(1600, 2700)
                elif step == "split":
                    seconds = rng.randrange(2701, 2 * 3600)
                elif step == "edge_in":
                    seconds = 2699  # just under 45 minutes: the same shift
                elif step == "edge_out":
                    seconds = 2700  # exactly 45 minutes: the next shift
                else:
                    seconds = rng.randrange(240, 1200)
                when += dt.timedelta(seconds=seconds)
    rows.sort(key=lambda r: (r["pinged_at"], r["driver_id"]))
    ping_id = 7_000_000
    records = []
    for row in rows:
        ping_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "ping_id": ping_id, "pinged_at": ts(row["pinged_at"]),
                        "speed_kmh": f"{row['speed_kmh']:.1f}"})
    return {"gps_pings": ordered(records, "pinged_at", "ping_id")}


GENERATORS = {
    "driver_shift_hours": gen_driver_shift_hours,
}
