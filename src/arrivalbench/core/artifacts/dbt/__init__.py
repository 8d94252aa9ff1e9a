"""A dbt project as an artifact: `dbt run --select +MODEL` once per batch, in-process.

The project is copied to a scratch folder (dbt writes `target/` and logs beside it, never in
the user's tree) and parsed once; every run reuses that manifest. dbt reaches the database
through dbt-duckdb, whose connections are handed out here instead of opened by it: each is a
new connection to the replay's own database in the harness's locked DuckDB instance, and each
statement dbt sends goes through the engine (the same refusals, time limit and phases as a
script's) and is counted, so that a crash can cut the run after a share of them.
"""

from __future__ import annotations

import atexit
import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from arrivalbench.core.artifacts.dbt import files
from arrivalbench.core.artifacts.dbt.files import DbtError
from arrivalbench.core.engine import Failure, normalize_message
from arrivalbench.core.values import digest

if TYPE_CHECKING:
    import duckdb

    from arrivalbench.core import engine
    from arrivalbench.core.artifacts.base import Run
    from arrivalbench.core.engine.duckdb import Database
    from arrivalbench.core.schedules import Batch
    from arrivalbench.core.task import TaskSpec

PROFILE = "arrivalbench"
# Never opened (the harness hands dbt its connections); the file's stem names the database in
# the SQL dbt compiles, and it is the name of every replay's database.
DATABASE = "replay"


def _dbt_modules() -> tuple[Any, Any, Any]:
    try:
        from dbt.adapters.duckdb import connections, environments
        from dbt.cli.main import dbtRunner
        from dbt_common.tests import enable_test_caching
    except ImportError:
        raise DbtError("grading a dbt project needs the dbt extra: pip install "
                       "'arrivalbench[dbt]'") from None
    # dbt's own switch for repeated in-process invocations: discover plugin modules once
    # (a walk of sys.path per run otherwise) and keep what it extracts from Jinja templates.
    enable_test_caching()
    return dbtRunner, connections, environments


def _flags(scratch: Path) -> list[str]:
    return ["--project-dir", str(scratch / "project"), "--profiles-dir", str(scratch),
            "--profile", PROFILE, "--target", DATABASE,
            "--target-path", str(scratch / "target"), "--log-path", str(scratch / "logs"),
            "--log-level", "none", "--log-level-file", "none", "--no-use-colors",
            "--no-send-anonymous-usage-stats", "--no-version-check", "--no-partial-parse",
            "--no-write-json"]


def _profile() -> str:
    return yaml.safe_dump({PROFILE: {"target": DATABASE, "outputs": {DATABASE: {
        "type": "duckdb", "path": f"{DATABASE}.duckdb", "schema": "main", "threads": 1}}}})


def _message(text: str) -> str:
    """dbt's messages span lines ("Runtime Error in model x (models/x.sql)", then the cause):
    one line, then masked like an engine message."""
    return normalize_message(" ".join(text.split()))


# -- the connections dbt gets ------------------------------------------------------------------


class _Aborted(RuntimeError):
    """The simulated crash: every statement from the abort point on is refused."""


@dataclass
class _Session:
    """The statements of one dbt invocation in one replay's database."""

    db: Database
    limit: int | None = None  # statements allowed before the crash
    sent: int = 0
    aborted: bool = False
    failure: Failure | None = None  # the engine's own verdict on a statement, if it had one
    cursors: list[_Cursor] = field(default_factory=list)

    def close(self) -> None:
        for cursor in self.cursors:
            cursor.close()
        self.cursors.clear()


class _Cursor:
    """What dbt-duckdb calls a cursor: one new connection to the replay's database."""

    def __init__(self, session: _Session) -> None:
        self._session = session
        self._con: duckdb.DuckDBPyConnection = session.db.connect()
        self._open = True
        session.cursors.append(self)

    def execute(self, sql: str, bindings: Any = None) -> _Cursor:
        session = self._session
        if session.aborted or (session.limit is not None and session.sent >= session.limit):
            session.aborted = True
            raise _Aborted("the run was aborted here")
        index = session.sent
        session.sent += 1
        try:
            session.db.split(sql)  # refuse what a script may not do either
            session.db.execute(self._con, sql, index, list(bindings) if bindings else None)
        except Failure as failure:
            if session.failure is None:
                session.failure = failure
            raise RuntimeError(failure.message) from None
        return self

    def __getattr__(self, name: str) -> Any:  # fetchall, description...: the connection's
        return getattr(self._con, name)

    def rollback(self) -> None:
        with contextlib.suppress(Exception):
            self._con.rollback()

    def close(self) -> None:
        if self._open:
            self._open = False
            with contextlib.suppress(Exception):
                self._con.close()  # rolls back what the run left open


