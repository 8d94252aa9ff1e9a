"""`init`: a task folder from a user's own data files, a reference query and the keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arrivalbench.core.grading import plan
from arrivalbench.core.task import load_spec
from arrivalbench.corpus.init import Request, build
from arrivalbench.errors import ParameterError, TaskError
from conftest import grade_each

ROWS = [(1, 12, "10.50", "2024-03-01 09:00:00"), (2, 17, "5.00", "2024-03-01 09:30:00"),
        (3, 12, "7.25", "2024-03-01 11:00:00"), (4, 17, "3.10", "2024-03-02 08:00:00"),
        (5, 12, "9.99", "2024-03-02 10:00:00"), (6, 23, "1.00", "2024-03-02 12:00:00"),
        (7, 23, "2.00", "2024-03-03 09:00:00"), (8, 12, "4.00", "2024-03-03 09:15:00"),
        (9, 17, "6.00", "2024-03-03 18:00:00"), (10, 12, "8.00", "2024-03-04 07:00:00"),
        (11, 23, "2.50", "2024-03-04 09:00:00"), (12, 17, "3.00", "2024-03-05 09:00:00")]
REFERENCE = """\
SELECT store_id, CAST(ordered_at AS DATE) AS day, CAST(sum(amount) AS DECIMAL(12,2)) AS revenue,
       count(*) AS orders
