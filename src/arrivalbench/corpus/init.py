"""A task folder from a user's own data: `arrivalbench init DIR --source NAME=FILE ...`.

The user brings one file per source (CSV, Parquet or JSON Lines, read by DuckDB), the record key
and event time of each, a reference query over the sources by their bare names, and the target's
name and key. `init` infers the schemas, copies each file into `log/` as it is (a task's log may
be any of the three formats), and writes `task.yaml`, `reference.sql` and a `gold.sql`: the
template pipeline (a history per source deduplicated on the record key, the target rebuilt from
it with the reference query), which is correct by construction and makes every command work on
the folder from the start. The ticket is a placeholder the user is told to fill in.

The hazards are those the data allows: `duplicates` and `crash_retry` always; `late_arrival`,
`out_of_order` and `backfill` only when every source has an event time; then each is kept only
if its schedules visibly perturb delivery on this log (the gate's own check). Before anything is
written the reference must run, be deterministic (two runs, the same rows) and be unique on the
target key. The folder is written beside `DIR` under a temporary name and renamed into place at
the end, so a failure leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import yaml

from arrivalbench.core import clock
from arrivalbench.core.checkpoints import query_over
from arrivalbench.core.engine import Limits, Table
from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.grading import schedule
from arrivalbench.core.log import load_log
from arrivalbench.core.oracle import compare
from arrivalbench.core.replay import expected_all
from arrivalbench.core.task import HAZARDS, LOG_SUFFIXES, Hazard, TaskSpec, load_spec
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import canonical_json, row_sort_key, to_json
from arrivalbench.corpus.perturbation import visible
from arrivalbench.errors import (
    ArrivalBenchError,
    ParameterError,
    TaskError,
    UnknownName,
    mention,
)
from arrivalbench.study.template import template_sql

if TYPE_CHECKING:
    from arrivalbench.core.artifacts.dbt.own import DeclaredSource

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ALWAYS: tuple[Hazard, ...] = ("duplicates", "crash_retry")
TIMED: tuple[Hazard, ...] = ("late_arrival", "out_of_order", "backfill")
SEEDS = (0, 1, 2)  # the gate's seeds: a hazard is kept only if it perturbs delivery on each
PLACEHOLDER = ("TODO: describe the table in the words a data team would get it: what one row\n"
               "is, each column, and every rule (ties, empties, boundaries).")


@dataclass(frozen=True)
class Request:
    """What the user asked `init` for, validated field by field by `build`."""

    folder: Path
    sources: Mapping[str, Path]
    keys: Mapping[str, Sequence[str]]
    event_times: Mapping[str, str]
    reference: Path
    target: str
    target_key: Sequence[str]
    landed_at: Mapping[str, str] = field(default_factory=dict)  # a landing table's load time


@dataclass(frozen=True)
class Written:
    folder: Path
    spec: TaskSpec
    records: int
    dropped: tuple[tuple[Hazard, str], ...]  # hazards the data does not allow, and why


NOT_PLAIN = "not a plain identifier; use letters, digits and underscores, not starting with a "\
    "digit"


def identifier(value: str, what: str) -> str:
    if not IDENTIFIER.fullmatch(value):
        raise TaskError(f"{what} {value!r}: {NOT_PLAIN}")
    return value


def _name(value: str, parameter: str) -> str:
    """A name the request gives (`parameter`: the target, a source) as a plain identifier."""
    if not IDENTIFIER.fullmatch(value):
        raise ParameterError(parameter, repr(value), NOT_PLAIN)
    return value


def _reader(file: Path) -> str:
    literal = "'" + str(file).replace("'", "''") + "'"
    suffix = file.suffix.lower()
    if suffix == ".csv":
        return f"read_csv({literal}, header = true)"
    if suffix == ".parquet":
        return f"read_parquet({literal})"
    if suffix == ".jsonl":
        return f"read_json({literal}, format = 'newline_delimited')"
    raise TaskError(f"{file}: not a data file ArrivalBench reads; give a .csv, .parquet or "
                    ".jsonl file")


def _columns(con: duckdb.DuckDBPyConnection, name: str, file: Path) -> dict[str, str]:
    if not file.is_file():
        raise ParameterError("sources", f"{name}={file}", "no such file")
    try:
        described = con.execute(f"DESCRIBE SELECT * FROM {_reader(file)}").fetchall()
        con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM {_reader(file)}')
    except duckdb.Error as exc:
        raise TaskError(f"{file}: DuckDB cannot read it ({' '.join(str(exc).split())[:160]}); "
                        "check the file's format") from None
    columns = {str(row[0]): str(row[1]) for row in described}
    for column in columns:
        identifier(column, f"{file}: column")
    return columns


def _key_problem(con: duckdb.DuckDBPyConnection, name: str, key: Sequence[str],
                 columns: Mapping[str, str], file: Path) -> str | None:
    """What is wrong with `key` as the record key of source `name` (read from `file`), if
    anything: the caller names whose key it is."""
    for column in key:
        if column not in columns:
            return f"{file} has no column {column!r} (columns: {', '.join(columns)})"
    quoted = ", ".join(f'"{c}"' for c in key)
    found = con.execute(f'SELECT {quoted}, count(*) FROM "{name}" GROUP BY ALL '
                        "HAVING count(*) > 1 ORDER BY ALL LIMIT 1").fetchone()
    if found is not None:
        return (f"not unique in {file} ({dict(zip(key, found[:-1], strict=True))} appears "
                f"{found[-1]} times); a record key names one record of the log")
    return None


def _document(request: Request, columns: Mapping[str, Mapping[str, str]],
              target: Mapping[str, str], hazards: Sequence[Hazard]) -> dict[str, object]:
    return {
        "id": request.folder.name,
        "title": f"{request.target} (from your own data)",
        "mode": "aggregate",
        "difficulty": "medium",
        "ticket": PLACEHOLDER + "\n",
        "sources": {name: {"columns": dict(columns[name]),
                           "record_key": list(request.keys[name]),
                           "event_time": request.event_times.get(name),
                           **({"landed_at": request.landed_at[name]}
                              if name in request.landed_at else {})}
                    for name in request.sources},
        "target": {"name": request.target, "columns": dict(target),
                   "key": list(request.target_key)},
        "hazards": list(hazards),
    }


def build(request: Request, limits: Limits = Limits()) -> Written:
    """Check the request against the data and write the task folder."""
    folder = request.folder
    identifier(folder.name, "task folder")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise TaskError(f"{folder}: already exists; give a new folder (init never overwrites)")
    if not request.sources:
        raise ParameterError("sources", None, "none given; give each source and its data file")
    _name(request.target, "target")
    for name in request.sources:
        _name(name, "sources")
        if name not in request.keys:
            raise ParameterError("keys", None, f"no record key for source {name}; give "
                                 f"{mention('keys')} {name}=COLUMN[,COLUMN]")
    for parameter, names in (("keys", request.keys), ("event_times", request.event_times)):
        for name in names:
            if name not in request.sources:
                raise UnknownName(parameter, name, request.sources, problem="no such source")
    query = read_text(request.reference, TaskError, what="a .sql file with one SELECT")

    con = duckdb.connect(config={"threads": 1})
    columns: dict[str, dict[str, str]] = {}
    for name, file in request.sources.items():
        columns[name] = _columns(con, name, file)
        key = request.keys[name]
        problem = _key_problem(con, name, key, columns[name], file)
        if problem is not None:
            raise ParameterError("keys", f"{name}={','.join(key)}", problem)
        time = request.event_times.get(name)
        if time is not None and time not in columns[name]:
            raise ParameterError("event_times", f"{name}={time}", f"{file} has no column "
                                 f"{time!r} (columns: {', '.join(columns[name])})")
    try:
        shape = con.execute(f"DESCRIBE ({query.strip().rstrip(';')})").fetchall()
    except duckdb.Error as exc:
        raise TaskError(f"{request.reference}: does not run over the sources "
                        f"({' '.join(str(exc).split())[:200]})") from None
    target = {str(row[0]): str(row[1]) for row in shape}
    for column in target:
        identifier(column, f"{request.reference}: result column")
    for column in request.target_key:
        if column not in target:
            raise ParameterError("target_key", ",".join(request.target_key), "the reference "
                                 f"returns no column {column!r} (columns: {', '.join(target)})")
    timed = all(name in request.event_times for name in request.sources)
    candidates = [h for h in HAZARDS if h in ALWAYS or (timed and h in TIMED)]
    return _write(folder, lambda staging: _stage(staging, request, columns, target, candidates,
                                                 query),
                  lambda kept: _document(request, columns, target, kept), candidates, limits)


def _write(folder: Path, stage: Callable[[Path], TaskSpec],
           document: Callable[[Sequence[Hazard]], Mapping[str, object]],
           candidates: Sequence[Hazard], limits: Limits) -> Written:
    """Stage the folder under a temporary name beside `folder`, check its reference, keep the
    hazards that perturb delivery on this log, and rename it into place."""
    parent = folder.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=parent)) / folder.name
    try:
        try:
            spec = stage(staging)
            _check_reference(spec, limits)
        except TaskError as exc:  # name the folder the user asked for, not the staging one
            raise TaskError(str(exc).replace(str(staging), str(folder))) from None
        statements = len(duckdb_engine.split(spec.gold_sql))
        kept, dropped = [], []
        for hazard in candidates:
            reason = next((r for s in SEEDS
                           if (r := visible(spec, schedule(spec, hazard, s), statements))), None)
            if reason is None:
                kept.append(hazard)
            else:
                dropped.append((hazard, reason))
        if len(kept) != len(candidates):
            (staging / "task.yaml").write_text(_yaml(document(kept)), encoding="utf-8")
        if folder.exists():
            folder.rmdir()  # empty, checked by the caller
        staging.rename(folder)
    finally:
        shutil.rmtree(staging.parent, ignore_errors=True)
    spec = load_spec(folder)
    return Written(folder, spec, len(load_log(spec).timeline), tuple(dropped))


class _Dumper(yaml.SafeDumper):
    """Writes text of several lines (the ticket) as a block, the way task.yaml files are read."""


_Dumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def _yaml(document: Mapping[str, object]) -> str:
    return yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, width=100,
                     allow_unicode=True)


def _stage(staging: Path, request: Request, columns: Mapping[str, Mapping[str, str]],
           target: Mapping[str, str], hazards: Sequence[Hazard], query: str,
           gold: str | None = None) -> TaskSpec:
    (staging / "log").mkdir(parents=True)
    for name, file in request.sources.items():
        suffix = file.suffix.lower()
        assert suffix in LOG_SUFFIXES
        shutil.copyfile(file, staging / "log" / f"{name}{suffix}")
    (staging / "task.yaml").write_text(_yaml(_document(request, columns, target, hazards)),
                                       encoding="utf-8")
    (staging / "reference.sql").write_text(query.strip() + "\n", encoding="utf-8")
    # The template is made from the spec, which needs a gold.sql to load: a stand-in first.
    (staging / "gold.sql").write_text("SELECT 1;\n", encoding="utf-8")
    (staging / "gold.sql").write_text(gold or template_sql(load_spec(staging)),
                                      encoding="utf-8")
    return load_spec(staging)


def _check_reference(spec: TaskSpec, limits: Limits) -> None:
    """The reference runs over the log as cast, twice to the same rows, unique on the key."""
    everything = frozenset((e.source, e.row) for e in load_log(spec).timeline)
    first, second = query_over(spec, spec.reference_sql, [everything, everything],
                               "reference.sql", limits)
    if not compare(first, second, spec.target).ok:
        raise TaskError(f"{spec.path / 'reference.sql'}: not deterministic (two runs over the "
                        "same data differ); order every window and pick ties explicitly")
    at = [i for i, (name, _t) in enumerate(first.columns) if name in spec.target.key]
    keys = Counter(canonical_json([to_json(row[i]) for i in at]) for row in first.rows)
    repeated = sorted(k for k, n in keys.items() if n > 1)
    if repeated:
        raise ParameterError("target_key", ",".join(spec.target.key), "not unique in the "
                             f"reference's result ({len(repeated)} keys repeat, e.g. "
                             f"{repeated[0]}); name the columns that make one row")


# -- a task from a dbt project and its data (docs/dbt.md) -----------------------------------------

DATA_SUFFIXES = (".csv", ".parquet", ".jsonl")
# The types a materialized reference spells out: DuckDB's scalar type names, never a quote.
_UNWRITTEN = {"INTERVAL", "BLOB", "BIT", "BYTEA", "VARBINARY"}  # no text form DuckDB reads back
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\([0-9, ]+\))?")


def data_files(data: Path, wanted: Sequence[str], known: Sequence[str]) -> dict[str, Path]:
    """`data/<table>.{csv,parquet,jsonl}` for each of `wanted`; a missing one, one given in two
    formats, and a data file for no source table of the project (`known`) are each named."""
    if not data.is_dir():
        raise ParameterError("data", data, "not a folder; give the folder that holds one file "
                             f"per source table ({', '.join(f'{n}.csv' for n in wanted)})")
    found: dict[str, list[Path]] = {}
    for path in sorted(data.iterdir()):
        if path.suffix.lower() in DATA_SUFFIXES and not path.name.startswith("."):
            found.setdefault(path.stem, []).append(path)
    for stem, paths in found.items():
        if stem not in wanted and stem not in known:
            raise ParameterError("data", data, f"{paths[0].name} is the data of no source "
                                 f"table of the project (its sources: {', '.join(wanted)}); "
                                 "remove it or declare the table in a sources .yml")
        if len(paths) > 1:
            raise ParameterError("data", data, f"source table {stem} has "
                                 f"{' and '.join(p.name for p in paths)}; keep one")
    for name in wanted:
        if name not in found:
            raise ParameterError("data", data, f"no data for source table {name}; add "
                                 f"{name}.csv, {name}.parquet or {name}.jsonl")
    return {name: found[name][0] for name in wanted}


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return "'" + text.replace("'", "''") + "'"


def materialized(table: Table, comment: str) -> str:
    """A reference that returns exactly `table`: its rows as typed literals, under `comment`
    (the SQL that computed them) as line comments. Values are written as quoted text and cast
    to their column's type, so no value is ever read as SQL."""
    names = [identifier(name, "a column of the full-refresh result") for name, _ in table.columns]
    for name, kind in table.columns:
        if not _TYPE.fullmatch(kind) or kind.split("(")[0].upper() in _UNWRITTEN:
            raise TaskError(f"the full-refresh result's column {name} is of type {kind[:60]!r}; "
                            "a materialized reference holds scalar columns only: cast it in "
                            "the model")
    lines = [f"-- {line}" for line in comment.splitlines()]
    casts = ", ".join(f'CAST(c{i} AS {kind}) AS "{name}"'
                      for i, (name, kind) in enumerate(table.columns))
    rows = sorted(table.rows, key=row_sort_key)
    if rows:
        values = ",\n".join("  (" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
        aliases = ", ".join(f"c{i}" for i in range(len(names)))
        body = f"SELECT {casts}\nFROM (VALUES\n{values}\n) AS t({aliases})"
    else:
        nulls = ", ".join(f"NULL AS c{i}" for i in range(len(names)))
        body = f"SELECT {casts}\nFROM (SELECT {nulls}) AS t\nWHERE false"
    return "\n".join([*lines, body]) + "\n"


def _check_new(folder: Path) -> None:
    identifier(folder.name, "task folder")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise TaskError(f"{folder}: already exists; give a new folder (init never overwrites)")


def from_dbt(folder: Path | None, project: Path, data: Path, model: str | None = None,
             limits: Limits = Limits(), parent: Path | None = None, *,
             passed_env: Sequence[str] = ()) -> Written:
    """The task `grade PROJECT --data DATA` grades: the project's sources and their data, the
    model's key as the target's, and the model built with `--full-refresh` over all the data
    as the reference: what dbt compiled for it as one query over the sources where that returns
    dbt's own rows, else those rows materialized (the compiled SQL as a comment). Without
    `folder`, the task is written to `parent`/<model>."""
    from arrivalbench.core.artifacts.dbt import own
    from arrivalbench.core.artifacts.dbt.inline import NotInlined

    if folder is not None:
        _check_new(folder)
    what, dbt = own.load(project, model, limits, passed_env)
    try:
        if folder is None:
            assert parent is not None
            folder = parent / what.model
            _check_new(folder)
        files = data_files(data, [s.name for s in what.sources], what.others)
        columns, tables = _read_sources(what.sources, files)
        at = _land_at_reference_clock(what.sources, tables)
        refreshed = own.full_refresh(dbt, tables, limits, now=at)
    finally:
        own.release(dbt)
    result = refreshed.table
    _check_unique_key(what.model, what.key, result)
    target = dict(result.columns)
    header = (f"The reference: dbt model {what.model} of {project.resolve().name} built with\n"
              f"--full-refresh over all the data ({refreshed_rows(result)})")
    rows = materialized(result, f"{header}. What dbt compiled:\n\n{refreshed.compiled}")
    try:
        comment = f"{header},\ncompiled into one query over the sources: it returns the same rows."
        query: str | None = "".join(f"-- {line}\n" for line in comment.splitlines()) + \
            refreshed.query(dbt) + "\n"
    except NotInlined:
        query = None
    request = Request(folder, files, {s.name: s.record_key for s in what.sources},
                      {s.name: s.event_time for s in what.sources if s.event_time},
                      Path("reference.sql"), what.model, what.key,
                      {s.name: s.landed_at for s in what.sources})
    timed = all(s.event_time for s in what.sources)
    candidates = [h for h in HAZARDS if h in ALWAYS or (timed and h in TIMED)]

    def stage(staging: Path) -> TaskSpec:
        """The compiled query as the reference where it returns dbt's own rows over all the
        data (then every prefix has a reference too), else dbt's rows themselves."""
        if query is not None:
            with contextlib.suppress(ArrivalBenchError):
                spec = _stage(staging, request, columns, target, candidates, query)
                if compare(result, expected_all(spec, limits)[0], spec.target).ok:
                    return spec
            shutil.rmtree(staging, ignore_errors=True)  # whatever the first attempt wrote
        return _stage(staging, request, columns, target, candidates, rows,
                      _stand_in(what.model, [s.name for s in what.sources], rows))

    return _write(folder, stage, lambda kept: _document(request, columns, target, kept),
                  candidates, limits)


def _read_sources(sources: Sequence[DeclaredSource], files: dict[str, Path]
                  ) -> tuple[dict[str, dict[str, str]], dict[str, pa.Table]]:
    """Each source's columns and rows, read from its file; a record key that does not hold or
    an event time the file lacks is a TaskError naming it."""
    con = duckdb.connect(config={"threads": 1})
    columns: dict[str, dict[str, str]] = {}
    tables = {}
    for source in sources:
        file = files[source.name]
        columns[source.name] = _columns(con, source.name, file)
        problem = _key_problem(con, source.name, source.record_key, columns[source.name], file)
        if problem is not None:
            raise TaskError(f"source table {source.name}'s record key "
                            f"{','.join(source.record_key)}: {problem}")
        if source.event_time is not None and source.event_time not in columns[source.name]:
            raise TaskError(f"source table {source.name}'s event time {source.event_time}: "
                            f"{file} has no column {source.event_time!r} (columns: "
                            f"{', '.join(columns[source.name])}); fix the declaration")
        tables[source.name] = con.sql(f'SELECT * FROM "{source.name}"').to_arrow_table()
    return columns, tables


def _land_at_reference_clock(sources: Sequence[DeclaredSource], tables: dict[str, pa.Table]
                             ) -> dt.datetime:
    """The reference's clock; every row of `tables` stamped with it in its source's load-time
    column, as a full refresh over everything landed by then sees them."""
    at = clock.reference_clock(value for source in sources if source.event_time
                               for value in tables[source.name][source.event_time].to_pylist())
    for source in sources:
        table = tables[source.name]
        if source.landed_at in table.column_names:
            table = table.drop_columns([source.landed_at])
        tables[source.name] = table.append_column(
            source.landed_at, pa.array([at] * table.num_rows, pa.timestamp("us")))
    return at


def _check_unique_key(model: str, key: Sequence[str], result: Table) -> None:
    names = [name for name, _ in result.columns]
    for column in key:
        if column not in names:
            raise TaskError(f"model {model}'s unique_key {','.join(key)}: its result has no "
                            f"column {column!r} (columns: {', '.join(names)})")
    key_at = [i for i, name in enumerate(names) if name in key]
    keys = Counter(canonical_json([to_json(row[i]) for i in key_at]) for row in result.rows)
    repeated = sorted(k for k, n in keys.items() if n > 1)
    if repeated:
        raise TaskError(f"model {model}'s unique_key {','.join(key)}: not unique in its "
                        f"full-refresh result ({len(repeated)} keys repeat, e.g. "
                        f"{repeated[0]}); declare the columns that make one row")


def _stand_in(target: str, sources: Sequence[str], query: str) -> str:
    """The gold of a task from a dbt project. The project is the pipeline graded; a task
    folder needs a gold, and this one keeps what it is delivered (so that a crash has
    statements to cut) and writes the materialized reference as the target."""
    parts = ["-- A stand-in: the dbt project is the pipeline graded on this task. This keeps "
             "what it is\n-- delivered and writes the full-refresh result (reference.sql) as "
             "the target.\n"]
    for name in sources:
        parts.append(f'CREATE TABLE IF NOT EXISTS main."{name}_delivered" AS '
                     f'SELECT * FROM incoming."{name}" LIMIT 0;\n'
                     f'INSERT INTO main."{name}_delivered" SELECT * FROM incoming."{name}";\n')
    body = "\n".join(line for line in query.splitlines() if not line.startswith("--"))
    parts.append(f'CREATE OR REPLACE TABLE main."{target}" AS\n{body};\n')
    return "\n".join(parts)


def refreshed_rows(table: Table) -> str:
    return f"{len(table.rows)} row{'' if len(table.rows) == 1 else 's'}"
