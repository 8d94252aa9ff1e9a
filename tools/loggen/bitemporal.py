"""Bitemporal history: contract price versions valid from a date, recorded at a time, and
deletions that withdraw a version by its id."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import day, money, ordered, ts


def gen_contract_price_validity() -> dict[str, list[dict]]:
    rng = random.Random(20250117)
    first_day = dt.date(2025, 1, 1)
    versions: list[dict] = []
    for number in sorted(rng.sample(range(10_000, 99_999), 260)):
        contract = f"C-{number}"
        valid_from = first_day + dt.timedelta(days=rng.randrange(0, 120))
        cents = rng.randrange(2_000, 90_000)
        for _ in range(rng.randint(2, 5)):
            # a price change is usually entered a few days ahead, sometimes after the fact
            lead = rng.randrange(-20, 15) if rng.random() < 0.2 else rng.randrange(1, 10)
            recorded = dt.datetime.combine(valid_from - dt.timedelta(days=lead), dt.time(8)) \
                + dt.timedelta(seconds=rng.randrange(0, 10 * 3600))
            versions.append({"contract_id": contract, "price": cents, "valid_from": valid_from,
                             "recorded_at": recorded})
            if rng.random() < 0.18:  # a corrected price for the same day, entered afterwards
                fix = recorded if rng.random() < 0.15 else recorded + dt.timedelta(
                    seconds=rng.randrange(60, 6 * 86400))
                fixed = max(100, cents + rng.choice([-1, 1]) * rng.randrange(100, 900))
                versions.append({"contract_id": contract, "valid_from": valid_from,
                                 "price": fixed, "recorded_at": fix})
            valid_from += dt.timedelta(days=rng.choice([14, 30, 31, 45, 61, 90]))
            cents = max(500, cents + rng.randrange(-3_000, 6_000))
    versions.sort(key=lambda v: (v["recorded_at"], v["contract_id"]))
    version_id = 5_100_000
    for v in versions:
        version_id += rng.choice([1, 1, 2, 4])
        v["version_id"] = version_id
    deletions: list[dict] = []
    deletion_id = 77_000
    by_day: dict[tuple[str, dt.date], list[dict]] = {}
    for v in versions:
        by_day.setdefault((v["contract_id"], v["valid_from"]), []).append(v)
    corrected = [max(g, key=lambda v: (v["recorded_at"], v["version_id"]))
                 for g in by_day.values() if len(g) > 1]
    doomed = rng.sample(versions, len(versions) // 12) + rng.sample(corrected, len(corrected) // 3)
    for v in doomed:
        for _ in range(2 if rng.random() < 0.05 else 1):  # withdrawn twice
            deletion_id += rng.choice([1, 2])
            deletions.append({"deletion_id": deletion_id, "version_id": v["version_id"],
                              "deleted_at": v["recorded_at"] + dt.timedelta(
                                  seconds=rng.randrange(600, 20 * 86400))})
    return {
        "price_versions": ordered(
            [{**v, "price": money(v["price"]), "valid_from": day(v["valid_from"]),
              "recorded_at": ts(v["recorded_at"])} for v in versions],
            "recorded_at", "version_id"),
        "version_deletions": ordered(
            [{**d, "deleted_at": ts(d["deleted_at"])} for d in deletions],
            "deleted_at", "deletion_id"),
    }


GENERATORS = {
    "contract_price_validity": gen_contract_price_validity,
}