FROM orders GROUP BY ALL
"""


def data(tmp_path: Path, rows: list[tuple[object, ...]] = ROWS, form: str = "csv") -> Path:
    if form == "csv":
        file = tmp_path / "orders.csv"
        file.write_text("order_id,store_id,amount,ordered_at\n" + "".join(
            ",".join(map(str, row)) + "\n" for row in rows), encoding="utf-8")
    else:
        file = tmp_path / "orders.jsonl"  # amounts as JSON numbers, so they read as numbers
        file.write_text("".join(json.dumps({"order_id": o, "store_id": s, "amount": float(a),
                                            "ordered_at": t}) + "\n"
                                for o, s, a, t in rows), encoding="utf-8")
    return file


def request(tmp_path: Path, **changes: object) -> Request:
    (tmp_path / "reference.sql").write_text(REFERENCE, encoding="utf-8")
    fields: dict[str, object] = dict(
        folder=tmp_path / "my_task", sources={"orders": data(tmp_path)},
        keys={"orders": ["order_id"]}, event_times={"orders": "ordered_at"},
        reference=tmp_path / "reference.sql", target="daily_revenue",
        target_key=["store_id", "day"])
    fields.update(changes)
    return Request(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_writes_a_task_every_command_can_use(tmp_path: Path, form: str) -> None:
    written = build(request(tmp_path, sources={"orders": data(tmp_path, form=form)}))
    folder = tmp_path / "my_task"
    assert written.folder == folder and written.records == len(ROWS)
    assert sorted(p.name for p in folder.iterdir()) == ["gold.sql", "log", "reference.sql",
                                                          "task.yaml"]
    assert (folder / "log" / f"orders.{form}").read_bytes() == \
        (tmp_path / f"orders.{form}").read_bytes()
    spec = load_spec(folder)
    assert [c.name for c in spec.target.columns] == ["store_id", "day", "revenue", "orders"]
    assert spec.sources[0].record_key == ("order_id",)
    assert spec.ticket.startswith("TODO: describe the table")
    # The data allow what an event time allows, and each kept hazard perturbs this log.
    assert set(spec.hazards) >= {"duplicates", "crash_retry", "late_arrival", "backfill"}
    assert {h for h, _why in written.dropped} | set(spec.hazards) == {
        "duplicates", "crash_retry", "late_arrival", "out_of_order", "backfill"}
    verdicts = [v.status for v, _o in grade_each(spec, spec.gold_sql, plan(spec, seeds=1))]
    assert set(verdicts) == {"PASS"}  # the template gold is right by construction


def test_without_an_event_time_only_repeats_are_hazards(tmp_path: Path) -> None:
    spec = build(request(tmp_path, event_times={})).spec
    assert spec.hazards == ("duplicates", "crash_retry")


# What is wrong with a request, as a Python caller reads it (parameters by name) and as the
# command line says it (each parameter by its flag).
BAD_REQUESTS = [
    ({"keys": {}}, "keys: no record key for source orders; give keys orders=COLUMN[,COLUMN]",
     "--key: no record key for source orders; give --key orders=COLUMN[,COLUMN]"),
    ({"keys": {"orders": ["id"]}}, "keys orders=id: ", "--key orders=id: "),
    ({"keys": {"orders": ["store_id"]}}, "keys orders=store_id: not unique in ",
     "--key orders=store_id: not unique in "),
    ({"event_times": {"orders": "at"}}, "event_times orders=at: ", "--event-time orders=at: "),
    ({"keys": {"orders": ["order_id"], "order": ["id"]}},
     "keys 'order': no such source; did you mean orders? give one of orders",
     "--key 'order': no such source; did you mean orders? give one of orders"),
    ({"event_times": {"payments": "at"}}, "event_times 'payments': no such source",
     "--event-time 'payments': no such source"),
    ({"target_key": ["store_id"]}, "target_key store_id: not unique in the reference's result",
     "--target-key store_id: not unique in the reference's result"),
    ({"target_key": ["shop"]}, "target_key shop: the reference returns no column 'shop'",
     "--target-key shop: the reference returns no column 'shop'"),
    ({"target": "daily revenue"}, "target 'daily revenue': not a plain identifier",
     "--target 'daily revenue': not a plain identifier"),
    ({"sources": {"orders": Path("/nonexistent/orders.csv")}},
     "sources orders=/nonexistent/orders.csv: no such file",
     "--source orders=/nonexistent/orders.csv: no such file"),
    ({"sources": {}}, "sources: none given", "give --source NAME=FILE"),
]


@pytest.mark.parametrize(("changes", "message", "worded"), BAD_REQUESTS)
def test_bad_input_is_one_line_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, object],
        message: str, worded: str) -> None:
    req = request(tmp_path, **changes)
    with pytest.raises(ParameterError) as caught:
        build(req)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert "--" not in str(caught.value)
    code, _out, err = cli(capsys, "init", *_argv(req))
    assert code == 2 and worded in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orders.csv", "reference.sql"]


def _argv(req: Request) -> list[str]:
    """The `init` command line of a request."""
    return [str(req.folder),
            *[a for n, f in req.sources.items() for a in ("--source", f"{n}={f}")],
            *[a for n, k in req.keys.items() for a in ("--key", f"{n}={','.join(k)}")],
            *[a for n, t in req.event_times.items() for a in ("--event-time", f"{n}={t}")],
            "--reference", str(req.reference), "--target", req.target,
            "--target-key", ",".join(req.target_key)]


def test_a_reference_that_does_not_run_is_named(tmp_path: Path) -> None:
    req = request(tmp_path)
    req.reference.write_text("SELECT nothing FROM orders", encoding="utf-8")
    with pytest.raises(TaskError, match=r"reference\.sql: does not run over the sources"):
        build(req)


def test_a_nondeterministic_reference_is_refused(tmp_path: Path) -> None:
    req = request(tmp_path)
    req.reference.write_text("SELECT store_id, CAST(ordered_at AS DATE) AS day, "
                             "CAST(random() AS DOUBLE) AS noise FROM orders GROUP BY ALL",
                             encoding="utf-8")
    with pytest.raises(TaskError, match="not deterministic"):
        build(req)
    assert not (tmp_path / "my_task").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "my_task").mkdir()
    (tmp_path / "my_task" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(TaskError, match="already exists"):
        build(request(tmp_path))
    assert (tmp_path / "my_task" / "notes.txt").read_text(encoding="utf-8") == "mine"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from arrivalbench.cli import main

    code = 0
    try:
        main(list(args))
    except SystemExit as done:
        code = int(done.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_writes_the_folder_and_says_how_to_grade(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    req = request(tmp_path)
    code, out, _err = cli(capsys, "init", str(req.folder), "--source",
                          f"orders={req.sources['orders']}", "--key", "orders=order_id",
                          "--event-time", "orders=ordered_at", "--reference", str(req.reference),
                          "--target", "daily_revenue", "--target-key", "store_id, day")
    assert code == 0
    assert out.splitlines()[0] == f"wrote {req.folder}: 1 source, 12 records, target " \
                                  "daily_revenue (store_id, day)"
    assert out.splitlines()[-1] == f"  arrivalbench grade PIPELINE.sql --task {req.folder}"
    assert load_spec(req.folder).target.key == ("store_id", "day")


@pytest.mark.parametrize(("args", "message"), [
    (["--source", "orders"], "--source 'orders': give NAME=VALUE, e.g. --source "
                             "orders=orders.csv"),
    (["--source", "orders=a.csv", "--source", "orders=b.csv"], "--source orders: given twice"),
])
def test_the_command_refuses_a_bad_option_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        message: str) -> None:
    code, _out, err = cli(capsys, "init", str(tmp_path / "t"), *args, "--reference", "r.sql",
                          "--target", "t", "--target-key", "k")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


# -- --from-dbt: the task of a dbt project's incremental model -----------------------------------

SHOP = Path(__file__).parent.parent / "examples" / "your_data" / "shop"


def test_from_dbt_writes_the_task_with_the_full_refresh_as_reference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dbt.cli.main")
    from conftest import cli

    folder = tmp_path / "shop_task"
    code, out, err = cli(capsys, "init", str(folder), "--from-dbt", str(SHOP), "--data",
                         str(SHOP.parent), "--model", "orders_high_water_mark")
    assert code == 0, err
    assert f"arrivalbench grade {SHOP} --task {folder}" in out
    spec = load_spec(folder)
    assert spec.target.name == "orders_high_water_mark" and spec.target.key == ("order_id",)
    assert (folder / "log" / "orders.csv").read_bytes() == (SHOP.parent / "orders.csv").read_bytes()
    reference = (folder / "reference.sql").read_text(encoding="utf-8")
    # what dbt compiled for the full refresh, as one query over the source by its name
    assert "compiled into one query over the sources" in reference and "FROM orders" in reference
    # Every command works on the folder: its own gold passes, the project fails late arrival.
    assert {v.status for v, _o in grade_each(spec, spec.gold_sql, plan(spec, 1))} == {"PASS"}
    code, out, _ = cli(capsys, "grade", str(SHOP), "--task", str(folder), "--schedule",
                       "late_arrival", "--seeds", "1")
    assert code == 1 and "FAIL" in out


def test_from_dbt_bad_data_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dbt.cli.main")
    from conftest import cli

    empty = tmp_path / "data"
    empty.mkdir()
    (empty / "orders.csv").write_text("order_id,store_id\n1,2\n1,3\n", encoding="utf-8")
    code, out, err = cli(capsys, "init", str(tmp_path / "t"), "--from-dbt", str(SHOP),
                         "--data", str(empty), "--model", "orders_by_key")
    assert code == 2 and out == ""
    assert "source table orders's record key order_id: not unique in" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
