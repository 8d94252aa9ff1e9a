"""PostgreSQL as a sandbox for untrusted pipelines: a real server per grading process
(`engine.pgserver`), a database and a role per replay.

- `lexer`: a script split into statements; the kinds refused by their words (a friendly early
  message, not a wall).
- `walls`: the privileges and ownership that are the walls, and the pinned settings of every
  connection.
- `watchdog`: the time and disk limits of a statement, kept from outside its session.
- `errors`: PostgreSQL's errors as a replay's phase and a stable message.
- `types`: Arrow types in, DuckDB types and values out.
- `database`: one replay's database: load a batch, run, read back within bounds.
"""

from __future__ import annotations

# First: a missing `postgres` extra is one line here, before any module below imports it.
from arrivalbench.core.engine import pgserver
from arrivalbench.core.engine.postgres.database import Database, database
from arrivalbench.core.engine.postgres.lexer import Statement, Statements, split
from arrivalbench.core.engine.postgres.walls import address_space, size_bytes

NAME = "postgres"

__all__ = ["NAME", "Database", "Statement", "Statements", "address_space", "database",
           "size_bytes", "split", "version"]


def version() -> str:
    return pgserver.version()
