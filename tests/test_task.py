"""Task folders: loading, validation messages, digests, log formats."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from arrivalbench.core.log import load_log
from arrivalbench.core.task import builtin_ids, load_spec, load_specs, resolve
from arrivalbench.errors import TaskError
from conftest import TINY_ROWS, write_jsonl, write_task


def error_of(folder: Path) -> str:
    """The message of the TaskError that loading `folder` (spec and log) raises."""
    with pytest.raises(TaskError) as info:
        load_log(load_spec(folder))
    message = str(info.value)
    assert "\n" not in message, f"a task error is one line: {message!r}"
    return message


def test_tiny_task_loads(tiny_dir: Path) -> None:
    spec = load_spec(tiny_dir)
    assert spec.id == "tiny"
    assert [c.type for c in spec.sources[0].columns] == [
        "BIGINT", "VARCHAR", "DECIMAL(10,2)", "TIMESTAMP"]
    assert spec.target.key == ("shop",)
    assert spec.hazards == ("late_arrival", "duplicates", "crash_retry")
    assert [(n.name, n.fails) for n in spec.negatives] == [
        ("no_dedup", ("duplicates", "crash_retry"))]
    log = load_log(spec)
    assert log.tables["orders"].num_rows == len(TINY_ROWS)
    # Base order: event time, then record key (orders 1 and 2 tie at 09:00).
    assert [e.row for e in log.timeline] == list(range(len(TINY_ROWS)))
    assert log.timeline[0].key == (1,) and log.timeline[1].key == (2,)


def test_builtin_tasks_load_and_resolve() -> None:
    ids = ["customer_current_address", "store_daily_revenue", "web_page_views"]
    assert set(ids) <= set(builtin_ids())
    for task_id in ids:
        spec = load_spec(task_id)
        assert spec.id == task_id and spec.path == resolve(task_id)
        assert load_log(spec).timeline


# Each case breaks one thing in the tiny task: (yaml edit, words the message must contain).
Edit = Callable[[dict[str, Any]], None]


def _set(path: str, value: object) -> Edit:
    def edit(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for part in parents:
            doc = doc[part]
        doc[last] = value
    return edit


YAML_CASES: dict[str, tuple[Edit, list[str]]] = {
    "misspelt top-level key": (_set("negatvies", {}), ["field negatvies", "unknown key",
                                                      "negatives"]),
    "misspelt source key": (_set("sources.orders.recordkey", ["order_id"]),
                            ["field sources.orders.recordkey", "unknown key", "record_key"]),
    "unknown hazard": (_set("hazards", ["late_arrival", "time_travel"]),
                       ["field hazards", "'time_travel'", "late_arrival, out_of_order"]),
    "target key not a column": (_set("target.key", ["store"]),
                                ["field target.key", "'store'", "shop, revenue, orders"]),
    "record key not a column": (_set("sources.orders.record_key", ["id"]),
                                ["field sources.orders.record_key", "'id'", "order_id"]),
    "event time not a column": (_set("sources.orders.event_time", "when"),
                                ["field sources.orders.event_time", "'when'"]),
    "unknown type": (_set("sources.orders.columns.amount", "MONEYZ"),
                     ["field sources.orders.columns.amount", "'MONEYZ'", "DECIMAL(p,s)"]),
    "unknown target type": (_set("target.columns.orders", "BIGINTEGER"),
                            ["field target.columns.orders", "'BIGINTEGER'"]),
    "negative declares undeclared hazard": (
        _set("negatives.no_dedup.fails", ["backfill"]),
        ["field negatives.no_dedup.fails", "'backfill'", "late_arrival, duplicates"]),
    "unknown mode": (_set("mode", "merge"), ["field mode", "'merge'", "append, upsert"]),
    "mode of the wrong kind": (_set("mode", 3), ["field mode", "3"]),
    "tolerance out of range": (_set("target.tolerance", 2), ["field target.tolerance", "2"]),
    "evolution without the hazard": (
        _set("evolution", {"source": "orders", "column": "x", "type": "VARCHAR"}),
        ["field evolution", "schema_evolution"]),
    "schema_evolution without evolution": (
        _set("hazards", ["schema_evolution"]), ["field evolution", "required"]),
    "evolution of an existing column": (
        lambda d: d.update(hazards=["schema_evolution"], negatives={},
                           evolution={"source": "orders", "column": "SHOP", "type": "VARCHAR"}),
        ["field evolution.column", "'SHOP'", "already a column"]),
    "id is not the folder name": (_set("id", "other"), ["field id", "'other'", "'tiny'"]),
    "missing title": (lambda d: d.pop("title"), ["field title", "required"]),
    "unknown tier": (_set("tier", "expert"), ["field tier", "'expert'", "core, hard"]),
    "family of the wrong kind": (_set("family", 3), ["field family", "3"]),
}


def test_tier_defaults_to_core_and_is_read_with_the_family(tmp_path: Path,
                                                          tiny_yaml: dict[str, Any]) -> None:
    plain = load_spec(write_task(tmp_path / "a", spec=tiny_yaml))
    assert (plain.tier, plain.tier_declared, plain.family) == ("core", False, None)
    tiny_yaml.update(tier="hard", family="identity_stitching")
    marked = load_spec(write_task(tmp_path / "b", spec=tiny_yaml))
    assert (marked.tier, marked.tier_declared, marked.family) == (
        "hard", True, "identity_stitching")


def test_every_core_task_declares_its_tier_and_a_known_family() -> None:
    from arrivalbench.corpus.labels import tier

    for task_id in builtin_ids():
        spec = load_spec(task_id)
        assert tier(spec) == [], task_id


@pytest.mark.parametrize("case", sorted(YAML_CASES))
def test_bad_task_yaml_names_file_field_and_value(tmp_path: Path, tiny_yaml: dict[str, Any],
                                                  case: str) -> None:
    edit, words = YAML_CASES[case]
    edit(tiny_yaml)
    folder = write_task(tmp_path, spec=tiny_yaml)
    message = error_of(folder)
    assert str(folder / "task.yaml") in message
    for word in words:
        assert word in message, (word, message)


def test_invalid_yaml_gives_the_line(tiny_dir: Path) -> None:
    (tiny_dir / "task.yaml").write_text("id: tiny\ntitle: [unclosed\nmode: append\n")
    message = error_of(tiny_dir)
    assert str(tiny_dir / "task.yaml") in message and "not valid YAML at line" in message


def test_yaml_that_is_not_a_mapping(tiny_dir: Path) -> None:
    (tiny_dir / "task.yaml").write_text("- just\n- a list\n")
    assert "must be a mapping, got list" in error_of(tiny_dir)


@pytest.mark.parametrize("name", ["reference.sql", "gold.sql", "negatives/no_dedup.sql"])
def test_missing_sql_file(tiny_dir: Path, name: str) -> None:
    (tiny_dir / name).unlink()
    message = error_of(tiny_dir)
    assert str(tiny_dir / name) in message and "missing" in message


def test_empty_reference(tiny_dir: Path) -> None:
    (tiny_dir / "reference.sql").write_text("  \n")
    assert error_of(tiny_dir) == f"{tiny_dir / 'reference.sql'}: empty"


def test_missing_log(tiny_dir: Path) -> None:
    (tiny_dir / "log" / "orders.jsonl").unlink()
    message = error_of(tiny_dir)
    assert "orders" in message and "is missing" in message


def test_log_in_two_formats(tiny_dir: Path) -> None:
    (tiny_dir / "log" / "orders.csv").write_text("order_id\n1\n")
    assert "more than one format" in error_of(tiny_dir)


@pytest.mark.parametrize(("column", "value", "declared"), [
    ("amount", "12.x", "DECIMAL(10,2)"),
    ("placed_at", "2024-13-45 25:00:00", "TIMESTAMP"),
    ("order_id", "seven", "BIGINT"),
    ("order_id", "1.5", "BIGINT"),  # would round to 2
    ("amount", "12.555", "DECIMAL(10,2)"),  # would round to 12.56
])
def test_log_value_that_does_not_cast_gives_the_line(tmp_path: Path, column: str, value: str,
                                                     declared: str) -> None:
    rows = [dict(r) for r in TINY_ROWS]
    rows[4][column] = value  # line 5 of the file
    folder = write_task(tmp_path, rows=rows)
    message = error_of(folder)
    assert message.startswith(f"{folder / 'log' / 'orders.jsonl'}:5: {column} = {value!r}")
    assert declared in message


def test_log_line_number_counts_blank_lines(tiny_dir: Path) -> None:
    log = tiny_dir / "log" / "orders.jsonl"
    lines = log.read_text().splitlines()
    lines[2] = lines[2].replace('"order_id": 3', '"order_id": "x3"')
    log.write_text("\n".join([*lines[:1], "", *lines[1:]]) + "\n")
    assert f"{log}:4: order_id = 'x3'" in error_of(tiny_dir)


def test_log_line_that_is_not_json(tiny_dir: Path) -> None:
    log = tiny_dir / "log" / "orders.jsonl"
    log.write_text(log.read_text() + "{not json\n")
    assert f"{log}:{len(TINY_ROWS) + 1}: not a JSON object" in error_of(tiny_dir)


def test_log_key_that_is_not_declared(tiny_dir: Path) -> None:
    rows = [dict(r) for r in TINY_ROWS]
    rows[0]["coupon"] = "X"
    write_jsonl(tiny_dir / "log" / "orders.jsonl", rows)
    message = error_of(tiny_dir)
    assert ":1: key 'coupon' is not a declared column" in message


def test_duplicate_record_keys_in_the_log(tmp_path: Path) -> None:
    rows = [dict(r) for r in TINY_ROWS]
    rows[6]["order_id"] = 2  # record 7 repeats the key of record 2
    folder = write_task(tmp_path, rows=rows)
    message = error_of(folder)
    assert str(folder / "log" / "orders.jsonl") in message
    assert "record_key {'order_id': 2}" in message and "records 2 and 7" in message


def test_unknown_task_reference(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match=r"unknown task 'no_such_task': give a built-in id \(list "
                                        r"them with 'arrivalbench tasks'\) or a task folder$"):
        load_spec("no_such_task")
    with pytest.raises(TaskError, match=r"did you mean store_daily_revenue"):
        load_spec("store_daily_revenu")
    with pytest.raises(TaskError, match=r"no task\.yaml in this folder"):
        load_spec(tmp_path)


def test_digest_changes_when_any_file_changes(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    before = load_spec(folder).digest
    assert load_spec(folder).digest == before  # stable
    copy = write_task(tmp_path / "elsewhere")  # same bytes elsewhere: same digest
    assert load_spec(copy).digest == before
    seen = {before}
    for name in ["task.yaml", "reference.sql", "gold.sql", "negatives/no_dedup.sql",
                 "log/orders.jsonl"]:
        file = folder / name
        original = file.read_bytes()
        file.write_bytes(original + b"\n")
        changed = load_spec(folder).digest
        assert changed not in seen, name
        seen.add(changed)
        file.write_bytes(original)
        assert load_spec(folder).digest == before
    (folder / "notes.md").write_text("a new file is part of the task too")
    assert load_spec(folder).digest not in seen


def test_reloading_after_an_edit_gives_the_new_spec(tiny_dir: Path) -> None:
    assert load_spec(tiny_dir).title == "Revenue per shop"
    text = (tiny_dir / "task.yaml").read_text().replace("Revenue per shop", "Shop revenue")
    (tiny_dir / "task.yaml").write_text(text)
    assert load_spec(tiny_dir).title == "Shop revenue"


def test_csv_and_parquet_logs_load_like_jsonl(tmp_path: Path) -> None:
    jsonl = load_log(load_spec(write_task(tmp_path / "j")))

    csv_dir = write_task(tmp_path / "c")
    (csv_dir / "log" / "orders.jsonl").unlink()
    header = "order_id,shop,amount,placed_at\n"
    body = "".join(f"{r['order_id']},{r['shop']},{r['amount'] or ''},{r['placed_at']}\n"
                   for r in TINY_ROWS)
    (csv_dir / "log" / "orders.csv").write_text(header + body)
    csv = load_log(load_spec(csv_dir))

    parquet_dir = write_task(tmp_path / "p")
    (parquet_dir / "log" / "orders.jsonl").unlink()
    pq.write_table(jsonl.tables["orders"], parquet_dir / "log" / "orders.parquet")
    parquet = load_log(load_spec(parquet_dir))

    for other in (csv, parquet):
        assert other.tables["orders"].equals(jsonl.tables["orders"])
        assert other.tables["orders"].schema == jsonl.tables["orders"].schema
        assert other.timeline == jsonl.timeline


def test_csv_cast_error_counts_the_header_line(tmp_path: Path) -> None:
    folder = write_task(tmp_path)
    (folder / "log" / "orders.jsonl").unlink()
    (folder / "log" / "orders.csv").write_text(
        "order_id,shop,amount,placed_at\n1,a,1.00,2024-01-01 00:00:00\n2,b,oops,2024-01-01\n")
    assert f"{folder / 'log' / 'orders.csv'}:3: amount = 'oops'" in error_of(folder)


def test_a_copied_builtin_task_loads_from_a_path(tmp_path: Path) -> None:
    source = resolve("web_page_views")
    shutil.copytree(source, tmp_path / "web_page_views")
    spec = load_spec(str(tmp_path / "web_page_views"))
    assert spec.digest == load_spec("web_page_views").digest
    assert spec.path == (tmp_path / "web_page_views").resolve()


# -- one task, one source ------------------------------------------------------------------------


def test_a_task_reached_through_a_symlink_has_one_source(
        tmp_path: Path, tiny_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The id for a built-in task, the real folder for another, however it was reached. The
    built-in folder itself is reached through a symlink here, as an install can be."""
    from arrivalbench.core import task as tasklib

    linked = tmp_path / "linked-builtins"
    linked.symlink_to(tasklib.BUILTIN_DIR.resolve(), target_is_directory=True)
    monkeypatch.setattr(tasklib, "BUILTIN_DIR", linked)
    by_id = tasklib.load_spec("web_page_views")
    by_folder = tasklib.load_spec(linked / "web_page_views")
    other = tmp_path / "elsewhere"
    other.symlink_to(linked / "web_page_views", target_is_directory=True)
    by_symlink = tasklib.load_spec(other)
    assert {tasklib.source_of(s) for s in (by_id, by_folder, by_symlink)} == {"web_page_views"}
    tiny_link = tmp_path / "tiny-link"
    tiny_link.symlink_to(tiny_dir, target_is_directory=True)
    assert tasklib.source_of(tasklib.load_spec(tiny_link)) == str(tiny_dir.resolve())
    # Reached by id and by path, it is one task, not two with the same id.
    assert len(tasklib.load_specs(["web_page_views", str(other)])) == 1


