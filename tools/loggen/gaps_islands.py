"""Gaps and islands: uptime intervals from host heartbeats."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ts, weighted

AGENTS = [("node-agent 3.2.1", 60), ("node-agent 3.3.0", 30), ("node-agent 2.9.4", 10)]
# Seconds between two heartbeats of a healthy host: the agent beats every ~2 minutes with
# jitter, so a single missing beat sometimes opens a gap over 5 minutes and sometimes does not.
BEAT = (70, 200)
# What follows a beat: a normal beat, an outage, or a gap right at the 5-minute boundary.
NEXT = [("beat", 930), ("outage", 45), ("edge_in", 12), ("edge_out", 8), ("twice", 5)]


def gen_host_uptime_intervals() -> dict[str, list[dict]]:
    rng = random.Random(20250304)
    start = dt.datetime(2025, 3, 4, 6, 0, 0)
    hosts = [f"{rng.choice(['web', 'db', 'cache', 'batch'])}-{n:03d}"
             for n in rng.sample(range(1, 400), 28)]
    rows: list[dict] = []
    for host in hosts:
        when = start + dt.timedelta(seconds=rng.randrange(0, 4 * 3600))
        agent = weighted(rng, AGENTS)
        for _ in range(rng.randint(85, 130)):
            rows.append({"host_id": host, "agent_version": agent, "sent_at": when})
            step = weighted(rng, NEXT)
            if step == "twice":  # an agent restart sends two beats in the same second
                rows.append(dict(rows[-1]))
                seconds = rng.randrange(*BEAT)
            elif step == "outage":
                seconds = rng.randrange(301, 3 * 3600)
                if rng.random() < 0.3:
                    agent = weighted(rng, AGENTS)  # came back upgraded
            elif step == "edge_in":
                seconds = 300  # exactly 5 minutes: still up
            elif step == "edge_out":
                seconds = 301
            else:
                seconds = rng.randrange(*BEAT)
            when += dt.timedelta(seconds=seconds)
    # Two hosts beating in the same second.
    for _ in range(40):
        a, b = rng.sample(range(len(rows)), 2)
        if rows[a]["host_id"] != rows[b]["host_id"]:
            rows[b] = {**rows[b], "sent_at": rows[a]["sent_at"]} if abs(
                (rows[a]["sent_at"] - rows[b]["sent_at"]).total_seconds()) < 30 else rows[b]
    rows.sort(key=lambda r: (r["sent_at"], r["host_id"]))
    heartbeat_id = 500_000
    records = []
    for row in rows:
        heartbeat_id += rng.choice([1, 1, 1, 2, 5])
        records.append({**row, "heartbeat_id": heartbeat_id, "sent_at": ts(row["sent_at"])})
    return {"heartbeats": ordered(records, "sent_at", "heartbeat_id")}


GENERATORS = {
    "host_uptime_intervals": gen_host_uptime_intervals,
}
