"""The command group: `arrivalbench COMMAND`."""

from __future__ import annotations

import click

from arrivalbench import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arrivalbench")
def app() -> None:
    """Grade incremental data pipelines by running them again under time.

    \b
    Exit status, every command:
      0    done, and the verdicts are clean
      1    the verdicts found something (a FAIL or ERROR, a failed gate check, a regrade
           byte that differs)
      2    bad input (one line on standard error saying what to fix)
      3    an internal error: a bug in arrivalbench (its traceback, and where to report it)
      130  interrupted"""
