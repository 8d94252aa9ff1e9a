"""Top sellers per category and week, net of refunds: four weeks of an electronics shop.

The products of a category sell at close prices, so the top three of a week are separated by a
sale or two; refunds (often partial, sometimes in several parts, often in a later week) push a
product out of its week's top three and bring the fourth back. A few refunds are of sales made
before the log starts.
"""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, numbered, ordered, ts

CATEGORIES = {"audio": "AUD", "cameras": "CAM", "laptops": "LAP", "phones": "PHN",
              "wearables": "WRB"}
START = dt.datetime(2025, 9, 1)  # a Monday
DAYS = 28


def gen_category_top_sellers() -> dict[str, list[dict]]:
    rng = random.Random(20250901)
    products = []
    for category, prefix in CATEGORIES.items():
        base = rng.choice([4_900, 8_900, 12_900, 19_900])
        for number in rng.sample(range(100, 999), 8):
            products.append((f"{prefix}-{number}", category, base + rng.randrange(-900, 900)))
    sales = []
    for _ in range(600):
        product_id, category, cents = rng.choice(products)
        when = START + dt.timedelta(seconds=rng.randrange(0, DAYS * 86400))
        quantity = rng.choice([1, 1, 1, 1, 2])
        sales.append({"product_id": product_id, "category": category, "sold_at": when,
                      "amount": money(cents * quantity), "cents": cents * quantity})
    sales.sort(key=lambda r: (r["sold_at"], r["product_id"]))
    sale_id = 610_000
    for row in sales:
        sale_id += rng.choice([1, 1, 2, 3])
        row["sale_id"] = sale_id
    refunds = []
    for sale in rng.sample(sales, 205):
        left = sale["cents"]
        when = sale["sold_at"]
        for _ in range(rng.choice([1, 1, 1, 2])):
            part = left if rng.random() < 0.4 else left * rng.randrange(20, 70) // 100
            when += dt.timedelta(seconds=rng.randrange(1800, 9 * 86400))
            refunds.append({"sale_id": sale["sale_id"], "amount": money(part), "refunded_at": when})
            left -= part
            if left <= 0:
                break
    for _ in range(6):  # refunds of sales made before the log starts
        refunds.append({"sale_id": rng.randrange(590_000, 609_000),
                        "amount": money(rng.randrange(2_000, 15_000)),
                        "refunded_at": START + dt.timedelta(seconds=rng.randrange(0, 5 * 86400))})
    refunds = [r for r in refunds if r["refunded_at"] < START + dt.timedelta(days=DAYS + 7)]
    refund_records = numbered(rng, refunds, lambda r: (r["refunded_at"], r["sale_id"]),
                              "refund_id", 90_000, [1, 1, 2], "refunded_at")
    sale_records = [{"sale_id": r["sale_id"], "product_id": r["product_id"],
                     "category": r["category"], "amount": r["amount"], "sold_at": ts(r["sold_at"])}
                    for r in sales]
    return {"sales": ordered(sale_records, "sold_at", "sale_id"),
            "refunds": ordered(refund_records, "refunded_at", "refund_id")}


GENERATORS = {
    "category_top_sellers": gen_category_top_sellers,
}
