"""Prepaid wallets: entries booked against a balance that may go below zero, and reversals
that cancel an entry by its id."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, ordered, ts

# Spending runs a little ahead of top-ups, so wallets dip below zero now and then and a
# cancelled or newly received entry moves every later balance of its wallet across zero.
TOP_UPS = [1000, 1500, 2000, 2500, 5000]


def gen_wallet_balance_history() -> dict[str, list[dict]]:
    rng = random.Random(20250903)
    start = dt.datetime(2025, 9, 1, 6, 0, 0)
    wallets = [f"W{n:06d}" for n in sorted(rng.sample(range(100_000, 999_999), 70))]
    rows: list[dict] = []
    for wallet in wallets:
        when = start + dt.timedelta(seconds=rng.randrange(0, 86400))
        for position in range(rng.randint(9, 20)):
            if position == 0 or rng.random() < 0.33:
                cents = rng.choice(TOP_UPS)
            else:
                cents = -rng.randrange(150, 2000)
            rows.append({"wallet_id": wallet, "amount": cents, "booked_at": when})
            if rng.random() < 0.05:
                # a second entry of the wallet in the same second
                rows.append({"wallet_id": wallet, "amount": -rng.randrange(100, 900),
                             "booked_at": when})
            when += dt.timedelta(seconds=rng.randrange(1200, 20 * 3600))
    rows.sort(key=lambda r: (r["booked_at"], r["wallet_id"]))
    entries = []
    entry_id = 40_000_000
    for row in rows:
        entry_id += rng.choice([1, 1, 2, 5])
        entries.append({**row, "entry_id": entry_id})
    reversals = []
    reversal_id = 900_000
    for entry in rng.sample(entries, len(entries) // 8):
        for _ in range(2 if rng.random() < 0.06 else 1):  # an entry cancelled twice
            reversal_id += rng.choice([1, 2, 3])
            reversals.append({
                "reversal_id": reversal_id, "entry_id": entry["entry_id"],
                "reversed_at": entry["booked_at"] + dt.timedelta(
                    seconds=rng.randrange(300, 3 * 86400))})
    for _ in range(3):  # reversals of entries the system never publishes
        reversal_id += 1
        reversals.append({"reversal_id": reversal_id, "entry_id": entry_id + rng.randrange(10, 99),
                          "reversed_at": start + dt.timedelta(seconds=rng.randrange(0, 5 * 86400))})
    return {
        "wallet_entries": ordered(
            [{**e, "amount": money(e["amount"]), "booked_at": ts(e["booked_at"])}
             for e in entries], "booked_at", "entry_id"),
        "wallet_reversals": ordered(
            [{**r, "reversed_at": ts(r["reversed_at"])} for r in reversals],
            "reversed_at", "reversal_id"),
    }


GENERATORS = {
    "wallet_balance_history": gen_wallet_balance_history,
}
