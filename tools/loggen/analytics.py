"""Web and product analytics: product events, page sequences, sessions, funnels, active users."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import hexid, ordered, ties, ts, twins, weighted

PLANS = ["free", "starter", "team", "business"]
EVENTS = [("dashboard_viewed", 30), ("report_exported", 8), ("invite_sent", 5),
          ("project_created", 6), ("integration_connected", 3), ("search_run", 18)]


def gen_product_events_with_plan() -> dict[str, list[dict]]:
    rng = random.Random(20240520)
    start = dt.datetime(2024, 5, 20)
    accounts = rng.sample(range(8000, 9000), 22)
    changes: list[dict] = []
    for account in accounts:
        when = start + dt.timedelta(seconds=rng.randrange(-3 * 86400, 4 * 86400))
        plan = rng.choice(PLANS[:2])
        for version in range(1, rng.randint(2, 5)):
            changes.append({"account_id": account, "plan": plan, "version": version,
                            "changed_at": when})
            when += dt.timedelta(seconds=rng.randrange(86400, 5 * 86400))
            plan = rng.choice([p for p in PLANS if p != plan])
    events: list[dict] = []
    for _ in range(200):
        account = rng.choice(accounts)
        user = None if rng.random() < 0.06 else account * 100 + rng.randint(1, 6)
        events.append({"account_id": account, "user_id": user,
                       "event_name": weighted(rng, EVENTS),
                       "occurred_at": start + dt.timedelta(seconds=rng.randrange(0, 14 * 86400))})
    twins(rng, events, 7)  # a double-click on export: two events
    ties(rng, events, "occurred_at", "account_id", 8)
    # A plan change and an event of the same account at the same second: the new plan applies.
    for change in rng.sample(changes, 4):
        events.append({"account_id": change["account_id"],
                       "user_id": change["account_id"] * 100 + 1,
                       "event_name": "dashboard_viewed", "occurred_at": change["changed_at"]})
    change_id = 0
    change_records = []
    for row in sorted(changes, key=lambda r: (r["changed_at"], r["account_id"])):
        change_id += rng.choice([1, 2])
        change_records.append({**row, "change_id": change_id,
                               "changed_at": ts(row["changed_at"])})
    event_records = [{**r, "event_id": hexid(rng, "ev_", 12), "occurred_at": ts(r["occurred_at"])}
                     for r in events]
    return {"plan_changes": ordered(change_records, "changed_at", "change_id"),
            "product_events": ordered(event_records, "occurred_at", "event_id")}


PAGES = ["/", "/pricing", "/docs", "/docs/getting-started", "/blog", "/signup", "/login",
         "/app/dashboard", "/app/reports", "/contact"]


def gen_session_page_sequence() -> dict[str, list[dict]]:
    rng = random.Random(20240311)
    start = dt.datetime(2024, 3, 11)
    rows: list[dict] = []
    for _ in range(55):
        session = hexid(rng, "s", 10)
        when = start + dt.timedelta(seconds=rng.randrange(0, 9 * 86400))
        for _ in range(rng.randint(1, 9)):
            page = None if rng.random() < 0.04 else rng.choice(PAGES)
            rows.append({"session_id": session, "page": page, "viewed_at": when})
            if rng.random() < 0.07:  # the tag fired twice on one page load
                rows.append(dict(rows[-1]))
            when += dt.timedelta(seconds=rng.randrange(3, 400))
    ties(rng, rows, "viewed_at", "session_id", 10)
    records = [{**r, "view_id": hexid(rng, "pv_", 14), "viewed_at": ts(r["viewed_at"])}
               for r in rows]
    return {"page_views": ordered(records, "viewed_at", "view_id")}


def gen_web_sessions() -> dict[str, list[dict]]:
    rng = random.Random(20240415)
    start = dt.datetime(2024, 4, 15, 6, 0, 0)
    visitors = [hexid(rng, "v", 10) for _ in range(30)]
    rows: list[dict] = []
    for visitor in visitors:
        when = start + dt.timedelta(seconds=rng.randrange(0, 2 * 86400))
        for _ in range(rng.randint(1, 4)):  # visits
            for _ in range(rng.randint(1, 6)):
                page = None if rng.random() < 0.04 else rng.choice(PAGES)
                rows.append({"visitor_id": visitor, "page": page, "hit_at": when})
                if rng.random() < 0.06:
                    rows.append(dict(rows[-1]))  # the tag fired twice
                when += dt.timedelta(seconds=rng.choice([5, 40, 120, 600, 1500, 1800]))
            when += dt.timedelta(seconds=rng.choice([1801, 2400, 3 * 3600, 20 * 3600]))
    ties(rng, rows, "hit_at", "visitor_id", 10)
    records = [{**r, "hit_id": hexid(rng, "h", 12), "hit_at": ts(r["hit_at"])} for r in rows]
    return {"page_hits": ordered(records, "hit_at", "hit_id")}


FUNNEL = ["product_view", "add_to_cart", "checkout_start", "purchase"]


def gen_checkout_funnel_daily() -> dict[str, list[dict]]:
    rng = random.Random(20240617)
    start = dt.datetime(2024, 6, 17, 7, 0, 0)
    users = rng.sample(range(50_000, 60_000), 45)
    rows: list[dict] = []
    for _ in range(70):  # shopping visits
        user = rng.choice(users) if rng.random() < 0.85 else None  # not logged in
        when = start + dt.timedelta(days=rng.randrange(0, 6), seconds=rng.randrange(0, 14 * 3600))
        depth = rng.choice([1, 1, 1, 2, 2, 3, 4])
        for step in FUNNEL[:depth]:
            for _ in range(rng.choice([1, 1, 2])):
                rows.append({"user_id": user, "event_name": step, "occurred_at": when})
                when += dt.timedelta(seconds=rng.randrange(5, 900))
        if rng.random() < 0.3:  # browsing on after a purchase, or a stray cart add first
            rows.append({"user_id": user, "event_name": rng.choice(["add_to_cart", "search"]),
                         "occurred_at": when - dt.timedelta(seconds=rng.randrange(0, 7200))})
    twins(rng, rows, 8)
    ties(rng, rows, "occurred_at", "event_name", 10)
    records = [{**r, "event_id": hexid(rng, "e", 12), "occurred_at": ts(r["occurred_at"])}
               for r in rows]
    return {"shop_events": ordered(records, "occurred_at", "event_id")}


def gen_daily_active_users() -> dict[str, list[dict]]:
    rng = random.Random(20240708)
    start = dt.datetime(2024, 7, 8)
    users = rng.sample(range(100_000, 200_000), 60)
    joined = {user: rng.randrange(0, 8) for user in users}  # the day each user signs up
    rows: list[dict] = []
    for _ in range(280):
        user = rng.choice(users) if rng.random() < 0.9 else None
        first = joined[user] if user is not None else 0
        when = start + dt.timedelta(days=rng.randint(first, 9), seconds=rng.randrange(0, 86400))
        rows.append({"user_id": user, "platform": rng.choice(["ios", "android", "web"]),
                     "event_name": weighted(rng, EVENTS), "occurred_at": when})
    twins(rng, rows, 8)
    ties(rng, rows, "occurred_at", "platform", 10)
    records = [{**r, "event_id": hexid(rng, "a", 12), "occurred_at": ts(r["occurred_at"])}
               for r in rows]
    return {"app_events": ordered(records, "occurred_at", "event_id")}


GENERATORS = {
    "daily_active_users": gen_daily_active_users,
    "checkout_funnel_daily": gen_checkout_funnel_daily,
    "web_sessions": gen_web_sessions,
    "product_events_with_plan": gen_product_events_with_plan,
    "session_page_sequence": gen_session_page_sequence,
}
