"""Support: ticket messages, ticket states, queues, response times."""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import ordered, ties, ts, twins, weighted

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


GENERATORS = {
    "support_messages_clean": gen_support_messages_clean,
}
