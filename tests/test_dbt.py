"""dbt projects as artifacts: the examples graded on a built-in task, crashes counted at the
adapter's connection, dbt's failures as verdicts, and bad projects as one-line errors.

dbt is slow to import and to parse, so each project is parsed once per session (the harness
keeps parsed projects per process) and each test grades only the schedules it is about.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from arrivalbench.cli.documents import grade_document

pytest.importorskip("dbt.cli.main")

from arrivalbench.core.artifacts import read
from arrivalbench.core.artifacts.dbt import DbtError, project_digest, read_project
from arrivalbench.core.engine import Failure, Limits
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import Point, schedule
from arrivalbench.core.log import load_log
from arrivalbench.core.replay import deliveries
from arrivalbench.core.schedules import Batch
from arrivalbench.core.task import TaskSpec, load_spec
from arrivalbench.errors import ArrivalBenchError
from conftest import cli, grade1

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "dbt"
TASK = "ad_clicks_clean"


@pytest.fixture(scope="module")
def spec() -> TaskSpec:
    return load_spec(TASK)


def verdicts(spec: TaskSpec, project: str, kinds: list[str], seed: int = 0) -> dict[str, str]:
    artifact = read(EXAMPLES / project, spec)
    return {k: grade1(spec, artifact, Point(k, seed))[0].status for k in kinds}


def write_project(root: Path, model_sql: str, model: str = "ad_clicks",
                  schema: str = "incoming", extra: dict[str, str] | None = None) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: t\nversion: '1.0'\nprofile: t\n")
    (root / "models" / "sources.yml").write_text(
        f"version: 2\nsources:\n  - name: raw\n    schema: {schema}\n    tables:\n"
        "      - name: clicks\n")
    (root / "models" / f"{model}.sql").write_text(model_sql)
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    return root


PLAIN = """{{ config(materialized='incremental', unique_key='click_id',
          incremental_strategy='delete+insert') }}
select click_id, campaign_id, creative_id, lower(trim(placement)) as placement,
       cast(cpc_micros as decimal(18, 6)) / 1000000 as cost,
       coalesce(regexp_matches(user_agent, '(?i)bot|crawler|spider'), false) as is_bot,
       clicked_at, cast(clicked_at as date) as click_date
