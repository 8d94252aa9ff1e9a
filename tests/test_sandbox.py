"""The sandbox: hostile pipelines end in ERROR, the harness and the host do not."""

from __future__ import annotations

import multiprocessing
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from arrivalbench.core.engine import Limits, normalize_message
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import Point
from arrivalbench.core.task import TaskSpec
from conftest import TINY_GOLD, Grader, grade1

# The statement before the hostile one, so that its index (1) is checked too.
PRELUDE = "CREATE TABLE IF NOT EXISTS scratch (a INTEGER);\n"

HOSTILE = {
    "read_csv": "CREATE TABLE shop_revenue AS SELECT * FROM read_csv('/etc/passwd')",
    "read_text": "CREATE TABLE shop_revenue AS SELECT content FROM read_text('/etc/passwd')",
    "glob": "SELECT * FROM glob('/etc/*')",
    "remote parquet": "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "copy from": "COPY scratch FROM '/etc/passwd'",
    "install": "INSTALL httpfs",
    "force install": "FORCE INSTALL httpfs",
    "load": "LOAD httpfs",
    "update extensions": "UPDATE EXTENSIONS",
    "set external access": "SET enable_external_access = true",
    "set threads": "SET threads = 8",
    "set global": "SET GLOBAL memory_limit = '100GB'",
    "reset memory limit": "RESET memory_limit",
    "pragma threads": "PRAGMA threads = 4",
    "pragma profiling": "PRAGMA enable_profiling",
    "call enable_logging": "CALL enable_logging()",
    "use": "USE system",
    "detach": "DETACH DATABASE memory",
    "create secret": "CREATE SECRET (TYPE s3, KEY_ID 'k', SECRET 's')",
}


def assert_normalized(detail: dict[str, object]) -> None:
    assert set(detail) == {"batch", "statement", "phase", "message"}
    message = str(detail["message"])
    assert "\n" not in message and message
    assert not re.search(r"0x[0-9a-fA-F]{2,}", message), message
    assert not re.search(r"\d+(\.\d+)? ?(ms|s|seconds)\b", message), message
    assert "/tmp/" not in message and "pytest-of" not in message, message


def assert_harness_alive(spec: TaskSpec, grade_one: Grader, limits: Limits = Limits()) -> None:
    assert grade_one(spec, TINY_GOLD, "in_order", 0, limits).status == "PASS"
    with engine.database(limits) as db:  # and the sandbox is as configured
        settings = db.query("SELECT current_setting('threads'), "
                            "current_setting('enable_external_access'), "
                            "current_setting('lock_configuration')", "run")
    assert settings.rows == ((1, False, True),)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_statement_is_a_sandbox_error(tiny: TaskSpec, grade_one: Grader,
                                              case: str) -> None:
    verdict = grade_one(tiny, PRELUDE + HOSTILE[case] + ";\n" + TINY_GOLD, "in_order")
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "sandbox", verdict.detail
    assert verdict.detail["batch"] == 0 and verdict.detail["statement"] == 1
    assert_normalized(verdict.detail)
    assert_harness_alive(tiny, grade_one)


@pytest.mark.parametrize("template", [
    "COPY (SELECT 42 AS a) TO '{path}'",
    "COPY (SELECT 42 AS a) TO '{path}' (FORMAT parquet)",
    "EXPORT DATABASE '{path}'",
    "ATTACH '{path}' AS elsewhere",
    "ATTACH '{path}' AS elsewhere (TYPE sqlite)",
    "CREATE TABLE shop_revenue AS SELECT 1 AS a; COPY shop_revenue TO '{path}'",
])
def test_nothing_is_written_to_the_host(tiny: TaskSpec, grade_one: Grader, tmp_path: Path,
                                        template: str) -> None:
    path = tmp_path / "out" / "leak.db"
    path.parent.mkdir()
    verdict = grade_one(tiny, template.format(path=path) + ";\n" + TINY_GOLD, "in_order")
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "sandbox"
    assert list(path.parent.iterdir()) == []
    assert_normalized(verdict.detail)
    assert_harness_alive(tiny, grade_one)


def test_a_query_that_never_ends_times_out(tiny: TaskSpec, grade_one: Grader) -> None:
    limits = Limits(statement_seconds=0.5)
    start = time.monotonic()
    verdict = grade_one(tiny, TINY_GOLD + "\nSELECT count(*) FROM range(1000000000000);",
                        "in_order", 0, limits)
    elapsed = time.monotonic() - start
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "timeout"
    assert verdict.detail["batch"] == 0 and verdict.detail["statement"] == 3
    assert 0.5 <= elapsed < 10  # bounded: the query alone would run for hours
    assert_normalized(verdict.detail)
    assert_harness_alive(tiny, grade_one, limits)


def _phase_in_forked_child(spec: TaskSpec, script: str, limits: Limits) -> str:
    verdict = grade1(spec, script, Point("snapshot", 0), limits)[0]
    return str(verdict.detail.get("phase"))


def test_a_forked_worker_has_its_own_watchdog(tiny: TaskSpec, grade_one: Grader) -> None:
    """A worker forked after its parent ran a replay still interrupts a statement in time."""
    limits = Limits(statement_seconds=0.5)
    grade_one(tiny, TINY_GOLD, "snapshot", 0, limits)  # the parent's watchdog is running
    endless = TINY_GOLD + "\nSELECT count(*) FROM range(1000000000000);"
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        start = time.monotonic()
        phase = pool.submit(_phase_in_forked_child, tiny, endless, limits).result(timeout=60)
    assert phase == "timeout"
    assert time.monotonic() - start < 10


