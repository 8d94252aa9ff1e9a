"""Running state with late entries: stock on hand after every movement, never below zero."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ts, weighted

# Demand runs slightly ahead of supply, so most SKUs run dry now and then and shipments come
# up short: a late receipt then changes how much every later shipment could take.
KINDS = [("shipment", 70), ("receipt", 22), ("return", 8)]


def gen_sku_stock_ledger() -> dict[str, list[dict]]:
    rng = random.Random(20250512)
    start = dt.datetime(2025, 5, 12, 7, 0, 0)
    skus = [f"SKU-{rng.choice('ABCDEFGH')}{n:05d}" for n in rng.sample(range(10_000, 99_999), 60)]
    rows: list[dict] = []
    for sku in skus:
        when = start + dt.timedelta(seconds=rng.randrange(0, 2 * 86400))
        lot = rng.choice([12, 24, 40, 60])
        for _ in range(rng.randint(38, 62)):
            kind = str(weighted(rng, KINDS))
            quantity = {"shipment": rng.choice([1, 1, 2, 2, 3, 4, 5, 6, 8, 12]),
                        "receipt": lot * rng.choice([1, 1, 1, 2]) // 2,
                        "return": rng.choice([1, 1, 2])}[kind]
            rows.append({"sku": sku, "movement_type": kind, "quantity": quantity,
                         "moved_at": when})
            if kind == "shipment" and rng.random() < 0.06:
                rows.append(dict(rows[-1]))  # two picks of the same quantity in one second
            when += dt.timedelta(seconds=rng.randrange(600, 14 * 3600))
    # Movements of two SKUs in the same second.
    for _ in range(40):
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a]["sku"] != rows[b]["sku"] and abs(
                (rows[a]["moved_at"] - rows[b]["moved_at"]).total_seconds()) < 600:
            rows[b] = {**rows[b], "moved_at": rows[a]["moved_at"]}
    rows.sort(key=lambda r: (r["moved_at"], r["sku"]))
    movement_id = 7_000_000
    records = []
    for row in rows:
        movement_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "movement_id": movement_id, "moved_at": ts(row["moved_at"])})
    return {"stock_movements": ordered(records, "moved_at", "movement_id")}


GENERATORS = {
    "sku_stock_ledger": gen_sku_stock_ledger,
}