from {{ source('raw', 'clicks') }}
qualify row_number() over (partition by click_id order by clicked_at) = 1
"""


# -- the examples ------------------------------------------------------------------------------


def test_high_water_mark_fails_the_ordering_hazards_and_backfill(spec: TaskSpec) -> None:
    got = verdicts(spec, "high_water_mark", ["late_arrival", "out_of_order", "backfill",
                                             "duplicates"])
    assert got == {"late_arrival": "FAIL", "out_of_order": "FAIL", "backfill": "FAIL",
                   "duplicates": "PASS"}


def test_delete_insert_without_a_batch_guard_fails_duplicates(spec: TaskSpec) -> None:
    got = verdicts(spec, "no_batch_guard", ["duplicates", "late_arrival"])
    assert got == {"duplicates": "FAIL", "late_arrival": "PASS"}


def test_the_passing_example_passes_every_declared_hazard(spec: TaskSpec) -> None:
    got = verdicts(spec, "passing", ["snapshot", *spec.hazards])
    assert set(got.values()) == {"PASS"}, got


def test_stored_text_is_the_incremental_sql_dbt_compiled(spec: TaskSpec) -> None:
    project = read_project(EXAMPLES / "high_water_mark", spec)
    assert project.text.startswith(f"-- dbt project {project.files}, model ad_clicks\n")
    assert 'from "replay"."incoming"."clicks"' in project.text
    # the is_incremental() branch, with {{ this }} resolved
    assert ('where clicked_at >= (select coalesce(max(clicked_at), \'1900-01-01\') from '
            '"replay"."main"."ad_clicks")') in project.text
    assert "{{" not in project.text


def test_digest_covers_the_files_dbt_reads_and_not_what_it_writes(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PLAIN)
    before = project_digest(root, "ad_clicks")
    (root / "target").mkdir()
    (root / "target" / "manifest.json").write_text("{}")
    (root / "logs").mkdir()
    (root / "logs" / "dbt.log").write_text("x")
    assert project_digest(root, "ad_clicks") == before
    (root / "macros").mkdir()
    (root / "macros" / "m.sql").write_text("{% macro m() %}1{% endmacro %}")
    assert project_digest(root, "ad_clicks") != before
    assert project_digest(root, "other") != before


# -- crashes, mapping, failures ----------------------------------------------------------------


def test_an_abort_midway_stops_dbt_before_its_work_is_committed(spec: TaskSpec) -> None:
    project = read_project(EXAMPLES / "passing", spec)
    sched = schedule(spec, "in_order", 0)
    staged = deliveries(spec, load_log(spec), sched)
    with engine.database(Limits()) as db:
        run = project.start(db)
        db.stage(staged.tables)
        db.load(0, staged.columns(0))
        run(Batch((), 0.5))  # the first run makes the table at its end: cut before
        with pytest.raises(Failure, match="does not exist"):
            db.read("ad_clicks")
        run(Batch((), 1.0))  # an abort after the last statement: all work done
        first = len(db.read("ad_clicks").rows)
        assert first > 0
        db.load(1, staged.columns(1))
        run(Batch((), 0.5))  # an incremental run cut midway leaves the table as it was
        assert len(db.read("ad_clicks").rows) == first


def test_a_model_under_another_name_reading_another_schema(spec: TaskSpec,
                                                           tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PLAIN, model="clicks_clean", schema="landing")
    artifact = read(root, spec, models=["clicks_clean"])
    verdict, _ = grade1(spec, artifact, Point("duplicates", 0))
    assert verdict.status == "PASS"


def test_a_failing_model_is_an_error_verdict_with_dbts_message(spec: TaskSpec,
                                                               tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "select no_such_column from "
                                         "{{ source('raw', 'clicks') }}")
    verdict, _ = grade1(spec, read(root, spec), Point("in_order", 0))
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "run" and verdict.detail["batch"] == 0
    message = str(verdict.detail["message"])
    assert "no_such_column" in message and "\n" not in message and "/tmp" not in message


def test_a_model_reaching_for_a_file_is_stopped_by_the_sandbox(spec: TaskSpec,
                                                               tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "select * from read_csv('/etc/passwd')")
    verdict, _ = grade1(spec, read(root, spec), Point("snapshot", 0))
    assert verdict.status == "ERROR"
    assert verdict.detail["phase"] == "sandbox"


# -- bad input ---------------------------------------------------------------------------------


def test_bad_projects_are_one_line_errors(spec: TaskSpec, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DbtError, match=r"empty: no dbt_project.yml; give a dbt project"):
        read(tmp_path / "empty", spec)
    root = write_project(tmp_path / "named", PLAIN, model="something_else")
    with pytest.raises(DbtError, match=r"no model named 'ad_clicks' \(models: something_else\)"
                                       r"; name the model after the target"):
        read(root, spec)
    with pytest.raises(DbtError, match=r"no model named 'nope'.*give select one of them"):
        read(root, spec, models=["nope"])


def test_a_task_source_the_project_does_not_declare(spec: TaskSpec, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PLAIN)
    (root / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: raw\n    tables:\n      - name: taps\n")
    (root / "models" / "ad_clicks.sql").write_text("select 1 as x from {{ source('raw', "
                                                   "'taps') }}")
    with pytest.raises(DbtError, match=r"declares no source table 'clicks'; add it"):
        read(root, spec)


def test_a_project_that_does_not_parse(spec: TaskSpec, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "select {{ ref('missing_model') }}")
    with pytest.raises(DbtError, match=r"dbt cannot parse the project .*missing_model"):
        read(root, spec)


def test_python_models_are_refused(spec: TaskSpec, tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "select 1 as x")
    (root / "models" / "ad_clicks.sql").unlink()
    (root / "models" / "ad_clicks.py").write_text(
        "def model(dbt, session):\n    return dbt.source('raw', 'clicks')\n")
    with pytest.raises(DbtError, match=r"ad_clicks.py: a Python file; arrivalbench runs only "
                                       r"SQL models"):
        read(root, spec)


def test_the_extra_not_installed(spec: TaskSpec, tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "dbt-duckdb":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    root = write_project(tmp_path / "p", PLAIN)
    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(DbtError, match=r"needs the dbt extra: pip install 'arrivalbench\[dbt\]'"):
        read(root, spec)


def test_grade_cli_on_a_project(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "no_batch_guard", tmp_path / "p")
    code, out, _err = cli(capsys, "grade", str(tmp_path / "p"), "--task", TASK,
                          "--schedule", "duplicates", "--seeds", "1")
    assert code == 1
    assert "duplicates" in out and "FAIL" in out
    assert not (tmp_path / "p" / "target").exists()  # dbt wrote into a scratch copy
    code, _out, err = cli(capsys, "grade", str(tmp_path), "--task", TASK)
    assert code == 2
    assert err.strip().endswith("no dbt_project.yml; give a dbt project folder or a "
                                ".sql script")


def test_grade_runs_a_projects_replays_in_workers_with_its_model_and_variables(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`grade` hands a project's replays to the executor's workers, each of which loads the
    project again: with the model --select names and the variables --env passes, to the same
    verdict bytes as grading in this process."""
    from arrivalbench.core.values import canonical_json

    monkeypatch.setenv("AB_MICROS", "1000000")
    sql = PLAIN.replace("/ 1000000", "/ {{ env_var('AB_MICROS') }}")
    root = write_project(tmp_path / "p", sql, model="clicks_clean", schema="landing")
    code, out, err = cli(capsys, "grade", str(root), "--task", TASK, "--select", "clicks_clean",
                         "--env", "AB_MICROS", "--schedule", "in_order", "--schedule",
                         "duplicates", "--seeds", "1", "--json")
    assert (code, err) == (0, "")
    spec = load_spec(TASK)
    artifact = read(root, spec, models=["clicks_clean"], passed_env=["AB_MICROS"])
    here = [grade1(spec, artifact, Point(k, 0))[0] for k in ("in_order", "duplicates")]
    assert out.strip() == canonical_json(grade_document(spec, here, None))


