"""Subscriptions and billing: invoice lines, plans, recurring revenue."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, ordered, same_second, ties, ts, twins, versions, weighted

SKUS = [("SEAT-STD", "29.00"), ("SEAT-PRO", "59.00"), ("STORAGE-100G", "4.99"),
        ("SUPPORT-PREM", "199.00"), ("ONBOARDING", "750.00"), ("API-10K", "12.50")]
REGIONS = [("DE", 20), ("FR", 12), ("NL", 10), ("US-CA", 18), ("US-OR", 8), ("US-NY", 12),
           ("CH", 4), (None, 3)]


def gen_invoice_lines_taxed() -> dict[str, list[dict]]:
    rng = random.Random(20241101)
    start = dt.datetime(2024, 10, 28)
    customers = rng.sample(range(60_000, 61_000), 40)
    rows: list[dict] = []
    for invoice_id in range(880_100, 880_200):
        if rng.random() < 0.35:
            continue
        customer = rng.choice(customers)
        region = weighted(rng, REGIONS)
        billed = start + dt.timedelta(seconds=rng.randrange(0, 16 * 86400))
        for _ in range(rng.randint(1, 5)):
            sku, price = rng.choice(SKUS)
            rows.append({
                "invoice_id": invoice_id, "customer_id": customer, "sku": sku,
                "quantity": rng.choice([1, 1, 1, 2, 3, 5, 10, 25]),
                "unit_price": price,
                "discount_pct": weighted(rng, [(None, 14), ("10.00", 3), ("15.50", 1),
                                               ("100.00", 1)]),
                "tax_region": region,
                "billed_at": billed,
            })
    twins(rng, rows, 8)  # the same product added twice on one invoice: two lines
    ties(rng, rows, "billed_at", "invoice_id", 8)
    rows.sort(key=lambda r: (r["billed_at"], r["invoice_id"]))
    line_id = 4_400_000
    records = []
    for row in rows:
        line_id += rng.choice([1, 1, 1, 2])
        records.append({**row, "line_id": line_id, "billed_at": ts(row["billed_at"])})
    return {"invoice_lines": ordered(records, "billed_at", "line_id")}


GENERATORS = {
    "invoice_lines_taxed": gen_invoice_lines_taxed,
}


PLAN_PRICES = {"basic": 900, "plus": 1900, "pro": 4900, "enterprise": 19900}


def gen_subscription_current_plan() -> dict[str, list[dict]]:
    rng = random.Random(20240115)
    start = dt.datetime(2024, 1, 15)
    subscriptions = rng.sample(range(200_000, 300_000), 90)
    rows: list[dict] = []
    for sub, version, when in versions(rng, subscriptions, start, 20, [1, 1, 2, 2, 3, 4, 6],
                                       (3600, 6 * 86400)):
        plan = rng.choice(list(PLAN_PRICES))
        status = str(weighted(rng, [("active", 12), ("trialing", 3), ("past_due", 2),
                                    ("cancelled", 2)]))
        seats = None if plan == "basic" else rng.choice([1, 2, 5, 10, 25])
        rows.append({"subscription_id": sub, "version": version, "plan": plan,
                     "seats": seats, "status": status, "updated_at": when})
    same_second(rng, rows, "updated_at", "subscription_id", 10)
    rows.sort(key=lambda r: (r["updated_at"], r["subscription_id"], r["version"]))
    event_id = 0
    records = []
    for row in rows:
        event_id += rng.choice([1, 1, 2, 5])
        records.append({**row, "event_id": event_id, "updated_at": ts(row["updated_at"])})
    return {"subscription_events": ordered(records, "updated_at", "event_id")}


GENERATORS["subscription_current_plan"] = gen_subscription_current_plan


def gen_mrr_by_plan() -> dict[str, list[dict]]:
    rng = random.Random(20240212)
    start = dt.datetime(2024, 2, 12)
    subscriptions = rng.sample(range(400_000, 500_000), 80)
    rows: list[dict] = []
    for sub, version, when in versions(rng, subscriptions, start, 15, [1, 2, 2, 3, 4, 5],
                                       (3600, 5 * 86400)):
        plan = rng.choice(list(PLAN_PRICES))
        rows.append({
            "subscription_id": sub, "version": version, "plan": plan,
            "seats": None if plan == "basic" else rng.choice([1, 3, 5, 12]),
            "monthly_price": money(PLAN_PRICES[plan] - rng.choice([0, 0, 0, 100])),
            "status": weighted(rng, [("active", 10), ("trialing", 3), ("past_due", 2),
                                     ("cancelled", 3)]),
            "changed_at": when,
        })
    same_second(rng, rows, "changed_at", "subscription_id", 10)
    rows.sort(key=lambda r: (r["changed_at"], r["subscription_id"], r["version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "change_id": change_id, "changed_at": ts(row["changed_at"])})
    return {"subscription_changes": ordered(records, "changed_at", "change_id")}


GENERATORS["mrr_by_plan"] = gen_mrr_by_plan