def test_two_folders_with_one_id_are_refused(tmp_path: Path, tiny_dir: Path) -> None:
    copy = tmp_path / "copy" / "tiny"
    shutil.copytree(tiny_dir, copy)
    with pytest.raises(TaskError, match="is also the id of"):
        load_specs([tiny_dir, copy])


def test_select_by_tier(tmp_path: Path, tiny_yaml: dict[str, Any]) -> None:
    from arrivalbench.core.task import select

    core = str(write_task(tmp_path / "a", spec=tiny_yaml))
    tiny_yaml.update(tier="hard", family="reversals")
    hard = str(write_task(tmp_path / "b", spec=tiny_yaml))
    assert select([core, hard], None, "core") == [core, hard]  # named tasks are chosen
    assert select([core, hard], "hard", "core") == [hard]
    assert select([core, hard], "all", "core") == [core, hard]
    assert select((), None, "core") == builtin_ids("core")
    assert set(builtin_ids("core")) | set(builtin_ids("hard")) == set(builtin_ids())
    with pytest.raises(TaskError, match=r"no task of tier hard among .*; tiers: core, hard, all"):
        select([core], "hard", "core")


def test_tier_option_lists_the_tiers_on_a_bad_value(capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import cli

    for command in (["tasks"], ["gate"], ["run"], ["generate", "--model", "mockllm/model"]):
        code, _out, err = cli(capsys, *command, "--tier", "expert")
        assert code == 2, command
        assert "'expert' is not one of 'core', 'hard', 'all'" in err
    code, out, _err = cli(capsys, "tasks", "--json", "--tier", "core")
    assert code == 0 and len(json.loads(out)) == len(builtin_ids("core"))
