"""Built-in arms and folders of submissions: where artifacts come from.

- `gold`: each task's `gold.sql`, replicate 0.
- `negatives`: one artifact per negative control, replicate = its position in `task.yaml`;
  provenance names the negative and the hazards it declares to fail.
- `template`: a uniform pipeline generated from the task spec (`template_sql`): append the
  delivered records of each source to a history table deduplicated on the record key, then
  rebuild the target from the histories with the task's own reference query.
- a folder of submissions (the human arm): `<folder>/<task_id>.sql` is replicate 0,
  `<folder>/<task_id>/<n>.sql` is replicate n.

An arm only produces artifacts; `grid` stores and grades them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from arrivalbench.errors import ArrivalBenchError, TaskError
from arrivalbench.task import TaskSpec, builtin_ids, source_of
from arrivalbench.textfile import read_text
from arrivalbench.values import JSON

BUILTIN_ARMS = ("gold", "negatives", "template")
TEMPLATE_VERSION = 1


@dataclass(frozen=True)
class Artifact:
    """One script of one arm for one task, with where it came from."""

    arm: str
    spec: TaskSpec
    replicate: int
    sql: str
    provenance: dict[str, JSON] = field(default_factory=dict)


def _file(spec: TaskSpec, relative: str) -> str:
    return relative if source_of(spec) == spec.id else str(spec.path / relative)


def gold(spec: TaskSpec) -> list[Artifact]:
    return [Artifact("gold", spec, 0, spec.gold_sql, {"file": _file(spec, "gold.sql")})]


def negatives(spec: TaskSpec) -> list[Artifact]:
    return [Artifact("negatives", spec, index, negative.sql,
                     {"file": _file(spec, f"negatives/{negative.name}.sql"),
                      "negative": negative.name, "fails": list(negative.fails)})
            for index, negative in enumerate(spec.negatives)]


def template(spec: TaskSpec) -> list[Artifact]:
    return [Artifact("template", spec, 0, template_sql(spec),
                     {"generator": "template", "version": TEMPLATE_VERSION})]


def builtin(arm: str, specs: Sequence[TaskSpec]) -> list[Artifact]:
    """The artifacts of a built-in arm over `specs`, in task order."""
    make = {"gold": gold, "negatives": negatives, "template": template}.get(arm)
    if make is None:
        raise ArrivalBenchError(f"unknown arm {arm!r}; built-in arms: {', '.join(BUILTIN_ARMS)}")
    return [a for spec in specs for a in make(spec)]


# -- the template arm ------------------------------------------------------------------------


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def history_tables(spec: TaskSpec) -> dict[str, str]:
    """Source name -> the name of its history table, clear of every other name in the task."""
    taken = {spec.target.name.lower(), *(s.name.lower() for s in spec.sources)}
    names: dict[str, str] = {}
    for source in spec.sources:
        name = f"{source.name}_history"
        while name.lower() in taken:
            name = f"_{name}"
        taken.add(name.lower())
        names[source.name] = name
    return names


def template_sql(spec: TaskSpec) -> str:
    """The template pipeline of `spec`.

    Per source: `CREATE TABLE IF NOT EXISTS main.<source>_history` with the declared columns,
    then an `INSERT` of the delivered records whose record key is not in the history yet, one
    per record key (columns named, never `*`, so a new column in `incoming` is ignored). Then
    `CREATE OR REPLACE TABLE main.<target> AS <reference.sql>` with every reference to a source
    bound to its history table. Each statement is idempotent, so a re-run after a crash at any
    statement converges; the result is a pure function of the set of records delivered.
    """
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
    query = bind_sources(spec, {name: f"main.{_quote(table)}" for name, table in history.items()})
    parts.append(f"CREATE OR REPLACE TABLE main.{_quote(spec.target.name)} AS\n{query}\n;\n")
    return "\n".join(parts)


def bind_sources(spec: TaskSpec, tables: dict[str, str]) -> str:
    """`reference.sql` with every reference to a source (bare, or `main.`-qualified, matched
    case-insensitively, not shadowed by a CTE of the same name) replaced by `tables[source]`.

    sqlglot finds the references; the replacement is made in the original text at their exact
    positions, so everything else of the query keeps its author's spelling. A reference without
    an alias gets the source's name as alias, so `orders.amount` still resolves. Trailing
    semicolons and comments after the query are dropped."""
    where = spec.path / "reference.sql"
    text = spec.reference_sql
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


def submissions(folder: Path, specs: Sequence[TaskSpec], arm_name: str | None = None
                ) -> Submissions:
    """The artifacts of a folder of submissions for the tasks `specs`.

    `<task_id>.sql` is replicate 0, `<task_id>/<n>.sql` replicate n. A file for a task outside
    `specs` but among the built-in ones is left out quietly (the run is restricted to other
    tasks); every other file that cannot be used gives a one-line warning naming it and is
    skipped. A folder with nothing usable is an error."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ArrivalBenchError(f"--submissions {folder}: no such folder; give a folder of "
                                "<task_id>.sql files")
    arm = arm_name if arm_name is not None else folder.resolve().name
    if not arm.strip():
        raise ArrivalBenchError("--arm-name: give a non-empty name")
    if arm in BUILTIN_ARMS:
        raise ArrivalBenchError(f"--arm-name {arm}: that is a built-in arm; give the "
                                "submissions another name with --arm-name")
    by_id = {spec.id: spec for spec in specs}
    known = set(builtin_ids()) | set(by_id)
    warnings: list[str] = []
    found: dict[tuple[str, int], Artifact] = {}

    def take(file: Path, task: str, replicate: int) -> None:
        if task not in known:
            warnings.append(f"{file}: no task {task!r} (tasks: {', '.join(sorted(known))}); "
                            "skipped")
            return
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

    entries = sorted(e for e in folder.iterdir() if not e.name.startswith("."))
    for entry in entries:  # <task_id>.sql first: it is replicate 0 when <task_id>/0.sql is too
        if entry.is_file() and entry.suffix == ".sql":
            take(entry, entry.stem, 0)
    for entry in entries:
        if entry.is_dir():
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
        raise ArrivalBenchError(f"--submissions {folder}: no usable submission for the tasks "
                                f"graded ({scope}); lay it out as <task_id>.sql or "
                                "<task_id>/<n>.sql")
    artifacts = sorted(found.values(), key=lambda a: (a.spec.id, a.replicate))
    return Submissions(arm, artifacts, warnings)


# -- idiom signatures ------------------------------------------------------------------------


def idioms(sql: str) -> list[str] | None:
    """The idiom signature tags of a script (`arrivalbench.agent.idioms.signature`, imported
    lazily), or None when that extractor is not installed or cannot read this script: tags
    describe an artifact, they never stop one from being graded."""
    try:
        from arrivalbench.agent.idioms import signature  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError as exc:
        if exc.name in ("arrivalbench.agent.idioms", "arrivalbench.agent"):
            return None
        raise
    try:
        return sorted(str(tag) for tag in signature(sql))
    except Exception:  # a submission may be anything; its verdicts will say what it is
        return None
