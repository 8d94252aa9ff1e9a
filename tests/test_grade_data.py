"""`grade PROJECT --data DIR`: a dbt project's incremental model on the user's own data, against
the same model built with `--full-refresh` over all of it (docs/dbt.md). Real dbt throughout;
each derived task is built once per module (one parse and one full refresh)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("dbt.cli.main")

from arrivalbench.core.artifacts.dbt.files import DbtError
from arrivalbench.core.artifacts.dbt.own import declared, load
from arrivalbench.core.replay import expected
from arrivalbench.core.task import TaskSpec
from arrivalbench.corpus.init import data_files
from arrivalbench.corpus.own_data import derived, over_prefixes
from arrivalbench.errors import ParameterError
from conftest import cli

EXAMPLE = Path(__file__).parent.parent / "examples" / "your_data"
SHOP = EXAMPLE / "shop"



@pytest.fixture(scope="module")
def hwm(cache: Path) -> TaskSpec:
    return derived(SHOP, EXAMPLE, "orders_high_water_mark")


def test_the_task_comes_from_the_manifest_and_the_full_refresh(hwm: TaskSpec) -> None:
    source = hwm.source("orders")
    assert source.record_key == ("order_id",)  # the `unique` test on the source column
    assert source.event_time == "ordered_at"  # the source table's event_time config
    assert hwm.target.name == "orders_high_water_mark" and hwm.target.key == ("order_id",)
    assert {"late_arrival", "duplicates", "crash_retry", "backfill"} <= set(hwm.hazards)
    assert len(expected(hwm).rows) == 12  # every order, built once over all the data
    reference = (hwm.path / "reference.sql").read_text(encoding="utf-8")
    # The compiled full refresh as one query over the source by its name: no incremental
    # filter in it, no relation of dbt's.
    assert "FROM orders" in reference and "max(ordered_at)" not in reference.lower()
    assert '"replay"' not in reference and over_prefixes(hwm)


def test_the_derived_task_is_cached_by_project_and_data(hwm: TaskSpec, cache: Path) -> None:
    stamp = (hwm.path / "reference.sql").stat().st_mtime_ns
    assert derived(SHOP, EXAMPLE, "orders_high_water_mark").path == hwm.path
    assert (hwm.path / "reference.sql").stat().st_mtime_ns == stamp


def test_the_high_water_mark_fails_late_arrival_the_correct_model_passes(
        hwm: TaskSpec, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), "--model",
                       "orders_high_water_mark", "--schedule", "late_arrival", "--seeds", "1",
                       "--json")
    assert code == 1
    assert [v["verdict"] for v in json.loads(out)["verdicts"]] == ["FAIL"]
    code, out, _ = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), "--model",
                       "orders_by_key", "--schedule", "late_arrival", "--schedule",
                       "duplicates", "--seeds", "1", "--json")
    assert code == 0, out
    assert {v["verdict"] for v in json.loads(out)["verdicts"]} == {"PASS"}


def test_options_that_do_not_go_with_data(capsys: pytest.CaptureFixture[str]) -> None:
    for command, extra, says in (("grade", ["--task", "ad_clicks_clean"], "leave out --task"),
                                 ("explain", ["--select", "x"], "leave out --task and --select"),
                                 ("explain", ["--out", "x"], "leave out --out")):
        code, _, err = cli(capsys, command, str(SHOP), "--data", str(EXAMPLE), *extra)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_every_batch_and_explain_have_a_reference_over_every_prefix(
        hwm: TaskSpec, capsys: pytest.CaptureFixture[str]) -> None:
    """The compiled full refresh is the reference over what was delivered so far: the
    every-batch check sees the late order missing from the batch it arrives in, and explain
    shrinks the failure to its two orders: the newer one first, then the late one."""
    args = ["--data", str(EXAMPLE), "--model", "orders_high_water_mark", "--schedule",
            "late_arrival"]
    code, out, _ = cli(capsys, "grade", str(SHOP), *args, "--seeds", "1", "--every-batch",
                       "--json")
    verdict = json.loads(out)["verdicts"][0]
    assert code == 1 and verdict["detail"]["first_divergence"]["diff"]["counts"]["missing"] == 1
    code, out, _ = cli(capsys, "explain", str(SHOP), *args, "--seed", "0", "--json")
    minimal = json.loads(out)["minimal"]
    assert code == 1 and (minimal["records"], minimal["batches"]) == (2, 2)
    orders = [b["records"][0]["key"]["order_id"] for b in minimal["plan"]["batches"]]
    assert orders == [12, 7]  # 2024-03-05 delivered before 2024-03-03: never loaded


def test_a_full_refresh_no_query_returns_keeps_dbts_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A post-hook changes the table after the model's SELECT: the compiled query does not
    return dbt's rows, so the reference is those rows, and what needs a reference over a
    prefix says it cannot have one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    project = tmp_path / "p"
    shutil.copytree(SHOP, project)
    for other in ("orders_high_water_mark", "orders_microbatch",
                  "orders_microbatch_high_water_mark"):
        (project / "models" / f"{other}.sql").unlink()
    model = project / "models" / "orders_by_key.sql"
    model.write_text(model.read_text(encoding="utf-8").replace(
        "incremental_strategy='delete+insert'",
        "incremental_strategy='delete+insert', post_hook='delete from {{ this }} where "
        "amount < 3'"), encoding="utf-8")
    spec = derived(project, EXAMPLE)
    assert not over_prefixes(spec) and len(expected(spec).rows) == 9
    for command, extra in (("grade", ["--every-batch"]), ("explain", [])):
        code, out, err = cli(capsys, command, str(project), "--data", str(EXAMPLE), *extra)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert f"{extra[0] if extra else command}: the full refresh of model orders_by_key " \
            "is not one query over its sources, so there is no reference over a part" in err


def test_data_files_missing_extra_and_twice(tmp_path: Path) -> None:
    (tmp_path / "orders.csv").write_text("order_id\n1\n", encoding="utf-8")
    assert data_files(tmp_path, ["orders"], []) == {"orders": tmp_path / "orders.csv"}
    with pytest.raises(ParameterError, match=re.escape("no data for source table customers; "
                                                       "add customers.csv")):
        data_files(tmp_path, ["orders", "customers"], [])
    (tmp_path / "refunds.csv").write_text("x\n", encoding="utf-8")
    with pytest.raises(ParameterError,
                       match=re.escape("refunds.csv is the data of no source table")):
        data_files(tmp_path, ["orders"], [])
    assert "orders" in data_files(tmp_path, ["orders"], ["refunds"])  # another model's source
    (tmp_path / "orders.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ParameterError, match=re.escape("orders.csv and orders.jsonl; keep one")):
        data_files(tmp_path, ["orders"], ["refunds"])


def _summary(model: dict[str, Any], source: dict[str, Any],
             tests: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    """A parse summary as `child._summary` writes it (its shape is checked against dbt's own in
    `test_meta_declarations_are_read_from_a_real_manifest`)."""
    node = {"name": "m", "resource_type": "model", "language": "sql",
            "depends_on": ["source.p.s.orders"], "database": "replay", "schema": "main",
            "alias": "m", "materialized": "incremental", "unique_key": "id",
            "incremental_strategy": None, "meta": {}, "test": None, "test_column": None}
    table = {"name": "orders", "database": "replay", "schema": "raw", "identifier": "orders",
             "unique_id": "source.p.s.orders", "meta": {}, "event_time": None,
             "loaded_at_field": None}
    nodes = {"model.p.m": {**node, **model}}
    for i, test in enumerate(tests):
        nodes[f"test.p.t{i}"] = {**node, "resource_type": "test", "materialized": "test",
                                 "unique_key": None, **test}
    return {"nodes": nodes, "sources": [{**table, **source}]}


UNIQUE = {"test": "unique", "test_column": "id", "depends_on": ["source.p.s.orders"]}


@pytest.mark.parametrize(("model", "source", "tests", "says"), [
    ({}, {}, (), "source table 'orders' has no record key; give the column that names one "
                 "record a `unique` test, or declare meta"),
    ({"unique_key": None}, {}, (UNIQUE,), "model m has no key; declare unique_key="),
    ({"materialized": "table"}, {}, (UNIQUE,), "model m is materialized as 'table', not "
                                               "incremental"),
    ({"unique_key": "id; drop"}, {}, (UNIQUE,), "not a plain identifier"),
    ({}, {"event_time": "at", "schema": "raw x"}, (UNIQUE,), "schema is 'raw x'"),
])
def test_what_is_missing_is_named_with_what_to_declare(
        model: dict[str, Any], source: dict[str, Any], tests: tuple[dict[str, Any], ...],
        says: str) -> None:
    with pytest.raises(DbtError) as raised:
        declared(_summary(model, source, tests), Path("/p"), "m")
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_keys_and_event_time_in_dbts_order_of_precedence() -> None:
    meta = {"arrivalbench": {"record_key": ["id", "line"], "event_time": "noted_at"}}
    found = declared(_summary({}, {"meta": meta, "loaded_at_field": "loaded_at"}, (UNIQUE,)),
                     Path("/p"), None)
    # meta's record key over the unique test; loaded_at_field over meta's event time
    assert found.model == "m" and found.key == ("id",)
    assert found.sources[0].record_key == ("id", "line")
    assert found.sources[0].event_time == "loaded_at"
    found = declared(_summary({}, {"event_time": "at", "loaded_at_field": "loaded_at"},
                              (UNIQUE,)), Path("/p"), None)
    assert found.sources[0].event_time == "at" and found.sources[0].record_key == ("id",)
    found = declared(_summary({"unique_key": None, "meta": {"arrivalbench": {
        "unique_key": ["a", "b"]}}}, {}, (UNIQUE,)), Path("/p"), None)
    assert found.key == ("a", "b") and found.sources[0].event_time is None


def test_meta_declarations_are_read_from_a_real_manifest(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(SHOP, project)
    for other in ("orders_by_key", "orders_microbatch", "orders_microbatch_high_water_mark"):
        (project / "models" / f"{other}.sql").unlink()
    (project / "models" / "sources.yml").write_text("""\
version: 2
sources:
  - name: shop
    schema: raw
    loaded_at_field: ordered_at
    tables:
      - name: orders
        meta: {arrivalbench: {record_key: [order_id, store_id]}}
""", encoding="utf-8")
    found, dbt = load(project, None)
    dbt.close()
    assert found.model == "orders_high_water_mark" and found.key == ("order_id",)
    assert found.sources[0].record_key == ("order_id", "store_id")
    assert found.sources[0].event_time == "ordered_at"
    assert found.sources[0].relation == ("raw", "orders")


def test_a_cold_grade_parses_the_project_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              dbt_children: list[object]) -> None:
    """Deriving the task parses the project in a child; the grade that follows takes that
    child over instead of parsing again."""
    from arrivalbench.core import artifacts

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = derived(SHOP, EXAMPLE, "orders_by_key")
    project = artifacts.read(SHOP, spec, models=[spec.target.name])
    try:
        assert len(dbt_children) == 1 and \
            project.child is dbt_children[0]  # type: ignore[attr-defined]
    finally:
        project.close()  # type: ignore[attr-defined]

