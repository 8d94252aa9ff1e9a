"""The command group: `arrivalbench COMMAND`."""

from __future__ import annotations

import click

from arrivalbench import __version__


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from arrivalbench.core.version import harness_version  # hashes core/: only when asked

    click.echo(f"arrivalbench {harness_version()} (the harness version every verdict stores; "
               f"release {__version__})")
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_show_version,
              help="Show the harness version verdicts store (release+source digest) and exit.")
@click.pass_context
def app(ctx: click.Context) -> None:
    """Grade incremental data pipelines by running them again under time.

    \b
    Exit status, every command:
      0    done, and the verdicts are clean
      1    the verdicts found something (a FAIL or ERROR, a failed gate check, a regrade
           byte that differs)
      2    bad input (one line on standard error saying what to fix)
      3    an internal error: a bug in arrivalbench (its traceback, and where to report it)
      130  interrupted"""
    if isinstance(ctx.obj, dict):  # the command `main` words bad input for (cli.exits.flag)
        ctx.obj["command"] = ctx.invoked_subcommand
