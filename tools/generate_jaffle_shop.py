#!/usr/bin/env python3
"""The data of `examples/your_data/jaffle_shop`, a shop's customers, orders and payments over two
weeks, written as CSV to `examples/your_data/jaffle_shop_data/`. A pure function of its seed:
running it again writes identical bytes. Standard library only.

    python tools/generate_jaffle_shop.py
"""

from __future__ import annotations

import csv
import datetime as dt
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "examples" / "your_data" / "jaffle_shop_data"
START = dt.datetime(2024, 3, 1)
DAYS = 14
SEED = 20240301


def generate() -> dict[str, list[dict[str, object]]]:
    rng = random.Random(SEED)
    half = DAYS * 24 * 60 // 2  # minutes: customers sign up, and order, in the first week
    signed_up = {c: START + dt.timedelta(minutes=rng.randrange(half)) for c in range(1, 31)}
    customers: list[dict[str, object]] = [
        {"customer_id": c, "name": f"customer {c:02d}", "signed_up_at": t}
        for c, t in signed_up.items()]
    orders: list[dict[str, object]] = []
    payments: list[dict[str, object]] = []
    for order_id in range(1, 161):
        customer = rng.choice(list(signed_up))
        ordered_at = signed_up[customer] + dt.timedelta(minutes=rng.randrange(half))
        orders.append({"order_id": order_id, "customer_id": customer, "ordered_at": ordered_at,
                       "status": rng.choice(["placed", "placed", "shipped"])})
        # One payment, or two: the second settles the rest, up to two days later.
        total = rng.randrange(500, 5000)
        parts = [total] if rng.random() < 0.7 else [total // 2, total - total // 2]
        paid_at = ordered_at
        for amount in parts:
            paid_at += dt.timedelta(minutes=rng.randrange(1, 2 * 24 * 60))
            payments.append({"payment_id": len(payments) + 1, "order_id": order_id,
                             "method": rng.choice(["card", "card", "voucher", "transfer"]),
                             "amount": f"{amount / 100:.2f}", "paid_at": paid_at})
    return {"raw_customers": customers, "raw_orders": orders, "raw_payments": payments}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in generate().items():
        with (OUT / f"{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: v.strftime("%Y-%m-%d %H:%M:%S")
                                 if isinstance(v, dt.datetime) else v for k, v in row.items()})


if __name__ == "__main__":
    main()