class _Handle:
    def __init__(self, session: _Session) -> None:
        self._cursor = _Cursor(session)

    def cursor(self) -> _Cursor:
        return self._cursor

    def rollback(self) -> None:
        self._cursor.rollback()

    def close(self) -> None:
        self._cursor.close()


def _environment(base: Any, session: _Session) -> Any:
    """dbt-duckdb's local environment with its connections handed out by the harness."""

    class HarnessEnvironment(base):  # type: ignore[misc]
        def handle(self) -> _Handle:
            return _Handle(session)

        def submit_python_job(self, handle: Any, parsed_model: dict[str, Any],
                              compiled_code: str) -> Any:
            raise RuntimeError("Python models are not run by arrivalbench")

        @classmethod
        def cancel(cls, connection: Any) -> None:
            connection.handle.cursor().interrupt()

        def close(self) -> None:
            pass

    return HarnessEnvironment


@contextlib.contextmanager
def _connected(session: _Session) -> Iterator[None]:
    """dbt-duckdb keeps one environment per process in a class attribute and creates it on the
    first connection: for the length of one invocation it is ours, bound to `session`."""
    _runner, connections, environments = _dbt_modules()
    manager = connections.DuckDBConnectionManager
    from dbt.adapters.duckdb.environments.local import LocalEnvironment

    env_class = _environment(LocalEnvironment, session)
    original = environments.create
    with manager._LOCK:
        manager._ENV = None
        environments.create = env_class
    try:
        yield
    finally:
        with manager._LOCK:
            environments.create = original
            manager._ENV = None
        session.close()


# -- the project ------------------------------------------------------------------------------


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def plain_identifier(value: object, what: str, root: Path) -> str:
    """`value` if it is a plain SQL identifier, else a one-line refusal naming it. Names the
    harness takes from a project's YAML go into SQL it runs itself; quoting alone would be
    the only wall there, and a name that needs quoting is no name a pipeline needs."""
    if not isinstance(value, str) or not _PLAIN.fullmatch(value):
        raise DbtError(f"{root}: {what} is {str(value)[:80]!r}, not a plain identifier "
                       "(letters, digits and _, not starting with a digit, at most 63); "
                       "rename it")
    return value


@dataclass(frozen=True)
class _Relation:
    schema: str
    identifier: str

    def sql(self) -> str:
        return f'"{DATABASE}"."{self.schema}"."{self.identifier}"'


