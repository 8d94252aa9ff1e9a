"""SQL text for an engine other than DuckDB, derived from the DuckDB spelling a task declares.

A task declares its types and its reference query in DuckDB's dialect. Where the harness writes
SQL or names types for another engine (the template arm, the prompt's schemas) it translates
them with sqlglot; the translation is a starting point that the engine then runs, never a
verdict of its own.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.errors import TaskError

# sqlglot's dialect of each engine.
DIALECTS: dict[EngineName, str] = {"duckdb": "duckdb", "postgres": "postgres"}


def type_name(declared: str, engine: EngineName) -> str:
    """A DuckDB type (as task.yaml declares it) spelt for `engine`; DuckDB's own unchanged."""
    if engine == DEFAULT_ENGINE:
        return declared
    return exp.DataType.build(declared, dialect="duckdb").sql(dialect=DIALECTS[engine])


def transpile(sql: str, engine: EngineName, where: str) -> str:
    """One DuckDB statement as `engine` spells it; a TaskError naming `where` when sqlglot
    cannot translate it."""
    if engine == DEFAULT_ENGINE:
        return sql
    try:
        out = sqlglot.transpile(sql, read="duckdb", write=DIALECTS[engine], pretty=True,
                                unsupported_level=sqlglot.ErrorLevel.RAISE)
    except SqlglotError as exc:
        raise TaskError(f"{where}: cannot be translated to {engine} "
                        f"({str(exc).splitlines()[0]})") from None
    return ";\n".join(out)
