"""A second engine through the harness: per-engine task pipelines and `fails:`, `--engine` on
the commands, and both engines' verdicts in one results file.

Most tests run the PostgreSQL plumbing on a stand-in: `arrivalbench.core.engine.postgres` with
DuckDB's database behind it and a fixed version, so that what is checked here is the wiring
(which pipeline, which fails, which key, which cell), not PostgreSQL. The tests marked
`real_postgres` run on the real server and skip only when the `postgres` extra is not
installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from rich.console import Console

from arrivalbench.core.artifacts import script_ref
from arrivalbench.core.engine import ENGINES, backend
from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.grading import GradeOptions
from arrivalbench.core.task import load_spec
from arrivalbench.core.verdict import Verdict
from arrivalbench.corpus import gate
from arrivalbench.corpus.leakage import scan
from arrivalbench.corpus.prompts import VARIANTS, build
from arrivalbench.errors import ArrivalBenchError, TaskError
from arrivalbench.study import grid
from arrivalbench.study.arms import builtin, template_sql
from arrivalbench.study.executors import Unit, compute
from arrivalbench.study.keys import current_versions, engine_of, key_of, version_tag
from arrivalbench.study.store import Cell, Replayed, Store
from conftest import TINY_GOLD, TINY_NO_DEDUP, cli

FAKE_VERSION = "18.0-stand-in"
# The tiny gold with a comment of its own: the stand-in runs it on DuckDB, and its digest tells
# which file an arm took.
PG_GOLD = "-- the postgres gold\n" + TINY_GOLD
PG_NO_DEDUP = "-- the postgres negative\n" + TINY_NO_DEDUP


def fake_postgres(monkeypatch: pytest.MonkeyPatch, version: Callable[[], str]) -> None:
    """`backend("postgres")` gives a module with DuckDB's database and splitter behind
    PostgreSQL's name, in this process, whether or not the `postgres` extra is installed."""
    module = types.ModuleType("arrivalbench.core.engine.postgres")
    module.NAME = "postgres"  # type: ignore[attr-defined]
    module.version = version  # type: ignore[attr-defined]
    module.database = duckdb_engine.database  # type: ignore[attr-defined]
    module.split = duckdb_engine.split  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "arrivalbench.core.engine.postgres", module)
    assert backend("postgres") is module


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_postgres(monkeypatch, lambda: FAKE_VERSION)


def with_postgres(folder: Path, fails: object = None) -> Path:
    """Give the task folder its PostgreSQL pipelines (and, when given, a `fails:` value)."""
    (folder / "gold.postgres.sql").write_text(PG_GOLD, encoding="utf-8")
    (folder / "negatives" / "no_dedup.postgres.sql").write_text(PG_NO_DEDUP, encoding="utf-8")
    if fails is not None:
        edit_yaml(folder, lambda d: d["negatives"]["no_dedup"].__setitem__("fails", fails))
    return folder


def edit_yaml(folder: Path, change: Callable[[dict[str, Any]], object]) -> None:
    path = folder / "task.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


class Serial:
    """An executor in this process, so that the stand-in engine reaches the replays (`work`:
    what a unit is given to, as on a real executor)."""

    name = "serial"
    workers = 1

    def __init__(self, work: Callable[[Any], Any] = compute) -> None:
        self.work = work

    def run(self, units: Sequence[Any], on_results: Callable[[list[tuple[Any, Any]]], None]
            ) -> None:
        on_results([(unit, self.work(unit)) for unit in units])


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# -- the task format -----------------------------------------------------------------------


def test_a_plain_fails_list_holds_on_every_engine(tiny_dir: Path) -> None:
    negative = load_spec(tiny_dir).negatives[0]
    assert [negative.fails_on(e) for e in ENGINES] == [("duplicates", "crash_retry")] * 2


