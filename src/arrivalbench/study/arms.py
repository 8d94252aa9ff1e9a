"""Built-in arms and folders of submissions: where artifacts come from.

- `gold`: each task's `gold.sql` (on another engine `gold.<engine>.sql`), replicate 0.
- `negatives`: one artifact per negative control, replicate = its position in `task.yaml`;
  provenance names the negative and the hazards it declares to fail on the engine graded.
- `template`: a uniform pipeline generated from the task spec (`template_sql`): append the
  delivered records of each source to a history table deduplicated on the record key, then
  rebuild the target from the histories with the task's own reference query.
- a folder of submissions (the human arm): `<folder>/<task_id>.sql` is replicate 0,
  `<folder>/<task_id>/<n>.sql` is replicate n.

An arm only produces artifacts; `grid` stores and grades them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.core.task import TaskSpec, builtin_ids, pipeline_file, source_of
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import JSON
from arrivalbench.errors import ArrivalBenchError, TaskError
from arrivalbench.sql import dialects
from arrivalbench.sql.idioms import signature
from arrivalbench.words import count

BUILTIN_ARMS = ("gold", "negatives", "template")
TEMPLATE_VERSION = 1


@dataclass(frozen=True)
class Artifact:
    """One script of one arm for one task, with where it came from. `sql` None: the arm has no
    script for the task, and `reason` says why (the cell is stored without a script)."""

    arm: str
    spec: TaskSpec
    replicate: int
    sql: str | None
    provenance: dict[str, JSON] = field(default_factory=dict)
    reason: str | None = None


def _file(spec: TaskSpec, relative: str) -> str:
    return relative if source_of(spec) == spec.id else str(spec.path / relative)


def gold(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    return [Artifact("gold", spec, 0, spec.gold_for(engine),
                     {"file": _file(spec, pipeline_file("gold", engine))})]


def negatives(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    """Provenance keeps the keys it always had on DuckDB, so DuckDB cells stay byte for byte
    what they were; on another engine it also names the engine."""
    extra: dict[str, JSON] = {} if engine == DEFAULT_ENGINE else {"engine": engine}
    return [Artifact("negatives", spec, index, sql,
                     {"file": _file(spec, negative.file_for(engine)),
                      "negative": negative.name, "fails": list(negative.fails_on(engine)),
                      **extra})
            for index, (negative, sql) in enumerate(spec.negatives_for(engine))]


def template(spec: TaskSpec, engine: EngineName = DEFAULT_ENGINE) -> list[Artifact]:
    """The template of `spec`, or, when its reference cannot be bound to history tables (not
    one query, or one sqlglot cannot read or translate), a cell without a script that says
    why: one task without a template does not stop a run of many."""
    provenance: dict[str, JSON] = {"generator": "template", "version": TEMPLATE_VERSION}
    try:
        sql = template_sql(spec, engine)
    except TaskError as exc:
        return [Artifact("template", spec, 0, None, provenance, f"no template: {exc}")]
    return [Artifact("template", spec, 0, sql, provenance)]


def builtin(arm: str, specs: Sequence[TaskSpec], engine: EngineName = DEFAULT_ENGINE
            ) -> list[Artifact]:
    """The artifacts of a built-in arm over `specs` for `engine`, in task order. Every task's
    pipelines for the engine are checked before any artifact is made, so a task without them
    stops the run before anything is written."""
    make = {"gold": gold, "negatives": negatives, "template": template}.get(arm)
    if make is None:
        raise ArrivalBenchError(f"unknown arm {arm!r}; built-in arms: {', '.join(BUILTIN_ARMS)}")
    return [a for spec in specs for a in make(spec, engine)]


# -- the template arm ------------------------------------------------------------------------


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


# -- submissions folders ---------------------------------------------------------------------


@dataclass(frozen=True)
class Submissions:
    arm: str
    artifacts: list[Artifact]
    warnings: list[str]


def submissions(folder: Path, specs: Sequence[TaskSpec], arm_name: str | None = None,
                allow_unmatched: bool = False) -> Submissions:
    """The artifacts of a folder of submissions for the tasks `specs`.

    `<task_id>.sql` is replicate 0, `<task_id>/<n>.sql` replicate n; a folder `<task_id>/`
    with a `dbt_project.yml` is a dbt project, replicate 0. A .sql file or a folder whose name
    is no task id (a typo) is an error listing every such entry, unless `allow_unmatched`: then
    each is a warning and left out. A file for a task outside `specs` but among the built-in
    ones is left out quietly (the run is restricted to other tasks); every other file that
    cannot be used gives a one-line warning naming it and is skipped. A folder with nothing
    usable is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ArrivalBenchError(f"submissions {folder}: no such folder; give a folder of "
                                "<task_id>.sql files")
    arm = arm_name if arm_name is not None else folder.resolve().name
    if not arm.strip():
        raise ArrivalBenchError("arm name '': give the submissions a non-empty arm name")
    if arm in BUILTIN_ARMS:
        raise ArrivalBenchError(f"arm name {arm}: that is a built-in arm; give the "
                                "submissions another arm name")
    by_id = {spec.id: spec for spec in specs}
    known = set(builtin_ids()) | set(by_id)
    warnings: list[str] = []
    found: dict[tuple[str, int], Artifact] = {}

    entries = sorted(e for e in folder.iterdir() if not e.name.startswith("."))
    # A .sql file or a folder is meant as a submission; other files (a README) are not.
    unmatched = [e for e in entries if (e.is_dir() and e.name not in known) or
                 (e.is_file() and e.suffix == ".sql" and e.stem not in known)]
    if unmatched:
        names = [f"{e.name}/" if e.is_dir() else e.name for e in unmatched]
        if not allow_unmatched:
            raise ArrivalBenchError(_unmatched_message(folder, names, known))
        warnings += [f"{folder / name}: names no task; left out (unmatched files allowed)"
                     for name in names]

    def take(file: Path, task: str, replicate: int) -> None:
        if task not in by_id:
            return
        if (task, replicate) in found:
            other = found[(task, replicate)].provenance["file"]
            warnings.append(f"{file}: replicate {replicate} of {task} is already given by "
                            f"{other}; skipped")
            return
        try:
            sql = read_text(file)
        except ArrivalBenchError as exc:
            warnings.append(f"{exc}; skipped")
            return
        found[(task, replicate)] = Artifact(arm, by_id[task], replicate, sql,
                                            {"file": str(file.resolve())})

    def take_project(project: Path, task: str) -> None:
        from arrivalbench.core.artifacts.dbt import load_project

        if task not in by_id:
            return
        if (task, 0) in found:
            warnings.append(f"{project}: {task} is already given by "
                            f"{found[(task, 0)].provenance['file']}; skipped")
            return
        try:
            loaded = load_project(project, by_id[task])
        except ArrivalBenchError as exc:
            warnings.append(f"{exc}; skipped")
            return
        found[(task, 0)] = Artifact(arm, by_id[task], 0, loaded.text,
                                    {"file": str(project.resolve()), "dbt_project": True})

    entries = [e for e in entries if e not in unmatched]
    for entry in entries:  # <task_id>.sql first: it is replicate 0 when <task_id>/0.sql is too
        if entry.is_file() and entry.suffix == ".sql":
            take(entry, entry.stem, 0)
    for entry in entries:
        if entry.is_dir() and (entry / "dbt_project.yml").is_file():
            take_project(entry, entry.name)  # a dbt project: <task_id>/dbt_project.yml
        elif entry.is_dir():
            files = sorted(f for f in entry.iterdir()
                           if f.suffix == ".sql" and not f.name.startswith("."))
            for file in sorted(files, key=lambda f: (not f.stem.isdigit(), len(f.stem), f.stem)):
                if not file.stem.isdigit():
                    warnings.append(f"{file}: name a replicate <n>.sql with n a whole number; "
                                    "skipped")
                    continue
                take(file, entry.name, int(file.stem))
    if not found:
        scope = ", ".join(sorted(by_id))
        raise ArrivalBenchError(f"submissions {folder}: no usable submission for the tasks "
                                f"graded ({scope}); lay it out as <task_id>.sql or "
                                "<task_id>/<n>.sql")
    artifacts = sorted(found.values(), key=lambda a: (a.spec.id, a.replicate))
    return Submissions(arm, artifacts, warnings)


def _unmatched_message(folder: Path, names: Sequence[str], known: set[str]) -> str:
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    hints = []
    for name in names[:3]:
        stem = name.rstrip("/").removesuffix(".sql")
        close = difflib.get_close_matches(stem, sorted(known), n=1)
        if close:
            hints.append(f"{name} -> {close[0]}")
    hint = f" (did you mean {'; '.join(hints)}?)" if hints else ""
    return (f"submissions {folder}: {count(len(names), 'entry', 'entries')} "
            f"{'names' if len(names) == 1 else 'name'} no task: {shown}{hint}; name each "
            "<task_id>.sql or <task_id>/<n>.sql (see 'arrivalbench tasks'), or allow "
            "unmatched files to grade the rest")


# -- idiom signatures ------------------------------------------------------------------------


def idioms(sql: str, spec: TaskSpec) -> list[str]:
    """The idiom signature tags of a script written for `spec`, judged against its record keys.
    Tags describe an artifact and never stop one from being graded: a statement sqlglot cannot
    read is tagged `unparsed`."""
    return signature(sql, spec)
