"""Last-touch attribution: marketing touches and the conversions they lead to, four weeks of a
shop's users.

A touch is always recorded before the conversion it leads to (never in the same second), so in
time order a conversion finds every touch it can take. Users convert again after further
touches, sometimes more than a week later, and some convert with no touch at all: a touch that
comes in after its conversion takes it from the touch that had it, and a conversion that comes
in after the user's next one takes that one's touch away.
"""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import money, numbered, ordered, weighted

CHANNELS = [("paid_search", 30), ("email", 22), ("social", 18), ("display", 10),
            ("affiliate", 8), ("organic_search", 12)]
START = dt.datetime(2025, 3, 3)
DAYS = 28


def _user(rng: random.Random, user_id: int, touches: list[dict], conversions: list[dict]) -> None:
    when = START + dt.timedelta(seconds=rng.randrange(0, 10 * 86400))
    end = START + dt.timedelta(days=DAYS)
    while when < end:
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            touches.append({"user_id": user_id, "channel": str(weighted(rng, CHANNELS)),
                            "touched_at": when})
            when += dt.timedelta(seconds=rng.randrange(300, 2 * 86400))
        if rng.random() < 0.7:
            # Converting soon after the touches, or more than a week later.
            gap = rng.randrange(60, 6 * 3600) if rng.random() < 0.75 else \
                rng.randrange(7 * 86400 - 3600, 9 * 86400)
            when += dt.timedelta(seconds=gap)
            for _ in range(rng.choice([1, 1, 1, 2])):  # a second order right after the first
                conversions.append({"user_id": user_id, "converted_at": when,
                                    "revenue": money(rng.randrange(900, 24_000))})
                when += dt.timedelta(seconds=rng.randrange(60, 1800))
        when += dt.timedelta(seconds=rng.randrange(3600, 6 * 86400))


def gen_conversion_last_touch() -> dict[str, list[dict]]:
    rng = random.Random(20250303)
    touches: list[dict] = []
    conversions: list[dict] = []
    for user_id in rng.sample(range(10_000, 99_999), 95):
        _user(rng, user_id, touches, conversions)
    # Two touches of one user in the same second (an email opened from a social post).
    for index in rng.sample(range(len(touches)), 12):
        touches.append({**touches[index], "channel": str(weighted(rng, CHANNELS))})
    end = START + dt.timedelta(days=DAYS)
    touches = [t for t in touches if t["touched_at"] < end]
    conversions = [c for c in conversions if c["converted_at"] < end]
    touch_records = numbered(rng, touches,
                             lambda r: (r["touched_at"], r["user_id"], r["channel"]),
                             "touch_id", 800_000, [1, 1, 2, 4], "touched_at")
    conversion_records = numbered(rng, conversions, lambda r: (r["converted_at"], r["user_id"]),
                                  "conversion_id", 41_000, [1, 1, 3], "converted_at")
    return {"touches": ordered(touch_records, "touched_at", "touch_id"),
            "conversions": ordered(conversion_records, "converted_at", "conversion_id")}


GENERATORS = {
    "conversion_last_touch": gen_conversion_last_touch,
}
