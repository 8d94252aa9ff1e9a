"""Logistics: parcel scans, parcel status, carrier punctuality, stock movements."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import day, hexid, ordered, same_second, ts, versions, weighted

FACILITIES = ["PDX-HUB", "SEA-HUB", "SLC-HUB", "DEN-HUB", "BOI-DEPOT", "SPK-DEPOT"]
ROUTE = ["pickup", "hub_in", "hub_out", "hub_in", "hub_out", "out_for_delivery", "delivered"]


def gen_parcel_scan_intervals() -> dict[str, list[dict]]:
    rng = random.Random(20241007)
    start = dt.datetime(2024, 10, 7, 6, 0, 0)
    rows: list[dict] = []
    for _ in range(48):
        parcel = hexid(rng, "1Z", 10).upper()
        when = start + dt.timedelta(seconds=rng.randrange(0, 8 * 86400))
        stops = rng.randint(3, len(ROUTE))
        facility = rng.choice(FACILITIES)
        for step in ROUTE[:stops]:
            if step == "hub_in":
                facility = rng.choice(FACILITIES)
            # a driver's handheld on the road reports no facility
            where = None if step == "out_for_delivery" and rng.random() < 0.3 else facility
            rows.append({"parcel_id": parcel, "facility": where, "scan_type": step,
                         "scanned_at": when})
            if rng.random() < 0.12:  # the scanner read the label twice
                rows.append(dict(rows[-1]))
            when += dt.timedelta(seconds=rng.randrange(600, 20 * 3600))
    # Two parcels scanned at the same dock in the same second.
    for _ in range(10):
        a, b = rng.sample(range(len(rows)), 2)
        pa, pb = rows[a], rows[b]
        if pa["parcel_id"] == pb["parcel_id"]:
            continue
        mine = sorted(r["scanned_at"] for r in rows if r["parcel_id"] == pb["parcel_id"])
        index = mine.index(pb["scanned_at"])
        low = mine[index - 1] if index else dt.datetime.min
        high = mine[index + 1] if index + 1 < len(mine) else dt.datetime.max
        if low < pa["scanned_at"] < high:
            pb["scanned_at"] = pa["scanned_at"]
    rows.sort(key=lambda r: (r["scanned_at"], r["parcel_id"]))
    scan_id = 90_000_000
    records = []
    for row in rows:
        scan_id += rng.choice([1, 1, 2, 4])
        records.append({**row, "scan_id": scan_id, "scanned_at": ts(row["scanned_at"])})
    return {"parcel_scans": ordered(records, "scanned_at", "scan_id")}


STATUSES = ["label_created", "picked_up", "in_transit", "in_transit", "out_for_delivery",
            "delivered"]


def gen_parcel_latest_status() -> dict[str, list[dict]]:
    rng = random.Random(20241014)
    start = dt.datetime(2024, 10, 14, 5, 0, 0)
    parcels = [hexid(rng, "PX", 9).upper() for _ in range(85)]
    rows: list[dict] = []
    for parcel, seq, when in versions(rng, parcels, start, 10, [1, 2, 3, 3, 4, 5, 6],
                                      (1800, 30 * 3600)):
        status = STATUSES[min(seq - 1, len(STATUSES) - 1)]
        if seq > 2 and rng.random() < 0.08:
            status = "exception"
        location = None if status in ("label_created", "delivered") else rng.choice(
            ["PDX-HUB", "SEA-HUB", "SLC-HUB", "BOI-DEPOT", None])
        eta = None if status in ("delivered", "exception") or rng.random() < 0.2 else \
            day((when + dt.timedelta(days=rng.randint(1, 4))).date())
        rows.append({"parcel_id": parcel, "status_seq": seq, "status": status,
                     "location": location, "eta": eta, "updated_at": when})
    same_second(rng, rows, "updated_at", "parcel_id", 10)
    rows.sort(key=lambda r: (r["updated_at"], r["parcel_id"], r["status_seq"]))
    update_id = 0
    records = []
    for row in rows:
        update_id += rng.choice([1, 1, 3])
        records.append({**row, "update_id": update_id, "updated_at": ts(row["updated_at"])})
    return {"parcel_status_updates": ordered(records, "updated_at", "update_id")}


def gen_inventory_on_hand() -> dict[str, list[dict]]:
    rng = random.Random(20241021)
    start = dt.datetime(2024, 10, 21, 6, 0, 0)
    rows: list[dict] = []
    for warehouse in (3, 5, 8):
        for sku in rng.sample([f"SKU-{n:04d}" for n in range(1000, 1100)], 9):
            when = start + dt.timedelta(seconds=rng.randrange(0, 86400))
            rows.append({"warehouse_id": warehouse, "sku": sku, "movement_type": "receipt",
                         "quantity": rng.choice([20, 40, 60]), "moved_at": when})
            for _ in range(rng.randint(4, 13)):
                when += dt.timedelta(seconds=rng.randrange(600, 20 * 3600))
                kind = str(weighted(rng, [("shipment", 10), ("receipt", 2), ("return", 2),
                                          ("adjustment", 1), ("transfer_out", 1)]))
                quantity = {"shipment": -rng.randint(1, 12), "receipt": rng.choice([20, 40]),
                            "return": rng.randint(1, 3), "adjustment": rng.choice([-2, -1, 1]),
                            "transfer_out": -rng.choice([5, 10])}[kind]
                kind_sent = None if kind == "adjustment" and rng.random() < 0.5 else kind
                rows.append({"warehouse_id": warehouse, "sku": sku, "movement_type": kind_sent,
                             "quantity": quantity, "moved_at": when})
                if kind == "shipment" and rng.random() < 0.1:
                    rows.append(dict(rows[-1]))  # two identical orders picked together
    # Movements of two bins in the same second.
    for _ in range(10):
        a, b = rng.sample(range(len(rows)), 2)
        if (rows[a]["warehouse_id"], rows[a]["sku"]) != (rows[b]["warehouse_id"], rows[b]["sku"]):
            rows[b]["moved_at"] = rows[a]["moved_at"]
    rows.sort(key=lambda r: (r["moved_at"], r["warehouse_id"], r["sku"]))
    movement_id = 0
    records = []
    for row in rows:
        movement_id += rng.choice([1, 1, 2])
        records.append({**row, "movement_id": movement_id, "moved_at": ts(row["moved_at"])})
    return {"stock_movements": ordered(records, "moved_at", "movement_id")}


def gen_carrier_weekly_on_time() -> dict[str, list[dict]]:
    rng = random.Random(20240902)
    start = dt.datetime(2024, 9, 2, 8, 0, 0)  # a Monday
    rows: list[dict] = []
    for _ in range(280):
        carrier = weighted(rng, [("UPS", 6), ("FedEx", 5), ("DHL", 4), ("PostNL", 3), (None, 2)])
        delivered = start + dt.timedelta(seconds=rng.randrange(0, 35 * 86400))
        slack = rng.choice([-2, -1, 0, 0, 0, 1, 1, 2, 3])
        rows.append({"carrier": carrier, "region": rng.choice(["north", "south", "west"]),
                     "promised_date": day((delivered + dt.timedelta(days=slack)).date()),
                     "delivered_at": delivered})
    # twins: two parcels of one order delivered together
    for row in rng.sample(rows, 8):
        rows.append(dict(row))
    for _ in range(10):
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a]["carrier"] != rows[b]["carrier"]:
            rows[b]["delivered_at"] = rows[a]["delivered_at"]
            rows[b]["promised_date"] = rows[a]["promised_date"]
    # deliveries just before and after midnight between Sunday and Monday
    for row in rng.sample(rows, 4):
        sunday = row["delivered_at"] - dt.timedelta(days=row["delivered_at"].weekday() + 1)
        row["delivered_at"] = sunday.replace(hour=23, minute=59, second=rng.randint(0, 59))
    rows.sort(key=lambda r: (r["delivered_at"], r["carrier"] or ""))
    delivery_id = 0
    records = []
    for row in rows:
        delivery_id += rng.choice([1, 1, 2])
        records.append({**row, "delivery_id": delivery_id,
                        "delivered_at": ts(row["delivered_at"])})
    return {"deliveries": ordered(records, "delivered_at", "delivery_id")}


GENERATORS = {
    "carrier_weekly_on_time": gen_carrier_weekly_on_time,
    "inventory_on_hand": gen_inventory_on_hand,
    "parcel_scan_intervals": gen_parcel_scan_intervals,
    "parcel_latest_status": gen_parcel_latest_status,
}
