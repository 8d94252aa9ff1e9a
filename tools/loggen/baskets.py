"""Store baskets under cancellation: order lines of several stores, and cancellations of a
whole order or of a single line."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, ordered, ts

STORES = [101, 102, 105, 108, 113]


def gen_store_daily_basket_stats() -> dict[str, list[dict]]:
    rng = random.Random(20250318)
    start = dt.datetime(2025, 3, 17, 0, 0, 0)
    customers = [f"CU{n:05d}" for n in rng.sample(range(10_000, 99_999), 140)]
    lines: list[dict] = []
    order_id = 610_000
    line_id = 3_200_000
    for days in range(18):
        for store in STORES:
            regulars = rng.sample(customers, 12)
            # quiet days: a store with one or two orders, whose cancellation empties the day
            for _ in range(rng.choice([1, 2, 5, 6, 7, 8, 9])):
                order_id += rng.choice([1, 1, 2, 3])
                when = start + dt.timedelta(days=days, seconds=rng.randrange(8 * 3600, 21 * 3600))
                customer = rng.choice(regulars) if rng.random() < 0.7 else rng.choice(customers)
                for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
                    line_id += rng.choice([1, 1, 2])
                    lines.append({"line_id": line_id, "order_id": order_id, "store_id": store,
                                  "customer_id": customer, "ordered_at": ts(when),
                                  "amount": money(rng.choice([250, 499, 750, 1000, 1299, 1999,
                                                              2500, 4999]))})
    orders = sorted({line["order_id"]: line for line in lines}.values(),
                    key=lambda line: line["order_id"])
    cancellations: list[dict] = []
    cancellation_id = 88_000
    def cancel(order: object, line: object, after: str) -> None:
        nonlocal cancellation_id
        cancellation_id += rng.choice([1, 2])
        when = dt.datetime.strptime(after, "%Y-%m-%d %H:%M:%S") + dt.timedelta(
            seconds=rng.randrange(300, 2 * 86400))
        cancellations.append({"cancellation_id": cancellation_id, "order_id": order,
                              "line_id": line, "cancelled_at": ts(when)})
    for order in rng.sample(orders, len(orders) // 9):
        cancel(order["order_id"], None, order["ordered_at"])
        if rng.random() < 0.08:  # cancelled again from another till
            cancel(order["order_id"], None, order["ordered_at"])
    for line in rng.sample(lines, len(lines) // 14):
        cancel(None, line["line_id"], line["ordered_at"])
    return {
        "order_lines": ordered(lines, "ordered_at", "line_id"),
        "cancellations": ordered(cancellations, "cancelled_at", "cancellation_id"),
    }


GENERATORS = {
    "store_daily_basket_stats": gen_store_daily_basket_stats,
}
