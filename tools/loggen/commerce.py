"""Commerce: catalog prices, customer profiles, order status, inventory, product rankings."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, ordered, same_second, ts, versions

GENERATORS: dict = {}


def gen_product_catalog_price() -> dict[str, list[dict]]:
    rng = random.Random(20240902)
    start = dt.datetime(2024, 9, 2, 6, 0, 0)
    skus = [f"{rng.choice(['TEE', 'HOOD', 'CAP', 'SOCK', 'BAG'])}-{n:05d}"
            for n in rng.sample(range(10_000, 99_999), 75)]
    rows: list[dict] = []
    list_prices: dict[str, int] = {}
    for sku, version, when in versions(rng, skus, start, 14, [1, 1, 2, 3, 4, 5],
                                       (1800, 4 * 86400)):
        if version == 1 or rng.random() < 0.3:
            list_prices[sku] = rng.choice([1200, 1999, 2499, 3500, 4999, 7900])
        list_price = list_prices[sku]
        sale = None
        if rng.random() < 0.35:
            sale = list_price * rng.choice([70, 75, 80, 90]) // 100
        rows.append({"sku": sku, "price_version": version, "list_price": money(list_price),
                     "sale_price": None if sale is None else money(sale), "currency": "USD",
                     "changed_at": when})
    same_second(rng, rows, "changed_at", "sku", 10)
    rows.sort(key=lambda r: (r["changed_at"], r["sku"], r["price_version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "price_change_id": change_id, "changed_at": ts(row["changed_at"])})
    return {"price_changes": ordered(records, "changed_at", "price_change_id")}


GENERATORS["product_catalog_price"] = gen_product_catalog_price
