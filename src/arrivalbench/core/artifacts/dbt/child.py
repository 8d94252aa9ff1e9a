"""The contained dbt process: parses a project once and runs dbt invocations for its parent.

Started by `process.Child` with an allowlisted environment, memory and file-size limits and a
scratch folder as its home and temporary directory. It holds no database: each statement dbt
sends goes to the parent as text and comes back as rows, so that what runs the project's Jinja
never holds a delivery, a connection or the grader's environment. It answers in JSON only:
the parent never unpickles what a process running artifact code wrote.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import signal
import sys
from multiprocessing.connection import Connection
from typing import Any

PARSE = "parse"
INVOKE = "invoke"


class _Proxy:
    """What dbt-duckdb calls a cursor: its statements run in the parent's replay database."""

    def __init__(self, conn: Connection, ident: int) -> None:
        self._conn, self._id = conn, ident
        self.description: list[tuple[Any, ...]] | None = None
        self._rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str, bindings: Any = None) -> _Proxy:
        params = list(bindings) if bindings else None
        try:
            request = json.dumps(["execute", self._id, sql, params])
        except (TypeError, ValueError):
            raise RuntimeError("arrivalbench passes only text, numbers and booleans as "
                               "statement parameters") from None
        self._conn.send_bytes(request.encode())
        kind, *rest = self._conn.recv()
        if kind == "error":
            raise RuntimeError(rest[0])
        names, rows = rest
        self.description = None if names is None else [(n, None, None, None, None, None, None)
                                                       for n in names]
        self._rows = list(rows)
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows, []
        return rows

    def fetchmany(self, size: int = 1) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows[:size], self._rows[size:]
        return rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None

    def rollback(self) -> None:
        self._conn.send_bytes(json.dumps(["rollback", self._id]).encode())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send_bytes(json.dumps(["close", self._id]).encode())

    def interrupt(self) -> None:
        pass

    def cursor(self) -> _Proxy:
        return self


def _connected(conn: Connection) -> None:
    """dbt-duckdb's environment, with every connection a proxy to the parent."""
    from dbt.adapters.duckdb import connections, environments
    from dbt.adapters.duckdb.environments.local import LocalEnvironment

    serial = [0]

    class ChildEnvironment(LocalEnvironment):
        def handle(self) -> _Proxy:
            serial[0] += 1
            return _Proxy(conn, serial[0])

        def submit_python_job(self, handle: Any, parsed_model: dict[str, Any],
                              compiled_code: str) -> Any:
            raise RuntimeError("Python models are not run by arrivalbench")

        @classmethod
        def cancel(cls, connection: Any) -> None:
            pass

        def close(self) -> None:
            pass

    # A microbatch model's batches in sequence: dbt would hand them to its thread pool, whose
    # one thread (the profile's) is the one waiting for them, and every statement goes through
    # one pipe to the parent anyway. The batches and their statements are the same.
    from dbt.task.run import MicrobatchBatchRunner

    MicrobatchBatchRunner.should_run_in_parallel = lambda self: False  # type: ignore[method-assign]

    manager = connections.DuckDBConnectionManager
    with manager._LOCK:
        manager._ENV = None
    environments.create = ChildEnvironment  # type: ignore[assignment]


def _message(text: str) -> str:
    return " ".join(text.split())


def _failure(result: Any) -> str:
    if result.exception is not None:
        return _message(str(result.exception))
    for node in getattr(result.result, "results", None) or ():
        if str(node.status) in ("error", "fail"):
            return _message(node.message or f"{node.node.name} failed")
    return "dbt run failed"


