"""The template pipeline: a uniform incremental pipeline generated from a task's spec.

Append the delivered records of each source to a history table deduplicated on the record
key, then rebuild the target from the histories with the task's own reference query. It is
correct by construction, which is what the `template` arm and a task folder `init` writes
need of it.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import TaskError
from arrivalbench.sql import dialects

TEMPLATE_VERSION = 1


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def history_tables(spec: TaskSpec) -> dict[str, str]:
    """Source name -> the name of its history table, clear of every other name in the task."""
    taken = {*(t.name.lower() for t in spec.targets), *(s.name.lower() for s in spec.sources)}
    names: dict[str, str] = {}
    for source in spec.sources:
        name = f"{source.name}_history"
        while name.lower() in taken:
            name = f"_{name}"
        taken.add(name.lower())
        names[source.name] = name
    return names


def template_sql(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> str:
    """The template pipeline of `spec` for `engine`.

    Per source: `CREATE TABLE IF NOT EXISTS main.<source>_history` with the declared columns,
    then an `INSERT` of the delivered records whose record key is not in the history yet, one
    per record key (columns named, never `*`, so a new column in `incoming` is ignored). Then
    `CREATE OR REPLACE TABLE main.<target> AS <reference.sql>` with every reference to a source
    bound to its history table. Each statement is idempotent, so a re-run after a crash at any
    statement converges; the result is a pure function of the set of records delivered.

    On PostgreSQL the same pipeline in its dialect: `SELECT DISTINCT ON` for the one row per
    record key, and the target rebuilt by `DROP TABLE IF EXISTS` then `CREATE TABLE ... AS` in
    one transaction, with the reference query translated by sqlglot.
    """
    if engine != DEFAULT_ENGINE:
        return _template_other(spec, engine)
    history = history_tables(spec)
    parts = [f"-- ArrivalBench template pipeline for {spec.id} (generated, version "
             f"{TEMPLATE_VERSION}): every run appends\n-- the delivered records of each source to "
             "a history table, deduplicated on the record key,\n-- then rebuilds the target "
             "from the history with the task's reference query.\n"]
    for source in spec.sources:
        table = f"main.{_quote(history[source.name])}"
        names = [_quote(c.name) for c in source.columns]
        columns = ",\n    ".join(f"{_quote(c.name)} {c.type}" for c in source.columns)
        keys = [_quote(k) for k in source.record_key]
        match = " AND ".join(f"h.{k} IS NOT DISTINCT FROM d.{k}" for k in keys)
        parts.append(f"CREATE TABLE IF NOT EXISTS {table} (\n    {columns}\n);\n")
        parts.append(
            f"INSERT INTO {table} ({', '.join(names)})\n"
            f"SELECT {', '.join(f'd.{n}' for n in names)}\n"
            f"FROM incoming.{_quote(source.name)} AS d\n"
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS h WHERE {match})\n"
            f"QUALIFY row_number() OVER (PARTITION BY {', '.join(f'd.{k}' for k in keys)}) = 1;\n")
    bound = {name: f"main.{_quote(table)}" for name, table in history.items()}
    for number, target in enumerate(spec.targets):
        query = bind_sources(spec, bound, number)
        parts.append(f"CREATE OR REPLACE TABLE main.{_quote(target.name)} AS\n{query}\n;\n")
    return "\n".join(parts)


def _template_other(spec: TaskSpec, engine: EngineName) -> str:
    history = history_tables(spec)
    parts = [f"-- ArrivalBench template pipeline for {spec.id} on {engine} (generated, version "
             f"{TEMPLATE_VERSION}): every run appends\n-- the delivered records of each source "
             "to a history table, deduplicated on the record key,\n-- then rebuilds the target "
             "from the history with the task's reference query.\n"]
    for source in spec.sources:
        table = f"main.{_quote(history[source.name])}"
        names = [_quote(c.name) for c in source.columns]
        columns = ",\n    ".join(f"{_quote(c.name)} {dialects.type_name(c.type, engine)}"
                                  for c in source.columns)
        keys = [_quote(k) for k in source.record_key]
        match = " AND ".join(f"h.{k} IS NOT DISTINCT FROM d.{k}" for k in keys)
        parts.append(f"CREATE TABLE IF NOT EXISTS {table} (\n    {columns}\n);\n")
        parts.append(
            f"INSERT INTO {table} ({', '.join(names)})\n"
            f"SELECT DISTINCT ON ({', '.join(f'd.{k}' for k in keys)}) "
            f"{', '.join(f'd.{n}' for n in names)}\n"
            f"FROM incoming.{_quote(source.name)} AS d\n"
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} AS h WHERE {match});\n")
    bound = {name: f"main.{_quote(table)}" for name, table in history.items()}
    rebuilt = []  # every target in one transaction: they stay consistent with each other
    for number, spec_target in enumerate(spec.targets):
        query = dialects.transpile(bind_sources(spec, bound, number), engine,
                                   str(spec.path / spec_target.reference_file))
        target = f"main.{_quote(spec_target.name)}"
        rebuilt.append(f"DROP TABLE IF EXISTS {target};\nCREATE TABLE {target} AS\n"
                       f"{query}\n;\n")
    parts.append(f"BEGIN;\n{''.join(rebuilt)}COMMIT;\n")
    return "\n".join(parts)


def bind_sources(spec: TaskSpec, tables: dict[str, str], target: int = 0) -> str:
    """The `target`-th target's reference query with every reference to a source (bare, or
    `main.`-qualified, matched case-insensitively, not shadowed by a CTE of the same name)
    replaced by `tables[source]`.

    sqlglot finds the references; the replacement is made in the original text at their exact
    positions, so everything else of the query keeps its author's spelling. A reference without
    an alias gets the source's name as alias, so `orders.amount` still resolves. Trailing
    semicolons and comments after the query are dropped."""
    where = spec.path / spec.targets[target].reference_file
    text = spec.targets[target].reference_sql
    try:
        statements = [s for s in sqlglot.parse(text, dialect="duckdb")
                      if s is not None and not isinstance(s, exp.Semicolon)]
        tokens = sqlglot.tokenize(text, read="duckdb")
    except SqlglotError as exc:
        raise TaskError(f"{where}: cannot be parsed to build the template arm "
                        f"({str(exc).splitlines()[0]})") from None
    if len(statements) != 1:
        raise TaskError(f"{where}: must hold exactly one query, found {len(statements)}")
    tree = statements[0]
    by_name = {name.lower(): table for name, table in tables.items()}
    ctes = {cte.alias.lower() for cte in tree.find_all(exp.CTE)}
    edits: list[tuple[int, int, str]] = []
    for node in tree.find_all(exp.Table):
        name = node.name.lower()
        if name not in by_name or node.catalog or (node.db and node.db.lower() != "main"):
            continue
        if not node.db and name in ctes:
            continue
        ident = node.this
        first = node.args["db"] if node.db else ident
        if not isinstance(ident, exp.Identifier) or "start" not in ident.meta or \
                "start" not in first.meta:
            raise TaskError(f"{where}: cannot locate the reference to {node.name!r} to build "
                            "the template arm")
        replacement = by_name[name]
        if not node.alias:
            replacement += f" AS {_quote(node.name)}"
        edits.append((first.meta["start"], ident.meta["end"] + 1, replacement))
    if not edits:
        raise TaskError(f"{where}: reads none of the sources "
                        f"({', '.join(s.name for s in spec.sources)})")
    last = max((t.end for t in tokens if t.token_type != sqlglot.TokenType.SEMICOLON),
               default=len(text) - 1)
    out = text[:last + 1]
    for start, end, replacement in sorted(edits, reverse=True):
        out = out[:start] + replacement + out[end:]
    return out.strip()
