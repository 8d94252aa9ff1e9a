"""Bugs are not bad input: exit 2 and one line for bad input only; an internal error keeps its
traceback, says it is a bug and exits 1; Ctrl-C exits 130; library messages name no flags."""

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
    assert code == 1
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
    assert code == 1 and "Traceback" in err and "KeyError" in err
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
