"""The command line: parse, call, print. One module per group of commands (`grading`,
`tasks`, `study`), the shared options in `options`, the exit statuses in `exits`; `main` is the
console entry point (`arrivalbench.cli:main`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import click

from arrivalbench import interrupts
from arrivalbench.cli import grading, study, tasks  # noqa: F401  (each registers its commands)
from arrivalbench.cli.app import app
from arrivalbench.cli.console import out
from arrivalbench.cli.exits import (
    BAD_INPUT,
    BROKEN_PIPE,
    BUG,
    DONE,
    FOUND,
    INTERRUPTED,
    bad_input,
    fail,
    interrupted,
)
from arrivalbench.errors import REPORT_BUGS, ArrivalBenchError

__all__ = ["BAD_INPUT", "BROKEN_PIPE", "BUG", "DONE", "FOUND", "INTERRUPTED", "app", "main",
           "out"]


def main(argv: Sequence[str] | None = None) -> None:
    """Run a command; exit with one of the statuses above. Bad input: one line on standard
    error. A bug: its traceback, a line saying it is a bug and where to report it."""
    with _sigterm_stops_politely():
        _main(argv)


@contextmanager
def _sigterm_stops_politely() -> Iterator[None]:
    """SIGTERM (`kill`, a scheduler's stop) as Ctrl-C: the stack unwinds, so dbt children's
    scratch folders and PostgreSQL servers go with it, and the exit status is 130."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupts.stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> None:
    obj: dict[str, object] = {"argv": None if argv is None else ["arrivalbench", *argv]}
    try:
        app.main(args=argv, prog_name="arrivalbench", standalone_mode=False, obj=obj)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(BAD_INPUT)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "arrivalbench"
        fail(f"{exc.format_message()} (see '{command} --help')")
    except (click.Abort, KeyboardInterrupt):
        interrupted(argv is None)
    except click.ClickException as exc:
        fail(exc.format_message())
    except ArrivalBenchError as exc:
        name = obj.get("command")
        bad_input(exc, app.commands.get(name) if isinstance(name, str) else None)
    except BrokenPipeError:
        if argv is None:  # the interpreter's own flush at exit would fail again and say so
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(BROKEN_PIPE)
    except Exception:
        if interrupts.pressed():  # an engine error that Ctrl-C caused is not a bug
            interrupted(argv is None)
        traceback.print_exc()
        click.echo("arrivalbench: internal error: this is a bug in arrivalbench, not a problem "
                   f"with your input; please report it to {REPORT_BUGS}", err=True)
        sys.exit(BUG)

