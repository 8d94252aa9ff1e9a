"""Identity stitching: links between account, cookie and device ids, and the page views of those
ids, over two weeks of a SaaS product's site and app.

In time order every link attaches an id the identity service has not seen before (a new device
at sign-in, the web view of an app) to a person, and that id's views come after its link; only
the first cookie of a person browses before its sign-up link. So each link relabels at most one
id that already has views, and a link that arrives after the views and links that depend on it
merges two people who both have views on the same days: relabels a chain of ids, moves views,
shares pages and renumbers days.
"""

from __future__ import annotations

import datetime as dt
import random

from loggen.common import hexid, numbered, ordered, weighted

PAGES = [("/", 10), ("/pricing", 5), ("/docs", 6), ("/docs/install", 4), ("/docs/api", 3),
         ("/blog", 3), ("/features", 4), ("/changelog", 2), ("/account", 5), ("/support", 2),
         ("/integrations", 2), ("/login", 3)]
START = dt.datetime(2025, 6, 2)
DAYS = 14


def _visit(rng: random.Random, visitor: str | None, when: dt.datetime) -> list[dict]:
    views = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5])):
        views.append({"visitor_id": visitor, "page": str(weighted(rng, PAGES)),
                      "viewed_at": when})
        when += dt.timedelta(seconds=rng.randrange(5, 300))
    return views


def _new_id(rng: random.Random, kind: str) -> str:
    return hexid(rng, "ck-", 10) if kind == "ck" else hexid(rng, "dev-", 8)


def _person(rng: random.Random, account: str, links: list[dict], views: list[dict]) -> None:
    """A person who browses anonymously, signs up, then signs in from more devices."""
    first = _new_id(rng, "ck")
    signup = START + dt.timedelta(days=rng.randrange(0, 6), seconds=rng.randrange(8, 20) * 3600)
    for _ in range(rng.choice([0, 1, 1, 2])):  # anonymous visits before signing up
        views += _visit(rng, first, signup - dt.timedelta(seconds=rng.randrange(600, 4 * 86400)))
    pair = [first, account]
    rng.shuffle(pair)
    links.append({"id_a": pair[0], "id_b": pair[1], "linked_at": signup})
    if rng.random() < 0.08:  # the account page links the account with itself
        links.append({"id_a": account, "id_b": account, "linked_at": signup})
    members = [first]
    views += _visit(rng, first, signup + dt.timedelta(seconds=rng.randrange(1, 60)))
    days = sorted(rng.sample(range((signup - START).days, DAYS),
                             min(DAYS - (signup - START).days, rng.randint(3, 7))))
    for index in days:
        for second in sorted(rng.randrange(7 * 3600, 23 * 3600)
                             for _ in range(rng.choice([1, 1, 2]))):
            when = START + dt.timedelta(days=index, seconds=second)
            if when <= signup + dt.timedelta(seconds=600):
                continue
            if rng.random() < 0.35 and len(members) < 6:
                # A new device signs in (or an app opens its web view): a link to a known id
                # of the person, then views from the new id.
                kind = "ck" if rng.random() < 0.5 else "dev"
                new = _new_id(rng, kind)
                anchor = account if rng.random() < 0.6 else rng.choice(members)
                pair = [anchor, new]
                rng.shuffle(pair)
                links.append({"id_a": pair[0], "id_b": pair[1], "linked_at": when})
                members.append(new)
                visitor = new
            else:
                visitor = rng.choice(members)
                if rng.random() < 0.3:  # signing in again on a known id links it again
                    links.append({"id_a": account, "id_b": visitor, "linked_at": when})
            views += _visit(rng, visitor, when + dt.timedelta(seconds=rng.randrange(1, 30)))


def _anonymous(rng: random.Random, links: list[dict], views: list[dict]) -> None:
    """A visitor who never signs up; some open the site from the app's web view once."""
    visitor = _new_id(rng, "ck" if rng.random() < 0.6 else "dev")
    for index in sorted(rng.sample(range(DAYS), rng.randint(1, 4))):
        when = START + dt.timedelta(days=index, seconds=rng.randrange(6 * 3600, 23 * 3600))
        views += _visit(rng, visitor, when)
    if visitor.startswith("dev-") and rng.random() < 0.5:
        when = START + dt.timedelta(days=DAYS - 1, seconds=23 * 3600 + rng.randrange(0, 3000))
        web = _new_id(rng, "ck")
        links.append({"id_a": visitor, "id_b": web, "linked_at": when})
        views += _visit(rng, web, when + dt.timedelta(seconds=rng.randrange(1, 30)))


def gen_visitor_identity_pageviews() -> dict[str, list[dict]]:
    rng = random.Random(20250602)
    links: list[dict] = []
    views: list[dict] = []
    for number in rng.sample(range(100_000, 999_999), 42):
        _person(rng, f"acct-{number}", links, views)
    for _ in range(22):
        _anonymous(rng, links, views)
    # Tracking blocked: a view with no visitor id.
    for _ in range(9):
        views += _visit(rng, None, START + dt.timedelta(seconds=rng.randrange(0, DAYS * 86400)))[:1]
    # The tracker fires twice for one page load: the same payload under two view ids.
    for index in rng.sample(range(len(views)), 10):
        views.append(dict(views[index]))
    link_records = numbered(rng, links, lambda r: (r["linked_at"], r["id_a"], r["id_b"]),
                            "link_id", 31_000, [1, 1, 2, 5], "linked_at")
    view_records = numbered(rng, views,
                            lambda r: (r["viewed_at"], r["visitor_id"] or "", r["page"]),
                            "view_id", 5_400_000, [1, 1, 1, 2, 3], "viewed_at")
    return {"identity_links": ordered(link_records, "linked_at", "link_id"),
            "page_views": ordered(view_records, "viewed_at", "view_id")}


GENERATORS = {
    "visitor_identity_pageviews": gen_visitor_identity_pageviews,
}