def test_schema_evolution_reaches_a_source_in_another_schema(spec: TaskSpec,
                                                              tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", PLAIN, model="clicks_clean", schema="landing")
    project = read_project(root, spec, models=["clicks_clean"])
    with engine.database(Limits()) as db:
        db.query('CREATE TABLE incoming.clicks AS SELECT 1 AS click_id, 2 AS coupon', "load")
        project._fill(db)
        got = db.query("SELECT * FROM landing.clicks", "read-target")
    assert [name for name, _type in got.columns] == ["click_id", "coupon"]
    assert got.rows == ((1, 2),)


def test_run_submissions_grades_a_folder_of_dbt_projects(tmp_path: Path) -> None:
    from arrivalbench.study import grid
    from arrivalbench.study.executors import Result, Unit, compute
    from arrivalbench.study.regrade import regrade
    from arrivalbench.study.store import Store

    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "no_batch_guard", subs / TASK)

    class OneSchedule:
        """Grades in this process, and only the duplicates replay of seed 0: enough to see the
        project reach a worker, and quick."""

        name, workers = "inline", 1

        def __init__(self) -> None:
            self.units: list[Unit] = []

        def run(self, units: list[Unit], on_results: object) -> None:
            self.units.extend(units)
            picked = [u for u in units if (u.schedule, u.seed) == ("duplicates", 0)]
            on_results([(u, compute(u)) for u in picked])  # type: ignore[operator]

    pool = OneSchedule()
    results = tmp_path / "r.duckdb"
    grid.run(results, submissions=subs, tasks=[TASK], seeds=1, executor=pool,
             progress=False, warn=lambda m: None)
    assert {(u.artifact.kind, u.artifact.origin) for u in pool.units} == {
        ("dbt", str((subs / TASK).resolve()))}
    with Store(results) as store:
        stored = [store.artifact(a) for a in {u.artifact.digest for u in pool.units}]
    assert len(stored) == 1 and stored[0].text.startswith("-- dbt project sha256:")
    assert stored[0] == pool.units[0].artifact  # the files too, not only the SQL
    shutil.rmtree(subs)  # the results file holds the project: regrade needs no folder
    assert isinstance(compute(pool.units[0]), Result)  # the stored digest still matches
    again = OneSchedule()
    checked = regrade(results, executor=again, progress=False, warn=lambda m: None)
    assert {u.artifact.kind for u in again.units} == {"dbt"}
    assert checked.checked == 1 and checked.mismatches == []  # the project, not its SQL, re-ran
    ref = pool.units[0].artifact
    edited = tuple((rel, b"select 1 as click_id" if rel.endswith("ad_clicks.sql") else data)
                   for rel, data in ref.files)
    with pytest.raises(ArrivalBenchError, match="its files are not the ones described"):
        compute(dataclasses.replace(pool.units[0],
                                    artifact=dataclasses.replace(ref, files=edited)))
