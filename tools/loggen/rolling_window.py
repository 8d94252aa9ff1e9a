"""Rolling windows: product usage events, counted as distinct users per day and over the seven
days ending each day, with each user's first day on a product.

Users come back to a product on scattered days weeks apart, so that an early event that arrives
late moves a user's first day far from the days its window covers."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import hexid, ordered, ts, twins

GENERATORS: dict = {}

PRODUCTS = ["notes", "calendar", "drive", "chat", "tasks"]
EVENTS = ["open", "open", "edit", "share", "search", "export"]


def gen_product_weekly_active_users() -> dict[str, list[dict]]:
    rng = random.Random(20250106)
    start = dt.datetime(2025, 1, 6, 0, 0, 0)
    days = 70
    rows: list[dict] = []
    for user in rng.sample(range(10_000, 99_999), 260):
        for product in rng.sample(PRODUCTS, rng.choice([1, 1, 2, 2, 3])):
            for active in sorted(rng.sample(range(days), rng.choice([1, 2, 3, 3, 4, 5, 6, 8]))):
                for _ in range(rng.choice([1, 1, 1, 2, 3])):
                    when = start + dt.timedelta(days=active, seconds=rng.randrange(0, 86400))
                    rows.append({"user_id": user, "product": product,
                                 "event_name": rng.choice(EVENTS), "occurred_at": when})
    twins(rng, rows, 12)
    records = [{**row, "event_id": hexid(rng, "ev-", 10), "occurred_at": ts(row["occurred_at"])}
               for row in rows]
    return {"product_events": ordered(records, "occurred_at", "event_id")}


GENERATORS["product_weekly_active_users"] = gen_product_weekly_active_users
