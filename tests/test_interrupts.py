"""A Ctrl-C that an engine absorbs still stops grading at the next replay."""

from __future__ import annotations

import io
import os
import signal
import threading
from pathlib import Path

import pytest
from rich.console import Console

from arrivalbench import interrupts, render
from arrivalbench.core.engine import Limits
from arrivalbench.core.engine import duckdb as engine


def _absorbed_press() -> None:
    """A press that lands where the harness swallows the error it causes."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.sigtimedwait([], 0)  # let the handler run here, not later
    except KeyboardInterrupt:
        pass


@pytest.mark.parametrize("enabled", [True, False])
def test_an_absorbed_ctrl_c_stops_at_the_next_replay(enabled: bool) -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    with render.progress(3, enabled=enabled, console=console) as advance:
        advance("PASS")
        _absorbed_press()
        with pytest.raises(KeyboardInterrupt):
            advance("ERROR")
    assert interrupts.pressed()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_new_watch_forgets_an_old_press() -> None:
    with interrupts.watching():
        _absorbed_press()
    with interrupts.watching():
        assert not interrupts.pressed()
        interrupts.check()  # nothing pending: no KeyboardInterrupt


def test_ctrl_c_inside_a_statement_is_the_users_interrupt() -> None:
    """DuckDB reports Ctrl-C during a statement as a RuntimeError; the engine hands it back as
    KeyboardInterrupt wherever it surfaces, never as the pipeline's ERROR."""
    with engine.database(Limits(statement_seconds=30)) as db:
        con = db.connect()
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            db.query("SELECT count(*) FROM range(100000000000) t(i) WHERE i % 7 = 3", "run", con)
        timer.join()


def test_an_interrupted_command_leaves_its_callers_ctrl_c_alone(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`main` called in a process of someone else's (a test, a notebook) exits 130 on Ctrl-C
    without ignoring SIGINT from then on: an ignored signal would outlive the call and be
    inherited by every program the caller starts."""
    from arrivalbench import cli

    def pressed(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.grading, "load_spec", pressed)
    with pytest.raises(SystemExit) as stopped:
        cli.main(["grade", "gold.sql", "--task", "store_daily_revenue"])
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip() == "arrivalbench: interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_during_a_dbt_grade_cleans_up_and_exits_130(tmp_path: Path) -> None:
    """SIGTERM stops `grade` as Ctrl-C does: the stack unwinds, the dbt child's scratch folder
    goes with it (nothing is left for the next start to sweep), and the status is 130."""
    pytest.importorskip("dbt.cli.main")
    import subprocess
    import sys
    import time

    examples = Path(__file__).resolve().parent.parent / "examples" / "dbt"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    command = [sys.executable, "-c", "from arrivalbench.cli import main; main()", "grade",
               str(examples / "passing"), "--task", "ad_clicks_clean"]
    grader = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    scratch = tmp_path / "arrivalbench-dbt"
    deadline = time.monotonic() + 120
    while not (scratch.is_dir() and any(scratch.iterdir())):
        assert grader.poll() is None and time.monotonic() < deadline
        time.sleep(0.2)
    grader.send_signal(signal.SIGTERM)
    assert grader.wait(60) == 130
    assert not any(scratch.iterdir())
