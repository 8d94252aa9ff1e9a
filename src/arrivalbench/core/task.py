"""Task folders: read and validate `task.yaml`, its SQL files and its log.

Loading runs no code from the folder: the log is data and the SQL is only read here.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args, overload

import duckdb
import yaml

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName
from arrivalbench.core.textfile import read_text
from arrivalbench.core.values import digest
from arrivalbench.errors import TaskError

Mode = Literal["append", "upsert", "aggregate"]
Difficulty = Literal["easy", "medium", "hard"]
Hazard = Literal[
    "late_arrival", "out_of_order", "duplicates", "crash_retry", "backfill", "schema_evolution"
]
HAZARDS: tuple[Hazard, ...] = get_args(Hazard)
MODES: tuple[Mode, ...] = get_args(Mode)
DIFFICULTIES: tuple[Difficulty, ...] = get_args(Difficulty)


BUILTIN_DIR = Path(__file__).parents[1] / "tasks"
LOG_SUFFIXES = (".jsonl", ".csv", ".parquet")


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB's own spelling of the declared type, e.g. "DECIMAL(10,2)"


@dataclass(frozen=True)
class Source:
    name: str
    columns: tuple[Column, ...]
    record_key: tuple[str, ...]
    event_time: str | None
    entity_key: tuple[str, ...] = ()
    version: str | None = None

    @property
    def is_change_stream(self) -> bool:
        return bool(self.entity_key) and self.version is not None


@dataclass(frozen=True)
class Target:
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    tolerance: float


@dataclass(frozen=True)
class Evolution:
    source: str
    column: str
    type: str


@dataclass(frozen=True)
class Negative:
    """A negative control. `fails` and `sql` are DuckDB's; `per_engine` holds, for every engine,
    the hazards it is declared to fail there (the same as `fails` unless task.yaml maps them
    per engine), and `other_sql` the pipelines written for other engines
    (`negatives/<name>.<engine>.sql`), as tuples so that the spec stays hashable."""

    name: str
    fails: tuple[Hazard, ...]
    sql: str
    per_engine: tuple[tuple[EngineName, tuple[Hazard, ...]], ...] = ()
    other_sql: tuple[tuple[EngineName, str], ...] = ()

    def fails_on(self, engine: EngineName) -> tuple[Hazard, ...]:
        """The hazards this negative is declared to fail on `engine`."""
        return dict(self.per_engine).get(engine, self.fails)

    def sql_for(self, engine: EngineName) -> str | None:
        """The pipeline for `engine`, None when the task has none for it."""
        return self.sql if engine == DEFAULT_ENGINE else dict(self.other_sql).get(engine)

    def file_for(self, engine: EngineName) -> str:
        return f"negatives/{pipeline_file(self.name, engine)}"


@dataclass(frozen=True)
class Budget:
    """The most a replay of the task may read: rows read from persistent tables over the whole
    replay per record delivered, on `trickle`."""

    read_amplification: float


# On `trickle` (~40 runs) a pipeline that rebuilds its target from the whole history reads
# ~20-45 rows per record delivered (measured on the built-in gold and template arms). One that
# reads only its batch and the stored rows it changes reads far less: an append keyed on the
# record key ~1.5 (web_page_views), an aggregate of deltas by key ~4.5 (account_balances), a
# per-key upsert with a keyed state table ~6 (device_last_reading). Part of that is DuckDB's: a
# join whose batch side is empty pushes no filter into the stored table's scan, so every empty
# run reads that table whole. The defaults leave that margin and stay well below any rebuild.
DEFAULT_BUDGETS: dict[Mode, Budget] = {
    "append": Budget(3.0), "upsert": Budget(8.0), "aggregate": Budget(10.0)}


@dataclass(frozen=True)
class TaskSpec:
    """Everything in a task folder except the log's records."""

    id: str
    title: str
    mode: Mode
    difficulty: Difficulty
    ticket: str
    sources: tuple[Source, ...]
    target: Target
    hazards: tuple[Hazard, ...]
    evolution: Evolution | None
    negatives: tuple[Negative, ...]
    gold_idiom: str | None
    reference_sql: str
    gold_sql: str
    path: Path
    log_files: tuple[Path, ...]
    digest: str
    budget: Budget  # the declared one, else its mode's in DEFAULT_BUDGETS
    incremental_sql: str | None = None  # a gold within the budget, when the task ships one
    other_gold: tuple[tuple[EngineName, str], ...] = ()  # gold.<engine>.sql of other engines

    def source(self, name: str) -> Source:
        return next(s for s in self.sources if s.name == name)

    def has_pipelines(self, engine: EngineName) -> bool:
        """Whether the task ships a gold for `engine` (every task has DuckDB's)."""
        return engine == DEFAULT_ENGINE or engine in dict(self.other_gold)

    def gold_for(self, engine: EngineName) -> str:
        """The gold pipeline for `engine`; a TaskError naming the task when it has none."""
        if engine == DEFAULT_ENGINE:
            return self.gold_sql
        found = dict(self.other_gold).get(engine)
        if found is None:
            raise self.missing(engine, pipeline_file("gold", engine))
        return found

    def negatives_for(self, engine: EngineName) -> tuple[tuple[Negative, str], ...]:
        """Each negative with its pipeline for `engine`, in task.yaml's order; a TaskError
        naming the task and the first missing file when one has none."""
        found = []
        for negative in self.negatives:
            sql = negative.sql_for(engine)
            if sql is None:
                raise self.missing(engine, negative.file_for(engine))
            found.append((negative, sql))
        return tuple(found)

    def missing(self, engine: EngineName, file: str) -> TaskError:
        return TaskError(f"task {self.id} has no {engine} pipelines ({self.path / file} is "
                         f"missing); add it, or grade this task with --engine "
                         f"{DEFAULT_ENGINE}")


