#!/usr/bin/env python3
"""Seeded generators for the logical logs of ArrivalBench's built-in tasks.

Each generator is a pure function of its fixed seed: it returns ``{source: [record, ...]}``.
``main()`` writes every task's ``log/<source>.jsonl`` (or only the task ids named on the command
line) as JSON Lines with sorted keys and compact separators, records sorted by
(event time, record key). Running it again writes identical bytes.

Standard library only.

    python tools/generate_logs.py                       # every task
    python tools/generate_logs.py store_daily_revenue   # one task

The generators of the first three tasks live in this file; the others live in the `loggen`
package next to it, one module per business domain, and are registered in `GENERATORS` below.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loggen import REGISTRY  # the package sits next to this script
from loggen.common import weighted

TASKS_DIR = Path(__file__).resolve().parent.parent / "src" / "arrivalbench" / "tasks"

TS_FORMAT = "%Y-%m-%d %H:%M:%S"


def _ts(value: dt.datetime) -> str:
    return value.strftime(TS_FORMAT)


def _money(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _sorted(records: list[dict], time_column: str, key_column: str) -> list[dict]:
    return sorted(records, key=lambda r: (r[time_column], r[key_column]))


# --------------------------------------------------------------------------------------------
# store_daily_revenue: point-of-sale orders of six stores over five and a half weeks.
# --------------------------------------------------------------------------------------------

STORES = {
    # store_id: (orders per open day, opens, closes, closed weekdays (0=Mon))
    12: (3.0, 7, 20, ()),
    17: (1.8, 8, 18, (6,)),
    23: (2.5, 7, 21, ()),
    31: (1.3, 10, 17, (0, 6)),
    44: (2.0, 0, 24, ()),  # open around the clock: orders near midnight
    58: (1.5, 9, 19, (5, 6)),
}
MENU_CENTS = [250, 325, 375, 450, 495, 550, 625, 695, 850, 1195, 1250, 1475, 1899, 2450]


def gen_store_daily_revenue() -> dict[str, list[dict]]:
    rng = random.Random(20240301)
    start = dt.datetime(2024, 3, 1)
    days = 38  # 2024-03-01 .. 2024-04-07
    rows: list[dict] = []
    for day_index in range(days):
        day = start + dt.timedelta(days=day_index)
        for store_id, (rate, opens, closes, closed) in STORES.items():
            if day.weekday() in closed:
                continue
            # a rough Poisson draw from a fixed-size Bernoulli sum
            count = sum(1 for _ in range(8) if rng.random() < rate / 8)
            for _ in range(count):
                if store_id == 44 and rng.random() < 0.25:
                    # the night shift: just before or just after midnight
                    offset = rng.randint(-900, 900)
                    when = day + dt.timedelta(days=1, seconds=offset)
                else:
                    seconds = rng.randint(opens * 3600, closes * 3600 - 1)
                    when = day + dt.timedelta(seconds=seconds)
                if when >= start + dt.timedelta(days=days):
                    when = (start + dt.timedelta(days=days)
                            - dt.timedelta(seconds=rng.randint(60, 900)))
                if when < start:
                    when = start + dt.timedelta(seconds=rng.randint(0, 900))
                items = rng.choice([1, 1, 1, 2, 2, 3, 4])
                cents = sum(rng.choice(MENU_CENTS) for _ in range(items))
                amount = _money(cents)
                if rng.random() < 0.025:
                    amount = None  # staff meal: rung up without an amount
                rows.append({"store_id": store_id, "amount": amount, "ordered_at": when})
    # Two customers at the same till at the same second with the same basket: same payload.
    twins = rng.sample(range(len(rows)), 9)
    for index in twins:
        rows.append(dict(rows[index]))
    # Orders that share a timestamp with an order of another store.
    for _ in range(14):
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a]["store_id"] != rows[b]["store_id"]:
            rows[b]["ordered_at"] = rows[a]["ordered_at"]
    # A busy minute: five stores ring up an order at the same second.
    rush = dt.datetime(2024, 3, 15, 12, 30, 0)
    for store_id in (12, 17, 23, 31, 44):
        rows.append({"store_id": store_id, "amount": _money(rng.choice(MENU_CENTS)),
                     "ordered_at": rush})
    rows.sort(key=lambda r: (r["ordered_at"], r["store_id"], r["amount"] or ""))
    order_id = 5_000_000
    records = []
    for row in rows:
        order_id += rng.choice([1, 1, 1, 1, 2, 3])  # voided tickets leave gaps
        records.append(
            {
                "order_id": order_id,
                "store_id": row["store_id"],
                "amount": row["amount"],
                "ordered_at": _ts(row["ordered_at"]),
            }
        )
    return {"orders": _sorted(records, "ordered_at", "order_id")}


# --------------------------------------------------------------------------------------------
# customer_current_address: a change stream of customer addresses from the account service.
# --------------------------------------------------------------------------------------------

ADDRESS_BOOK = {
    "US": {
        "cities": [("Portland", "97{:03d}"), ("Seattle", "98{:03d}"), ("Denver", "80{:03d}"),
                   ("Austin", "78{:03d}"), ("Chicago", "60{:03d}")],
        "streets": ["Oak Street", "Maple Avenue", "Washington Boulevard", "Pine Street",
                    "Lakeview Drive", "Cedar Lane", "Hawthorne Boulevard"],
    },
    "CA": {
        "cities": [("Toronto", "M{0}{1} {2}{1}{0}"), ("Vancouver", "V{0}{1} {2}{1}{0}"),
                   ("Montreal", "H{0}{1} {2}{1}{0}")],
        "streets": ["King Street West", "Granville Street", "Rue Sainte-Catherine",
                    "Queen Street East"],
    },
    "GB": {
        "cities": [("London", "N{0} {2}{1}{1}"), ("Manchester", "M{0} {2}{1}{1}"),
                   ("Bristol", "BS{0} {2}{1}{1}")],
        "streets": ["High Street", "Station Road", "Church Lane", "Victoria Road", "Mill Lane"],
    },
    "DE": {
        "cities": [("Berlin", "10{:03d}"), ("Hamburg", "20{:03d}"), ("München", "80{:03d}")],
        "streets": ["Hauptstraße", "Schillerstraße", "Bahnhofstraße", "Gartenweg"],
    },
    "NL": {
        "cities": [("Amsterdam", "10{:02d} {}{}"), ("Utrecht", "35{:02d} {}{}")],
        "streets": ["Prinsengracht", "Oudegracht", "Kerkstraat", "Dorpsstraat"],
    },
    "IE": {
        "cities": [("Dublin", None), ("Cork", None), ("Galway", None)],
        "streets": ["Main Street", "Church Road", "Abbey Street", "Patrick Street"],
    },
}
COUNTRY_WEIGHTS = [("US", 40), ("CA", 12), ("GB", 18), ("DE", 12), ("NL", 8), ("IE", 10)]
LETTERS = "ABCDEFGHJKLMNPRSTVWXY"


def _postal(rng: random.Random, country: str, pattern: str | None) -> str | None:
    if pattern is None:
        return None
    if country in ("US", "DE"):
        return pattern.format(rng.randint(1, 999))
    if country == "NL":
        return pattern.format(rng.randint(11, 99), rng.choice(LETTERS), rng.choice(LETTERS))
    return pattern.format(rng.randint(1, 9), rng.choice(LETTERS), rng.randint(1, 9))


def _new_address(rng: random.Random, country: str | None = None, city: str | None = None) -> dict:
    if country is None:
        names = [c for c, w in COUNTRY_WEIGHTS for _ in range(w)]
        country = rng.choice(names)
    book = ADDRESS_BOOK[country]
    candidates = [c for c in book["cities"] if city is None or c[0] == city]
    city_name, pattern = rng.choice(candidates)
    number = rng.randint(1, 480)
    street_name = rng.choice(book["streets"])
    street = f"{street_name} {number}" if country in ("DE", "NL") else f"{number} {street_name}"
    unit = None
    if rng.random() < 0.3:
        unit = rng.choice(["Apt 2B", "Apt 14", "Unit 5", "Suite 300", "Flat 3", "2nd floor",
                           "Apt 7C"])
    postal = _postal(rng, country, pattern)
    if postal is not None and country in ("CA", "GB", "NL") and rng.random() < 0.3:
        postal = postal.lower()  # typed in by the customer
    if country == "IE" and rng.random() < 0.4:
        postal = (f"D{rng.randint(1, 24):02d} {rng.choice(LETTERS)}{rng.randint(1, 9)}"
                  f"{rng.choice(LETTERS)}{rng.randint(1, 9)}")
    return {"street": street, "unit": unit, "city": city_name, "postal_code": postal,
            "country": country}


def _normalized(address: dict) -> dict:
    """What the nightly address-cleaning job writes: canonical abbreviations and postcodes."""
    out = dict(address)
    street = out["street"]
    for long, short in (("Street", "St"), ("Avenue", "Ave"), ("Boulevard", "Blvd"),
                        ("Drive", "Dr"), ("Lane", "Ln"), ("Road", "Rd")):
        street = street.replace(f" {long}", f" {short}")
    out["street"] = street
    if out["postal_code"] is not None:
        out["postal_code"] = out["postal_code"].upper()
    if out["unit"] is not None:
        out["unit"] = out["unit"].replace("Apt ", "APT ")
    return out


def gen_customer_current_address() -> dict[str, list[dict]]:
    rng = random.Random(20240205)
    window_start = dt.datetime(2024, 2, 5)
    window_end = dt.datetime(2024, 3, 17, 23, 0, 0)
    cleaning_run = dt.datetime(2024, 3, 4, 2, 0, 0)
    customer_ids = rng.sample(range(20_000, 90_000), 128)
    deleted = set(rng.sample(customer_ids, 11))
    recreated = set(rng.sample(sorted(deleted), 3))
    cleaned = set(rng.sample(customer_ids, 28))
    events: list[dict] = []  # one per version, before change ids are assigned
    for customer_id in customer_ids:
        created = window_start + dt.timedelta(seconds=rng.randint(0, 30 * 86400))
        created = created.replace(second=rng.choice([0, rng.randint(0, 59)]))
        n_updates = rng.choice([0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 6])
        times = {created}
        span = int((window_end - created).total_seconds())
        for _ in range(n_updates):
            times.add(created + dt.timedelta(seconds=rng.randint(600, max(601, span - 7 * 86400))))
        if customer_id in cleaned and created < cleaning_run:
            times.add(cleaning_run)
        timeline = sorted(times)
        kinds = ["create"] + [
            "clean" if t == cleaning_run else rng.choice(["move", "move", "fix", "resave", "unit"])
            for t in timeline[1:]
        ]
        if customer_id in deleted:
            last = timeline[-1]
            gone = last + dt.timedelta(seconds=rng.randint(3600, 6 * 86400))
            timeline.append(min(gone, window_end))
            kinds.append("delete")
            if customer_id in recreated:
                timeline.append(min(gone + dt.timedelta(seconds=rng.randint(86400, 5 * 86400)),
                                    window_end + dt.timedelta(hours=1)))
                kinds.append("create")
        address = None
        for version, (when, kind) in enumerate(zip(timeline, kinds, strict=True), start=1):
            op = "upsert"
            if kind == "create":
                address = _new_address(rng)
            elif kind == "move":
                same_city = rng.random() < 0.5
                address = _new_address(rng, address["country"],
                                       address["city"] if same_city else None)
            elif kind == "fix":
                address = dict(address)
                if rng.random() < 0.5 and address["postal_code"] is not None:
                    address["postal_code"] = _postal(
                        rng, address["country"],
                        dict(ADDRESS_BOOK[address["country"]]["cities"])[address["city"]],
                    ) or address["postal_code"]
                else:
                    parts = address["street"].split(" ")
                    number_at = 0 if address["country"] not in ("DE", "NL") else len(parts) - 1
                    step = rng.choice([-10, -1, 1, 10])
                    parts[number_at] = str(max(1, int(parts[number_at]) + step))
                    address["street"] = " ".join(parts)
            elif kind == "unit":
                address = dict(address)
                address["unit"] = (None if address["unit"] else
                                   rng.choice(["Apt 3A", "Unit 12", "Flat 1"]))
            elif kind == "clean":
                address = _normalized(address)
            elif kind == "resave":
                address = dict(address)  # the customer saved the form without editing it
            elif kind == "delete":
                op = "delete"
            payload = {"street": None, "unit": None, "city": None, "postal_code": None,
                       "country": None}
            if op == "upsert":
                payload = dict(address)
            events.append({"customer_id": customer_id, "version": version, "op": op,
                           "updated_at": when, **payload})
    # Two account managers saving two customers within the same second.
    for _ in range(6):
        a, b = rng.sample(range(len(events)), 2)
        ea, eb = events[a], events[b]
        if ea["customer_id"] == eb["customer_id"] or ea["updated_at"] == cleaning_run:
            continue
        neighbours = sorted(e["updated_at"] for e in events
                            if e["customer_id"] == eb["customer_id"])
        index = neighbours.index(eb["updated_at"])
        lower = neighbours[index - 1] if index > 0 else dt.datetime.min
        upper = neighbours[index + 1] if index + 1 < len(neighbours) else dt.datetime.max
        if lower < ea["updated_at"] < upper:
            eb["updated_at"] = ea["updated_at"]
    events.sort(key=lambda e: (e["updated_at"], e["customer_id"], e["version"]))
    change_id = 880_000_000
    records = []
    for event in events:
        change_id += rng.choice([1, 1, 2, 3, 7])  # ids of other tables' changes interleave
        records.append(
            {
                "change_id": change_id,
                "customer_id": event["customer_id"],
                "version": event["version"],
                "op": event["op"],
                "street": event["street"],
                "unit": event["unit"],
                "city": event["city"],
                "postal_code": event["postal_code"],
                "country": event["country"],
                "updated_at": _ts(event["updated_at"]),
            }
        )
    return {"customer_changes": _sorted(records, "updated_at", "change_id")}


# --------------------------------------------------------------------------------------------
# web_page_views: page-view events from the storefront's analytics tag.
# --------------------------------------------------------------------------------------------

SITE = "https://www.northwind-outfitters.com"
PAGES = [
    ("/", 14), ("/collections/womens/jackets", 6), ("/collections/mens/jackets/", 5),
    ("/Collections/Mens/Boots", 3), ("/products/trail-runner-2", 6),
    ("/products/Trail-Runner-2/", 2), ("/products/summit-down-parka?color=navy", 4),
    ("/products/summit-down-parka?color=olive&size=m", 2), ("/products/alpine-wool-socks", 3),
    ("/search?q=rain+jacket", 4), ("/search?q=hiking+boots&page=2", 2), ("/cart", 6),
    ("/checkout?step=1", 3), ("/checkout?step=2", 2), ("/checkout/thank-you", 1),
    ("/blog/packing-list-for-the-dolomites#gear", 2), ("/blog/", 2), ("/account/orders", 2),
    ("/help/returns", 2), ("/stores", 1),
]
EXTERNAL_REFERRERS = [
    (None, 30), ("https://www.google.com/", 25),
    ("https://www.bing.com/search?q=northwind+parka", 4),
    ("https://duckduckgo.com/", 3),
    ("https://l.facebook.com/l.php?u=https%3A%2F%2Fwww.northwind-outfitters.com", 6),
    ("https://www.instagram.com/", 5),
    ("https://news.northwind-outfitters.com/april-issue?utm_source=newsletter", 6),
    ("https://www.reddit.com/r/CampingGear/comments/1b2x9f/", 3),
    ("https://WWW.Outdoorgearlab.com/reviews/parkas", 2),
    ("android-app://com.google.android.gm/", 1),
]


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    h = h[:12] + "4" + h[13:16] + "89ab"[int(h[16], 16) % 4] + h[17:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def gen_web_page_views() -> dict[str, list[dict]]:
    rng = random.Random(20240401)
    start = dt.datetime(2024, 4, 1)
    users = rng.sample(range(300_000, 400_000), 45)
    rows: list[dict] = []
    for _ in range(104):
        day = start + dt.timedelta(days=rng.randint(0, 27))
        hour = weighted(rng, [(h, 1 if h < 7 else 4 if h < 18 else 6 if h < 22 else 2)
                               for h in range(24)])
        when = day + dt.timedelta(hours=hour, seconds=rng.randint(0, 3599))
        session_id = f"{rng.getrandbits(48):012x}"
        user_id = rng.choice(users) if rng.random() < 0.6 else None
        referrer = weighted(rng, EXTERNAL_REFERRERS)
        pages = min(1 + int(rng.expovariate(1 / 3.6)), 14)
        for _ in range(pages):
            url = SITE + weighted(rng, PAGES)
            rows.append({"session_id": session_id, "user_id": user_id, "url": url,
                         "referrer": referrer, "viewed_at": when})
            referrer = None if rng.random() < 0.1 else url  # some browsers strip the referrer
            when = when + dt.timedelta(seconds=rng.randint(4, 240))
    # The tag fired twice for one page load: same payload, two event ids.
    for index in rng.sample(range(len(rows)), 13):
        rows.append(dict(rows[index]))
    # Two visitors loading pages in the same second.
    for _ in range(10):
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a]["session_id"] != rows[b]["session_id"]:
            rows[b]["viewed_at"] = rows[a]["viewed_at"]
    records = []
    for row in rows:
        records.append(
            {
                "event_id": _uuid(rng),
                "session_id": row["session_id"],
                "user_id": row["user_id"],
                "url": row["url"],
                "referrer": row["referrer"],
                "viewed_at": _ts(row["viewed_at"]),
            }
        )
    return {"page_events": _sorted(records, "viewed_at", "event_id")}


GENERATORS = {
    "store_daily_revenue": gen_store_daily_revenue,
    "customer_current_address": gen_customer_current_address,
    "web_page_views": gen_web_page_views,
    **REGISTRY,
}


def write_task(task_id: str, tasks_dir: Path = TASKS_DIR) -> list[Path]:
    written = []
    for source, records in GENERATORS[task_id]().items():
        path = tasks_dir / task_id / "log" / f"{source}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in records)
        path.write_bytes(text.encode("utf-8"))
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    task_ids = list(sys.argv[1:] if argv is None else argv) or list(GENERATORS)
    unknown = [t for t in task_ids if t not in GENERATORS]
    if unknown:
        print(f"unknown task id(s): {', '.join(unknown)}; known: {', '.join(GENERATORS)}",
              file=sys.stderr)
        return 2
    for task_id in task_ids:
        for path in write_task(task_id):
            lines = path.read_bytes().count(b"\n")
            where = path.relative_to(TASKS_DIR.parent.parent.parent)
            print(f"{task_id}: {where} ({lines} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
