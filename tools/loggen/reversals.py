"""Reversals and corrections: journal entries that replace or cancel earlier ones by reference."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, ordered, ts


def gen_account_day_net_amounts() -> dict[str, list[dict]]:
    rng = random.Random(20250617)
    start = dt.datetime(2025, 6, 2, 8, 0, 0)
    accounts = [f"GL-{rng.randrange(1000, 9999)}-{n:02d}" for n in range(70)]
    rows: list[dict] = []

    def entry(kind: str, when: dt.datetime, **fields: object) -> dict:
        row = {"entry_kind": kind, "recorded_at": when, "ref": None, "account_id": None,
               "business_day": None, "amount": None, **fields}
        rows.append(row)
        return row

    def later(when: dt.datetime) -> dt.datetime:
        return when + dt.timedelta(seconds=rng.choice(
            [rng.randrange(60, 3600), rng.randrange(3600, 3 * 86400)]))

    for _ in range(2000):
        business_day = start.date() + dt.timedelta(days=rng.randrange(21))
        when = dt.datetime.combine(business_day, dt.time(8)) + dt.timedelta(
            seconds=rng.randrange(0, 12 * 3600))
        cents = rng.choice([-1, 1, 1, 1]) * rng.choice(
            [rng.randrange(100, 20000), rng.choice([5000, 10000, 25000])])
        post = entry("post", when, account_id=rng.choice(accounts), business_day=business_day,
                     amount=cents)
        corrections = []
        last = when
        for _ in range(rng.choice([0] * 14 + [1] * 4 + [2, 3])):
            last = later(last)
            if corrections and rng.random() < 0.1:
                last = corrections[-1]["recorded_at"]  # two corrections in the same second
            corrections.append(entry("correction", last, ref=post,
                                     amount=cents + rng.choice([-1, 1]) * rng.randrange(1, 5000)))
        for target in corrections:
            if rng.random() < 0.25:
                entry("reversal", later(target["recorded_at"]), ref=target)
        if rng.random() < 0.06:
            entry("reversal", later(last), ref=post)
    rows.sort(key=lambda r: (r["recorded_at"], r["entry_kind"] != "post"))
    entry_id = 40_000_000
    for row in rows:
        entry_id += rng.choice([1, 1, 2, 7])
        row["entry_id"] = entry_id
    records = []
    for row in rows:
        ref = row.pop("ref")
        records.append({**row, "ref_entry_id": None if ref is None else ref["entry_id"],
                        "business_day": None if row["business_day"] is None
                        else row["business_day"].isoformat(),
                        "amount": None if row["amount"] is None else money(row["amount"]),
                        "recorded_at": ts(row["recorded_at"])})
    return {"journal_entries": ordered(records, "recorded_at", "entry_id")}


GENERATORS = {
    "account_day_net_amounts": gen_account_day_net_amounts,
}
