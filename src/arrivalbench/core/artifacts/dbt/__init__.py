"""A dbt project as an artifact: `dbt run --select +MODEL` once per batch, in a contained
child process.

The project is read as data (`files`: no links, devices or paths outside it) and copied into
the scratch folder of a child process (`process`, `child`) that runs dbt with an allowlisted
environment, memory and file-size limits, and parses the project once; every run reuses that
manifest. The child holds no database: each statement dbt sends comes here as text and runs on
a new connection to the replay's own database, through the engine (the same refusals, time
limit and phases as a script's), and is counted, so that a crash can cut the run after a share
of them. The wall clock of a load, of a replay and of one dbt invocation in it is kept here;
past it the child is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import multiprocessing.util
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from arrivalbench.core import clock
from arrivalbench.core.artifacts.dbt import files
from arrivalbench.core.artifacts.dbt.files import DbtError, Files
from arrivalbench.core.artifacts.dbt.process import Child, Died, Expired
from arrivalbench.core.artifacts.ref import ArtifactRef
from arrivalbench.core.engine import Failure, Limits, normalize_message
from arrivalbench.core.lateness import BATCH_SIZES, Allowance
from arrivalbench.core.values import digest
from arrivalbench.errors import mention

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
RUN_TIMEOUT = "dbt ran past the replay's wall-clock limit and was stopped"


def run_limit(seconds: float) -> str:
    """The message of a dbt invocation stopped at `Limits.run_seconds`."""
    return f"dbt ran past its limit of {seconds:g} s for one run and was stopped"

DIED = "dbt's process ended abruptly (a crash, or a kill at its memory limit)"


def _check_extra() -> None:
    # Asked of the installed distributions, not by importing: only the child runs dbt, and
    # importing dbt.cli here would cost the grader seconds for nothing.
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = bool(version("dbt-core")) and bool(version("dbt-duckdb"))
    except PackageNotFoundError:
        found = False
    if not found:
        raise DbtError("grading a dbt project needs the dbt extra: pip install "
                       "'arrivalbench[dbt]'")


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
    by_id: dict[int, _Cursor] = field(default_factory=dict)  # the child's cursors

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
        if not isinstance(bindings, list | None) or not all(
                isinstance(v, str | int | float | bool | None) for v in bindings or ()):
            raise RuntimeError("statement parameters are text, numbers or booleans")
        try:
            session.db.split(sql)  # refuse what a script may not do either
            session.db.execute(self._con, sql, index, list(bindings) if bindings else None)
        except Failure as failure:
            if session.failure is None:
                session.failure = failure
            raise RuntimeError(failure.message) from None
        return self

    def fetched(self) -> tuple[list[str] | None, list[tuple[object, ...]]]:
        """The column names and rows of the last statement, read back within the bound."""
        if self._con.description is None:
            return None, []
        table = self._session.db.fetch(self._con, "run")
        return [name for name, _type in table.columns], list(table.rows)

    def rollback(self) -> None:
        with contextlib.suppress(Exception):
            self._con.rollback()

    def close(self) -> None:
        if self._open:
            self._open = False
            with contextlib.suppress(Exception):
                self._con.close()  # rolls back what the run left open


def _serve(session: _Session) -> Any:
    """Answer the child's requests: a statement on one of its cursors, a rollback, a close."""

    def serve(request: list[Any]) -> Any:
        kind, ident, *rest = request
        cursor = session.by_id.get(ident)
        if kind == "execute":
            if cursor is None:
                cursor = session.by_id[ident] = _Cursor(session)
            sql, params = rest
            try:
                cursor.execute(str(sql), params)
                return ("rows", *cursor.fetched())
            except Failure as failure:  # read back past its bound
                if session.failure is None:
                    session.failure = failure
                return ("error", failure.message)
            except (RuntimeError, _Aborted) as exc:
                return ("error", str(exc))
        if cursor is not None and kind == "rollback":
            cursor.rollback()
        elif cursor is not None and kind == "close":
            cursor.close()
        return None

    return serve