@dataclass(eq=False)
class DbtProject:
    """A parsed dbt project, graded as `model` for the task's target."""

    path: Path
    model: str
    target: str
    files: str  # the digest of the files dbt reads
    sources: dict[str, _Relation]  # task source -> the relation the project reads it from
    output: _Relation  # the model's relation
    scratch: Path
    manifest: Any
    compiled: str = ""

    @property
    def text(self) -> str:
        """The SQL dbt compiled, under a line naming the project's files by their digest, so
        that the digest of the text (the artifact's) covers those files too."""
        return f"-- dbt project {self.files}, model {self.model}\n{self.compiled}"

    @property
    def digest(self) -> str:
        return digest(self.text)

    def invoke(self, session: _Session, args: list[str]) -> Any:
        runner_class, _connections, _environments = _dbt_modules()
        with _connected(session):
            return runner_class(manifest=self.manifest).invoke([*args, *_flags(self.scratch)])

    def start(self, any_db: engine.Database) -> Run:
        from arrivalbench.core.engine import duckdb as duckdb_engine

        if not isinstance(any_db, duckdb_engine.Database):
            # dbt-duckdb is the only adapter the harness hands its connections to.
            raise DbtError(f"{self.path}: a dbt project runs on engine duckdb only; grade it "
                           "with --engine duckdb")
        db = any_db

        def run(batch: Batch) -> None:
            self._fill(db)
            limit = None
            if batch.aborted and batch.abort != 1.0:
                # The share is of the statements this very run sends: count them in a run
                # that is then undone, and cut the real one after that share.
                db.save()
                try:
                    probe = _Session(db)
                    self.invoke(probe, ["run", "--select", f"+{self.model}"])
                finally:
                    db.restore()
                limit = batch.abort_after(max(probe.sent, 1))
            session = _Session(db, limit)
            result = self.invoke(session, ["run", "--select", f"+{self.model}"])
            if session.aborted:
                return  # crashed: the batch is delivered again
            if session.failure is not None and session.failure.phase != "run":
                raise session.failure
            if not result.success:
                raise Failure("run", _failure_message(result), statement=_failed(session))
            self._expose(db)

        return run

    def _fill(self, db: Database) -> None:
        """Put each batch where the project's sources read it, if that is not `incoming`.
        On a connection of its own, which sees the replay's database and nothing else."""
        for name, relation in self.sources.items():
            if relation == _Relation("incoming", name):
                continue
            with contextlib.closing(db.connect()) as con:
                db.query(f'CREATE SCHEMA IF NOT EXISTS "{DATABASE}"."{relation.schema}"; '
                         f"CREATE OR REPLACE TABLE {relation.sql()} AS "
                         f'SELECT * FROM "{DATABASE}".incoming."{name}"', "load", con)

    def _expose(self, db: Database) -> None:
        """The graded model under the target's name, where the oracle reads it."""
        if self.output != _Relation("main", self.target):
            with contextlib.closing(db.connect()) as con:
                db.query(f'CREATE OR REPLACE VIEW "{DATABASE}".main."{self.target}" AS '
                         f"SELECT * FROM {self.output.sql()}", "read-target", con)


def _failed(session: _Session) -> int | None:
    return session.failure.statement if session.failure is not None else None


def _failure_message(result: Any) -> str:
    if result.exception is not None:
        return _message(str(result.exception))
    for node in getattr(result.result, "results", None) or ():
        if str(node.status) in ("error", "fail"):
            return _message(node.message or f"{node.node.name} failed")
    return "dbt run failed"


# -- loading ----------------------------------------------------------------------------------


def project_digest(root: Path, model: str) -> str:
    """Covers the project's files, the graded model and the dbt versions that run them."""
    return _digest(files.read(root), model)


def _digest(found: files.Files, model: str) -> str:
    from importlib.metadata import version

    return digest(f"dbt-core {version('dbt-core')} dbt-duckdb {version('dbt-duckdb')} "
                  f"select {model}\n{found.digest}")


def _scratch(found: files.Files) -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="arrivalbench-dbt-"))
    atexit.register(shutil.rmtree, scratch, True)
    files.copy(found, scratch / "project")
    (scratch / "profiles.yml").write_text(_profile(), encoding="utf-8")
    return scratch


_loaded: dict[tuple[Path, str, str, str], DbtProject] = {}


def is_project(path: Path) -> bool:
    return (path / "dbt_project.yml").is_file()


def load_project(path: Path, spec: TaskSpec, select: str | None = None) -> DbtProject:
    """Parse the dbt project at `path` once per process, for the task `spec`."""
    root = path.resolve()
    if not is_project(root):
        raise DbtError(f"{path}: no dbt_project.yml; give a dbt project folder or a .sql "
                       "script")
    model = select or spec.target.name
    found = files.read(root)
    _refuse_python_files(found)
    key = (root, model, spec.target.name, _digest(found, model))
    if key not in _loaded:
        _loaded[key] = _parse(found, model, spec, key[3])
    return _loaded[key]


def _refuse_python_files(found: files.Files) -> None:
    """A Python model runs arbitrary Python wherever dbt runs: refused before dbt sees it,
    wherever it sits (dbt reads a model from any of the project's model paths)."""
    for rel in found.paths:
        if rel.endswith(".py"):
            raise DbtError(f"{found.root / rel}: a Python file; arrivalbench runs only SQL "
                           "models (a Python model would run outside the sandbox); remove it")


