"""The walls of a replay on PostgreSQL, made of privileges and ownership.

A pipeline runs as the role `replay`, made afresh for every replay: no superuser, no CREATEDB,
CREATEROLE, REPLICATION or BYPASSRLS, a member of no role (so of none of the predefined roles
that read or write server files or run programs), allowed to connect to the database `replay`
only (pg_hba.conf). On that database it has CONNECT and TEMPORARY and nothing else: without
CREATE on the database it can make no schema, no publication and no extension, trusted or not.
It owns the schema `main` and may read the schema `incoming`, which the harness owns; every
other object it can name belongs to the superuser.

What a role may still do to itself is undone by the owner: a role can give itself session
defaults (`ALTER ROLE replay [IN DATABASE d] SET ...`), which PostgreSQL has no privilege to
forbid. After every run the harness reads `pg_db_role_setting` as the superuser; a default
left there is removed and the run is an ERROR of phase `sandbox`. The limits of a session
(`work_mem`, `temp_file_limit`) are defaults of the database, which the role does not own and
cannot alter; `temp_file_limit` is reserved to superusers besides.

The harness's own queries never resolve a name through anything the pipeline made: its catalog
lookups run as the superuser on connections whose search path is `pg_catalog` alone, given at
connection start (a client's startup options outrank role and database defaults), with every
function call qualified. Its reads of what the pipeline made run as a role of the harness's,
`arrivalbench_reader`: neither the superuser (a function in a view runs as whoever reads it)
nor the pipeline's role (whose defaults and sessions the pipeline controls). The reader may
only SELECT what is in `main` and `incoming`, granted by the owner just before each read; it
reads in read-only transactions, on a connection of its own that no pipeline session shares,
its session discarded (`DISCARD ALL`) before every read, and every name the harness adds to a
read is qualified.
"""

from __future__ import annotations

import re

from psycopg import sql as pgsql

from arrivalbench.core.engine import Limits, pgserver
from arrivalbench.core.engine.postgres.errors import READ_LIMIT_STATE

REPLAY = "replay"  # the database and the role: the same names every replay, for stable messages
READER = pgserver.READER  # the harness's role for reading what a pipeline made
HARNESS_SCHEMA = "arrivalbench"  # the superuser's: the read guard lives there

# Startup options of every connection: the client's settings outrank role and database
# defaults, so a default a pipeline managed to leave cannot reach them.
_COMMON = "-c TimeZone=UTC -c DateStyle=ISO,YMD -c IntervalStyle=postgres " \
          "-c extra_float_digits=1 -c bytea_output=hex -c client_encoding=UTF8"
PIPELINE_OPTIONS = f"-c search_path=main {_COMMON}"
# The harness's own sessions (the superuser's): only the catalog is on the path.
HARNESS_OPTIONS = f"-c search_path=pg_catalog {_COMMON}"
# The harness's reads of what the pipeline made, as its reader role: the pipeline's functions
# in a view resolve their names as in the pipeline's runs, and nothing read may write. Every
# name the harness itself writes into a read is qualified (`bounded`), so nothing in `main`
# can stand in for it.
READER_OPTIONS = f"{PIPELINE_OPTIONS} -c default_transaction_read_only=on"

_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
          "KIB": 1024, "MIB": 1024**2, "GIB": 1024**3, "TIB": 1024**4}


