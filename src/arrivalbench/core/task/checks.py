"""Reading a task folder: `task.yaml` checked field by field (every error names the file, the
field and the offending value), its SQL files and the list of its log files.

Loading runs no code from the folder: the log is data and the SQL is only read here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast, overload

import duckdb
import yaml

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName
from arrivalbench.core.task.spec import (
    DEFAULT_BUDGETS,
    DEFAULT_TIER,
    DIFFICULTIES,
    HAZARDS,
    LOG_SUFFIXES,
    MODES,
    TIERS,
    Budget,
    Column,
    Difficulty,
    Evolution,
    Hazard,
    Mode,
    Negative,
    Source,
    Target,
    TaskSpec,
    Tier,
    pipeline_file,
)
from arrivalbench.core.textfile import read_text
from arrivalbench.errors import TaskError


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


def parse(path: Path, folder_digest: str) -> TaskSpec:
    """Validate task.yaml section by section, in a fixed order (the first problem is the one
    reported), then read the SQL files."""
    top = _document(path / "task.yaml")
    top.only("id", "title", "mode", "difficulty", "ticket", "sources", "target", "targets",
             "hazards", "evolution", "negatives", "gold_idiom", "budget", "tier", "family")
    task_id = top.get("id", str)
    if task_id != path.name:
        raise top.fail("id", f"{task_id!r} must equal the folder name {path.name!r}; rename "
                             f"the folder to {task_id!r} (or set id: {path.name})")
    sources = _sources(top)
    targets = _targets(top, path, sources)
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
        targets=targets,
        hazards=hazards,
        evolution=evolution,
        negatives=negatives,
        gold_idiom=top.get("gold_idiom", str, None),
        gold_sql=_read_sql(path / "gold.sql"),
        path=path,
        log_files=log_files,
        digest=folder_digest,
        budget=_budget(top, mode),
        incremental_sql=_read_sql(path / "incremental.sql", optional=True),
        other_gold=_other_sql(path, "gold"),
        tier=_tier(top),
        tier_declared=top.get("tier", str, None) is not None,
        family=top.get("family", str, None),
    )


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _tier(top: _Fields) -> Tier:
    """Absent means core (a user's task written before tiers stays valid); a value outside
    TIERS is a typo that would silently move the task out of the study, so it is an error."""
    if top.get("tier", str, None) is None:
        return DEFAULT_TIER
    return cast(Tier, top.choice("tier", TIERS))


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
        sub.only("columns", "record_key", "event_time", "entity_key", "version", "landed_at")
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
        landed_at = sub.get("landed_at", str, None)
        if landed_at is not None and not _IDENTIFIER.fullmatch(landed_at):
            raise sub.fail("landed_at", f"{landed_at!r} is not a plain identifier (letters, "
                                        "digits and _, not starting with a digit)")
        sources.append(Source(str(name), columns, record_key, event_time[0] if event_time else
                              None, entity_key, version[0] if version else None, landed_at))
    if not sources:
        raise top.fail("sources", "must declare at least one source")
    return tuple(sources)


def _targets(top: _Fields, path: Path, sources: tuple[Source, ...]) -> tuple[Target, ...]:
    """`target:` (one table, defined by reference.sql) or `targets:` (a list; each defined by
    reference.<name>.sql when there are several)."""
    if ("target" in top.data) == ("targets" in top.data):
        raise top.fail("target", "give either target: (one table) or targets: (a list of "
                                 "tables), not both" if "target" in top.data else "is required")
    if "target" in top.data:
        return (_target(top.sub("target"), path, "reference.sql"),)
    raw = top.get("targets", list)
    if not raw:
        raise top.fail("targets", "must list at least one target")
    targets: list[Target] = []
    for number, item in enumerate(raw):
        tsub = _Fields(top.file, f"targets[{number}]", item)
        name = tsub.get("name", str)
        file = "reference.sql" if len(raw) == 1 else f"reference.{name}.sql"
        targets.append(_target(tsub, path, file))
    names = [t.name.lower() for t in targets]
    taken = {s.name.lower() for s in sources}
    for number, name in enumerate(names):
        if name in names[:number] or name in taken:
            raise top.fail(f"targets[{number}].name", f"{targets[number].name!r} is already "
                           "the name of another target or a source; give each table its own")
    return tuple(targets)


def _target(tsub: _Fields, path: Path, file: str) -> Target:
    tsub.only("name", "columns", "key", "tolerance")
    tcolumns = _columns(tsub, "columns")
    key = tsub.names("key", tuple(c.name for c in tcolumns))
    if not key:
        raise tsub.fail("key", "must name at least one column")
    tolerance = tsub.get("tolerance", (int, float), 1e-9)
    if not 0 <= tolerance < 1:
        raise tsub.fail("tolerance", f"{tolerance!r} must be a relative tolerance in [0, 1)")
    return Target(tsub.get("name", str), tcolumns, key, float(tolerance),
                  _read_sql(path / file), file)


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
