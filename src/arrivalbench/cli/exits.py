"""Exit statuses, the same for every command, and the ways a command ends."""

from __future__ import annotations

import signal
import sys
from typing import NoReturn

import click

from arrivalbench.errors import WARNING, ArrivalBenchError
from arrivalbench.words import printable


def warn(message: str) -> None:
    """A warning: the one prefix every warning on standard error carries (as `run`'s)."""
    click.echo(f"{WARNING}{printable(message, lines=False)}", err=True)


def fail(message: str) -> NoReturn:
    click.echo(f"arrivalbench: error: {printable(message, lines=False)}", err=True)
    sys.exit(BAD_INPUT)


def bad_input(exc: ArrivalBenchError, command: click.Command | None) -> NoReturn:
    """Bad input in the words of `command`, the one that was running: each parameter a
    message names is worded as that command's flag for it."""
    fail(exc.worded(lambda name: flag(command, name)))


def flag(command: click.Command | None, name: str) -> str:
    """How `command` spells the library parameter `name`: the long flag of the option that
    takes it (`measure` is `--cost`, `sources` is `--source`), else of the option spelt like
    it; an argument's metavar; else `name` itself (a parameter the command does not take)."""
    params = command.params if command is not None else []
    spelt = "--" + name.replace("_", "-")
    found = next((p for p in params if p.name == name), None) or \
        next((p for p in params if spelt in p.opts), None)
    if found is None:
        return name
    if isinstance(found, click.Option):
        return max(found.opts, key=len)
    return found.human_readable_name


# Exit statuses, the same for every command: CI tells a wrong pipeline (1) from bad input (2)
# and from a broken harness (3).
DONE = 0  # done, and clean
FOUND = 1  # the verdicts found something: a FAIL or ERROR verdict, a failed gate check, ...
BAD_INPUT = 2  # unknown task, unreadable file, invalid option: one line, no traceback
BUG = 3  # an internal error: a bug in arrivalbench, with its traceback
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader went away (`| head`), as a shell reports it


def verdict_status(clean: bool) -> NoReturn:
    """Exit DONE when nothing was found, else FOUND."""
    sys.exit(DONE if clean else FOUND)


def interrupted(owns_process: bool) -> NoReturn:
    if owns_process:
        # A second Ctrl-C while the interpreter shuts down would turn exit 130 into 1. Only
        # when this process is the command: an ignored SIGINT outlives `main` in a caller and
        # is inherited by every program it starts.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("arrivalbench: interrupted", err=True)
    sys.exit(INTERRUPTED)
