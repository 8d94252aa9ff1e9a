"""PostgreSQL against DuckDB on the same golds (the target: PostgreSQL's replay
throughput at least 0.25x DuckDB's on this machine).

Measures
  - the start time of a server in a fresh process (sweep, initdb, start, lock-down),
  - replays per second of each task's gold on both engines over a default grade (after one
    warm-up replay that also computes the reference), and their ratio,
  - peak memory: the RSS of this process, and of the server's processes at the end.

The PostgreSQL golds are written here: the corpus's own `gold.postgres.sql` files are another
piece of work. Two of the DuckDB golds are valid PostgreSQL as they are.

    python benchmarks/bench_postgres.py [--task ID]... [--seeds N]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import psutil

from arrivalbench.core.engine import EngineName, Limits, pgserver, postgres
from arrivalbench.core.grading import grade_all, plan
from arrivalbench.core.replay import expected
from arrivalbench.core.task import TaskSpec, load_spec

_PAGE_PATH = ("COALESCE(NULLIF(rtrim(lower(substring(e.url FROM "
              "'^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)')), '/'), ''), '/')")
_REFERRER = ("NULLIF(regexp_replace(lower(substring(e.referrer FROM "
             "'^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)')), '^www\\.', ''), '')")

GOLDS = {
    "web_page_views": f"""
CREATE TABLE IF NOT EXISTS page_views (
    event_id VARCHAR PRIMARY KEY, session_id VARCHAR, user_id BIGINT, page_path VARCHAR,
    referrer_host VARCHAR, view_date DATE, viewed_at TIMESTAMP);
INSERT INTO page_views
SELECT DISTINCT ON (e.event_id) e.event_id, e.session_id, e.user_id, {_PAGE_PATH}, {_REFERRER},
       CAST(e.viewed_at AS DATE), e.viewed_at
FROM incoming.page_events AS e
WHERE NOT EXISTS (SELECT 1 FROM page_views AS p WHERE p.event_id = e.event_id)
ORDER BY e.event_id, e.viewed_at;
""",
    "customer_current_address": """
CREATE TABLE IF NOT EXISTS customer_state (
    customer_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, op VARCHAR NOT NULL,
    street VARCHAR, unit VARCHAR, city VARCHAR, postal_code VARCHAR, country VARCHAR,
    updated_at TIMESTAMP);
INSERT INTO customer_state AS s
SELECT DISTINCT ON (customer_id) customer_id, version, op, street, unit, city, postal_code,
       country, updated_at
FROM incoming.customer_changes ORDER BY customer_id, version DESC
ON CONFLICT (customer_id) DO UPDATE SET
    version = EXCLUDED.version, op = EXCLUDED.op, street = EXCLUDED.street,
    unit = EXCLUDED.unit, city = EXCLUDED.city, postal_code = EXCLUDED.postal_code,
    country = EXCLUDED.country, updated_at = EXCLUDED.updated_at
WHERE EXCLUDED.version > s.version;
DROP TABLE IF EXISTS customer_current_address;
CREATE TABLE customer_current_address AS
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM customer_state WHERE op = 'upsert';
""",
    "store_daily_revenue": None,  # the DuckDB gold as it is
    "account_balances": None,
}

STARTER = """
import time
start = time.perf_counter()
from arrivalbench.core.engine import pgserver
pgserver.server()
print(time.perf_counter() - start)
"""


def start_seconds() -> float:
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", STARTER], check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def throughput(spec: TaskSpec, script: str, engine: EngineName, seeds: int) -> tuple[int, float]:
    """(replays, seconds) of a default grade, all PASS, after a warm-up."""
    points = plan(spec, seeds)
    list(grade_all(spec, script, points[:1], engine_name=engine))
    start = time.perf_counter()
    count = 0
    for verdict, _outcome in grade_all(spec, script, points, engine_name=engine):
        assert verdict.status == "PASS", (engine, verdict.schedule, verdict.seed, verdict.detail)
        count += 1
    return count, time.perf_counter() - start


def server_rss() -> int:
    server = pgserver.server(postgres.address_space(Limits()))
    assert server.process is not None
    root = psutil.Process(server.process.pid)
    return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", choices=sorted(GOLDS))
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args()
    starts = [start_seconds() for _ in range(3)]
    print(f"server start: {min(starts):.2f} s (best of 3; {', '.join(f'{s:.2f}' for s in starts)})")
    print(f"{'task':28} {'replays':>7} {'duckdb/s':>9} {'postgres/s':>10} {'ratio':>6}")
    totals = {"duckdb": [0, 0.0], "postgres": [0, 0.0]}
    for task in args.task or sorted(GOLDS):
        spec = load_spec(task)
        expected(spec)
        rates = {}
        for engine, script in (("duckdb", spec.gold_sql),
                               ("postgres", GOLDS[task] or spec.gold_sql)):
            count, seconds = throughput(spec, script, engine, args.seeds)  # type: ignore[arg-type]
            rates[engine] = count / seconds
            totals[engine][0] += count
            totals[engine][1] += seconds
        print(f"{task:28} {count:7d} {rates['duckdb']:9.1f} {rates['postgres']:10.1f} "
              f"{rates['postgres'] / rates['duckdb']:6.2f}")
    rate = {e: n / s for e, (n, s) in totals.items()}
    print(f"{'all':28} {totals['duckdb'][0]:7d} {rate['duckdb']:9.1f} {rate['postgres']:10.1f} "
          f"{rate['postgres'] / rate['duckdb']:6.2f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: harness process {peak:.0f} MB, "
          f"PostgreSQL server {server_rss() / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