def _parse(found: files.Files, model: str, spec: TaskSpec, digest: str) -> DbtProject:
    runner_class, _c, _e = _dbt_modules()
    root = found.root
    scratch = _scratch(found)
    result = runner_class().invoke(["parse", *_flags(scratch)])
    if not result.success or result.result is None:
        raise DbtError(f"{root}: dbt cannot parse the project ("
                       f"{_message(str(result.exception or 'parse failed'))}); run "
                       "`dbt parse` in it and fix what it reports")
    manifest = result.result
    nodes = {n.name: n for n in manifest.nodes.values() if n.resource_type == "model"}
    if model not in nodes:
        known = ", ".join(sorted(nodes)) or "none"
        fix = (f"name the model after the target {spec.target.name!r} or give --select MODEL"
               if model == spec.target.name else "give --select one of them")
        raise DbtError(f"{root}: no model named {model!r} (models: {known}); {fix}")
    _refuse_python(manifest, nodes[model], root)
    node = nodes[model]
    output = _Relation(plain_identifier(node.schema, f"model {model}'s schema", root),
                       plain_identifier(node.alias or node.name, f"model {model}'s alias",
                                        root))
    if node.database != DATABASE:
        raise DbtError(f"{root}: model {model} is configured for database {node.database!r}; "
                       "remove its database setting")
    sources = {}
    declared = {s.name: s for s in manifest.sources.values()}
    for source in spec.sources:
        table = declared.get(source.name)
        if table is None:
            raise DbtError(f"{root}: the project declares no source table {source.name!r}; "
                           f"add it to a sources .yml (e.g. source 'incoming', table "
                           f"'{source.name}')")
        if table.database != DATABASE:
            raise DbtError(f"{root}: source table {source.name!r} is in database "
                           f"{table.database!r}; remove its database setting")
        sources[source.name] = _Relation(
            plain_identifier(table.schema, f"source table {source.name!r}'s schema", root),
            plain_identifier(table.identifier, f"source table {source.name!r}'s identifier",
                             root))
    project = DbtProject(root, model, spec.target.name, digest, sources, output, scratch,
                         manifest)
    project.compiled = _compiled_text(project, spec)
    return project


def _refuse_python(manifest: Any, node: Any, root: Path) -> None:
    """Python models would run outside the sandbox; seeds would be loaded by dbt from files
    with statements the harness does not see as a pipeline's: the model and its parents are
    SQL models, sources and snapshots only."""
    for current in manifest.nodes.values():
        if str(getattr(current, "language", "sql")) == "python":
            raise DbtError(f"{root}: model {current.name} is a Python model; arrivalbench runs "
                           "only SQL models (a Python model would run unsandboxed)")
    seen, todo = set(), [node.unique_id]
    while todo:
        uid = todo.pop()
        if uid in seen or uid not in manifest.nodes:
            continue
        seen.add(uid)
        current = manifest.nodes[uid]
        if current.resource_type == "seed":
            raise DbtError(f"{root}: model {node.name} reads seed {current.name}; arrivalbench "
                           "does not load seeds (declare the data as a task source instead, or "
                           "write it into the model)")
        todo.extend(getattr(current.depends_on, "nodes", None) or ())


def _compiled_text(project: DbtProject, spec: TaskSpec) -> str:
    """The SQL dbt compiles for the selected models once the model exists: its incremental
    form, which is the one that sees late, repeated and re-sent data."""
    from arrivalbench.core.engine import Limits
    from arrivalbench.core.engine import duckdb as engine

    with engine.database(Limits()) as db:
        for source in spec.sources:
            columns = ", ".join(f'"{c.name}" {c.type}' for c in source.columns)
            db.query(f'CREATE TABLE incoming."{source.name}" ({columns})', "load")
        project._fill(db)
        select = ["--select", f"+{project.model}"]
        project.invoke(_Session(db), ["run", *select])
        result = project.invoke(_Session(db), ["compile", *select])
    if not result.success:
        raise DbtError(f"{project.path}: dbt cannot compile model {project.model} "
                       f"({_failure_message(result)}); run `dbt compile` in it and fix it")
    blocks = []
    for node_result in result.result.results:
        node = node_result.node
        if node.resource_type == "model":
            code = (node.compiled_code or "").strip().rstrip(";")
            blocks.append(f"-- {node.original_file_path}\n{code};\n")
    return "\n".join(sorted(blocks))
