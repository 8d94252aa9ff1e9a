"""HR: badge swipes, employee directory, department history, timesheets."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ties, ts, twins

DOORS = ["HQ-1-MAIN", "HQ-1-SIDE", "HQ-3-LAB", "HQ-4-EXEC", "WH-0-DOCK", "WH-1-OFFICE",
         "LAB-2-CLEAN"]


def gen_badge_swipes_enriched() -> dict[str, list[dict]]:
    rng = random.Random(20240902)
    start = dt.datetime(2024, 9, 2)
    employees = rng.sample(range(1000, 2000), 24)
    rows: list[dict] = []
    for day_number in range(12):
        base = start + dt.timedelta(days=day_number)
        for employee in rng.sample(employees, 12):
            night = employee % 5 == 0
            enter = base + dt.timedelta(hours=21 if night else 7, seconds=rng.randrange(0, 7200))
            leave = enter + dt.timedelta(hours=rng.randint(6, 9), seconds=rng.randrange(0, 3600))
            door = rng.choice(DOORS)
            rows.append({"badge_id": f"B{employee:05d}", "employee_id": employee,
                         "door_id": door, "direction": "in", "swiped_at": enter})
            rows.append({"badge_id": f"B{employee:05d}", "employee_id": employee,
                         "door_id": door, "direction": "out", "swiped_at": leave})
        for _ in range(2):  # visitor badges belong to nobody
            enter = base + dt.timedelta(hours=9, seconds=rng.randrange(0, 6 * 3600))
            rows.append({"badge_id": f"V{rng.randint(1, 40):03d}", "employee_id": None,
                         "door_id": "HQ-1-MAIN", "direction": "in", "swiped_at": enter})
    twins(rng, rows, 8)  # a slow reader registers one swipe twice with two swipe ids
    ties(rng, rows, "swiped_at", "badge_id", 10)
    rows.sort(key=lambda r: (r["swiped_at"], r["badge_id"]))
    swipe_id = 40_000
    records = []
    for row in rows:
        swipe_id += rng.choice([1, 1, 1, 3])
        records.append({**row, "swipe_id": swipe_id, "swiped_at": ts(row["swiped_at"])})
    return {"badge_swipes": ordered(records, "swiped_at", "swipe_id")}


GENERATORS = {
    "badge_swipes_enriched": gen_badge_swipes_enriched,
}
