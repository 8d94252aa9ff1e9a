"""Support: ticket messages, ticket states, queues, response times."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, same_second, ties, ts, twins, versions, weighted

PHRASES = [
    "Hi, my order has not arrived yet.", "Could you check the tracking number?",
    "Thanks for reaching out! I have escalated this to our warehouse team.",
    "The parcel shows as delivered but I never received it", "Refund issued.",
    "Can I change the delivery address for order 88123?",
    "  We are sorry for the trouble.   A replacement is on its way.  ",
    "ok", "Please see the attached photo", "Is there an update?",
    "Your ticket has been received and an agent will reply within one business day.",
]


def gen_support_messages_clean() -> dict[str, list[dict]]:
    rng = random.Random(20240819)
    start = dt.datetime(2024, 8, 19, 7, 0, 0)
    agents = [41, 42, 47, 53, 58]
    rows: list[dict] = []
    for ticket in rng.sample(range(510_000, 520_000), 60):
        when = start + dt.timedelta(seconds=rng.randrange(0, 12 * 86400))
        channel = str(weighted(rng, [("email", 5), ("chat", 3), ("web", 2)]))
        for turn in range(rng.randint(2, 7)):
            if turn == 0:
                author, author_id = "customer", None
            elif turn == 1 and rng.random() < 0.5:
                author, author_id = "bot", None
            else:
                author = rng.choice(["customer", "agent"])
                author_id = rng.choice(agents) if author == "agent" else None
            body = rng.choice(PHRASES)
            if rng.random() < 0.06:
                body = None  # an attachment without text
            elif rng.random() < 0.04:
                body = "   "
            rows.append({"ticket_id": ticket, "author_type": author, "author_id": author_id,
                         "channel": channel, "body": body, "sent_at": when})
            when += dt.timedelta(seconds=rng.randrange(30, 30 * 3600))
    twins(rng, rows, 9)  # the mail gateway split one e-mail into two messages
    ties(rng, rows, "sent_at", "ticket_id", 10)
    rows.sort(key=lambda r: (r["sent_at"], r["ticket_id"]))
    message_id = 3_000_000
    records = []
    for row in rows:
        message_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "message_id": message_id, "sent_at": ts(row["sent_at"])})
    return {"ticket_messages": ordered(records, "sent_at", "message_id")}


QUEUES = ["billing", "shipping", "returns", "technical", None]
SUBJECTS = ["Where is my order?", "Refund not received", "Wrong size delivered",
            "Cannot log in", "Invoice copy", "Damaged parcel", "Change my address",
            "App crashes on checkout", "Discount code not working"]


def gen_ticket_current_state() -> dict[str, list[dict]]:
    rng = random.Random(20240826)
    start = dt.datetime(2024, 8, 26, 8, 0, 0)
    tickets = rng.sample(range(700_000, 800_000), 80)
    spam = set(rng.sample(tickets, 7))
    rows: list[dict] = []
    state: dict[int, dict] = {}
    for ticket, version, when in versions(rng, tickets, start, 12, [1, 2, 3, 3, 4, 5, 6],
                                          (300, 2 * 86400)):
        if version == 1:
            state[ticket] = {"status": "new", "priority": rng.choice(["low", "normal", "high"]),
                             "queue": weighted(rng, [(q, 4 if q else 1) for q in QUEUES]),
                             "assignee_id": None, "subject": rng.choice(SUBJECTS)}
            op = "upsert"
        elif ticket in spam and rng.random() < 0.6:
            op = "delete"  # marked as spam: the ticket is gone
        else:
            op = "upsert"
            current = dict(state[ticket])
            change = rng.choice(["assign", "status", "priority", "queue", "touch"])
            if change == "assign":
                current["assignee_id"] = rng.choice([41, 42, 47, 53, 58, None])
            elif change == "status":
                current["status"] = rng.choice(["open", "pending", "solved", "closed"])
            elif change == "priority":
                current["priority"] = rng.choice(["low", "normal", "high", "urgent"])
            elif change == "queue":
                current["queue"] = rng.choice(QUEUES)
            state[ticket] = current
        payload = dict(state[ticket]) if op == "upsert" else {
            "status": None, "priority": None, "queue": None, "assignee_id": None,
            "subject": None}
        rows.append({"ticket_id": ticket, "version": version, "op": op, **payload,
                     "updated_at": when})
    same_second(rng, rows, "updated_at", "ticket_id", 10)
    rows.sort(key=lambda r: (r["updated_at"], r["ticket_id"], r["version"]))
    change_id = 0
    records = []
    for row in rows:
        change_id += rng.choice([1, 1, 2])
        records.append({**row, "change_id": change_id, "updated_at": ts(row["updated_at"])})
    return {"ticket_changes": ordered(records, "updated_at", "change_id")}


def gen_ticket_sla_status() -> dict[str, list[dict]]:
    rng = random.Random(20240902)
    start = dt.datetime(2024, 9, 2, 7, 0, 0)
    tickets = rng.sample(range(600_000, 700_000), 45)
    rows: list[dict] = []
    for ticket in tickets:
        when = start + dt.timedelta(seconds=rng.randrange(0, 10 * 86400))
        queue = weighted(rng, [("billing", 3), ("shipping", 4), ("technical", 2), (None, 1)])
        rows.append({"ticket_id": ticket, "event_type": "opened", "queue": queue,
                     "agent_id": None, "event_at": when})
        for _ in range(rng.randint(0, 8)):
            when += dt.timedelta(seconds=rng.randrange(120, 20 * 3600))
            kind = str(weighted(rng, [("agent_reply", 5), ("customer_reply", 4),
                                      ("resolved", 2), ("reopened", 1)]))
            rows.append({"ticket_id": ticket, "event_type": kind, "queue": None,
                         "agent_id": rng.choice([41, 42, 47, 53]) if kind == "agent_reply"
                         else None, "event_at": when})
    rows.sort(key=lambda r: (r["event_at"], r["ticket_id"]))
    # Two tickets changing in the same second.
    for a, b in zip(rows[5::23], rows[6::23], strict=False):
        if a["ticket_id"] != b["ticket_id"]:
            b["event_at"] = a["event_at"]
    event_id = 0
    records = []
    for row in sorted(rows, key=lambda r: (r["event_at"], r["ticket_id"])):
        event_id += rng.choice([1, 1, 2])
        records.append({**row, "event_id": event_id, "event_at": ts(row["event_at"])})
    return {"ticket_events": ordered(records, "event_at", "event_id")}


def gen_queue_daily_ticket_counts() -> dict[str, list[dict]]:
    rng = random.Random(20240909)
    start = dt.datetime(2024, 9, 9)
    rows: list[dict] = []
    for _ in range(260):
        rows.append({
            "queue": weighted(rng, [("billing", 5), ("shipping", 6), ("returns", 3),
                                    ("technical", 3), (None, 3)]),
            "channel": weighted(rng, [("email", 5), ("chat", 4), ("phone", 2)]),
            "priority": weighted(rng, [("low", 3), ("normal", 8), ("high", 3), ("urgent", 1)]),
            "opened_at": start + dt.timedelta(seconds=rng.randrange(0, 12 * 86400)),
        })
    twins(rng, rows, 8)
    ties(rng, rows, "opened_at", "channel", 10)
    rows.sort(key=lambda r: (r["opened_at"], r["channel"]))
    ticket_id = 830_000
    records = []
    for row in rows:
        ticket_id += rng.choice([1, 1, 2, 3])
        records.append({**row, "ticket_id": ticket_id, "opened_at": ts(row["opened_at"])})
    return {"tickets_opened": ordered(records, "opened_at", "ticket_id")}


GENERATORS = {
    "queue_daily_ticket_counts": gen_queue_daily_ticket_counts,
    "support_messages_clean": gen_support_messages_clean,
    "ticket_current_state": gen_ticket_current_state,
    "ticket_sla_status": gen_ticket_sla_status,
}