# -- the project ------------------------------------------------------------------------------


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def plain_identifier(value: object, what: str, root: str | Path) -> str:
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

    origin: str  # where it was read, for messages
    model: str
    target: str
    files: str  # the digest of the files dbt reads
    sources: dict[str, _Relation]  # task source -> the relation the project reads it from
    output: _Relation  # the model's relation
    found: Files  # what is copied for dbt
    limits: Limits = Limits()
    passed_env: tuple[str, ...] = ()  # the user's own variables the project may read
    compiled: str = ""
    allowance: Allowance | None = None  # a microbatch model's lookback: what it re-reads
    child: Child | None = None
    parsed: dict[str, Any] | None = None  # what `child` parsed, while it is the one that did

    @property
    def text(self) -> str:
        """The SQL dbt compiled, under a line naming the project's files by their digest, so
        that the digest of the text (the artifact's) covers those files too."""
        return f"-- dbt project {self.files}, model {self.model}\n{self.compiled}"

    @property
    def digest(self) -> str:
        return digest(self.text)

    @property
    def ref(self) -> ArtifactRef:
        return ArtifactRef("dbt", self.text, self.found.content, self.found.digest,
                           (self.model,), self.passed_env, self.origin, self.allowance)

    def _child(self) -> Child:
        """The project's dbt process, started and the project parsed on first use, and again
        after a kill (within the load bound)."""
        if self.child is not None and self.child.alive:
            return self.child
        self.child = start_child(self.found, self.passed_env, self.limits)[0]
        return self.child

    def invoke(self, session: _Session, args: list[str], deadline: float, *,
               now: dt.datetime) -> dict[str, Any]:
        """dbt with `args` at the wall clock `now` (naive UTC), its statements in `session`;
        killed at `deadline` (monotonic: the replay's or the load's) or `limits.run_seconds`
        from now, whichever comes first, which is then a `Failure` with phase `timeout` naming
        the limit. The next invocation starts a new child."""
        child = self._child()
        own = time.monotonic() + self.limits.run_seconds  # after a restart's parse, not before
        try:
            return child.call("invoke", [*args, *_flags(child.scratch)], min(deadline, own),
                              _serve(session), now=now)
        except Expired:
            self.child = None
            raise Failure("timeout", RUN_TIMEOUT if deadline <= own else
                          run_limit(self.limits.run_seconds)) from None
        except Died:
            self.child = None
            raise Failure("memory", DIED) from None
        finally:
            session.close()

    def close(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child = None

    def start(self, any_db: engine.Database) -> Run:
        from arrivalbench.core.engine import duckdb as duckdb_engine

        if not isinstance(any_db, duckdb_engine.Database):
            # dbt-duckdb is the only adapter the harness hands its connections to.
            raise DbtError(f"{self.origin}: a dbt project runs on engine duckdb only, not "
                           f"{type(any_db).__module__.rsplit('.', 1)[-1]}")
        db = any_db
        # A child killed in an earlier replay is started again here, on the load's bound: its
        # parse is the harness's work, not the replay's.
        started = time.monotonic()
        self._child()
        deadline = db.deadline + (time.monotonic() - started)

        def run(batch: Batch) -> None:
            self._fill(db)
            now = batch.clock or clock.EPOCH
            limit = None
            if batch.aborted and batch.abort != 1.0:
                # The share is of the statements this very run sends: count them in a run
                # that is then undone, and cut the real one after that share.
                db.save()
                try:
                    probe = _Session(db)
                    self.invoke(probe, ["run", "--select", f"+{self.model}"], deadline,
                                now=now)
                finally:
                    db.restore()
                limit = batch.abort_after(max(probe.sent, 1))
            session = _Session(db, limit)
            result = self.invoke(session, ["run", "--select", f"+{self.model}"], deadline,
                                 now=now)
            if session.aborted:
                return  # crashed: the batch is delivered again
            if session.failure is not None and session.failure.phase != "run":
                raise session.failure
            if not result["ok"]:
                raise Failure("run", _message(result["message"]), statement=_failed(session))
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


# -- loading ----------------------------------------------------------------------------------


def project_digest(root: Path, model: str) -> str:
    """Covers the project's files, the graded model and the dbt versions that run them."""
    return _read(root, model).digest


def _header(model: str) -> str:
    from importlib.metadata import version

    return f"dbt-core {version('dbt-core')} dbt-duckdb {version('dbt-duckdb')} select {model}\n"


def _read(root: Path, model: str) -> files.Files:
    return files.read(root, _header(model))


_loaded: dict[tuple[str, str, str, str, tuple[str, ...], Limits], DbtProject] = {}


def is_project(path: Path) -> bool:
    return (path / "dbt_project.yml").is_file()


def read_project(path: Path, spec: TaskSpec, *, models: Sequence[str] = (),
                 passed_env: Sequence[str] = (), limits: Limits = Limits()) -> DbtProject:
    """The dbt project at `path`, parsed once per process, for the task `spec`: `models`
    names the model graded as the task's target (default: the one named after it);
    `passed_env` the variables of the user's environment the project may read with
    `env_var`, no other being there. Parsing and compiling are bounded by
    `limits.load_seconds`."""
    root = path.resolve()
    if not is_project(root):
        raise DbtError(f"{path}: no dbt_project.yml; give a dbt project folder or a .sql "
                       "script")
    _check_extra()
    model = _model(models, spec)
    return _project(_read(root, model), model, spec, tuple(passed_env), limits)


def load_project(ref: ArtifactRef, spec: TaskSpec, *, limits: Limits = Limits()) -> DbtProject:
    """The project `ref` describes, parsed once per process; refused when its files or what
    dbt compiles of them are not what was described (another dbt, a project edited since)."""
    _check_extra()
    model = _model(ref.models, spec)
    found = files.of(ref.origin, ref.files, _header(model))
    if found.digest != ref.project:
        raise DbtError(f"{ref.origin}: its files are not the ones described "
                       f"({str(ref.project)[:15]}…, now {found.digest[:15]}…: another dbt "
                       "version?); grade it again into a new results file")
    project = _project(found, model, spec, tuple(ref.passed_env), limits)
    if project.digest != ref.digest:
        raise DbtError(f"{ref.origin}: dbt compiles it to other SQL than when it was stored "
                       f"({ref.digest[:15]}…, now {project.digest[:15]}…); grade it again into "
                       "a new results file")
    return project


def _model(models: Sequence[str], spec: TaskSpec) -> str:
    if len(models) > len(spec.targets):
        raise DbtError(f"models {', '.join(models)}: task {spec.id} has "
                       f"{len(spec.targets)} target(s); name one model per target")
    return models[0] if models else spec.target.name


def _project(found: files.Files, model: str, spec: TaskSpec, passed_env: tuple[str, ...],
             limits: Limits) -> DbtProject:
    _refuse_python_files(found)
    key = (found.digest, found.origin, model, spec.digest, passed_env, limits)
    if key not in _loaded:
        _loaded[key] = _parse(found, model, spec, passed_env, limits)
    return _loaded[key]


def _refuse_python_files(found: files.Files) -> None:
    """A Python model runs arbitrary Python wherever dbt runs: refused before dbt sees it,
    wherever it sits (dbt reads a model from any of the project's model paths)."""
    for rel in found.paths:
        if rel.endswith(".py"):
            raise DbtError(f"{found.origin}/{rel}: a Python file; arrivalbench runs only SQL "
                           "models (a Python model would run outside the sandbox); remove it")


# Parsed children handed over by an earlier step of this process (the own-data grade derives
# its task with one, then grades with it): a parse costs seconds, and the copy it holds is the
# very files `found` names (their digest is the key).
_kept: dict[tuple[str, tuple[str, ...], Limits], tuple[Child, dict[str, Any]]] = {}


def _kept_key(found: files.Files, passed_env: Sequence[str], limits: Limits
              ) -> tuple[str, tuple[str, ...], Limits]:
    return found.digest, tuple(passed_env), limits


def keep_child(found: files.Files, passed_env: Sequence[str], limits: Limits, child: Child,
               parsed: dict[str, Any]) -> None:
    """Hand `child`, which parsed `found` into `parsed`, to the next `start_child` for the same
    files, environment and limits in this process (killed at exit if nobody takes it)."""
    if not _kept:
        _at_exit(_kill_kept)
    key = _kept_key(found, passed_env, limits)
    previous = _kept.pop(key, None)
    if previous is not None:
        previous[0].kill()
    _kept[key] = (child, parsed)


def _at_exit(cleanup: Callable[[], None]) -> None:
    """Run `cleanup` (idempotent) however this process ends short of a kill: at interpreter
    exit, and in a process multiprocessing forked, which leaves through os._exit (skipping
    atexit) after running the finalizers that have an exit priority."""
    atexit.register(cleanup)
    multiprocessing.util.Finalize(None, cleanup, exitpriority=50)


def _kill_kept() -> None:
    while _kept:
        _kept.popitem()[1][0].kill()


def start_child(found: files.Files, passed_env: Sequence[str], limits: Limits
                ) -> tuple[Child, dict[str, Any]]:
    """A dbt process holding a copy of the project, parsed; and what it parsed."""
    kept = _kept.pop(_kept_key(found, passed_env, limits), None)
    if kept is not None:
        if kept[0].alive:
            return kept
        kept[0].kill()
    child = Child(passed_env)
    try:
        files.copy(found, child.scratch / "project")
        (child.scratch / "profiles.yml").write_text(_profile(), encoding="utf-8")
        parsed = child.call("parse", _flags(child.scratch),
                            time.monotonic() + limits.load_seconds, lambda _r: ("error", ""))
    except Expired:
        raise DbtError(f"{found.origin}: dbt did not parse the project within "
                       f"{limits.load_seconds:g} s, the load limit (a Jinja loop?)") from None
    except Died:
        raise DbtError(f"{found.origin}: dbt's process ended while parsing the project (a crash "
                       "or its memory limit)") from None
    except BaseException:
        child.kill()
        raise
    if not parsed["ok"]:
        child.kill()
        raise DbtError(f"{found.origin}: dbt cannot parse the project "
                       f"({_message(parsed['message'])}); run `dbt parse` in it and fix what "
                       "it reports")
    return child, parsed


def _parse(found: files.Files, model: str, spec: TaskSpec, passed_env: tuple[str, ...],
           limits: Limits) -> DbtProject:
    child, parsed = start_child(found, passed_env, limits)
    try:
        project = _check(found, model, spec, parsed, passed_env, limits)
        project.child = child
        project.compiled = _compiled_text(project, spec)
    except BaseException:
        child.kill()
        raise
    _at_exit(project.close)
    return project


def _check(found: files.Files, model: str, spec: TaskSpec, parsed: dict[str, Any],
           passed_env: tuple[str, ...], limits: Limits) -> DbtProject:
    """The project as parsed, checked: the model exists, it and its parents are SQL models
    (no Python, no seeds), and every name the harness takes from it is a plain identifier."""
    root = found.origin
    nodes: dict[str, dict[str, Any]] = parsed["nodes"]
    models = {n["name"]: uid for uid, n in nodes.items() if n["resource_type"] == "model"}
    if model not in models:
        known = ", ".join(sorted(models)) or "none"
        fix = (f"name the model after the target {spec.target.name!r} or give "
               f"{mention('select')} MODEL" if model == spec.target.name else
               f"give {mention('select')} one of them")
        raise DbtError(f"{root}: no model named {model!r} (models: {known}); {fix}")
    _refuse_python(nodes, models[model], root)
    node = nodes[models[model]]
    output = _Relation(plain_identifier(node["schema"], f"model {model}'s schema", root),
                       plain_identifier(node["alias"] or node["name"],
                                        f"model {model}'s alias", root))
    if node["database"] != DATABASE:
        raise DbtError(f"{root}: model {model} is configured for database "
                       f"{node['database']!r}; remove its database setting")
    sources = {}
    declared = {s["name"]: s for s in parsed["sources"]}
    for source in spec.sources:
        table = declared.get(source.name)
        if table is None:
            raise DbtError(f"{root}: the project declares no source table {source.name!r}; "
                           f"add it to a sources .yml (e.g. source 'incoming', table "
                           f"'{source.name}')")
        if table["database"] != DATABASE:
            raise DbtError(f"{root}: source table {source.name!r} is in database "
                           f"{table['database']!r}; remove its database setting")
        sources[source.name] = _Relation(
            plain_identifier(table["schema"], f"source table {source.name!r}'s schema", root),
            plain_identifier(table["identifier"],
                             f"source table {source.name!r}'s identifier", root))
    return DbtProject(found.origin, model, spec.target.name, found.digest, sources, output, found,
                      limits, passed_env, allowance=microbatch_allowance(node))


def microbatch_allowance(node: dict[str, Any]) -> Allowance | None:
    """What a microbatch model keeps: the `lookback` windows of `batch_size` it re-reads
    (dbt's default lookback is 1); None for any other model."""
    if node.get("incremental_strategy") != "microbatch":
        return None
    size = str(node.get("batch_size") or "")
    lookback = node.get("lookback")
    if size not in BATCH_SIZES:
        return None  # dbt refuses the model itself; its run says why
    return Allowance(lookback=1 if lookback is None else int(lookback), batch_size=size)


def _refuse_python(nodes: dict[str, dict[str, Any]], start: str, root: str | Path) -> None:
    """Python models would run outside the sandbox; seeds would be loaded by dbt from files
    with statements the harness does not see as a pipeline's: the model and its parents are
    SQL models, sources and snapshots only."""
    for current in nodes.values():
        if current["language"] == "python":
            raise DbtError(f"{root}: model {current['name']} is a Python model; arrivalbench "
                           "runs only SQL models (a Python model would run unsandboxed)")
    seen: set[str] = set()
    todo = [start]
    while todo:
        uid = todo.pop()
        if uid in seen or uid not in nodes:
            continue
        seen.add(uid)
        current = nodes[uid]
        if current["resource_type"] == "seed":
            raise DbtError(f"{root}: model {nodes[start]['name']} reads seed "
                           f"{current['name']}; arrivalbench does not load seeds (declare the "
                           "data as a task source instead, or write it into the model)")
        todo.extend(current["depends_on"])


def _compiled_text(project: DbtProject, spec: TaskSpec) -> str:
    """The SQL dbt compiles for the selected models once the model exists: its incremental
    form, which is the one that sees late, repeated and re-sent data."""
    from arrivalbench.core.engine import duckdb as engine

    deadline = time.monotonic() + project.limits.load_seconds
    try:
        with engine.database(Limits()) as db:
            for source in spec.sources:
                columns = ", ".join(f'"{c.name}" {c.type}' for c in source.columns)
                db.query(f'CREATE TABLE incoming."{source.name}" ({columns})', "load")
            project._fill(db)
            select = ["--select", f"+{project.model}"]
            # At a fixed clock: what a model makes of the time must not change the text's digest.
            project.invoke(_Session(db), ["run", *select], deadline, now=clock.EPOCH)
            result = project.invoke(_Session(db), ["compile", *select], deadline,
                                    now=clock.EPOCH)
    except Failure as failure:
        if failure.message == run_limit(project.limits.run_seconds):
            raise DbtError(f"{project.origin}: dbt's run or compile of model {project.model} "
                           f"on empty sources took over {project.limits.run_seconds:g} s, the "
                           "limit of one run (a Jinja loop?)") from None
        if failure.phase == "timeout":
            raise DbtError(f"{project.origin}: dbt did not compile model {project.model} within "
                           f"{project.limits.load_seconds:g} s, the load limit (a Jinja "
                           "loop?)") from None
        raise DbtError(f"{project.origin}: dbt cannot compile model {project.model} "
                       f"({failure.message})") from None
    if not result["ok"]:
        raise DbtError(f"{project.origin}: dbt cannot compile model {project.model} "
                       f"({_message(result['message'])}); run `dbt compile` in it and fix it")
    blocks = []
    for path, code, *_relation in result["compiled"]:
        code = str(code).strip().rstrip(";")
        blocks.append(f"-- {path}\n{code};\n")
    return "\n".join(sorted(blocks))
