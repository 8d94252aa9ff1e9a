"""A dbt project graded on the user's own data (docs/dbt.md): what the project declares about
its sources and its incremental model, and the model built with `--full-refresh` over all the
data, which is the oracle.

Everything here is read from the manifest the contained child parsed (`child._summary`): the
grader never renders the project's Jinja itself. The full refresh runs exactly as a replay's
runs do, in the child, every statement through the engine and its walls.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from arrivalbench.core.artifacts.dbt import (
    DATABASE,
    DbtProject,
    _check_extra,
    _message,
    _read,
    _refuse_python,
    _refuse_python_files,
    _Relation,
    _Session,
    is_project,
    keep_child,
    microbatch_allowance,
    plain_identifier,
    start_child,
)
from arrivalbench.core.artifacts.dbt.files import DbtError
from arrivalbench.core.artifacts.dbt.inline import Compiled, inlined
from arrivalbench.core.engine import Failure, Limits, Table
from arrivalbench.core.task.spec import DEFAULT_LANDED_AT
from arrivalbench.errors import mention

META = "arrivalbench"  # the key of a project's own declarations under `meta`


@dataclass(frozen=True)
class DeclaredSource:
    name: str  # the source table's name: the task source's, and its data file's stem
    relation: tuple[str, str]  # schema, identifier
    record_key: tuple[str, ...]
    event_time: str | None
    landed_at: str = DEFAULT_LANDED_AT  # the load-time column a loader stamps its rows with


@dataclass(frozen=True)
class Declared:
    """What a project says about the model to grade and the sources it reads."""

    model: str
    key: tuple[str, ...]
    sources: tuple[DeclaredSource, ...]
    others: tuple[str, ...]  # source tables of the project the model does not read


def _ours(meta: object) -> dict[str, Any]:
    found = meta.get(META) if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _columns(value: object, what: str, root: Path) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise DbtError(f"{root}: {what} is {str(value)[:80]!r}; give a column or a list of "
                       "columns")
    return tuple(plain_identifier(c, what, root) for c in items)


def declared(parsed: Mapping[str, Any], root: Path, model: str | None) -> Declared:
    """The model graded, its key, and each source it reads with its record key and event
    time; a one-line DbtError naming what to declare where something is missing."""
    nodes: dict[str, dict[str, Any]] = parsed["nodes"]
    models = {n["name"]: uid for uid, n in nodes.items() if n["resource_type"] == "model"}
    incremental = sorted(n for n, uid in models.items()
                         if nodes[uid]["materialized"] == "incremental")
    if model is None:
        if len(incremental) != 1:
            listed = ", ".join(incremental) or "none"
            raise DbtError(f"{root}: {len(incremental)} incremental models ({listed}); "
                           f"name the one to grade with {mention('model')} MODEL")
        model = incremental[0]
    if model not in models:
        raise DbtError(f"{root}: no model named {model!r} (models: "
                       f"{', '.join(sorted(models)) or 'none'}); give {mention('model')} one of "
                       "them")
    node = nodes[models[model]]
    if node["materialized"] != "incremental":
        raise DbtError(f"{root}: model {model} is materialized as {node['materialized']!r}, "
                       "not incremental; set materialized='incremental' or give "
                       f"{mention('model')} one of: {', '.join(incremental) or 'none'}")
    _refuse_python(nodes, models[model], root)
    key_value = node["unique_key"] or _ours(node["meta"]).get("unique_key")
    if not key_value:
        raise DbtError(f"{root}: model {model} has no key; declare unique_key='COLUMN' in its "
                       "config (or meta: {arrivalbench: {unique_key: [COLUMN, ...]}})")
    key = _columns(key_value, f"model {model}'s unique_key", root)

    upstream: set[str] = set()
    todo = [models[model]]
    while todo:
        uid = todo.pop()
        if uid in upstream:
            continue
        upstream.add(uid)
        todo.extend(nodes.get(uid, {}).get("depends_on", ()))
    unique: dict[str, list[str]] = {}
    for test in nodes.values():
        if test["resource_type"] == "test" and test["test"] == "unique" and \
                isinstance(test["test_column"], str) and len(test["depends_on"]) == 1:
            unique.setdefault(test["depends_on"][0], []).append(test["test_column"])
    sources, others = [], []
    for table in parsed["sources"]:
        name = plain_identifier(table["name"], "a source table's name", root)
        if table["unique_id"] not in upstream:
            others.append(name)
            continue
        if table["database"] != DATABASE:
            raise DbtError(f"{root}: source table {name!r} is in database "
                           f"{table['database']!r}; remove its database setting")
        ours = _ours(table["meta"])
        if "record_key" in ours:
            record_key = _columns(ours["record_key"], f"source table {name}'s record_key", root)
        elif len(unique.get(table["unique_id"], ())) == 1:
            record_key = (plain_identifier(unique[table["unique_id"]][0],
                                           f"source table {name}'s unique column", root),)
        else:
            raise DbtError(f"{root}: source table {name!r} has no record key; give the column "
                           "that names one record a `unique` test, or declare meta: "
                           "{arrivalbench: {record_key: [COLUMN, ...]}} on the table")
        time_value = table["event_time"] or table["loaded_at_field"] or ours.get("event_time")
        event_time = None if not time_value else plain_identifier(
            time_value, f"source table {name}'s event time", root)
        landed_at = plain_identifier(ours.get("landed_at", DEFAULT_LANDED_AT),
                                     f"source table {name}'s landed_at", root)
        sources.append(DeclaredSource(
            name, (plain_identifier(table["schema"], f"source table {name!r}'s schema", root),
                   plain_identifier(table["identifier"],
                                    f"source table {name!r}'s identifier", root)),
            record_key, event_time, landed_at))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise DbtError(f"{root}: two source tables named {twice!r} feed model {model}; their "
                       "data files would share a name: give one of them another identifier")
    if not sources:
        raise DbtError(f"{root}: model {model} reads no source table; declare what it reads "
                       "in a sources .yml and read it with {{ source(...) }}")
    return Declared(model, key, tuple(sorted(sources, key=lambda s: s.name)),
                    tuple(sorted(others)))


def load(root: Path, model: str | None, limits: Limits = Limits(),
         passed_env: Sequence[str] = ()) -> tuple[Declared, DbtProject]:
    """Parse the project in a contained child and read what it declares; the project is
    then ready to run as `Declared.model`, its output exposed under the model's own name."""
    root = root.resolve()
    if not is_project(root):
        raise DbtError(f"{root}: no dbt_project.yml; {mention('data')} grades a dbt project "
                       "folder")
    _check_extra()
    found = _read(root, model or "")
    _refuse_python_files(found)
    child, parsed = start_child(found, passed_env, limits)
    try:
        what = declared(parsed, root, model)
        if what.model != model:  # the files as a grade of `what.model` reads them
            found = _read(root, what.model)
        node = next(n for n in parsed["nodes"].values()
                    if n["resource_type"] == "model" and n["name"] == what.model)
        if node["database"] != DATABASE:
            raise DbtError(f"{root}: model {what.model} is configured for database "
                           f"{node['database']!r}; remove its database setting")
        output = _Relation(plain_identifier(node["schema"], f"model {what.model}'s schema", root),
                           plain_identifier(node["alias"] or node["name"],
                                            f"model {what.model}'s alias", root))
        project = DbtProject(str(root), what.model, what.model, found.digest,
                             {s.name: _Relation(*s.relation) for s in what.sources}, output,
                             found, limits, tuple(passed_env),
                             allowance=microbatch_allowance(node), child=child, parsed=parsed)
    except BaseException:
        child.kill()
        raise
    return what, project


