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


COMPANIES = ["Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics",
             "Wayne Foods", "Hooli", "Vandelay Imports"]


def gen_contact_profile_patches() -> dict[str, list[dict]]:
    rng = random.Random(20240311)
    start = dt.datetime(2024, 3, 11, 9, 0, 0)
    contacts = rng.sample(range(300_000, 400_000), 55)
    rows: list[dict] = []
    for contact, version, when in versions(rng, contacts, start, 14, [1, 2, 3, 4, 5, 6, 7],
                                           (600, 3 * 86400)):
        name = f"c{contact}"
        if version == 1:
            patch = {"email": f"{name}@{rng.choice(['gmail.com', 'outlook.com', 'corp.example'])}",
                     "phone": None if rng.random() < 0.5 else f"+1-555-{rng.randint(0, 9999):04d}",
                     "company": None if rng.random() < 0.4 else rng.choice(COMPANIES),
                     "marketing_opt_in": rng.random() < 0.5}
        else:
            patch = {"email": None, "phone": None, "company": None, "marketing_opt_in": None}
            for field in rng.sample(list(patch), rng.choice([0, 1, 1, 1, 2])):
                if field == "email":
                    patch["email"] = f"{name}.{version}@{rng.choice(['gmail.com', 'proton.me'])}"
                elif field == "phone":
                    patch["phone"] = f"+1-555-{rng.randint(0, 9999):04d}"
                elif field == "company":
                    patch["company"] = rng.choice(COMPANIES)
                else:
                    patch["marketing_opt_in"] = rng.random() < 0.5
        rows.append({"contact_id": contact, "version": version, **patch, "updated_at": when})
    same_second(rng, rows, "updated_at", "contact_id", 10)
    rows.sort(key=lambda r: (r["updated_at"], r["contact_id"], r["version"]))
    update_id = 0
    records = []
    for row in rows:
        update_id += rng.choice([1, 1, 2])
        records.append({**row, "update_id": update_id, "updated_at": ts(row["updated_at"])})
    return {"contact_updates": ordered(records, "updated_at", "update_id")}


GENERATORS["contact_profile_patches"] = gen_contact_profile_patches


ORDER_FLOW = ["placed", "paid", "packed", "shipped", "delivered"]


def gen_order_status_current() -> dict[str, list[dict]]:
    rng = random.Random(20241111)
    start = dt.datetime(2024, 11, 11, 0, 0, 0)
    orders = rng.sample(range(9_000_000, 9_100_000), 70)
    rows: list[dict] = []
    flows: dict[int, list[str]] = {}
    for order in orders:
        flow = ORDER_FLOW[:rng.randint(1, len(ORDER_FLOW))]
        if rng.random() < 0.12:
            flow = [*flow[:rng.randint(1, 2)], "cancelled"]
        elif flow[-1] == "delivered" and rng.random() < 0.2:
            flow = [*flow, "returned"]
        flows[order] = flow
    for order, seq, when in versions(rng, orders, start, 7, [9], (300, 36 * 3600)):
        flow = flows[order]
        if seq > len(flow):
            continue
        status = flow[seq - 1]
        total = money(rng.randint(999, 45000)) if status == "placed" else None
        rows.append({"order_id": order, "status_seq": seq, "status": status,
                     "order_total": total, "event_at": when})
    same_second(rng, rows, "event_at", "order_id", 10)
    rows.sort(key=lambda r: (r["event_at"], r["order_id"], r["status_seq"]))
    event_id = 0
    records = []
    for row in rows:
        event_id += rng.choice([1, 1, 2])
        records.append({**row, "event_id": event_id, "event_at": ts(row["event_at"])})
    return {"order_events": ordered(records, "event_at", "event_id")}


GENERATORS["order_status_current"] = gen_order_status_current


CATEGORIES = {"apparel": 6, "footwear": 4, "outdoor": 5, "accessories": 2, None: 4}


def gen_top_products_per_category() -> dict[str, list[dict]]:
    rng = random.Random(20241202)
    start = dt.datetime(2024, 12, 2, 8, 0, 0)
    products: list[tuple[int, str | None, int]] = []
    product_id = 7000
    for category, count in CATEGORIES.items():
        for _ in range(count):
            product_id += rng.choice([1, 3, 7])
            products.append((product_id, category, rng.choice([1500, 2500, 2500, 4000, 9900])))
    rows: list[dict] = []
    order_id = 120_000
    for _ in range(110):
        order_id += rng.choice([1, 2])
        when = start + dt.timedelta(seconds=rng.randrange(0, 10 * 86400))
        for product, category, price in rng.sample(products, rng.choice([1, 1, 2, 3])):
            quantity = rng.choice([1, 1, 1, 2, 3])
            rows.append({"order_id": order_id, "product_id": product, "category": category,
                         "quantity": quantity, "line_amount": money(price * quantity),
                         "ordered_at": when})
    # a product line entered twice on one order (two lines)
    for row in rng.sample(rows, 6):
        rows.append(dict(row))
    rows.sort(key=lambda r: (r["ordered_at"], r["order_id"], r["product_id"]))
    line_id = 0
    records = []
    for row in rows:
        line_id += rng.choice([1, 1, 2])
        records.append({**row, "line_id": line_id, "ordered_at": ts(row["ordered_at"])})
    return {"order_lines": ordered(records, "ordered_at", "line_id")}


GENERATORS["top_products_per_category"] = gen_top_products_per_category