def test_a_query_that_allocates_without_bound_hits_the_memory_limit(tiny: TaskSpec,
                                                                    grade_one: Grader) -> None:
    limits = Limits(statement_seconds=5, memory="64MB")
    verdict = grade_one(tiny, "CREATE TABLE shop_revenue AS "
                              "SELECT list(i) AS l FROM range(200000000) t(i);", "snapshot", 0,
                        limits)
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "memory", verdict.detail
    assert verdict.detail["message"].startswith("Out of Memory Error")
    assert_normalized(verdict.detail)
    assert_harness_alive(tiny, grade_one, limits)


def test_a_script_that_does_not_parse(tiny: TaskSpec, grade_one: Grader) -> None:
    verdict = grade_one(tiny, TINY_GOLD + "\nSELEC oops FROM;", "in_order")
    assert verdict.status == "ERROR"
    assert verdict.detail == {"phase": "run", "batch": 0, "statement": None,
                              "message": 'Parser Error: syntax error at or near "SELEC"'}


def test_a_run_error_names_its_batch_and_statement(tiny: TaskSpec, grade_one: Grader) -> None:
    # Fails on the first batch in which `seen` reaches 6 orders, whichever that is.
    script = TINY_GOLD + "\nSELECT CASE WHEN count(*) >= 6 THEN error('too many') END FROM seen;"
    verdict = grade_one(tiny, script, "in_order")
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "run" and verdict.detail["statement"] == 3
    assert isinstance(verdict.detail["batch"], int) and verdict.detail["batch"] > 0
    assert verdict.detail["message"] == "Invalid Input Error: too many"


def test_a_missing_target_is_a_read_target_error(tiny: TaskSpec, grade_one: Grader) -> None:
    verdict = grade_one(tiny, "CREATE TABLE IF NOT EXISTS wrong_name (a INTEGER);", "in_order")
    assert verdict.status == "ERROR"
    assert verdict.detail == {"phase": "read-target", "batch": None, "statement": None,
                              "message": "main.shop_revenue does not exist after the last run"}


def test_objects_do_not_survive_into_the_next_replay(tiny: TaskSpec, grade_one: Grader) -> None:
    leave = (TINY_GOLD + "\nCREATE SCHEMA IF NOT EXISTS kept; "
             "CREATE TABLE IF NOT EXISTS kept.t AS SELECT 1 AS a; "
             "CREATE OR REPLACE MACRO kept_macro() AS 1; "
             "CREATE SEQUENCE IF NOT EXISTS kept_seq; "
             "CREATE TABLE IF NOT EXISTS incoming.kept AS SELECT 1 AS a;")
    assert grade_one(tiny, leave, "in_order").status == "PASS"
    for probe in ["SELECT * FROM kept.t", "SELECT kept_macro()", "SELECT nextval('kept_seq')",
                  "SELECT * FROM incoming.kept", "SELECT * FROM seen"]:
        verdict = grade_one(tiny, f"{probe};\n{TINY_GOLD}", "snapshot")
        assert verdict.status == "ERROR", probe
        assert verdict.detail["phase"] == "run" and "does not exist" in verdict.detail["message"]


def test_the_pipeline_may_disturb_incoming(tiny: TaskSpec, grade_one: Grader) -> None:
    """The runner rebuilds `incoming` before every run, whatever the last run did to it."""
    for vandal in ["DROP SCHEMA incoming CASCADE;",
                   "DROP TABLE incoming.orders; CREATE VIEW incoming.orders AS SELECT 1 AS x;",
                   "DELETE FROM incoming.orders;",
                   "ALTER TABLE incoming.orders ADD COLUMN junk INTEGER;"]:
        verdict = grade_one(tiny, TINY_GOLD + vandal, "in_order")
        assert verdict.status == "PASS", (vandal, verdict.detail)


def test_messages_are_normalized() -> None:
    raw = ("Out of Memory Error: failed to allocate data of size 16.0 MiB (64.0 MiB/64.0 MiB "
           "used) at 0x7ffd5e2a10 after 1.25 s reading \"/tmp/pytest-of-root/x/y.csv\"\n"
           "second line with details")
    assert normalize_message(raw) == (
        "Out of Memory Error: failed to allocate data of size <size> (<size>/<size> used) at "
        "0x? after <time> reading \"<path>\"")
    assert normalize_message("") == "error"


def test_an_instance_that_fails_is_replaced(tiny: TaskSpec, grade_one: Grader,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipeline that invalidates the engine instance costs its own replay, not the next."""
    grade_one(tiny, TINY_GOLD, "snapshot")
    broken = engine._instances[(os.getpid(), Limits())]

    def fail() -> None:
        raise engine.duckdb.FatalException("database has been invalidated")

    monkeypatch.setattr(broken, "rotate", fail)
    grade_one(tiny, TINY_GOLD, "snapshot")
    assert broken not in engine._instances.values()
    assert_harness_alive(tiny, grade_one)


def test_a_target_past_the_row_limit_is_a_read_target_error(tiny: TaskSpec,
                                                            grade_one: Grader) -> None:
    limits = Limits(max_target_rows=5)
    verdict = grade_one(tiny, "CREATE OR REPLACE TABLE shop_revenue AS "
                              "SELECT i AS shop FROM range(6) t(i);", "snapshot", 0, limits)
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "read-target"
    assert verdict.detail["message"] == "the result has more than 5 rows, the limit"
