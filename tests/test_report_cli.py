"""`arrivalbench report`: files, terminal summary, options, and one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from arrivalbench.cli import main
from arrivalbench.cli import out as console
from arrivalbench.study.schema import DDL
from test_report_golden import CELLS, IDIOMS, TURNS, USED, build_golden, verdict_row, write_results


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_golden(tmp_path_factory.mktemp("cli") / "results.duckdb")


def test_writes_every_file_and_prints_the_summary(results: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    before = results.read_bytes()
    code, out, err = run(["report", "--results", str(results), "--out", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    for name in ("metrics.json", "report.md", "report.html", "summary.csv", "hazards.csv",
                 "figures/snapshot_vs_silent.svg"):
        assert (tmp_path / name).is_file(), name
    # the terminal table: one column per arm, the headline rows, intervals
    for text in ("alpha", "m:unhinted", "negatives", "snapshot pass", "gap (all-in)",
                 "ordering", "idempotency", "0.67", "[0.00,1.00]\u2020", "paired median",
                 "\u2020 fewer than 10 tasks"):
        assert text in out, text
    # "cells" counts every cell, the next row only those without a script
    rows = {line.split("\u2502")[1].strip(): [c.strip() for c in line.split("\u2502")[2:-1]]
            for line in out.splitlines() if line.startswith("\u2502")}
    assert rows["cells"] == ["3", "6", "2"]
    assert rows["cells without a script"] == ["0", "1", "0"]
    flat = " ".join(out.split())  # notes wrap at word boundaries
    assert "note: m:unhinted: 1 cell with a script but no snapshot verdict" in flat
    assert "note: m:unhinted: 1 cell without a script, counted apart" in flat
    assert max(len(line) for line in out.splitlines()) <= console.width  # 80 when captured
    assert "note: alpha" not in out
    assert results.read_bytes() == before  # the report never writes the results file


def test_arm_and_seed_options(results: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["report", "--results", str(results), "--out", str(tmp_path),
                        "--arm", "negatives", "--arm", "alpha", "--seed", "7"], capsys)
    doc = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    assert code == 0 and list(doc["arms"]) == ["alpha", "negatives"] and doc["seed"] == 7
    assert "m:unhinted" not in out


def test_default_paths(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "arrivalbench.duckdb").write_bytes(results.read_bytes())
    code, _, _ = run(["report"], capsys)
    assert code == 0 and (tmp_path / "reports" / "report.html").is_file()


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arrivalbench: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_missing_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.duckdb"
    line = one_line_error(*run(["report", "--results", str(missing), "--out",
                                str(tmp_path / "out")], capsys))
    assert "no such results file" in line and str(missing) in line
    assert not missing.exists() and not (tmp_path / "out").exists()


def test_folder_instead_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_line_error(*run(["report", "--results", str(tmp_path)], capsys))
    assert "is a folder" in line


def test_file_that_is_not_duckdb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "results.duckdb"
    junk.write_text("verdicts,PASS\n", encoding="utf-8")
    line = one_line_error(*run(["report", "--results", str(junk)], capsys))
    assert "cannot open as a results file" in line and str(junk) in line
    assert junk.read_text(encoding="utf-8") == "verdicts,PASS\n"


def test_duckdb_file_without_results_tables(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE t (x INTEGER)").close()
    line = one_line_error(*run(["report", "--results", str(other)], capsys))
    assert "not a results file written by arrivalbench" in line and str(other) in line
    tables = duckdb.connect(str(other), read_only=True).execute(
        "SELECT table_name FROM information_schema.tables").fetchall()
    assert tables == [("t",)]  # nothing was created in it


def test_other_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v9.duckdb"
    con = duckdb.connect(str(path))
    con.execute(DDL)
    con.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '9')")
    con.close()
    line = one_line_error(*run(["report", "--results", str(path)], capsys))
    assert "schema version 9" in line


def test_results_file_without_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "empty.duckdb", [], [])
    line = one_line_error(*run(["report", "--results", str(path)], capsys))
    assert "holds no cells" in line


def test_unknown_arm(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_line_error(*run(["report", "--results", str(results), "--out", str(tmp_path),
                                "--arm", "alpha", "--arm", "gpt:unhinted"], capsys))
    assert f"--arm 'gpt:unhinted': not in {results}; did you mean m:unhinted? give one of " \
        "alpha, m:unhinted, negatives" in line
    assert not (tmp_path / "metrics.json").exists()
    line = one_line_error(*run(["report", "--results", str(results), "--out", str(tmp_path),
                                "--compare", "alpha", "negative"], capsys))
    assert "--compare 'negative': not in" in line and "did you mean negatives?" in line
    from arrivalbench.errors import UnknownName
    from arrivalbench.report.load import load

    with pytest.raises(UnknownName) as caught:  # a library caller reads parameter names
        load(results, ["gpt:unhinted"])
    assert str(caught.value).startswith("arms 'gpt:unhinted': not in ")
    assert caught.value.allowed == ("alpha", "m:unhinted", "negatives")


def test_out_is_a_file(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("", encoding="utf-8")
    code, out, err = run(["report", "--results", str(results), "--out", str(blocker)], capsys)
    one_line_error(code, out, err)


# -- --compare -----------------------------------------------------------------------------------


def test_compare_prints_shifts_and_changed_cells(results: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["report", "--results", str(results), "--out", str(tmp_path),
                          "--arm", "negatives", "--compare", "alpha", "m:unhinted"], capsys)
    assert (code, err) == (0, "")
    assert "shift m:unhinted \u2212 alpha on 3 common tasks" in out
    assert "t2 replicate 0: crash \u2192 no script" in out
    assert "3 of 3 matched cells changed class (0 only in alpha, 3 only in m:unhinted)" in out
    doc = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    # the compared arms join the --arm selection
    assert list(doc["arms"]) == ["alpha", "m:unhinted", "negatives"]
    assert doc["comparison"]["metrics"]["gap"]["shift"]["value"] == -0.25


@pytest.mark.parametrize(("pair", "needle"), [
    (("alpha", "gpt:unhinted"), "--compare 'gpt:unhinted': not in"),
    (("alpha", "alpha"), "--compare alpha alpha: the same arm twice; give two different arms"),
])
def test_compare_bad_arms(results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          pair: tuple[str, str], needle: str) -> None:
    line = one_line_error(*run(["report", "--results", str(results), "--out", str(tmp_path),
                                "--compare", *pair], capsys))
    assert needle in line
    assert not (tmp_path / "metrics.json").exists()


def test_compare_without_a_common_task(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.duckdb",
                         [("a", "t1", 0, "x", None), ("b", "t2", 0, "y", None)],
                         [verdict_row("t1", "x", "snapshot", 0, "P"),
                          verdict_row("t2", "y", "snapshot", 0, "P")])
    line = one_line_error(*run(["report", "--results", str(path), "--out",
                                str(tmp_path / "out"), "--compare", "a", "b"], capsys))
    assert "compare a with b: the arms share no task (a: t1; b: t2)" in line


def test_compare_needs_two_arms(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = one_line_error(*run(["report", "--results", str(results), "--compare", "alpha"],
                               capsys))
    assert "--compare" in line


# -- arms without any script ---------------------------------------------------------------------


def test_arm_without_scripts_is_named_not_drawn(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    cells = [*CELLS, ("mockllm/model:unhinted", "t1", 0, None, "no SQL in the reply"),
             ("mockllm/model:unhinted", "t2", 0, None, "no SQL in the reply")]
    path = write_results(tmp_path / "r.duckdb", cells, USED, IDIOMS, TURNS)
    code, out, err = run(["report", "--results", str(path), "--out", str(tmp_path / "out")],
                         capsys)
    assert (code, err) == (0, "")
    flat = " ".join(out.split())  # notes wrap at word boundaries
    assert ("note: mockllm/model:unhinted: no cell has a script (2 cells: no SQL in the reply "
            "(2)); left out of every table") in flat
    header = next(line for line in out.splitlines() if "alpha" in line)
    assert "mockllm" not in header  # no empty column
    doc = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert "mockllm/model:unhinted" not in doc["arms"]
    assert doc["no_scripts"] == {"mockllm/model:unhinted": {
        "cells": 2, "reasons": {"no SQL in the reply": 2}}}
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "Left out, no script in any cell: `mockllm/model:unhinted` (2 cells)" in md
    assert "| mockllm/model:unhinted | 2 | no SQL in the reply (2) |" in md
    svg = (tmp_path / "out" / "figures" / "composition.svg").read_text(encoding="utf-8")
    assert "mockllm" not in svg


def test_only_arms_without_scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_results(tmp_path / "r.duckdb", [("mock", "t1", 0, None, "no SQL")], [])
    line = one_line_error(*run(["report", "--results", str(path), "--out",
                                str(tmp_path / "out")], capsys))
    assert "no arm to report: no cell of mock has a script" in line


def test_each_tier_gets_a_report_of_its_own(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    results = build_golden(tmp_path / "results.duckdb")
    con = duckdb.connect(str(results))
    for task, tier in (("t1", "core"), ("t2", "core"), ("t3", "hard")):
        con.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, 'append', 'easy', [], ?)",
                    [f"sha256:{task}", task, task, task, json.dumps({"tier": tier})])
    con.close()
    code, out, err = run(["report", "--results", str(results), "--out", str(tmp_path / "r")],
                         capsys)
    assert (code, err) == (0, "")
    assert "tier core" in out and "tier hard" in out
    core = json.loads((tmp_path / "r" / "core" / "metrics.json").read_text())
    hard = json.loads((tmp_path / "r" / "hard" / "metrics.json").read_text())
    # never pooled: each report counts only its own tier's tasks
    assert {r["task"] for r in core["arms"]["alpha"]["per_task"]} == {"t1", "t2"}
    assert {r["task"] for r in hard["arms"]["alpha"]["per_task"]} == {"t3"}
    code, out, _ = run(["report", "--results", str(results), "--out", str(tmp_path / "h"),
                        "--tier", "hard"], capsys)
    assert code == 0 and (tmp_path / "h" / "metrics.json").is_file()
    code, _, err = run(["report", "--results", str(results), "--tier", "expert"], capsys)
    assert code == 2 and "'expert' is not one of 'core', 'hard', 'all'" in err
