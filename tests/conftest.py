"""Shared fixtures: a tiny task folder written into tmp_path, and helpers to break it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from arrivalbench.core.artifacts import Artifact
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, Limits
from arrivalbench.core.grading import GradeOptions, Point, grade
from arrivalbench.core.replay import Outcome
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.verdict import Verdict

# A small aggregate task: revenue per shop. Twelve orders over three days, two of them staff
# meals without an amount, two with identical payloads under different ids.
TINY_YAML: dict[str, Any] = {
    "id": "tiny",
    "title": "Revenue per shop",
    "mode": "aggregate",
    "difficulty": "easy",
    "ticket": "One row per shop with its revenue and number of orders.\n",
    "sources": {
        "orders": {
            "columns": {"order_id": "BIGINT", "shop": "VARCHAR", "amount": "DECIMAL(10,2)",
                        "placed_at": "TIMESTAMP"},
            "record_key": ["order_id"],
            "event_time": "placed_at",
        },
    },
    "target": {
        "name": "shop_revenue",
        "columns": {"shop": "VARCHAR", "revenue": "DECIMAL(12,2)", "orders": "BIGINT"},
        "key": ["shop"],
    },
    "hazards": ["late_arrival", "duplicates", "crash_retry"],
    "negatives": {"no_dedup": {"fails": ["duplicates", "crash_retry"]}},
}

TINY_ROWS: list[dict[str, Any]] = [
    {"order_id": 1, "shop": "a", "amount": "10.00", "placed_at": "2024-01-01 09:00:00"},
    {"order_id": 2, "shop": "b", "amount": "5.50", "placed_at": "2024-01-01 09:00:00"},
    {"order_id": 3, "shop": "a", "amount": None, "placed_at": "2024-01-01 10:15:00"},
    {"order_id": 4, "shop": "c", "amount": "7.25", "placed_at": "2024-01-01 11:00:00"},
    {"order_id": 5, "shop": "b", "amount": "5.50", "placed_at": "2024-01-02 08:00:00"},
    {"order_id": 6, "shop": "b", "amount": "5.50", "placed_at": "2024-01-02 08:00:00"},
    {"order_id": 7, "shop": "a", "amount": "1.99", "placed_at": "2024-01-02 12:30:00"},
    {"order_id": 8, "shop": "d", "amount": None, "placed_at": "2024-01-02 13:00:00"},
    {"order_id": 9, "shop": "c", "amount": "3.00", "placed_at": "2024-01-03 09:45:00"},
    {"order_id": 10, "shop": "a", "amount": "12.00", "placed_at": "2024-01-03 10:00:00"},
    {"order_id": 11, "shop": "e", "amount": "0.01", "placed_at": "2024-01-03 18:00:00"},
    {"order_id": 12, "shop": "c", "amount": "100.00", "placed_at": "2024-01-03 23:59:59"},
]

TINY_REFERENCE = """\
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM orders GROUP BY shop
"""

# Correct: a history deduplicated on the record key, the target recomputed from it.
TINY_GOLD = """\
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
"""

# Appends every delivery: right once, wrong when a record comes twice.
TINY_NO_DEDUP = """\
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT * FROM incoming.orders;
CREATE OR REPLACE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
"""


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows),
                    encoding="utf-8")


def write_task(root: Path, name: str = "tiny", spec: dict[str, Any] | None = None,
               rows: list[dict[str, Any]] | None = None, reference: str = TINY_REFERENCE,
               gold: str = TINY_GOLD, negatives: dict[str, str] | None = None) -> Path:
    """A task folder `root/name`, by default the tiny task; every part can be replaced."""
    folder = root / name
    (folder / "negatives").mkdir(parents=True, exist_ok=True)
    document = json.loads(json.dumps(TINY_YAML if spec is None else spec))
    document.setdefault("id", name)
    (folder / "task.yaml").write_text(yaml.safe_dump(document, sort_keys=False),
                                      encoding="utf-8")
    (folder / "reference.sql").write_text(reference, encoding="utf-8")
    (folder / "gold.sql").write_text(gold, encoding="utf-8")
    for negative, sql in (negatives if negatives is not None
                          else {"no_dedup": TINY_NO_DEDUP}).items():
        (folder / "negatives" / f"{negative}.sql").write_text(sql, encoding="utf-8")
    write_jsonl(folder / "log" / "orders.jsonl", TINY_ROWS if rows is None else rows)
    return folder


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cache folder of the module's own: `grade --data` derives each task once in it."""
    root = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(root))
        yield root


@pytest.fixture
def dbt_children(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The contained dbt children started from now on, none loaded or kept before."""
    from arrivalbench.core.artifacts import dbt as dbt_loaded
    from arrivalbench.core.artifacts.dbt import process

    monkeypatch.setattr(dbt_loaded, "_loaded", {})  # not a project an earlier test loaded
    monkeypatch.setattr(dbt_loaded, "_kept", {})  # nor a child an earlier test parsed
    started: list[object] = []
    real = process.Child.__init__

    def counted(self: process.Child, *args: Any, **kwargs: Any) -> None:
        started.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(process.Child, "__init__", counted)
    return started


@pytest.fixture
def tiny_dir(tmp_path: Path) -> Path:
    return write_task(tmp_path)


@pytest.fixture
def tiny(tiny_dir: Path) -> TaskSpec:
    return load_spec(tiny_dir)


@pytest.fixture
def tiny_yaml() -> dict[str, Any]:
    """A deep copy of the tiny task's task.yaml, to break one field at a time."""
    copy: dict[str, Any] = json.loads(json.dumps(TINY_YAML))
    return copy


def grade_each(spec: TaskSpec, artifact: Artifact | str, points: Iterable[Point],
               limits: Limits = Limits(), *, every_batch: bool = False, measure: bool = False,
               engine_name: EngineName = DEFAULT_ENGINE) -> Iterator[tuple[Verdict, Outcome]]:
    """`core.grading.grade` with its options spelt out, yielding (verdict, outcome)."""
    options = GradeOptions(engine_name, limits, every_batch=every_batch, measure=measure)
    for graded in grade(spec, artifact, points, options=options):
        yield graded.verdict, graded.outcome


def grade1(spec: TaskSpec, artifact: Artifact | str, point: Point, limits: Limits = Limits(), *,
           every_batch: bool = False, measure: bool = False,
           engine_name: EngineName = DEFAULT_ENGINE) -> tuple[Verdict, Outcome]:
    """One point of `grade_each`."""
    [found] = grade_each(spec, artifact, [point], limits, every_batch=every_batch,
                         measure=measure, engine_name=engine_name)
    return found


Grader = Callable[..., Verdict]


@pytest.fixture
def grade_one() -> Grader:
    """grade_one(spec, script, kind, seed=0, limits=Limits()) -> Verdict."""

    def run(spec: TaskSpec, script: str, kind: str, seed: int = 0,
            limits: Limits = Limits()) -> Verdict:
        return grade1(spec, script, Point(kind, seed), limits)[0]

    return run


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`arrivalbench ARGS` in this process: (exit status, stdout, stderr)."""
    from arrivalbench.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