def test_a_fails_mapping_declares_each_engine(tiny_dir: Path) -> None:
    with_postgres(tiny_dir, {"duckdb": ["duplicates", "crash_retry"], "postgres": ["duplicates"]})
    negative = load_spec(tiny_dir).negatives[0]
    assert negative.fails == ("duplicates", "crash_retry")  # DuckDB's, as before
    assert negative.fails_on("duckdb") == ("duplicates", "crash_retry")
    assert negative.fails_on("postgres") == ("duplicates",)
    assert negative.sql_for("postgres") == PG_NO_DEDUP
    assert negative.sql_for("duckdb") == TINY_NO_DEDUP


@pytest.mark.parametrize(("fails", "message"), [
    ({"duckdb": ["duplicates"], "oracle": ["duplicates"]},
     "field negatives.no_dedup.fails: unknown engine 'oracle'; engines: duckdb, postgres"),
    ({"duckdb": ["duplicates"]},
     "field negatives.no_dedup.fails: names no list for postgres; a mapping names every "
     "engine (duckdb, postgres), or give one list for all"),
    ({"duckdb": ["duplicates"], "postgres": ["schema_evolution"]},
     "field negatives.no_dedup.fails.postgres: 'schema_evolution' is not among the task's "
     "hazards (late_arrival, duplicates, crash_retry)"),
    ({"duckdb": ["duplicates"], "postgres": "duplicates"},
     "field negatives.no_dedup.fails.postgres: must be a list of hazards, got 'duplicates'"),
    ("duplicates", "field negatives.no_dedup.fails: must be a list or dict, got 'duplicates'"),
])
def test_a_bad_fails_value_is_one_line_naming_the_file(tiny_dir: Path, fails: object,
                                                       message: str) -> None:
    with_postgres(tiny_dir, fails)
    with pytest.raises(TaskError) as caught:
        load_spec(tiny_dir)
    assert str(caught.value) == f"{tiny_dir / 'task.yaml'}: {message}"


