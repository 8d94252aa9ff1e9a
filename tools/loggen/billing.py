"""Subscriptions and billing: invoice lines, plans, recurring revenue."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ties, ts, twins, weighted

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
