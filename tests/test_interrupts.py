"""A Ctrl-C that an engine absorbs still stops grading at the next replay."""

from __future__ import annotations

import io
import os
import signal
import threading

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
