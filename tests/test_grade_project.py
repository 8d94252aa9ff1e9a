"""`grade PROJECT --data DIR` over a whole project: every incremental model (or those dbt's
selectors select) against its own full refresh, one table per model, a line on them all, one
JSON document, and the JUnit XML and Markdown summary a CI job keeps (docs/dbt.md). Real dbt
throughout; the tasks are derived once per module, into one cache.

Set ARRIVALBENCH_UPDATE_GOLDEN=1 to rewrite tests/golden/grade_project.md after an intended
change of the Markdown summary, and review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

import junitparser
import pytest

pytest.importorskip("dbt.cli.main")

from arrivalbench.corpus.own_data import incremental_models
from arrivalbench.errors import ArrivalBenchError
from conftest import cli

ROOT = Path(__file__).parent.parent
EXAMPLE = Path("examples") / "your_data"  # relative: the reports name what was typed
SHOP = EXAMPLE / "shop"
JAFFLE = EXAMPLE / "jaffle_shop"
JAFFLE_DATA = EXAMPLE / "jaffle_shop_data"
SHOP_MODELS = ("orders_by_key", "orders_high_water_mark", "orders_microbatch",
               "orders_microbatch_high_water_mark")
SMALL = ("--seeds", "1", "--schedule", "in_order", "--schedule", "late_arrival")
GOLDEN = Path(__file__).parent / "golden" / "grade_project.md"
UPDATE = os.environ.get("ARRIVALBENCH_UPDATE_GOLDEN") == "1"



@pytest.fixture(autouse=True)
def at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_without_model_every_incremental_model_is_graded(
        cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shop's four incremental models, each against its own full refresh: one table each,
    then a line per model and one on them all; exit 1, since three of them fail. The JUnit
    file holds a suite per model and a case per schedule, failing where the table does; the
    Markdown summary is the golden file's."""
    junit, markdown = tmp_path / "grade.xml", tmp_path / "grade.md"
    code, out, err = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), *SMALL,
                         "--junit", str(junit), "--markdown", str(markdown))
    assert code == 1, err
    for model in SHOP_MODELS:
        assert f"{SHOP} on {model}\n" in out
    summary = out[out.index("\nPASS  orders_by_key"):].split()
    assert " ".join(summary) == (
        "PASS orders_by_key PASS 2 "
        "FAIL orders_high_water_mark PASS 1 FAIL 1: late_arrival "
        "FAIL orders_microbatch PASS 1 FAIL 1 (1 late, by design): late_arrival (late, by "
        "design) "
        "FAIL orders_microbatch_high_water_mark FAIL 2: in_order, late_arrival "
        "1 of 4 models pass; not passing: orders_high_water_mark, orders_microbatch, "
        "orders_microbatch_high_water_mark")

    xml = junitparser.JUnitXml.fromfile(str(junit))
    assert (xml.tests, xml.failures, xml.errors) == (8, 4, 0)
    suites = {suite.name: suite for suite in xml}
    assert list(suites) == list(SHOP_MODELS)
    assert [(s.tests, s.failures) for s in suites.values()] == [(2, 0), (2, 1), (2, 1), (2, 2)]
    [late] = [case for case in suites["orders_high_water_mark"] if case.name == "late_arrival"]
    [failure] = late.result
    assert isinstance(failure, junitparser.Failure) and late.classname == "orders_high_water_mark"
    assert "seed 0 of 1 not PASS" in failure.message
    assert 'missing {"order_id":7}' in failure.text  # the first differing rows
    assert "arrivalbench explain examples/your_data/shop --data examples/your_data --model " \
        "orders_high_water_mark --schedule late_arrival --seed 0" in failure.text

    text = markdown.read_text(encoding="utf-8")
    if UPDATE:
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.is_file(), "run with ARRIVALBENCH_UPDATE_GOLDEN=1 to create the golden file"
    assert text == GOLDEN.read_text(encoding="utf-8"), \
        "the Markdown summary changed: regenerate with ARRIVALBENCH_UPDATE_GOLDEN=1"