def test_a_task_without_postgres_pipelines_is_valid_and_says_so_when_asked(
        tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    assert spec.has_pipelines("duckdb") and not spec.has_pipelines("postgres")
    assert spec.gold_for("duckdb") == TINY_GOLD
    with pytest.raises(TaskError) as caught:
        spec.gold_for("postgres")
    assert str(caught.value) == (
        f"task tiny has no postgres pipelines ({tiny_dir / 'gold.postgres.sql'} is missing); "
        "add it, or grade this task with engine duckdb")
    (tiny_dir / "gold.postgres.sql").write_text(PG_GOLD, encoding="utf-8")
    spec = load_spec(tiny_dir)
    assert spec.gold_for("postgres") == PG_GOLD
    with pytest.raises(TaskError, match=r"no_dedup\.postgres\.sql is missing"):
        spec.negatives_for("postgres")


def test_postgres_files_leave_the_task_digest_alone_but_are_read_again_when_edited(
        tiny_dir: Path) -> None:
    before = load_spec(tiny_dir).digest
    with_postgres(tiny_dir)
    spec = load_spec(tiny_dir)
    assert spec.digest == before  # stored DuckDB verdicts of the task stay valid
    assert spec.gold_for("postgres") == PG_GOLD
    (tiny_dir / "gold.postgres.sql").write_text(PG_GOLD + "-- edited\n", encoding="utf-8")
    assert load_spec(tiny_dir).gold_for("postgres").endswith("-- edited\n")
    (tiny_dir / "gold.sql").write_text(TINY_GOLD + "-- edited\n", encoding="utf-8")
    assert load_spec(tiny_dir).digest != before  # DuckDB's own files still count


def test_builtin_arms_take_the_engines_pipelines(tiny_dir: Path) -> None:
    spec = load_spec(with_postgres(tiny_dir, {"duckdb": ["duplicates", "crash_retry"],
                                              "postgres": ["duplicates"]}))
    assert [a.ref.text for a in builtin("gold", [spec], "postgres")] == [PG_GOLD]
    negative = builtin("negatives", [spec], "postgres")[0]
    assert negative.ref.text == PG_NO_DEDUP
    assert negative.provenance["fails"] == ["duplicates"]
    assert negative.provenance["engine"] == "postgres"
    assert str(negative.provenance["file"]).endswith("negatives/no_dedup.postgres.sql")
    duck = builtin("negatives", [spec], "duckdb")[0]
    assert "engine" not in duck.provenance and duck.provenance["fails"] == [
        "duplicates", "crash_retry"]


def test_the_postgres_template_speaks_postgresql(tiny: Any) -> None:
    sql = template_sql(tiny, "postgres")
    assert "QUALIFY" not in sql and "CREATE OR REPLACE" not in sql
    assert "SELECT DISTINCT ON (d.\"order_id\")" in sql
    assert '"shop" TEXT' in sql and '"amount" DECIMAL(10, 2)' in sql
    assert 'BEGIN;\nDROP TABLE IF EXISTS main."shop_revenue";\nCREATE TABLE main."shop_revenue"' \
        in sql
    assert sql.rstrip().endswith("COMMIT;")
    assert template_sql(tiny) == template_sql(tiny, "duckdb")


# -- prompts -------------------------------------------------------------------------------


def test_the_postgres_prompt_names_postgresql_and_its_version(tiny: Any, stand_in: None
                                                              ) -> None:
    duck = build(tiny, "unhinted")
    pg = build(tiny, "unhinted", engine="postgres")
    assert "1. The database is PostgreSQL (the version pinned by the project)." in pg
    assert f"The PostgreSQL version is {FAKE_VERSION}." in pg
    assert "temporary tables, views and functions do not survive" in pg
    assert "DuckDB" not in pg and "macros" not in pg
    assert "  - shop TEXT" in pg and "  - amount DECIMAL(10, 2)" in pg
    assert "  - shop VARCHAR" in duck and "DuckDB version is" in duck
    # Only the engine's words differ: same sections, same contract points 2, 3, 5 and 6.
    assert [line for line in duck.splitlines() if line.startswith("#")] == \
        [line for line in pg.splitlines() if line.startswith("#")]
    for variant in VARIANTS:
        if variant in ("unhinted", "budget"):
            assert scan(build(tiny, variant, engine="postgres")) == []


def test_the_duckdb_prompt_is_the_default(tiny: Any) -> None:
    assert build(tiny, "unhinted") == build(tiny, "unhinted", engine="duckdb")


# -- the store -----------------------------------------------------------------------------


def verdict(engine: str, version: str, status: str = "PASS") -> Verdict:
    return Verdict("tiny", "sha256:t", "in_order", 0, "sha256:s", "sha256:a",
                   status, {}, engine, version)  # type: ignore[arg-type]


def test_two_engines_never_share_a_key() -> None:
    assert version_tag("duckdb", "2.0.1") == "2.0.1"  # as every earlier file stores it
    assert version_tag("postgres", "2.0.1") == "postgres 2.0.1"
    assert engine_of("2.0.1") == "duckdb" and engine_of("postgres 18.1") == "postgres"
    assert key_of(verdict("duckdb", "2.0.1")) != key_of(verdict("postgres", "2.0.1"))


def test_a_results_file_holds_both_engines_verdicts_and_cells(tmp_path: Path,
                                                              stand_in: None) -> None:
    path = tmp_path / "r.duckdb"
    duck, pg = verdict("duckdb", duckdb_engine.VERSION), verdict("postgres", FAKE_VERSION,
                                                                 "FAIL")
    with Store(path) as store:
        run = store.start_run("serial", 1, 1, ["gold"], engine="postgres")
        assert store.add_verdicts([Replayed(duck, 0, 0), Replayed(pg, 0, 0)], run) == 2
        assert store.graded_keys() == {key_of(duck)}
        assert store.graded_keys(engine="postgres") == {key_of(pg)}
        assert store.verdict_kinds("postgres") == {key_of(pg): "FAIL"}
        assert [v.engine for v in store.verdicts()] == ["duckdb", "postgres"]
        for engine in ENGINES:
            store.add_cell(Cell("gold", "tiny", "sha256:t", 0, f"sha256:{engine}",
                                engine=engine))  # type: ignore[arg-type]
        store.replace_cells("gold", "tiny", [], "postgres")
        assert [(c.engine, c.artifact) for c in store.cells()] == [("duckdb", "sha256:duckdb")]
    assert rows(path, "SELECT engine, engine_version FROM verdicts ORDER BY engine") == [
        ("duckdb", duckdb_engine.VERSION), ("postgres", f"postgres {FAKE_VERSION}")]
    assert rows(path, "SELECT engine, engine_version FROM runs") == [
        ("postgres", f"postgres {FAKE_VERSION}")]


# The tables of a results file as written before a second engine (no engine columns).
OLD_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE runs (run_id INTEGER PRIMARY KEY, started_at TIMESTAMP NOT NULL,
    harness_version VARCHAR NOT NULL, engine_version VARCHAR NOT NULL,
    python_version VARCHAR NOT NULL, executor VARCHAR NOT NULL, workers INTEGER NOT NULL,
    seeds INTEGER NOT NULL, arms VARCHAR[] NOT NULL, tasks VARCHAR[], command VARCHAR,
    status VARCHAR, finished_at TIMESTAMP, graded INTEGER, skipped INTEGER);
CREATE TABLE cells (arm VARCHAR NOT NULL, task VARCHAR NOT NULL, task_digest VARCHAR NOT NULL,
    replicate INTEGER NOT NULL, artifact VARCHAR, reason VARCHAR, provenance JSON NOT NULL,
    PRIMARY KEY (arm, task, replicate));
INSERT INTO cells VALUES ('gold', 'tiny', 'sha256:t', 0, 'sha256:a', NULL, '{}');
CREATE TABLE verdicts (task_digest VARCHAR NOT NULL, schedule VARCHAR NOT NULL,
    seed INTEGER NOT NULL, artifact VARCHAR NOT NULL, engine_version VARCHAR NOT NULL,
    harness_version VARCHAR NOT NULL, task VARCHAR NOT NULL, verdict VARCHAR NOT NULL,
    record VARCHAR NOT NULL, record_digest VARCHAR NOT NULL,
    PRIMARY KEY (task_digest, schedule, seed, artifact, engine_version, harness_version));
"""


def test_a_file_written_before_a_second_engine_still_opens(tmp_path: Path,
                                                           stand_in: None) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(OLD_SCHEMA)
    con.close()
    with Store(path, read_only=True) as store:  # read as it is: every cell is DuckDB's
        assert [(c.arm, c.engine) for c in store.cells()] == [("gold", "duckdb")]
    with Store(path) as store:  # opened to write: the engine columns join the keys
        store.add_cell(Cell("gold", "tiny", "sha256:t", 0, "sha256:pg", engine="postgres"))
        assert [(c.engine, c.artifact) for c in store.cells()] == [
            ("duckdb", "sha256:a"), ("postgres", "sha256:pg")]
        assert store.cells(engine="postgres")[0].artifact == "sha256:pg"
        run = store.start_run("serial", 1, 1, ["gold"])
        assert store.add_verdicts([Replayed(verdict("duckdb", duckdb_engine.VERSION), 0, 0)],
                                  run) == 1
    assert rows(path, "SELECT engine FROM verdicts") == [("duckdb",)]


# -- grading at scale ----------------------------------------------------------------------


def test_run_on_both_engines_fills_one_results_file(tmp_path: Path, tiny_dir: Path,
                                                    stand_in: None) -> None:
    folder = load_spec(with_postgres(tiny_dir)).path
    results = tmp_path / "r.duckdb"
    options: dict[str, Any] = {"arms": ["gold", "negatives"], "tasks": [str(tiny_dir)],
                               "seeds": 1, "executor": Serial(), "progress": False}
    duck = grid.run(results, **options)
    pg = grid.run(results, engine="postgres", **options)
    assert duck.graded == pg.graded == 12 and pg.skipped == 0
    assert [(a.arm, a.snapshot_pass, a.hazard_fail) for a in pg.arms] == [
        ("gold", 1, 0), ("negatives", 1, 1)]
    again = grid.run(results, engine="postgres", **options)
    assert (again.graded, again.skipped) == (0, 12)
    from arrivalbench.cli.summary import summary_table

    console = Console(width=100, record=True)
    console.print(summary_table(again, 100))
    assert "run 3, seeds 0..0, on postgres" in " ".join(console.export_text().split())
    assert rows(results, "SELECT engine, arm, provenance->>'file' FROM cells ORDER BY ALL") == [
        ("duckdb", "gold", str(folder / "gold.sql")),
        ("duckdb", "negatives", str(folder / "negatives" / "no_dedup.sql")),
        ("postgres", "gold", str(folder / "gold.postgres.sql")),
        ("postgres", "negatives", str(folder / "negatives" / "no_dedup.postgres.sql"))]
    assert rows(results, "SELECT engine, count(*), count(DISTINCT artifact) FROM verdicts "
                         "GROUP BY ALL ORDER BY ALL") == [("duckdb", 12, 2), ("postgres", 12, 2)]
    assert rows(results, "SELECT engine FROM runs ORDER BY run_id") == [
        ("duckdb",), ("postgres",), ("postgres",)]
    records = [json.loads(r[0]) for r in rows(results, "SELECT record FROM verdicts "
                                                       "WHERE engine = 'postgres'")]
    assert {(r["engine"], r["engine_version"]) for r in records} == {("postgres", FAKE_VERSION)}


def test_a_unit_runs_on_its_engine(tiny_dir: Path, stand_in: None) -> None:
    spec = load_spec(tiny_dir)
    unit = Unit(str(tiny_dir), spec.digest, script_ref(TINY_GOLD), "in_order", 0,
                GradeOptions("postgres"))
    result = compute(unit)
    assert (result.verdict.engine, result.verdict.engine_version) == ("postgres", FAKE_VERSION)
    assert key_of(result.verdict) == unit.key()
    assert unit.key().engine_version == f"postgres {FAKE_VERSION}"
    assert current_versions("postgres")[0] == unit.key().engine_version


def test_regrade_reruns_each_verdict_on_its_engine(tmp_path: Path, tiny_dir: Path,
                                                   stand_in: None) -> None:
    from arrivalbench.study.regrade import regrade

    with_postgres(tiny_dir)
    results = tmp_path / "r.duckdb"
    for engine in ENGINES:
        grid.run(results, ["gold"], tasks=[str(tiny_dir)], seeds=1, executor=Serial(),
                 progress=False, engine=engine)  # type: ignore[arg-type]
    report = regrade(results, executor=Serial(), progress=False, warn=lambda _m: None)
    assert (report.stored, report.checked, report.mismatches, report.skipped) == (12, 12, [], 0)
    assert {k.engine_version for k in report.keys} == {duckdb_engine.VERSION,
                                                       f"postgres {FAKE_VERSION}"}


def test_regrade_skips_an_engine_that_cannot_run_here(tmp_path: Path, tiny_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from arrivalbench.study.regrade import regrade

    results = tmp_path / "r.duckdb"
    with Store(results) as store:
        run = store.start_run("serial", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict("postgres", FAKE_VERSION), 0, 0)], run)

    def missing() -> str:
        raise ArrivalBenchError("the postgres extra is not installed")

    fake_postgres(monkeypatch, missing)
    notes: list[str] = []
    report = regrade(results, executor=Serial(), progress=False, warn=notes.append)
    assert (report.checked, report.skipped) == (0, 1)
    assert notes == ["1 verdicts were graded on postgres, which cannot run here (the postgres "
                     "extra is not installed); not regraded"]


# -- the gate ------------------------------------------------------------------------------


def test_the_gate_holds_negatives_to_the_engines_declaration(tiny_dir: Path,
                                                             stand_in: None) -> None:
    # On the stand-in, no_dedup fails duplicates and crash_retry as on DuckDB; declared to fail
    # only duplicates on postgres, the postgres gate finds the undeclared crash_retry failure.
    spec = load_spec(with_postgres(tiny_dir, {"duckdb": ["duplicates", "crash_retry"],
                                              "postgres": ["duplicates"]}))
    vacuous = ("coverage", "late_arrival")  # the tiny task has no negative for it
    duck = gate.run([spec], seeds=(0,), executor=Serial(gate.work))
    assert {(f.check, f.schedule) for f in duck.findings} == {vacuous}
    report = gate.run([spec], seeds=(0,), engine="postgres", executor=Serial(gate.work))
    assert {(f.check, f.schedule) for f in report.findings} == {
        vacuous, ("negative no_dedup", "crash_retry")}
    assert report.summary().startswith("gate on postgres: 1 task, seeds 0,")


def test_the_gate_on_postgres_refuses_a_task_without_its_pipelines(tiny_dir: Path) -> None:
    with pytest.raises(TaskError, match="task tiny has no postgres pipelines"):
        gate.run([load_spec(tiny_dir)], workers=1, seeds=(0,), engine="postgres")


# -- explain -------------------------------------------------------------------------------


def test_explain_on_postgres_names_the_engine_in_document_and_repro(
        tmp_path: Path, tiny_dir: Path, stand_in: None) -> None:
    from arrivalbench.explain import explain
    from arrivalbench.explain.bundle import write

    spec = load_spec(tiny_dir)
    found = explain(spec, TINY_NO_DEDUP, "duplicates", 0, budget=60, engine="postgres")
    assert found.verdict == "FAIL" and found.shrunk is not None
    assert found.document()["engine"] == "postgres"
    assert "engine" not in explain(spec, TINY_NO_DEDUP, "duplicates", 0, budget=60).document()
    repro = write(tmp_path / "bundle", spec, TINY_NO_DEDUP, found.shrunk.schedule, False,
                  "postgres")
    assert "--engine postgres" in repro


# -- model arms ----------------------------------------------------------------------------


def test_a_model_arm_on_postgres_is_an_arm_of_its_own(tiny_dir: Path, stand_in: None) -> None:
    pytest.importorskip("inspect_ai")
    from arrivalbench.agent.generate import Request
    from arrivalbench.agent.inspect_task import sample_engine, samples

    assert Request("mockllm/model").arm == "mockllm/model:unhinted"
    assert Request("mockllm/model", engine="postgres").arm == "mockllm/model:unhinted@postgres"
    spec = load_spec(tiny_dir)
    pg, duck = samples([spec], engine="postgres")[0], samples([spec])[0]
    assert pg.metadata is not None and duck.metadata is not None
    assert "PostgreSQL" in str(pg.input) and sample_engine(pg.metadata) == "postgres"
    assert "engine" not in duck.metadata and sample_engine(duck.metadata) == "duckdb"


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["run", "--arm", "gold"], ["gate"], ["explain", "x.sql", "--task", "tiny"],
    ["generate", "--model", "mockllm/model"], ["show", "tiny", "--prompt", "unhinted"]])
def test_an_unknown_engine_is_one_line_listing_the_engines(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]) -> None:
    code, out, err = cli(capsys, *command, "--engine", "oracle")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "'oracle' is not one of 'duckdb', 'postgres'" in err


def test_run_on_postgres_without_its_pipelines_writes_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, tiny_dir: Path) -> None:
    results = tmp_path / "r.duckdb"
    for arm in ("gold", "negatives"):
        code, out, err = cli(capsys, "run", "--arm", arm, "--task", str(tiny_dir), "--engine",
                             "postgres", "--results", str(results))
        assert code == 2 and out == ""
        assert err.startswith("arrivalbench: error: task tiny has no postgres pipelines (")
        assert err.endswith("is missing); add it, or grade this task with --engine duckdb\n")
        assert err.count("\n") == 1
    assert not results.exists()


def test_cost_on_postgres_is_one_line_and_writes_nothing(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, tiny_dir: Path) -> None:
    results = tmp_path / "r.duckdb"
    code, out, err = cli(capsys, "run", "--arm", "template", "--task", str(tiny_dir),
                         "--engine", "postgres", "--cost", "--results", str(results))
    assert (code, out) == (2, "")
    assert err == ("arrivalbench: error: --cost: engine 'postgres' cannot measure rows read; "
                   "cost is measured on duckdb\n")
    assert not results.exists()


def test_show_prints_the_postgres_prompt(capsys: pytest.CaptureFixture[str], tiny_dir: Path,
                                         stand_in: None) -> None:
    code, out, _err = cli(capsys, "show", str(tiny_dir), "--prompt", "unhinted", "--engine",
                          "postgres")
    assert code == 0
    assert out == build(load_spec(tiny_dir), "unhinted", engine="postgres") + "\n"


# -- on the real server --------------------------------------------------------------------

@pytest.fixture
def real_postgres() -> None:
    """Skips only where the `postgres` extra is missing (or the engine is not built yet); a
    server that is installed but fails is a failure."""
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("the 'postgres' extra is not installed")
    try:
        backend("postgres").version()
    except ArrivalBenchError as exc:
        if "install" in str(exc) or "not built" in str(exc):
            pytest.skip(str(exc))
        raise

# The tiny gold and negative in PostgreSQL's dialect.
REAL_PG_GOLD = """\
CREATE TABLE IF NOT EXISTS seen (order_id BIGINT PRIMARY KEY, shop TEXT,
                                 amount NUMERIC(10,2), placed_at TIMESTAMP);
INSERT INTO seen SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING;
DROP TABLE IF EXISTS shop_revenue;
CREATE TABLE shop_revenue AS
SELECT shop, CAST(COALESCE(SUM(amount), 0) AS NUMERIC(12,2)) AS revenue, COUNT(*) AS orders
FROM seen GROUP BY shop;
"""
REAL_PG_NO_DEDUP = REAL_PG_GOLD.replace(" PRIMARY KEY", "").replace(
    "SELECT DISTINCT * FROM incoming.orders ON CONFLICT DO NOTHING",
    "SELECT * FROM incoming.orders")


def test_the_built_in_arms_on_the_real_server(tmp_path: Path, tiny_dir: Path,
                                              real_postgres: None) -> None:
    (tiny_dir / "gold.postgres.sql").write_text(REAL_PG_GOLD, encoding="utf-8")
    (tiny_dir / "negatives" / "no_dedup.postgres.sql").write_text(REAL_PG_NO_DEDUP,
                                                                 encoding="utf-8")
    results = tmp_path / "r.duckdb"
    summary = grid.run(results, ["gold", "negatives", "template"], tasks=[str(tiny_dir)],
                       seeds=1, workers=1, progress=False, engine="postgres")
    by_arm = {a.arm: a for a in summary.arms}
    assert by_arm["gold"].snapshot_pass == 1 and by_arm["gold"].hazard_fail == 0
    assert by_arm["template"].snapshot_pass == 1 and by_arm["template"].hazard_fail == 0
    assert by_arm["negatives"].snapshot_pass == 1 and by_arm["negatives"].hazard_fail == 1
    assert rows(results, "SELECT DISTINCT engine FROM verdicts") == [("postgres",)]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")
def test_a_model_arm_on_the_real_server(tmp_path: Path, tiny_dir: Path, real_postgres: None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage

    from arrivalbench.agent import generate as generation

    prompts: list[str] = []

    def respond(messages: list[ChatMessage], *_args: Any) -> ModelOutput:
        prompts.append(messages[0].text)
        output = ModelOutput.from_content("mockllm/model", f"```sql\n{REAL_PG_GOLD}```\n")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    monkeypatch.chdir(tmp_path)  # Inspect's default log folder would be ./logs
    request = generation.Request("mockllm/model", tasks=(str(tiny_dir),), seeds=1, workers=1,
                                 results=tmp_path / "r.duckdb", engine="postgres")
    outcome = generation.run(request, model_args={"custom_outputs": respond}, display="none",
                             progress=False)
    assert outcome.first_turn_pass == 1  # the snapshot test ran on PostgreSQL
    assert "The database is PostgreSQL" in prompts[0]
    assert rows(request.results, "SELECT arm, engine FROM cells") == [
        ("mockllm/model:unhinted@postgres", "postgres")]
    assert rows(request.results, "SELECT DISTINCT engine, verdict FROM verdicts") == [
        ("postgres", "PASS")]
