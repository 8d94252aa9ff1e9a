"""Finance: card captures, ledgers, payments in foreign currencies."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import hexid, ordered, ties, ts, twins, weighted

CURRENCIES = [("USD", 50), ("usd", 6), ("EUR", 22), ("eur", 3), ("GBP", 10), ("JPY", 6),
              ("KRW", 3)]
BRANDS = [("visa", 45), ("mastercard", 30), ("amex", 9), ("discover", 3), (None, 13)]


def gen_payment_captures() -> dict[str, list[dict]]:
    rng = random.Random(20240610)
    start = dt.datetime(2024, 6, 10)
    merchants = [1101, 1102, 1107, 1120, 1135, 1142, 1178]
    rows: list[dict] = []
    for _ in range(236):
        currency = str(weighted(rng, CURRENCIES))
        if currency.upper() in ("JPY", "KRW"):
            amount = rng.randrange(300, 48000, 10) * (10 if currency.upper() == "KRW" else 1)
        else:
            amount = rng.choice([499, 999, 1250, 1999, 2450, 3900, 5000, 8999, 12000]) + \
                rng.choice([0, 0, 0, 1, 50, 99])
        rows.append({
            "merchant_id": rng.choice(merchants),
            "payment_intent": hexid(rng, "pi_", 14),
            "amount_minor": amount,
            "currency": currency,
            "card_brand": weighted(rng, BRANDS),
            "captured_at": start + dt.timedelta(seconds=rng.randrange(0, 21 * 86400)),
        })
    # A split shipment captured in two equal parts: one intent, two captures, same payload.
    twins(rng, rows, 10)
    ties(rng, rows, "captured_at", "merchant_id", 12)
    records = []
    for row in rows:
        records.append({**row, "capture_id": hexid(rng, "ch_", 16),
                        "captured_at": ts(row["captured_at"])})
    return {"captures": ordered(records, "captured_at", "capture_id")}


GENERATORS = {
    "payment_captures": gen_payment_captures,
}