def test_one_json_document_with_a_section_per_model(
        cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two models named in one space-separated --select: one document, each model's own grade
    document under its name."""
    code, out, _ = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), "--select",
                       "orders_by_key orders_high_water_mark", *SMALL, "--json")
    doc = json.loads(out)
    assert code == 1
    assert sorted(doc) == ["data", "models", "not_passing", "project"]
    assert list(doc["models"]) == ["orders_by_key", "orders_high_water_mark"]
    assert doc["not_passing"] == ["orders_high_water_mark"]
    verdicts = {name: [v["verdict"] for v in section["verdicts"]]
                for name, section in doc["models"].items()}
    assert verdicts == {"orders_by_key": ["PASS", "PASS"],
                        "orders_high_water_mark": ["PASS", "FAIL"]}
    assert doc["models"]["orders_by_key"]["task"] == "orders_by_key"


def test_one_model_selected_prints_the_document_of_one_model(
        cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A selection of one model is graded as --model grades it: the same bytes."""
    args = ["grade", str(SHOP), "--data", str(EXAMPLE), "--seeds", "1", "--schedule",
            "in_order", "--json"]
    code, selected, _ = cli(capsys, *args, "--select", "path:models/orders_by_key.sql")
    assert code == 0
    code, named, _ = cli(capsys, *args, "--model", "orders_by_key")
    assert code == 0 and selected == named
    assert json.loads(named)["task"] == "orders_by_key"


def test_the_whole_project_is_parsed_once(cache: Path, dbt_children: list[object]) -> None:
    """One dbt child parses the project, lists the selection, derives and compiles each model
    in turn: one parse for the whole project, not one per model."""
    from arrivalbench.core.artifacts import dbt as dbt_loaded
    from arrivalbench.corpus.own_data import derived_each

    found = derived_each(SHOP, EXAMPLE, select=["orders_by_key", "orders_microbatch"])
    assert [spec.target.name for spec, _ref in found] == ["orders_by_key", "orders_microbatch"]
    assert [ref.models for _spec, ref in found] == [("orders_by_key",), ("orders_microbatch",)]
    assert len(dbt_children) == 1
    assert not dbt_loaded._kept  # the child is not left behind for nobody


def test_dbt_selects_and_only_incremental_models_are_kept() -> None:
    """dbt reads the selectors: tags and paths from dbt_project.yml, graph operators over the
    refs; the view and the table among them are left out."""
    assert incremental_models(JAFFLE) == ("fct_orders", "int_order_payments", "stg_orders",
                                          "stg_payments")
    assert incremental_models(JAFFLE, ["tag:staging"]) == ("stg_orders", "stg_payments")
    assert incremental_models(JAFFLE, ["path:models/marts"]) == ("fct_orders",)
    assert incremental_models(JAFFLE, ["+fct_orders"]) == (
        "fct_orders", "int_order_payments", "stg_orders", "stg_payments")
    assert incremental_models(JAFFLE, ["tag:intermediate", "tag:marts"]) == (
        "fct_orders", "int_order_payments")
    assert incremental_models(JAFFLE, ["tag:staging,stg_orders"]) == ("stg_orders",)
    with pytest.raises(ArrivalBenchError, match="model customer_revenue is materialized as "
                                                "table, not incremental"):
        incremental_models(JAFFLE, ["customer_revenue"])


@pytest.mark.parametrize(("extra", "says"), [
    (["--select", "tag:x"], "--select 'tag:x' matches no incremental model of "
                            "examples/your_data/jaffle_shop (incremental models: fct_orders, "
                            "int_order_payments, stg_orders, stg_payments)"),
    (["--select", "stg_customers"], "model stg_customers is materialized as view, not "
                                    "incremental"),
    (["--select", "nosuch:x"], "--select 'nosuch:x': dbt cannot read it"),
    (["--model", "stg_orders", "--select", "tag:staging"],
     "--model stg_orders: names one model; --select selects models"),
    (["--model", "stg_customers"], "model stg_customers is materialized as 'view', not "
                                   "incremental"),
])
def test_a_selection_that_grades_nothing_is_one_line(
        extra: list[str], says: str, cache: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "grade.xml"
    code, out, err = cli(capsys, "grade", str(JAFFLE), "--data", str(JAFFLE_DATA), *extra,
                         "--junit", str(junit))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert says in err, err
    assert not junit.exists()


def test_a_report_in_a_missing_folder_is_refused_before_grading(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--junit", "--markdown"):
        missing = tmp_path / "no" / "such" / "report"
        code, out, err = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), flag,
                             str(missing))
        assert code == 2 and out == ""
        assert err.strip() == (f"arrivalbench: error: {flag} {missing}: folder "
                               f"{missing.parent} does not exist; create it, or name a file "
                               "in a folder that does")
    assert not (tmp_path / "no").exists()
    same = tmp_path / "both"
    code, _, err = cli(capsys, "grade", str(SHOP), "--data", str(EXAMPLE), "--junit",
                       str(same), "--markdown", str(same))
    assert code == 2 and "give each a file of its own" in err and not same.exists()


def test_a_script_on_a_task_writes_one_suite(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The same reports for a grade on a built-in task: the task is the suite."""
    script = ROOT / "src/arrivalbench/tasks/store_daily_revenue/negatives/max_watermark.sql"
    junit, markdown = tmp_path / "grade.xml", tmp_path / "grade.md"
    code, out, _ = cli(capsys, "grade", str(script), "--task", "store_daily_revenue",
                       "--seeds", "2", "--junit", str(junit), "--markdown", str(markdown))
    assert code == 1 and "does not pass" not in out  # one task: its table, no line under it
    xml = junitparser.JUnitXml.fromfile(str(junit))
    [suite] = list(xml)
    failing = sorted(case.name for case in suite if case.result)
    assert suite.name == "store_daily_revenue" and failing == [
        "backfill", "late_arrival", "out_of_order"]
    assert (xml.tests, xml.failures) == (len(list(suite)), 3)
    assert "| `store_daily_revenue` | **FAIL** |" in markdown.read_text(encoding="utf-8")
    assert "\nstore_daily_revenue does not pass.\n" in markdown.read_text(encoding="utf-8")


def test_select_on_a_task_names_one_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "grade", str(ROOT / "examples/dbt/passing"), "--task",
                       "ad_clicks_clean", "--select", "a b")
    assert code == 2 and "on a task, --select names the one model graded as its target" in err