def release(project: DbtProject) -> None:
    """Done with `project`: its parsed child goes to the grade that follows in this process
    (`keep_child`), so that the project is parsed once per grade, not once per step."""
    child, parsed, project.child = project.child, project.parsed, None
    if child is None:
        return
    if parsed is None or not child.alive:
        child.kill()
        return
    keep_child(project.found, project.passed_env, project.limits, child, parsed)


@dataclass(frozen=True)
class Refreshed:
    table: Table  # the model over all the data: the oracle
    compiled: str  # what dbt compiled for the model and its parents, in full-refresh form
    models: tuple[Compiled, ...] = ()  # the same, model by model, with the relation each builds

    def query(self, project: DbtProject) -> str:
        """The full refresh as one query over the sources by name (`inline.NotInlined` where
        it is not one)."""
        return inlined(self.models, (project.output.schema, project.output.identifier),
                       {name: (r.schema, r.identifier) for name, r in project.sources.items()},
                       DATABASE)


def full_refresh(project: DbtProject, data: Mapping[str, pa.Table], limits: Limits = Limits(),
                 *, now: dt.datetime) -> Refreshed:
    """The model and its parents built with `--full-refresh` over all of `data` (source ->
    rows) at the wall clock `now` (the reference's clock), in a database of its own, the way a
    replay runs the project. A DbtError names the model when dbt cannot build it."""
    from arrivalbench.core.engine import duckdb as engine

    where = f"{project.origin}: model {project.model} built with --full-refresh over all the data"
    try:
        with engine.database(limits) as db:
            db.stage({name: table.append_column(
                "__batch", pa.array([0] * table.num_rows, pa.int64()))
                for name, table in data.items()})
            db.load(0, {name: table.column_names for name, table in data.items()})
            project._fill(db)
            session = _Session(db)
            result = project.invoke(session, ["run", "--select", f"+{project.model}",
                                              "--full-refresh"], db.deadline, now=now)
            if session.failure is not None:
                raise session.failure
            if not result["ok"]:
                raise Failure("run", _message(result["message"]))
            with contextlib.closing(db.connect()) as con:
                table = db.query(f"SELECT * FROM {project.output.sql()}", "read-target", con)
            # The SQL of each model as `dbt compile` gives it, not as the run sent it: what a
            # microbatch run compiled is its last batch, the window's filters in it.
            result = project.invoke(_Session(db), ["compile", "--select", f"+{project.model}",
                                                   "--full-refresh"], db.deadline, now=now)
            if not result["ok"]:
                raise Failure("run", _message(result["message"]))
    except Failure as failure:
        raise DbtError(f"{where}: {failure.message}; fix the model (dbt run --full-refresh "
                       "fails the same way)") from None
    blocks = sorted(f"-- {path}\n{str(code).strip().rstrip(';')};\n"
                    for path, code, *_relation in result["compiled"])
    models = tuple(Compiled((str(schema), str(alias)), str(code))
                   for _path, code, schema, alias in result["compiled"])
    return Refreshed(table, "\n".join(blocks), models)
