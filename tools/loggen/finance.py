"""Finance: card captures, ledgers, payments in foreign currencies."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import hexid, money, ordered, ties, ts, twins, weighted

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


ENTRY_TYPES = [("deposit", 20), ("card_purchase", 40), ("transfer_out", 10), ("fee", 8),
               ("interest", 4), ("reversal", 3)]


def gen_ledger_running_balance() -> dict[str, list[dict]]:
    rng = random.Random(20240301)
    start = dt.datetime(2024, 3, 1)
    accounts = [f"ACC-{n:06d}" for n in rng.sample(range(100_000, 999_999), 14)]
    rows: list[dict] = []
    for account in accounts:
        when = start + dt.timedelta(seconds=rng.randrange(0, 86400))
        for _ in range(rng.randint(12, 24)):
            kind = str(weighted(rng, ENTRY_TYPES))
            cents = {"deposit": rng.choice([50000, 125000, 230000, 31250]),
                     "card_purchase": -rng.randint(150, 25000),
                     "transfer_out": -rng.choice([10000, 25000, 50000]),
                     "fee": -rng.choice([250, 500, 1500]),
                     "interest": rng.randint(1, 900),
                     "reversal": rng.randint(150, 9000)}[kind]
            memo = None if rng.random() < 0.4 else rng.choice(
                ["payroll", "rent", "groceries", "atm", "monthly fee", "refund", "utilities"])
            rows.append({"account_id": account, "entry_type": kind,
                         "amount": f"{cents / 100:.2f}", "memo": memo, "posted_at": when})
            if kind == "fee" and rng.random() < 0.5:
                rows.append(dict(rows[-1]))  # the same fee charged twice in the same second
            when += dt.timedelta(seconds=rng.randrange(1800, 2 * 86400))
    ties(rng, rows, "posted_at", "account_id", 10)
    rows.sort(key=lambda r: (r["posted_at"], r["account_id"]))
    entry_id = 10_000_000
    records = []
    for row in rows:
        entry_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "entry_id": entry_id, "posted_at": ts(row["posted_at"])})
    return {"ledger_entries": ordered(records, "posted_at", "entry_id")}


RATES = {"USD": 0.9210, "GBP": 1.1690, "CHF": 1.0420, "SEK": 0.0871, "JPY": 0.006012}


def gen_payments_in_eur() -> dict[str, list[dict]]:
    rng = random.Random(20240408)
    start = dt.datetime(2024, 4, 8)
    rates: list[dict] = []
    for currency, base in RATES.items():
        when = start - dt.timedelta(hours=rng.randint(1, 6)) if currency != "SEK" else \
            start + dt.timedelta(days=2)  # SEK payments before its first rate stay unconverted
        while when < start + dt.timedelta(days=10):
            rate = base * (1 + rng.uniform(-0.015, 0.015))
            rates.append({"currency": currency, "rate_to_eur": f"{rate:.6f}", "effective_at": when})
            if rng.random() < 0.08:  # a correction published at the same second
                rate = base * (1 + rng.uniform(-0.015, 0.015))
                rates.append({"currency": currency, "rate_to_eur": f"{rate:.6f}",
                              "effective_at": when})
            when += dt.timedelta(seconds=rng.choice([6 * 3600, 12 * 3600, 24 * 3600]))
    payments: list[dict] = []
    for _ in range(190):
        currency = str(weighted(rng, [("EUR", 30), ("USD", 25), ("GBP", 15), ("CHF", 8),
                                      ("SEK", 8), ("JPY", 5)]))
        amount = rng.randint(500, 250000) if currency != "JPY" else rng.randint(500, 90000) * 100
        payments.append({"merchant_id": rng.choice([71, 72, 75, 79, None]), "currency": currency,
                         "amount": f"{amount / 100:.2f}", "paid_at": start + dt.timedelta(
                             seconds=rng.randrange(0, 10 * 86400))})
    twins(rng, payments, 6)
    ties(rng, payments, "paid_at", "merchant_id", 6)
    rate_id = 500
    rate_records = []
    for row in sorted(rates, key=lambda r: (r["effective_at"], r["currency"])):
        rate_id += 1
        rate_records.append({**row, "rate_id": rate_id, "effective_at": ts(row["effective_at"])})
    pay = [{**r, "payment_id": hexid(rng, "py_", 12), "paid_at": ts(r["paid_at"])}
           for r in payments]
    return {"fx_rates": ordered(rate_records, "effective_at", "rate_id"),
            "payments": ordered(pay, "paid_at", "payment_id")}


def gen_account_balances() -> dict[str, list[dict]]:
    rng = random.Random(20240520)
    start = dt.datetime(2024, 5, 20)
    accounts = [f"GL-{n}" for n in (1000, 1100, 1200, 2000, 2100, 3000, 4000, 4100, 5000, 6100)]
    rows: list[dict] = []
    for _ in range(270):
        account = rng.choice(accounts)
        currency = "EUR" if rng.random() < 0.7 else rng.choice(["USD", "GBP"])
        kind = weighted(rng, [("invoice", 8), ("payment", 6), ("accrual", 3), ("fx", 1),
                              ("reversal", 2), (None, 1)])
        cents = rng.randint(-250_000, 250_000)
        rows.append({"account_id": account, "currency": currency, "amount": money(cents),
                     "posting_type": kind,
                     "posted_at": start + dt.timedelta(seconds=rng.randrange(0, 10 * 86400))})
    twins(rng, rows, 8)  # the same recurring accrual posted twice, legitimately
    ties(rng, rows, "posted_at", "account_id", 12)
    rows.sort(key=lambda r: (r["posted_at"], r["account_id"]))
    posting_id = 1_000_000
    records = []
    for row in rows:
        posting_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "posting_id": posting_id, "posted_at": ts(row["posted_at"])})
    return {"postings": ordered(records, "posted_at", "posting_id")}


GENERATORS = {
    "account_balances": gen_account_balances,
    "payment_captures": gen_payment_captures,
    "ledger_running_balance": gen_ledger_running_balance,
    "payments_in_eur": gen_payments_in_eur,
}
