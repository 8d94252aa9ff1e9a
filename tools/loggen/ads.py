"""Ad delivery: clicks, impressions, campaign settings, reach."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import (
    day,
    hexid,
    money,
    ordered,
    same_second,
    ties,
    ts,
    twins,
    versions,
    weighted,
)

AGENTS = [
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15", 30),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0", 30),
    ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile", 20),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 4),
    ("Mozilla/5.0 (compatible; AhrefsBot/7.0)", 2),
    ("python-requests/2.31 (link checker; CRAWLER)", 2),
    (None, 4),
]
PLACEMENTS = [(" Search_Top", 3), ("search_top", 20), ("search_side", 8), ("feed", 25),
              ("Feed ", 4), ("video_preroll", 10), ("partner_network", 6)]


def gen_ad_clicks_clean() -> dict[str, list[dict]]:
    rng = random.Random(20240502)
    start = dt.datetime(2024, 5, 2)
    campaigns = {301: 410_000, 302: 650_000, 305: 220_000, 311: 1_250_000, 318: 95_000}
    rows: list[dict] = []
    for _ in range(250):
        campaign = rng.choice(list(campaigns))
        rows.append({
            "campaign_id": campaign,
            "creative_id": campaign * 10 + rng.randint(1, 4),
            "placement": weighted(rng, PLACEMENTS),
            "cpc_micros": campaigns[campaign] + rng.choice([-15_000, 0, 0, 0, 25_000, 120_000]),
            "user_agent": weighted(rng, AGENTS),
            "clicked_at": start + dt.timedelta(seconds=rng.randrange(0, 14 * 86400)),
        })
    twins(rng, rows, 8)  # a double tap: two click ids, same everything else
    ties(rng, rows, "clicked_at", "campaign_id", 10)
    records = [{**r, "click_id": hexid(rng, "clk_", 14), "clicked_at": ts(r["clicked_at"])}
               for r in rows]
    return {"clicks": ordered(records, "clicked_at", "click_id")}


def gen_ad_click_attribution() -> dict[str, list[dict]]:
    rng = random.Random(20240612)
    start = dt.datetime(2024, 6, 12)
    users = [hexid(rng, "u", 8) for _ in range(40)]
    impressions: list[dict] = []
    clicks: list[dict] = []
    for user in users:
        when = start + dt.timedelta(seconds=rng.randrange(0, 3 * 86400))
        for _ in range(rng.randint(2, 6)):
            campaign = rng.choice([301, 302, 305, 311, 318])
            impressions.append({"user_id": user, "campaign_id": campaign, "served_at": when})
            if rng.random() < 0.1:  # two slots of one page served at the same second
                impressions.append({"user_id": user, "campaign_id": rng.choice([302, 318]),
                                    "served_at": when})
            if rng.random() < 0.45:
                click = when + dt.timedelta(seconds=rng.choice(
                    [5, 30, 300, 3600, 20 * 3600, 30 * 3600]))
                clicks.append({"user_id": user, "clicked_at": click})
                if rng.random() < 0.12:  # a double tap
                    clicks.append(dict(clicks[-1]))
            when += dt.timedelta(seconds=rng.randrange(1200, 40 * 3600))
    for _ in range(8):  # clicks from browsers that block our cookie: no user
        clicks.append({"user_id": None,
                       "clicked_at": start + dt.timedelta(seconds=rng.randrange(0, 5 * 86400))})
    ties(rng, impressions, "served_at", "user_id", 6)
    imp = [{**r, "impression_id": hexid(rng, "imp_", 12), "served_at": ts(r["served_at"])}
           for r in impressions]
    clk = [{**r, "click_id": hexid(rng, "clk_", 12), "clicked_at": ts(r["clicked_at"])}
           for r in clicks]
    return {"impressions": ordered(imp, "served_at", "impression_id"),
            "clicks": ordered(clk, "clicked_at", "click_id")}


def gen_campaign_settings_current() -> dict[str, list[dict]]:
    rng = random.Random(20240603)
    start = dt.datetime(2024, 6, 3, 8, 0, 0)
    campaigns = rng.sample(range(4000, 5000), 60)
    rows: list[dict] = []
    state: dict[int, dict] = {}
    for campaign, version, when in versions(rng, campaigns, start, 15, [1, 2, 3, 4, 5, 6],
                                            (1200, 3 * 86400)):
        if version == 1:
            state[campaign] = {
                "name": f"{rng.choice(['Summer', 'Brand', 'Retarget', 'Launch'])} "
                        f"{rng.choice(['US', 'EU', 'APAC'])} {campaign}",
                "status": "active", "daily_budget": money(rng.choice([5000, 10000, 25000])),
                "bid_strategy": rng.choice(["manual_cpc", "target_cpa", "max_clicks"]),
                "end_date": None}
        else:
            current = dict(state[campaign])
            change = rng.choice(["budget", "budget", "pause", "resume", "bid", "end", "archive"])
            if change == "budget":
                current["daily_budget"] = money(rng.choice([2500, 7500, 15000, 40000]))
            elif change == "pause":
                current["status"] = "paused"
            elif change == "resume":
                current["status"] = "active"
            elif change == "bid":
                current["bid_strategy"] = rng.choice(["manual_cpc", "target_cpa", "target_roas"])
            elif change == "end":
                current["end_date"] = day((when + dt.timedelta(days=rng.randint(3, 30))).date())
            else:
                current["status"] = "archived"
            state[campaign] = current
        rows.append({"campaign_id": campaign, "version": version, **state[campaign],
                     "changed_at": when})
    same_second(rng, rows, "changed_at", "campaign_id", 10)
    rows.sort(key=lambda r: (r["changed_at"], r["campaign_id"], r["version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "change_id": change_id, "changed_at": ts(row["changed_at"])})
    return {"campaign_changes": ordered(records, "changed_at", "change_id")}


def gen_campaign_daily_delivery() -> dict[str, list[dict]]:
    rng = random.Random(20240701)
    start = dt.datetime(2024, 7, 1)
    campaigns = {401: 1800, 402: 2400, 407: 950, 415: 3100}  # CPM in micros per impression
    rows: list[dict] = []
    for _ in range(300):
        campaign = rng.choice(list(campaigns))
        kind = str(weighted(rng, [("impression", 70), ("click", 22), ("conversion", 8)]))
        cost = {"impression": campaigns[campaign], "click": rng.choice([250_000, 410_000]),
                "conversion": None}[kind]
        rows.append({"campaign_id": campaign, "event_type": kind, "cost_micros": cost,
                     "occurred_at": start + dt.timedelta(seconds=rng.randrange(0, 6 * 86400))})
    twins(rng, rows, 10)
    ties(rng, rows, "occurred_at", "campaign_id", 10)
    # events a few seconds around midnight
    for row in rng.sample(rows, 6):
        moment = row["occurred_at"].replace(hour=0, minute=0, second=0)
        row["occurred_at"] = moment + dt.timedelta(seconds=rng.choice([-2, -1, 0, 1]))
    rows.sort(key=lambda r: (r["occurred_at"], r["campaign_id"]))
    records = [{**r, "event_id": hexid(rng, "ev", 14), "occurred_at": ts(r["occurred_at"])}
               for r in rows]
    return {"ad_events": ordered(records, "occurred_at", "event_id")}


def gen_campaign_unique_reach() -> dict[str, list[dict]]:
    rng = random.Random(20240722)
    start = dt.datetime(2024, 7, 22)
    users = [hexid(rng, "u", 10) for _ in range(70)]
    rows: list[dict] = []
    for _ in range(290):
        rows.append({
            "campaign_id": rng.choice([501, 502, 509]),
            "user_id": None if rng.random() < 0.08 else rng.choice(users[:rng.choice([25, 70])]),
            "served_at": start + dt.timedelta(seconds=rng.randrange(0, 7 * 86400)),
        })
    twins(rng, rows, 8)  # two slots on one page: same user, same time, two impressions
    ties(rng, rows, "served_at", "campaign_id", 10)
    records = [{**r, "impression_id": hexid(rng, "imp", 12), "served_at": ts(r["served_at"])}
               for r in rows]
    return {"impressions_served": ordered(records, "served_at", "impression_id")}


GENERATORS = {
    "campaign_unique_reach": gen_campaign_unique_reach,
    "campaign_daily_delivery": gen_campaign_daily_delivery,
    "ad_clicks_clean": gen_ad_clicks_clean,
    "ad_click_attribution": gen_ad_click_attribution,
    "campaign_settings_current": gen_campaign_settings_current,
}