def pipeline_file(stem: str, engine: EngineName) -> str:
    """The file of a pipeline for `engine`: `<stem>.sql` for DuckDB (every task's own),
    `<stem>.<engine>.sql` beside it for another engine."""
    return f"{stem}.sql" if engine == DEFAULT_ENGINE else f"{stem}.{engine}.sql"


def builtin_ids() -> list[str]:
    return sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "task.yaml").is_file())


def resolve(ref: str | Path) -> Path:
    """A built-in task id or a folder on disk."""
    text = str(ref)
    if "/" not in text and "\\" not in text and (BUILTIN_DIR / text / "task.yaml").is_file():
        return (BUILTIN_DIR / text).resolve()
    path = Path(text).expanduser()
    if path.is_dir():
        if not (path / "task.yaml").is_file():
            raise TaskError(f"{path}: no task.yaml in this folder; a task folder holds task.yaml, "
                            "reference.sql, gold.sql and log/")
        return path.resolve()
    close = difflib.get_close_matches(text, builtin_ids(), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise TaskError(f"unknown task {text!r}: {hint}give a built-in id (list them with "
                    "'arrivalbench tasks') or a task folder")


def load_specs(refs: Iterable[str | Path]) -> list[TaskSpec]:
    """Each task once, in the order given. Two references to one folder (an id and a path, a
    symlink and its target) are one task; two folders with the same id are an error."""
    specs: dict[str, TaskSpec] = {}
    for ref in refs:
        spec = load_spec(ref)
        other = specs.get(spec.id)
        if other is not None and other.path.resolve() != spec.path.resolve():
            raise TaskError(f"task {ref}: its id {spec.id!r} is also the id of {other.path}; "
                            "give one of them at a time")
        specs[spec.id] = spec
    return list(specs.values())


def source_of(spec: TaskSpec) -> str:
    """How to load `spec` again, in any process: its id if it is built in, else its folder's
    absolute path with symlinks resolved (so one task has one source, however it was
    reached)."""
    path = spec.path.resolve()
    return spec.id if path.parent == BUILTIN_DIR.resolve() else str(path)


@functools.lru_cache(maxsize=64)
def _load_spec_cached(path: Path, folder_digest: str) -> TaskSpec:
    return _parse(path, _folder_digest(path, verdict_files_only=True))


def load_spec(ref: str | Path) -> TaskSpec:
    """The task a built-in id or a folder path names, validated: `task.yaml`, its SQL files and
    the list of log files (the log itself is read by `load_log`). Cached on the folder's
    digest, so an edited folder is read again. A task that does not follow the format raises
    TaskError naming the file, the field and the offending value."""
    path = resolve(ref)
    return _load_spec_cached(path, _folder_digest(path))


_OTHER_ENGINE_SUFFIXES = tuple(f".{e}.sql" for e in ENGINES if e != DEFAULT_ENGINE)


def _folder_digest(path: Path, verdict_files_only: bool = False) -> str:
    """Covers every file of the task (names and bytes), so any edit changes it: the key of the
    loaded-spec cache.

    With `verdict_files_only` it is the task digest that verdicts are keyed by: the pipelines
    written for engines other than DuckDB (`gold.postgres.sql`, `negatives/<n>.postgres.sql`)
    are left out. A verdict depends on them only as its artifact, whose own digest is in its
    key, and leaving them out means that adding or fixing a translation leaves every stored
    DuckDB verdict of the task valid. task.yaml stays in, per-engine `fails:` included."""
    parts: list[bytes] = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        if verdict_files_only and rel.name.endswith(_OTHER_ENGINE_SUFFIXES):
            continue
        data = file.read_bytes()
        parts.append(f"{rel.as_posix()}\0{len(data)}\0".encode() + data)
    return digest(b"".join(parts))


# -- parsing task.yaml ---------------------------------------------------------------------------


class _Fields:
    """Reads one mapping of task.yaml, naming the file and the field in every error."""

    def __init__(self, file: Path, where: str, data: object) -> None:
        if not isinstance(data, dict):
            raise TaskError(f"{file}: {where or 'the document'} must be a mapping, "
                            f"got {type(data).__name__}")
        self.file, self.where, self.data = file, where, cast(dict[str, Any], data)

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, message: str) -> TaskError:
        return TaskError(f"{self.file}: field {self._name(key)}: {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: object = ...) -> Any:
        if key not in self.data or self.data[key] is None:
            if default is ...:
                raise self.fail(key, "is required")
            return default
        value = self.data[key]
        if not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(
                k.__name__ for k in kind)
            raise self.fail(key, f"must be a {names}, got {value!r}")
        return value

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.get(key, str)
        if value not in allowed:
            raise self.fail(key, f"{value!r} is not one of {', '.join(allowed)}")
        return cast(str, value)

    def names(self, key: str, allowed: tuple[str, ...], default: object = ...) -> tuple[str, ...]:
        """A column name or a list of them, each among `allowed`."""
        value = self.get(key, (str, list), default)
        if value is None or value == ():
            return ()
        items = [value] if isinstance(value, str) else value
        for item in items:
            if item not in allowed:
                raise self.fail(key, f"{item!r} is not among the columns "
                                     f"({', '.join(allowed)})")
        return tuple(items)

    def only(self, *allowed: str) -> None:
        """A misspelt key would otherwise drop what it holds without a word."""
        for key in self.data:
            if key not in allowed:
                raise self.fail(str(key), f"unknown key; allowed here: {', '.join(allowed)}")

    def sub(self, key: str) -> _Fields:
        return _Fields(self.file, self._name(key), self.get(key, dict))


def _columns(fields: _Fields, key: str) -> tuple[Column, ...]:
    raw = fields.get(key, dict)
    if not raw:
        raise fields.fail(key, "must declare at least one column")
    return tuple(Column(str(name), _type(fields, f"{key}.{name}", raw[name])) for name in raw)


def _type(fields: _Fields, key: str, declared: object) -> str:
    if not isinstance(declared, str):
        raise fields.fail(key, f"type must be a string such as BIGINT or \"DECIMAL(10,2)\", "
                               f"got {declared!r}")
    try:
        return str(duckdb.sqltype(declared))
    except duckdb.Error:
        raise fields.fail(key, f"unknown type {declared!r}; use a DuckDB type such as BIGINT, "
                               "VARCHAR, DOUBLE, DATE, TIMESTAMP or DECIMAL(p,s)") from None


def _parse(path: Path, folder_digest: str) -> TaskSpec:
    """Validate task.yaml section by section, in a fixed order (the first problem is the one
    reported), then read the SQL files."""
    top = _document(path / "task.yaml")
    top.only("id", "title", "mode", "difficulty", "ticket", "sources", "target", "hazards",
             "evolution", "negatives", "gold_idiom", "budget")
    task_id = top.get("id", str)
    if task_id != path.name:
        raise top.fail("id", f"{task_id!r} must equal the folder name {path.name!r}; rename "
                             f"the folder to {task_id!r} (or set id: {path.name})")
    sources = _sources(top)
    target = _target(top.sub("target"))
    hazards = _hazards(top)
    evolution = _evolution(top, hazards, sources)
    negatives = _negatives(top, hazards, path)
    log_files = _log_files(path, sources)
    mode = cast(Mode, top.choice("mode", MODES))
    return TaskSpec(
        id=task_id,
        title=top.get("title", str),
        mode=mode,
        difficulty=cast(Difficulty, top.choice("difficulty", DIFFICULTIES)),
        ticket=top.get("ticket", str).strip(),
        sources=sources,
        target=target,
        hazards=hazards,
        evolution=evolution,
        negatives=negatives,
        gold_idiom=top.get("gold_idiom", str, None),
        reference_sql=_read_sql(path / "reference.sql"),
        gold_sql=_read_sql(path / "gold.sql"),
        path=path,
        log_files=log_files,
        digest=folder_digest,
        budget=_budget(top, mode),
        incremental_sql=_read_sql(path / "incremental.sql", optional=True),
        other_gold=_other_sql(path, "gold"),
    )


def _budget(top: _Fields, mode: Mode) -> Budget:
    if top.get("budget", dict, None) is None:
        return DEFAULT_BUDGETS[mode]
    sub = top.sub("budget")
    sub.only("read_amplification")
    value = sub.get("read_amplification", (int, float))
    if isinstance(value, bool) or not value > 0 or value == float("inf"):
        raise sub.fail("read_amplification", f"{value!r} must be a positive number (rows read "
                                             "per record delivered, e.g. 4)")
    return Budget(float(value))


def _document(file: Path) -> _Fields:
    text = read_text(file, TaskError, missing="missing; every task folder needs it",
                     allow_empty=True)
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise TaskError(f"{file}: not valid YAML{where}; fix the syntax") from None
    return _Fields(file, "", document)


def _sources(top: _Fields) -> tuple[Source, ...]:
    sources = []
    for name in top.get("sources", dict):
        sub = top.sub("sources").sub(name)
        sub.only("columns", "record_key", "event_time", "entity_key", "version")
        columns = _columns(sub, "columns")
        names = tuple(c.name for c in columns)
        record_key = sub.names("record_key", names)
        if not record_key:
            raise sub.fail("record_key", "must name at least one column")
        event_time = sub.names("event_time", names, None)
        version = sub.names("version", names, None)
        if len(event_time) > 1 or len(version) > 1:
            raise sub.fail("event_time" if len(event_time) > 1 else "version",
                           "must name a single column")
        entity_key = sub.names("entity_key", names, None)
        if bool(entity_key) != bool(version):
            raise sub.fail("version", "entity_key and version go together in a change stream")
        sources.append(Source(str(name), columns, record_key, event_time[0] if event_time else
                              None, entity_key, version[0] if version else None))
    if not sources:
        raise top.fail("sources", "must declare at least one source")
    return tuple(sources)


def _target(tsub: _Fields) -> Target:
    tsub.only("name", "columns", "key", "tolerance")
    tcolumns = _columns(tsub, "columns")
    key = tsub.names("key", tuple(c.name for c in tcolumns))
    if not key:
        raise tsub.fail("key", "must name at least one column")
    tolerance = tsub.get("tolerance", (int, float), 1e-9)
    if not 0 <= tolerance < 1:
        raise tsub.fail("tolerance", f"{tolerance!r} must be a relative tolerance in [0, 1)")
    return Target(tsub.get("name", str), tcolumns, key, float(tolerance))


def _hazards(top: _Fields) -> tuple[Hazard, ...]:
    hazards = top.get("hazards", list)
    for hazard in hazards:
        if hazard not in HAZARDS:
            raise top.fail("hazards", f"unknown hazard {hazard!r}; allowed: {', '.join(HAZARDS)}")
    if len(set(hazards)) != len(hazards):
        raise top.fail("hazards", "lists a hazard twice")
    return tuple(hazards)


def _evolution(top: _Fields, hazards: tuple[Hazard, ...], sources: tuple[Source, ...]
               ) -> Evolution | None:
    if "schema_evolution" not in hazards:
        if top.get("evolution", dict, None) is not None:
            raise top.fail("evolution", "is given but hazards does not declare schema_evolution")
        return None
    esub = top.sub("evolution")
    esub.only("source", "column", "type")
    esource = esub.choice("source", tuple(s.name for s in sources))
    ecolumn = esub.get("column", str)
    if ecolumn.lower() in (c.name.lower() for c in
                           next(s for s in sources if s.name == esource).columns):
        raise esub.fail("column", f"{ecolumn!r} is already a column of {esource}")
    return Evolution(esource, ecolumn, _type(esub, "type", esub.get("type", str)))


def _negatives(top: _Fields, hazards: tuple[Hazard, ...], path: Path) -> tuple[Negative, ...]:
    negatives = []
    for name in top.get("negatives", dict, {}):
        nsub = top.sub("negatives").sub(name)
        nsub.only("fails")
        per_engine = _fails(nsub, hazards)
        negatives.append(Negative(str(name), dict(per_engine)[DEFAULT_ENGINE],
                                  _read_sql(path / "negatives" / f"{name}.sql"), per_engine,
                                  _other_sql(path / "negatives", str(name))))
    return tuple(negatives)


def _fails(nsub: _Fields, hazards: tuple[Hazard, ...]
           ) -> tuple[tuple[EngineName, tuple[Hazard, ...]], ...]:
    """`fails:` as a list (the same on every engine) or a mapping engine -> list naming every
    engine, so that no engine's expectation is left to a guess."""
    raw = nsub.get("fails", (list, dict))
    if isinstance(raw, list):
        by_engine: dict[str, object] = {engine: raw for engine in ENGINES}
    else:
        by_engine = raw
        for engine in by_engine:
            if engine not in ENGINES:
                raise nsub.fail("fails", f"unknown engine {engine!r}; engines: "
                                         f"{', '.join(ENGINES)}")
        absent = [e for e in ENGINES if e not in by_engine]
        if absent:
            raise nsub.fail("fails", f"names no list for {', '.join(absent)}; a mapping "
                                     f"names every engine ({', '.join(ENGINES)}), or give "
                                     "one list for all")
    out = []
    for engine in ENGINES:
        fails = by_engine[engine]
        where = "fails" if isinstance(raw, list) else f"fails.{engine}"
        if not isinstance(fails, list):
            raise nsub.fail(where, f"must be a list of hazards, got {fails!r}")
        for hazard in fails:
            if hazard not in hazards:
                raise nsub.fail(where, f"{hazard!r} is not among the task's hazards "
                                       f"({', '.join(hazards)})")
        out.append((engine, tuple(cast(list[Hazard], fails))))
    return tuple(out)


def _other_sql(folder: Path, stem: str) -> tuple[tuple[EngineName, str], ...]:
    """The pipelines `<stem>.<engine>.sql` of the engines other than DuckDB found in
    `folder`; optional, so a user's task written for DuckDB alone stays valid."""
    return tuple((engine, text) for engine in ENGINES if engine != DEFAULT_ENGINE
                 for text in [_read_sql(folder / pipeline_file(stem, engine), optional=True)]
                 if text is not None)


def _log_files(path: Path, sources: tuple[Source, ...]) -> tuple[Path, ...]:
    log_files = []
    for source in sources:
        found = [path / "log" / f"{source.name}{suffix}" for suffix in LOG_SUFFIXES]
        present = [f for f in found if f.is_file()]
        if len(present) != 1:
            problem = "is missing" if not present else "is given in more than one format"
            raise TaskError(f"{path / 'log' / source.name}.jsonl: the log of source "
                            f"{source.name!r} {problem}; give exactly one of "
                            f"{', '.join(f.name for f in found)}")
        log_files.append(present[0])
    return tuple(log_files)


@overload
def _read_sql(file: Path) -> str: ...
@overload
def _read_sql(file: Path, optional: bool) -> str | None: ...
def _read_sql(file: Path, optional: bool = False) -> str | None:
    if optional and not file.exists():
        return None
    return read_text(file, TaskError, missing="missing; every task folder needs it")

