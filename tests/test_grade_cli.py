"""The command line: `tasks`, `show`, `grade`, exit codes and the JSON document.

Set ARRIVALBENCH_UPDATE_GOLDEN=1 to rewrite tests/golden/grade_no_dedup.json after an intended
change of schedules, verdict details or the document's shape; review the diff before committing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arrivalbench import cli
from arrivalbench.core.engine import duckdb as engine
from arrivalbench.core.grading import schedule
from arrivalbench.core.task import load_spec, resolve
from arrivalbench.core.values import digest
from conftest import TINY_GOLD, TINY_REFERENCE, write_task

GOLDEN = Path(__file__).parent / "golden" / "grade_no_dedup.json"
TASK = "store_daily_revenue"
GOLD = resolve(TASK) / "gold.sql"
NO_DEDUP = resolve(TASK) / "negatives" / "no_dedup.sql"
# A small plan: snapshot, a control and the hazards no_dedup fails and passes.
SMALL = ["--schedule", "snapshot", "--schedule", "in_order", "--schedule", "duplicates",
         "--schedule", "late_arrival", "--seeds", "2"]


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        *argv: str | Path) -> tuple[int, str, str]:
    """`arrivalbench ARGV` in this process: (exit status, stdout, stderr)."""
    monkeypatch.setattr(cli.out, "width", 200)  # no folding of rich tables
    try:
        cli.main([str(a) for a in argv])
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def subprocess_json(*argv: str | Path) -> bytes:
    result = subprocess.run([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                             *map(str, argv)], capture_output=True, check=False)
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_grade_json_has_the_documented_shape(capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK, *SMALL,
                         "--json")
    assert code == 1 and err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    document = json.loads(out)
    assert list(document) == sorted(document)  # canonical: sorted keys
    assert set(document) == {"task", "artifact", "engine", "verdicts"}
    assert document["task"] == TASK
    assert document["artifact"] == digest(NO_DEDUP.read_text(encoding="utf-8"))
    assert document["engine"] == f"duckdb {engine.VERSION}"
    points = [(v["schedule"], v["seed"]) for v in document["verdicts"]]
    assert points == [("snapshot", 0), ("in_order", 0), ("in_order", 1), ("duplicates", 0),
                      ("duplicates", 1), ("late_arrival", 0), ("late_arrival", 1)]
    for v in document["verdicts"]:
        assert set(v) == {"schedule", "seed", "verdict", "detail"}
        expected = "FAIL" if v["schedule"] == "duplicates" else "PASS"
        assert v["verdict"] == expected
        assert (v["detail"] == {}) == (expected == "PASS")


def test_grade_json_is_byte_identical_across_processes() -> None:
    args = ["grade", NO_DEDUP, "--task", TASK, "--schedule", "duplicates", "--schedule",
            "crash_retry", "--seeds", "2", "--json"]
    first, second = subprocess_json(*args), subprocess_json(*args)
    assert first == second and b'"verdict":"FAIL"' in first


def test_grade_golden(capsys: pytest.CaptureFixture[str],
                      monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK, *SMALL,
                          "--json")
    assert code == 1
    pretty = json.dumps(json.loads(out), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("ARRIVALBENCH_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(pretty, encoding="utf-8")
    assert GOLDEN.is_file(), "run with ARRIVALBENCH_UPDATE_GOLDEN=1 to create the golden file"
    assert pretty == GOLDEN.read_text(encoding="utf-8")


def test_exit_zero_when_everything_passes(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run(capsys, monkeypatch, "grade", GOLD, "--task", TASK, *SMALL)
    assert code == 0 and err == ""
    assert "snapshot" in out and "duplicates" in out and "PASS 7" in out
    assert "FAIL" not in out


def test_human_output_explains_failures(capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK, *SMALL)
    assert code == 1
    assert "duplicates, seed 0: FAIL" in out
    assert "changed {" in out and "got '" in out and "expected '" in out
    assert "late_arrival, seed" not in out  # passing schedules are not explained


def test_error_verdicts_exit_one(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "broken.sql"
    script.write_text("SELECT * FROM no_such_table;")
    code, out, _err = run(capsys, monkeypatch, "grade", script, "--task", TASK, "--schedule",
                          "snapshot", "--json")
    assert code == 1
    [verdict] = json.loads(out)["verdicts"]
    assert verdict["verdict"] == "ERROR" and verdict["detail"]["phase"] == "run"


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str | Path], str]]:
    """name -> (arguments, a word of the message that names the bad value)."""
    empty = tmp / "empty.sql"
    empty.write_text("  \n")
    latin = tmp / "latin.sql"
    latin.write_bytes("SELECT 'café';".encode("latin-1"))
    broken = tmp / "broken_task"
    broken.mkdir()
    (broken / "task.yaml").write_text("id: broken_task\ntitle: [unclosed\n")
    comments = tmp / "comments.sql"
    comments.write_text("-- to do\n;;\n/* later */ ;\n")
    no_batches = tmp / "empty_plan.json"
    no_batches.write_text('{"batches": []}')
    plan_file = tmp / "plan.json"
    plan_file.write_text('{"batches": [{"records": []}]}')
    tiny_gold = tmp / "tiny.sql"
    tiny_gold.write_text(TINY_GOLD)
    twice = write_task(tmp / "twice", reference=TINY_REFERENCE + "UNION ALL SELECT 'a', 1, 1\n")
    return {
        "unknown task": (["grade", GOLD, "--task", "no_such_task"], "'no_such_task'"),
        "missing file": (["grade", tmp / "absent.sql", "--task", TASK], "absent.sql"),
        "empty file": (["grade", empty, "--task", TASK], "empty.sql"),
        "non-UTF-8 file": (["grade", latin, "--task", TASK], "latin.sql"),
        "broken task.yaml": (["grade", GOLD, "--task", broken], "task.yaml"),
        "seeds 0": (["grade", GOLD, "--task", TASK, "--seeds", "0"], "0"),
        "seeds x": (["grade", GOLD, "--task", TASK, "--seeds", "x"], "'x'"),
        "unknown schedule": (["grade", GOLD, "--task", TASK, "--schedule", "sideways"],
                             "'sideways'"),
        "folder as script": (["grade", tmp, "--task", TASK], str(tmp)),
        "schedule the task cannot take": (["grade", GOLD, "--task", TASK, "--schedule",
                                           "schema_evolution"], "schema_evolution"),
        "show unknown task": (["show", "no_such_task"], "'no_such_task'"),
        "show unknown schedule": (["show", TASK, "--schedule", "sideways"], "'sideways'"),
        "missing task folder": (["grade", GOLD, "--task", "./my_task/"],
                                "./my_task/: no such folder"),
        "file as task": (["grade", GOLD, "--task", GOLD], f"{GOLD}: is a file, not a task"),
        "task.yaml as task": (["show", resolve(TASK) / "task.yaml"],
                              f"is a file, not a task; give a built-in id or its folder "
                              f"{resolve(TASK)}"),
        "only comments": (["grade", comments, "--task", TASK],
                          "comments.sql: holds no SQL statement (only comments or semicolons)"),
        "explain only comments": (["explain", comments, "--task", TASK],
                                  "comments.sql: holds no SQL statement"),
        "plan of no batches": (["grade", GOLD, "--task", TASK, "--plan", no_batches],
                               "batches is empty"),
        "schedule typo": (["grade", GOLD, "--task", TASK, "--schedule", "duplicate"],
                          "did you mean duplicates?"),
        "explain schedule typo": (["explain", GOLD, "--task", TASK, "--schedule", "trikle"],
                                  "did you mean trickle?"),
        "show schedule typo": (["show", TASK, "--schedule", "backfil"], "did you mean backfill?"),
        "show seed without schedule": (["show", TASK, "--seed", "1"],
                                       "--seed picks a schedule's seed: give --schedule"),
        "plan with seeds": (["grade", GOLD, "--task", TASK, "--plan", plan_file, "--seeds", "3"],
                            "leave out --seeds"),
        "reference not unique": (["grade", tiny_gold, "--task", twice],
                                 "reference.sql: not unique on the target key (shop): 1 key "
                                 'repeat, e.g. ["a"]'),
    }


BAD_INPUTS = ["unknown task", "missing file", "empty file", "non-UTF-8 file", "broken task.yaml",
              "seeds 0", "seeds x", "unknown schedule", "folder as script",
              "schedule the task cannot take",
              "show unknown task", "show unknown schedule", "missing task folder", "file as task",
              "task.yaml as task", "only comments", "explain only comments",
              "plan of no batches", "schedule typo", "explain schedule typo",
              "show schedule typo", "show seed without schedule", "plan with seeds",
              "reference not unique"]


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_exits_two_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    cases = _bad_inputs(tmp_path)
    assert sorted(cases) == sorted(BAD_INPUTS)
    argv, word = cases[case]
    code, out, err = run(capsys, monkeypatch, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("arrivalbench: error: "), err
    assert word in err
    assert "Traceback" not in err


def test_bad_input_in_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                             "grade", str(tmp_path / "absent.sql"), "--task", TASK],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (f"arrivalbench: error: {tmp_path / 'absent.sql'}: no such file; "
                             "give the path of a .sql script or of a dbt project folder\n")


@pytest.mark.parametrize("after", [0.5, 2.0])  # seconds after start-up
def test_ctrl_c_is_one_line_and_exit_130(after: float) -> None:
    """Ctrl-C lands in the harness or inside a DuckDB statement; either way no traceback.

    A SIGINT that reaches DuckDB just as a statement completes can be absorbed by it (the
    query is no longer there to cancel), so the test presses Ctrl-C again, as a person would.
    The clock starts once the CLI is imported: on a loaded machine imports alone can take
    seconds, and a Ctrl-C before `main` runs is Python's, not the harness's.
    """
    started = "import sys; from arrivalbench.cli import main; print('ready', file=sys.stderr, " \
              "flush=True); main()"
    process = subprocess.Popen([sys.executable, "-c", started,
                                "grade", GOLD, "--task", TASK, "--seeds", "50"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert process.stderr is not None
    assert process.stderr.readline() == "ready\n"
    time.sleep(after)
    for _ in range(20):
        process.send_signal(signal.SIGINT)
        try:
            _out, err = process.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    else:
        process.send_signal(signal.SIGABRT)  # the fault handler prints where it hangs
        pytest.fail("grade did not stop on Ctrl-C:\n" + process.communicate()[1][-4000:])
    # As a shell reports a command stopped by Ctrl-C.
    assert process.returncode == 130, err[-4000:]
    assert err.strip().splitlines()[-1] == "arrivalbench: interrupted"
    assert "Traceback" not in err


def test_tasks_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "tasks", "--json")
    assert code == 0
    listing = json.loads(out)
    ids = [t["id"] for t in listing]
    assert ids == sorted(ids)
    assert {"store_daily_revenue", "customer_current_address", "web_page_views"} <= set(ids)
    store = next(t for t in listing if t["id"] == TASK)
    assert store["mode"] == "aggregate" and store["difficulty"] == "easy"
    assert store["hazards"] == ["late_arrival", "out_of_order", "duplicates", "crash_retry",
                                "backfill"]
    code, out, _err = run(capsys, monkeypatch, "tasks")
    assert code == 0 and TASK in out and "aggregate" in out


def test_show_task(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "show", "customer_current_address")
    assert code == 0
    assert "Fulfilment needs a table with the current shipping address" in out
    assert "customer_current_address" in out and "schema_evolution" in out
    assert "prompt (unhinted)" in out


def test_show_schedule_prints_a_batch_plan(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "show", TASK, "--schedule", "crash_retry",
                          "--seed", "1")
    assert code == 0
    plan = schedule(load_spec(TASK), "crash_retry", 1)
    assert f"{TASK}: crash_retry, seed 1 — {len(plan.batches)} runs" in out
    assert plan.digest in out
    assert "aborted after the last statement" in out
    assert "% of the statements" in out
    assert "orders:" in out
    # one line per run, numbered from 0
    assert all(f"│ {i:>3} │" in out or f"│ {i} │" in out for i in range(len(plan.batches)))


def test_after_the_table_the_next_step_is_the_explain_command_of_the_first_failure(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK, *SMALL,
                          "--timeout", "7")
    assert code == 1
    assert out.rstrip().splitlines()[-1] == (
        f"next: arrivalbench explain {NO_DEDUP} --task {TASK} --schedule duplicates --seed 0 "
        "--timeout 7")
    assert "clean batches" not in out  # its controls pass


def test_a_passing_grade_says_no_next_step(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "grade", GOLD, "--task", TASK, "--schedule",
                          "in_order", "--seeds", "1")
    assert code == 0 and "next:" not in out and "clean batches" not in out


def test_a_failing_control_says_the_pipeline_is_wrong_on_clean_batches(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "half.sql"  # keeps the first batch's rows only: wrong on any schedule
    broken.write_text(GOLD.read_text(encoding="utf-8") + "\nDELETE FROM main.daily_store_revenue "
                      "WHERE store_id % 2 = 0;\n", encoding="utf-8")
    code, out, _err = run(capsys, monkeypatch, "grade", broken, "--task", TASK, "--schedule",
                          "in_order", "--schedule", "trickle", "--seeds", "1")
    assert code == 1
    assert ("in_order and trickle fail: controls deliver every record once, with no hazard, so "
            "the pipeline is wrong even on clean batches; fix that first") in out
    assert "--schedule in_order --seed 0" in out.splitlines()[-1]


def test_cost_marks_replays_over_the_budget_and_keeps_the_exit_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    task = tmp_path / TASK

    shutil.copytree(resolve(TASK), task)
    yaml = task / "task.yaml"
    yaml.write_text(yaml.read_text(encoding="utf-8").rstrip() +
                    "\nbudget:\n  read_amplification: 0.5\n", encoding="utf-8")
    code, out, _err = run(capsys, monkeypatch, "grade", GOLD, "--task", task, "--schedule",
                          "trickle", "--seeds", "1", "--cost")
    assert code == 0  # cost is not correctness
    assert " over" in out
    assert "1 replay over the task's read budget of 0.5 rows read per record delivered" in out
    code, out, _err = run(capsys, monkeypatch, "grade", GOLD, "--task", TASK, "--schedule",
                          "in_order", "--seeds", "1", "--cost")
    assert code == 0 and " over" not in out.split("cost (rows")[1].split("every replay")[0]
    assert "every replay within the task's read budget" in out


def test_a_plan_from_show_keeps_its_schedule_and_seed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _err = run(capsys, monkeypatch, "show", TASK, "--schedule", "crash_retry",
                          "--seed", "1", "--json")
    assert code == 0
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(out, encoding="utf-8")
    code, out, _err = run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK, "--plan",
                          plan_file, "--json")
    assert code == 1
    [verdict] = json.loads(out)["verdicts"]
    assert (verdict["schedule"], verdict["seed"], verdict["verdict"]) == (
        "crash_retry", 1, "FAIL")
    generated = json.loads(run(capsys, monkeypatch, "grade", NO_DEDUP, "--task", TASK,
                               "--schedule", "crash_retry", "--seeds", "2", "--json")[1])
    assert verdict["detail"] == generated["verdicts"][1]["detail"]
