"""Bugs are not bad input: exit 2 and one line for bad input only; an internal error keeps its
traceback, says it is a bug and exits 3; Ctrl-C exits 130; library messages name no flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arrivalbench.cli import main
from arrivalbench.core import grading
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import ArrivalBenchError


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    code = done.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def test_an_internal_error_keeps_its_traceback_and_says_it_is_a_bug(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug in the tasks table")

    monkeypatch.setattr("arrivalbench.render.tasks_table", broken)
    code, err = run_main(capsys, "tasks")
    assert code == 3
    assert "Traceback (most recent call last)" in err and "in broken" in err
    assert "ZeroDivisionError: a bug in the tasks table" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("arrivalbench: internal error: this is a bug in arrivalbench")
    assert "report it to" in last


def test_bad_input_is_still_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(capsys, "show", "no_such_task")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_ctrl_c_exits_130(capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("arrivalbench.render.tasks_table", interrupted)
    code, err = run_main(capsys, "tasks")
    assert code == 130 and err.strip() == "arrivalbench: interrupted"


def test_generate_does_not_blame_the_model_for_every_exception(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_ai

    def eval_that_breaks(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug after the model was reached")

    monkeypatch.setattr(inspect_ai, "eval", eval_that_breaks)
    code, err = run_main(capsys, "generate", "--model", "mockllm/model", "--task",
                         "store_daily_revenue", "--results", str(tmp_path / "r.duckdb"))
    assert code == 3 and "Traceback" in err and "KeyError" in err
    assert "model mockllm/model" not in err


def test_library_errors_name_values_not_flags(tiny: TaskSpec) -> None:
    with pytest.raises(ArrivalBenchError) as raised:
        grading.plan(tiny, 0)
    assert str(raised.value) == "seeds 0: give a whole number of at least 1"
    from arrivalbench.study import executors, grid, regrade

    for call in (lambda: executors.make("dask"), lambda: grid.run(arms=["golden"]),
                 lambda: regrade.regrade(sample=0)):
        with pytest.raises(ArrivalBenchError) as raised:
            call()
        assert "--" not in str(raised.value), raised.value


GOLD = Path(__file__).parents[1] / "src/arrivalbench/tasks/store_daily_revenue/gold.sql"
NO_DEDUP = GOLD.parent / "negatives" / "no_dedup.sql"


@pytest.mark.parametrize(("args", "status"), [
    (("grade", str(GOLD), "--task", "store_daily_revenue", "--schedule", "duplicates",
      "--seeds", "1"), 0),
    (("grade", str(NO_DEDUP), "--task", "store_daily_revenue", "--schedule", "duplicates",
      "--seeds", "1"), 1),
    (("grade", str(GOLD), "--task", "no_such_task"), 2),
    (("grade", str(GOLD), "--task", "store_daily_revenue", "--seeds", "0"), 2),
])
def test_every_command_tells_clean_found_and_bad_input_apart(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], status: int) -> None:
    code, err = run_main(capsys, *args)
    assert code == status, err
    assert "Traceback" not in err


def test_a_crashed_grader_is_not_a_failing_pipeline(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A FAIL verdict exits 1, a bug while grading exits 3: CI tells them apart. (A bug in a
    worker process is the executors' test; this one breaks the grader's own process.)"""
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the report broke")

    monkeypatch.setattr("arrivalbench.render.grade_table", broken)
    code, err = run_main(capsys, "grade", str(NO_DEDUP), "--task", "store_daily_revenue",
                         "--schedule", "duplicates", "--seeds", "1")
    assert code == 3 and "RuntimeError: the report broke" in err


def test_the_help_lists_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    from arrivalbench import cli

    cli.main(["--help"])
    help_text = capsys.readouterr().out
    for status in (cli.DONE, cli.FOUND, cli.BAD_INPUT, cli.BUG, cli.INTERRUPTED):
        assert f"\n    {status} " in help_text


def test_a_reader_that_goes_away_is_not_a_verdict() -> None:
    """`arrivalbench tasks | head -1`: 141 as a shell reports SIGPIPE, no traceback."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                                "tasks"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # nobody reads what it prints
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141, err
    assert b"Traceback" not in err


def test_only_a_missing_extra_reads_as_one(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """A missing report distribution is bad input (exit 2, install the extra); an ImportError
    of arrivalbench's own modules is a bug (exit 3, traceback)."""
    import sys

    def fresh_report() -> None:  # the report's modules are imported again by the command
        for name in [m for m in sys.modules if m.startswith("arrivalbench.report")]:
            monkeypatch.delitem(sys.modules, name)

    fresh_report()
    monkeypatch.setitem(sys.modules, "arrivalbench.report.terminal", None)
    code, err = run_main(capsys, "report", "--results", str(tmp_path / "r.duckdb"))
    assert code == 3 and "Traceback" in err and "optional extra" not in err
    monkeypatch.undo()
    fresh_report()
    monkeypatch.setitem(sys.modules, "numpy", None)
    code, err = run_main(capsys, "report", "--results", str(tmp_path / "r.duckdb"))
    assert code == 2 and "pip install 'arrivalbench[report]'" in err