def _summary(manifest: Any) -> dict[str, Any]:
    """What the parent checks of a parsed project."""
    nodes = {uid: {"name": n.name, "resource_type": str(n.resource_type),
                   "language": str(getattr(n, "language", "sql")),
                   "depends_on": list(getattr(n.depends_on, "nodes", None) or ()),
                   "database": n.database, "schema": n.schema,
                   "alias": getattr(n, "alias", None), **_declared(n)}
             for uid, n in manifest.nodes.items()}
    sources = [{"name": s.name, "database": s.database, "schema": s.schema,
                "identifier": s.identifier, "unique_id": s.unique_id,
                "meta": _plain({**(s.source_meta or {}), **(s.meta or {}),
                                **(getattr(s.config, "meta", None) or {})}),
                "event_time": _plain(getattr(s.config, "event_time", None)),
                "loaded_at_field": _plain(getattr(s, "loaded_at_field", None))}
               for s in manifest.sources.values()]
    return {"nodes": nodes, "sources": sources}


def _plain(value: Any) -> Any:
    """What a project declared, as JSON: the parent reads it as data and checks every name."""
    return json.loads(json.dumps(value, default=str))


def _declared(node: Any) -> dict[str, Any]:
    """What the own-data grade reads of a node: a model's incremental settings and `meta`, a
    test's kind and column (`unique` on a source column makes that column a record key)."""
    config = getattr(node, "config", None)
    test = getattr(node, "test_metadata", None)
    return {"materialized": _plain(getattr(config, "materialized", None)),
            "unique_key": _plain(getattr(config, "unique_key", None)),
            "incremental_strategy": _plain(getattr(config, "incremental_strategy", None)),
            "lookback": _plain(getattr(config, "lookback", None)),
            "batch_size": _plain(getattr(config, "batch_size", None)),
            "event_time": _plain(getattr(config, "event_time", None)),
            "meta": _plain({**(getattr(node, "meta", None) or {}),
                            **(getattr(config, "meta", None) or {})}),
            "test": None if test is None else _plain(test.name),
            "test_column": None if test is None else _plain(
                (test.kwargs or {}).get("column_name") or getattr(node, "column_name", None))}


def _at(now: str | None) -> contextlib.AbstractContextManager[object]:
    """The wall clock dbt reads during one invocation: the batch's clock, standing still, so
    that `run_started_at`, microbatch's current time and anything a project reads of the time
    are the same on any day the grade runs."""
    if now is None:
        return contextlib.nullcontext()
    import time_machine

    return time_machine.travel(dt.datetime.fromisoformat(now).replace(tzinfo=dt.UTC),
                               tick=False)


def main() -> None:
    from arrivalbench.core.containment import limit_self

    fd, address_space, file_size = (int(v) for v in sys.argv[1:4])
    limit_self(address_space, file_size)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to act on
    conn = Connection(fd)
    from dbt.cli.main import dbtRunner
    from dbt_common.tests import enable_test_caching

    enable_test_caching()
    _connected(conn)
    manifest: Any = None
    while True:
        try:
            kind, args, now = conn.recv()
        except (EOFError, OSError):
            return
        try:
            if kind == PARSE:
                result = dbtRunner().invoke(["parse", *args])
                if not result.success or result.result is None:
                    reply = {"ok": False, "message": _message(str(result.exception or
                                                                  "parse failed"))}
                else:
                    manifest = result.result
                    reply = {"ok": True, **_summary(manifest)}
            else:
                with _at(now):
                    result = dbtRunner(manifest=manifest).invoke(args)
                compiled = []
                for node_result in getattr(result.result, "results", None) or ():
                    node = getattr(node_result, "node", None)
                    if node is not None and str(node.resource_type) == "model":
                        compiled.append([node.original_file_path, node.compiled_code or "",
                                         node.schema, node.alias or node.name])
                # `dbt ls` answers with what it lists (with --output name, the names).
                listed = [str(item) for item in result.result] \
                    if isinstance(result.result, list) else []
                reply = {"ok": bool(result.success),
                         "message": "" if result.success else _failure(result),
                         "compiled": compiled, "listed": listed}
        except MemoryError:
            reply = {"ok": False, "message": "dbt ran out of the memory it is allowed",
                     "memory": True}
        except Exception as exc:  # dbt's own failure on this project: the parent reports it
            reply = {"ok": False, "message": _message(f"{type(exc).__name__}: {exc}")}
        conn.send_bytes(json.dumps(["done", reply], default=str).encode())


if __name__ == "__main__":
    main()