def size_bytes(text: str) -> int:
    """'512MB' (DuckDB's spelling of a size) in bytes."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not found or found.group(2).upper() not in _UNITS:
        raise ValueError(f"not a size: {text!r}")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


# A backend's own mappings (binary, libraries, shared buffers) before it allocates anything.
_BACKEND_BASE = 256 * 1024**2


def address_space(limits: Limits) -> int:
    """The address-space limit of every backend of a server for replays under `limits`."""
    return _BACKEND_BASE + size_bytes(limits.memory)


# The guard of every read: the server stops the read as soon as the rows sent so far hold more
# than the limit in text form, so neither its reply nor the grader ever holds more. The test
# is an integer comparison per row; the function (owned by the superuser, in a schema the role
# may use but not change) runs only to raise, with SQLSTATE READ_LIMIT_STATE.
READ_GUARD = f"""
CREATE SCHEMA IF NOT EXISTS {HARNESS_SCHEMA};
CREATE OR REPLACE FUNCTION {HARNESS_SCHEMA}.past_limit(allowed bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $guard$
BEGIN
    RAISE EXCEPTION 'what is read back holds more than % bytes, the limit', allowed
        USING ERRCODE = '{READ_LIMIT_STATE}';
END $guard$;
"""


def bounded(query: str, limits: Limits) -> str:
    """`query` wrapped so that the server stops it past `limits.max_read_bytes` (counted as the
    text of the rows, running, in the order they come) or `limits.max_target_rows` + 1 rows.
    The guard is the first column. `query` is the harness's own text; every name and operator
    added here is qualified, so the pipeline's objects in `main` cannot stand in for them."""
    allowed = f"{int(limits.max_read_bytes)}::pg_catalog.int8"
    return (f"SELECT CASE WHEN pg_catalog.sum(pg_catalog.octet_length(ROW(__read.*)::"
            f"pg_catalog.text)) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
            f"OPERATOR(pg_catalog.>) {allowed} THEN {HARNESS_SCHEMA}.past_limit({allowed}) END, "
            f"__read.* FROM ({query}) AS __read LIMIT {int(limits.max_target_rows) + 1}")


def prepare_database() -> str:
    """Once per replay database: nobody but its owner may connect or create in it; the
    harness's reader may connect and read, and nothing else (it is a member of no role and owns
    nothing, so it outlives replays)."""
    return (f"REVOKE ALL ON DATABASE {REPLAY} FROM PUBLIC; {READ_GUARD}; "
            f"DO $reader$ BEGIN IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = "
            f"'{READER}') THEN CREATE ROLE {READER} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
            "NOREPLICATION NOBYPASSRLS NOINHERIT; END IF; END $reader$; "
            f"GRANT CONNECT ON DATABASE {REPLAY} TO {READER}; "
            f"GRANT USAGE ON SCHEMA {HARNESS_SCHEMA} TO {READER}")


# Before each read, by the owner: what the reader may read is what exists now.
GRANT_READ = (f"GRANT USAGE ON SCHEMA main, incoming TO {READER}; "
              f"GRANT SELECT ON ALL TABLES IN SCHEMA main, incoming TO {READER}")


def reset_role(role_exists: bool, limits: Limits) -> str:
    """Drop the previous replay's role and all it owned; make the role and schemas afresh, and
    set the session limits as defaults of the database (the role cannot alter them)."""
    work_mem = max(1, size_bytes(limits.memory) // 4 // 1024)  # kB; hash tables may use 2x
    temp = max(1, size_bytes(limits.disk) // 1024)
    drop = ("SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity "
            f"WHERE usename = '{REPLAY}'; "
            f"DROP OWNED BY {REPLAY} CASCADE; DROP ROLE {REPLAY}; ") if role_exists else ""
    return (
        drop
        + "DROP SCHEMA IF EXISTS incoming CASCADE; "
        f"CREATE ROLE {REPLAY} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION "
        "NOBYPASSRLS NOINHERIT; "
        f"ALTER DATABASE {REPLAY} SET search_path = main; "
        f"ALTER DATABASE {REPLAY} SET work_mem = '{work_mem}kB'; "
        f"ALTER DATABASE {REPLAY} SET maintenance_work_mem = '{work_mem}kB'; "
        f"ALTER DATABASE {REPLAY} SET temp_file_limit = '{temp}kB'; "
        # CONNECT and TEMPORARY, not CREATE: no schema, publication or extension.
        f"GRANT CONNECT, TEMPORARY ON DATABASE {REPLAY} TO {REPLAY}; "
        f"CREATE SCHEMA main AUTHORIZATION {REPLAY}; "
        f"CREATE SCHEMA incoming; GRANT USAGE ON SCHEMA incoming TO {REPLAY}; "
        f"GRANT USAGE ON SCHEMA {HARNESS_SCHEMA} TO {REPLAY}")


# The session defaults the role gave itself (it has none of its own: the harness sets its
# limits on the database), with the database each applies in (NULL: every database).
ROLE_DEFAULTS = f"""
SELECT d.datname, s.setconfig FROM pg_catalog.pg_db_role_setting s
LEFT JOIN pg_catalog.pg_database d ON d.oid = s.setdatabase
WHERE s.setrole = '{REPLAY}'::pg_catalog.regrole ORDER BY 1
"""


def reset_role_defaults(database: str | None) -> pgsql.Composed:
    where = pgsql.SQL("") if database is None else \
        pgsql.SQL(" IN DATABASE {}").format(pgsql.Identifier(database))
    return pgsql.SQL("ALTER ROLE {}{} RESET ALL").format(pgsql.Identifier(REPLAY), where)


# Asked on the pipeline's own connection at the end of its run: a LISTEN that outlives the
# statement that made it. (A NOTIFY reaches only listeners, and there are none: a server per
# grading process, every session on it the harness's or the run's own.)
LISTENING = "SELECT pg_catalog.pg_listening_channels()"
