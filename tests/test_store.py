"""The results file: schema and its version, verdict keys, resume lookups, runs, cells."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from arrivalbench.core.artifacts import ArtifactRef, script_ref
from arrivalbench.core.engine import duckdb as duckdb_engine
from arrivalbench.core.task import TaskSpec
from arrivalbench.core.values import digest
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.study.keys import current_versions, key_of
from arrivalbench.study.schema import SCHEMA_VERSION
from arrivalbench.study.store import Cell, Replayed, Store, Turn


def verdict(seed: int = 0, kind: str = "PASS", schedule: str = "in_order",
            artifact: str = "sha256:a", harness: str | None = None) -> Verdict:
    v = Verdict("tiny", "sha256:t", schedule, seed, "sha256:s", artifact, kind,  # type: ignore[arg-type]
                {} if kind == "PASS" else {"counts": {"missing": 1}}, "duckdb",
                duckdb_engine.VERSION)
    return v if harness is None else replace(v, harness_version=harness)


def test_a_new_file_gets_every_table_and_the_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "r.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert tables == {"meta", "runs", "tasks", "artifacts", "projects", "cells", "verdicts",
                      "timings", "costs", "turns", "transcripts", "nondeterministic",
                      "minimal_plans"}
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),)
    con.close()


def test_a_file_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    Store(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(ArrivalBenchError, match=r"schema version 99.*reads versions 1 to 4"):
        Store(path)
    with pytest.raises(ArrivalBenchError, match="schema version 99"):
        Store(path, read_only=True)


def test_not_a_results_file_is_one_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    with pytest.raises(ArrivalBenchError, match="cannot open as a results file"):
        Store(junk)
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    with pytest.raises(ArrivalBenchError, match="not a results file"):
        Store(other, read_only=True)


def test_read_only_never_creates_a_file(tmp_path: Path) -> None:
    with pytest.raises(ArrivalBenchError, match="no such results file"):
        Store(tmp_path / "missing.duckdb", read_only=True)
    assert not (tmp_path / "missing.duckdb").exists()


def test_verdicts_are_keyed_and_a_key_is_stored_once(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        run = store.start_run("local", 2, 1, ["gold"])
        first = verdict(0, "PASS")
        assert store.add_verdicts([Replayed(first, 0.5, 0.25), Replayed(verdict(1, "FAIL"), 1, 1)],
                                  run) == 2
        # The same key again, even with another outcome, keeps the first verdict and timing.
        assert store.add_verdicts([Replayed(verdict(0, "ERROR"), 9, 9)], run) == 0
        assert store.graded_keys() == {key_of(first), key_of(verdict(1))}
        stored = {v.key: v for v in store.verdicts()}
        assert stored[key_of(first)].record == first.json()
        assert stored[key_of(first)].verdict == "PASS"
        assert store.verdict_kinds()[key_of(verdict(1))] == "FAIL"
        digests = store.con.execute("SELECT record, record_digest FROM verdicts").fetchall()
        assert all(d == digest(r) for r, d in digests)
        timings = store.con.execute("SELECT seed, wall_seconds, run_id FROM timings "
                                    "ORDER BY seed").fetchall()
        assert timings == [(0, 0.5, run), (1, 1.0, run)]


def test_graded_keys_are_those_of_this_installation(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        run = store.start_run("local", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict(0), 1, 1),
                            Replayed(verdict(0, harness="0.0.1"), 1, 1)], run)
        assert len(store.verdicts()) == 2
        assert store.graded_keys() == {key_of(verdict(0))}
        assert store.graded_keys(harness_version="0.0.1") == {key_of(verdict(0,
                                                                              harness="0.0.1"))}
        assert key_of(verdict(0)).versions == current_versions()


def test_a_failed_transaction_stores_nothing(tmp_path: Path) -> None:
    broken = replace(verdict(1, "FAIL"), detail={"x": float("nan")})  # not JSON: unwritable

    with Store(tmp_path / "r.duckdb") as store:
        run = store.start_run("local", 1, 1, ["gold"])
        with pytest.raises(ValueError):
            store.add_verdicts([Replayed(verdict(0), 1, 1), Replayed(broken, 1, 1)], run)
        assert store.graded_keys() == set()
        assert store.add_verdicts([Replayed(verdict(0), 1, 1)], run) == 1


def test_runs_record_versions_status_and_counts(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        first = store.start_run("local", 2, 5, ["gold", "template"], ["tiny"], "arrivalbench run")
        second = store.start_run("ray", 4, 1, ["negatives"])
        assert (first, second) == (1, 2)
        store.finish_run(first, "finished", 10, 3)
        rows = store.con.execute(
            "SELECT run_id, status, graded, skipped, executor, workers, seeds, arms, tasks, "
            "harness_version, engine_version, finished_at IS NOT NULL FROM runs ORDER BY run_id"
        ).fetchall()
    assert rows[0] == (1, "finished", 10, 3, "local", 2, 5, ["gold", "template"], ["tiny"],
                       current_versions()[1], current_versions()[0], True)
    assert rows[1][1] == "running" and rows[1][-1] is False


def test_cells_artifacts_and_idioms(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        a = store.add_artifact(script_ref("SELECT 1"))
        assert a == digest("SELECT 1")
        assert store.artifact_idioms(a) is None
        store.add_artifact(script_ref("SELECT 1"), ["b", "a"])  # tags arrive later: sorted
        store.add_artifact(script_ref("SELECT 1"), ["z"])  # stored tags are never replaced
        assert store.artifact_idioms(a) == ["a", "b"]
        assert store.artifact_sql(a) == "SELECT 1"
        with pytest.raises(ArrivalBenchError, match="not stored"):
            store.artifact_sql("sha256:nope")
        cells = [Cell("negatives", "tiny", "sha256:t", i, a, None, {"negative": f"n{i}"})
                 for i in range(3)]
        store.replace_cells("negatives", "tiny", cells)
        store.replace_cells("negatives", "tiny", cells[:2])  # a negative went away
        store.add_cell(Cell("model", "tiny", "sha256:t", 0, None, "no script in the reply"))
        got = store.cells()
        assert [(c.arm, c.replicate) for c in got] == [("model", 0), ("negatives", 0),
                                                       ("negatives", 1)]
        assert got[0].reason == "no script in the reply" and got[0].artifact is None
        assert store.cells(["negatives"])[1].provenance == {"negative": "n1"}
        assert store.arms() == ["model", "negatives"]


def test_tasks_table_records_what_a_task_declares(tmp_path: Path, tiny: TaskSpec) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.add_task(tiny, str(tiny.path))
        store.add_task(tiny, str(tiny.path))  # idempotent
        stored = store.tasks()
        row = store.con.execute("SELECT mode, summary FROM tasks").fetchone()
    assert list(stored) == [tiny.digest]
    assert stored[tiny.digest].source == str(tiny.path)
    assert stored[tiny.digest].hazards == ("late_arrival", "duplicates", "crash_retry")
    assert row is not None and row[0] == "aggregate"
    assert '"no_dedup":["duplicates","crash_retry"]' in row[1]


def test_model_arm_writes_still_work(tmp_path: Path) -> None:
    with Store(tmp_path / "r.duckdb") as store:
        store.add_turns("m", "tiny", 0, [Turn(1, "SELECT 1", "FAIL", "diff"),
                                         Turn(2, None, None, None)])
        store.add_turns("m", "tiny", 0, [Turn(1, "SELECT 2", "PASS", None)])
        store.add_transcript("m", "tiny", 0, 1, 10, 20, {"messages": []})
        turns = store.con.execute("SELECT turn, sql FROM turns").fetchall()
        transcript = store.con.execute("SELECT transcript FROM transcripts").fetchone()
    assert turns == [(1, "SELECT 2")]
    assert transcript == ('{"messages":[]}',)


def test_a_second_writer_is_kept_out(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    with Store(path):
        import subprocess
        import sys

        probe = subprocess.run(
            [sys.executable, "-c", "import sys; from arrivalbench.study.store import Store; "
             "from arrivalbench.errors import ArrivalBenchError\n"
             f"try:\n    Store({str(path)!r})\nexcept ArrivalBenchError as e:\n"
             "    print(e); sys.exit(2)"], capture_output=True, text=True)
    assert probe.returncode == 2
    assert "cannot open as a results file" in probe.stdout


# -- the newest verdict, migrations, and what is not a results file ------------------------------

OLDER, NEWER = "0.3.0+f3a9c2e17b40", "0.3.0+0b81d44ac9e2"  # as text, the newer build sorts first


def test_a_report_reads_the_verdict_the_latest_run_stored(tmp_path: Path) -> None:
    from arrivalbench.report.load import load
    from arrivalbench.report.metrics import newest_verdicts

    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        store.add_cell(Cell("gold", "tiny", "sha256:t", 0, "sha256:a"))
        first = store.start_run("local", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict(0, "FAIL", harness=OLDER), 1, 1)], first)
        second = store.start_run("local", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict(0, "PASS", harness=NEWER), 1, 1)], second)
        assert [v.run_id for v in store.verdicts()] == [second, first]  # key order: by text
    chosen = newest_verdicts(load(path).verdicts)
    assert [(v.harness_version, v.verdict, v.run_id) for v in chosen] == [
        (NEWER, "PASS", second)]


def _as_version_2(path: Path) -> None:
    """Make a file as the previous schema wrote it: version 1 in `meta`, no run per verdict."""
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE verdicts DROP COLUMN run_id")
    con.execute("DROP TABLE minimal_plans")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()


def test_an_older_file_is_read_migrated_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        first = store.start_run("local", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict(0, "FAIL"), 1, 1)], first)
    _as_version_2(path)
    before = path.read_bytes()
    with Store(path, read_only=True) as store:  # a migrated copy in memory
        assert [v.run_id for v in store.verdicts()] == [first]  # found through its timing
        assert store.minimal_plans() == []
    assert path.read_bytes() == before
    with Store(path) as store:  # opened to write: migrated in place
        assert [v.run_id for v in store.verdicts()] == [first]
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT value FROM meta").fetchall() == [(str(SCHEMA_VERSION),)]
    con.close()


def _as_version_3(path: Path) -> None:
    """Make a file as schema 3 wrote it: verdicts and costs keyed without landing and
    allowance, no every-batch verdict, artifacts without kind or description, no projects."""
    con = duckdb.connect(str(path))
    for table in ("verdicts", "costs"):
        con.execute(f"CREATE TABLE old AS SELECT * EXCLUDE (landing, allowance) FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE old RENAME TO {table}")
    con.execute("ALTER TABLE verdicts DROP COLUMN every_batch_verdict")
    con.execute("ALTER TABLE verdicts DROP COLUMN every_batch_record")
    for column in ("kind", "project", "models", "passed_env"):
        con.execute(f"ALTER TABLE artifacts DROP COLUMN {column}")
    con.execute("DROP TABLE projects")
    con.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    con.close()


def test_a_version_3_file_gets_kinds_and_landing_keys(tmp_path: Path) -> None:
    path = tmp_path / "r.duckdb"
    with Store(path) as store:
        run = store.start_run("local", 1, 1, ["gold"])
        store.add_verdicts([Replayed(verdict(0, "FAIL"), 1, 1)], run)
        project = store.add_artifact(ArtifactRef("dbt", "-- dbt project x\nselect 1",
                                                 (("dbt_project.yml", b"name: x"),), "sha256:p"))
        store.add_cell(Cell("humans", "t", "d", 0, project, None, {"dbt_project": True}))
    _as_version_3(path)
    with Store(path) as store:  # migrated in place
        [stored] = store.verdicts()
        assert (stored.key.landing, stored.key.allowance, stored.every_batch) == \
            ("batch", "", None)
        assert stored.record == verdict(0, "FAIL").json()
        with pytest.raises(ArrivalBenchError, match="does not hold"):
            store.artifact(project)  # marked dbt, but its files were never stored
        run = store.start_run("local", 1, 1, ["gold"])
        assert store.add_verdicts([Replayed(verdict(0, "FAIL"), 1, 1)], run) == 0  # same key


def test_every_migration_moves_the_schema_version() -> None:
    from arrivalbench.study import schema

    assert sorted(schema.MIGRATIONS) == list(range(1, schema.SCHEMA_VERSION))


def test_another_database_is_not_made_a_results_file(tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE mine (x INTEGER)").close()
    with pytest.raises(ArrivalBenchError, match="not a results file written by arrivalbench"):
        Store(other)
    con = duckdb.connect(str(other), read_only=True)
    assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() == [("mine",)]
    con.close()


def test_a_bug_in_the_schema_is_not_bad_input(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An error of the harness's own DDL is a bug (exit 3), never 'not a results file'."""
    from arrivalbench.study import schema

    monkeypatch.setattr(schema, "DDL", "CREATE TABLE meta (key VARCHAR PRIMARY KEY;")
    with pytest.raises(duckdb.ParserException):
        Store(tmp_path / "new.duckdb")
    path = tmp_path / "old.duckdb"
    monkeypatch.undo()
    Store(path).close()
    _as_version_2(path)
    monkeypatch.setitem(schema.MIGRATIONS, 2, lambda con: con.execute("SELEC 1"))
    with pytest.raises(duckdb.ParserException):
        Store(path)
    with pytest.raises(duckdb.ParserException):
        Store(path, read_only=True)
