"""Options shared by several commands, declared once; and the small readers of what they name."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName, Failure, Limits, backend
from arrivalbench.core.grading import DEFAULT_SEEDS
from arrivalbench.core.lateness import Allowance
from arrivalbench.core.schedules import KINDS
from arrivalbench.core.task import LANDINGS, TIER_CHOICES
from arrivalbench.errors import ArrivalBenchError, did_you_mean
from arrivalbench.study.store import DEFAULT_RESULTS

F = TypeVar("F", bound=Callable[..., Any])


# -- options shared by several commands ----------------------------------------------------------
# One spelling each. `--seed N` is always one seed; `--seeds N` always the count N of seeds
# 0..N-1 (its metavar and help say so), never a list or a single seed.


class Choice(click.Choice):  # type: ignore[type-arg]
    """`click.Choice` whose refusal of a misspelt name suggests the close ones, as an unknown
    task id does. Every option of a closed set of names takes one."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        message = super().get_invalid_choice_message(value, ctx)
        names = [self.normalize_choice(choice, ctx) for choice in self.choices]
        hint = did_you_mean(self.normalize_choice(value, ctx), names)
        return f"{message.rstrip('.')}; {hint.strip()}" if hint else message


def schedule_choice() -> Choice:
    return Choice(KINDS)


def refuse_unless(ctx: click.Context, name: str, needs: str, why: str) -> None:
    """Refuse option `name` when given on the command line without what it applies to, as
    one line naming both (an option that changes nothing must not look as if it did)."""
    source = ctx.get_parameter_source(name)
    if source is not None and source != click.core.ParameterSource.DEFAULT:
        flag = "--" + name.replace("_", "-")
        raise ArrivalBenchError(f"{flag} {why}: {needs}")


# The results file every command reads when none is named, before the default one.
RESULTS_ENVVAR = "ARRIVALBENCH_RESULTS"


def default_results() -> Path:
    """The results file of a command not given one: $ARRIVALBENCH_RESULTS, else the default
    file. The one reader of the variable (`explain --results` alone reads it too, and must not
    read it when not given, which click's own envvar would)."""
    return Path(os.environ.get(RESULTS_ENVVAR) or DEFAULT_RESULTS)


def results_option(help: str, dir_okay: bool = False) -> Callable[[F], F]:
    """`dir_okay`: the command says itself that a folder is not a results file."""
    return click.option("--results", type=click.Path(path_type=Path, dir_okay=dir_okay),
                        default=default_results,
                        help=f"{help} Default: ${RESULTS_ENVVAR} if set, else "
                             f"{DEFAULT_RESULTS}.")


def task_option(help: str = "A built-in task id or a task folder.",
                required: bool = False) -> Callable[[F], F]:
    """`--task TASK`: the one task a command reads (`tasks_option` for several)."""
    return click.option("--task", "task", required=required, metavar="TASK", help=help)


def timeout_option(f: F) -> F:
    return click.option("--timeout", type=click.FloatRange(min=0.01),
                        default=Limits.statement_seconds, show_default=True,
                        help="Seconds one statement may run.")(f)


def json_option(help: str = "Print one JSON document.") -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help=help)


def tasks_option(f: F) -> F:
    return click.option("--task", "task_refs", multiple=True, metavar="TASK",
                        help="A built-in task id or a task folder (repeatable). Default: every "
                             "built-in task.")(f)


def seeds_option(help: str = "Seeds 0..N-1 for each schedule but snapshot."
                      ) -> Callable[[F], F]:
    return click.option("--seeds", type=click.IntRange(min=1),
                        default=DEFAULT_SEEDS, show_default=True, metavar="N", help=help)


def workers_option(help: str = "Worker processes (Ray: CPUs). Default: the number of cores."
                   ) -> Callable[[F], F]:
    return click.option("--workers", type=click.IntRange(min=1), metavar="N", help=help)


def executor_option(f: F) -> F:
    return click.option("--executor", type=Choice(("local", "ray")), default="local",
                        show_default=True, help="local processes, or Ray (the 'ray' extra).")(f)


def engine_option(help: str = "The engine the pipelines run on (postgres needs the "
                                "'postgres' extra).") -> Callable[[F], F]:
    """`--engine duckdb|postgres`; an unknown name is a one-line usage error listing them."""
    return click.option("--engine", type=Choice(ENGINES), default=DEFAULT_ENGINE,
                        show_default=True, help=help)


def landing_option(default: str | None = "batch", help: str | None = None
                   ) -> Callable[[F], F]:
    """`--landing batch|accumulate`: how each batch reaches the pipeline's sources."""
    return click.option(
        "--landing", type=Choice(LANDINGS), default=default, show_default=default is not None,
        help=help or "How each batch reaches the sources: alone (batch), or appended to what "
                     "landed before, with its load time in _landed_at (accumulate).")


def allowance_option(f: F) -> F:
    """`--allowed-lateness D|model`: grade against the reference over the records at most D
    late (or inside a microbatch model's own lookback)."""
    return click.option(
        "--allowed-lateness", "allowance", metavar="D|model", callback=_allowance,
        help="Grade against the reference over the records at most D late when they first "
             "land (36h, 1d12h, 90m), or inside a microbatch model's lookback (model).")(f)


def _allowance(ctx: click.Context, param: click.Parameter, value: str | None
               ) -> Allowance | str | None:
    from arrivalbench.core.lateness import parse

    return None if value is None else parse(value)


def tier_option(default: str, help: str | None = None) -> Callable[[F], F]:
    """`--tier core|hard|all`: which built-in tasks a command takes when none is named (and,
    given with --task, which of the named ones); an unknown tier is a one-line usage error
    listing them."""
    return click.option("--tier", type=Choice(TIER_CHOICES), default=None,
                        help=help or f"The tier of built-in tasks (default: {default}); with "
                                     "--task, keep the named tasks of this tier.")


def command_line() -> str:
    """The command line as typed, stored with a run."""
    ctx = click.get_current_context(silent=True)
    argv = ctx.find_root().obj.get("argv") if ctx is not None and ctx.find_root().obj else None
    return shlex.join(argv if argv is not None else sys.argv)



def results_file(given: str) -> Path:
    """The results file `--results` names; given alone, the one every command defaults to."""
    return Path(given) if given else default_results()


def read_script(path: Path) -> str:
    from arrivalbench.core.artifacts.script import read_script as read

    return read(path, what="a .sql script")


def check_statements(path: Path, sql: str, engine: EngineName) -> None:
    """A script of only comments and semicolons is bad input, not a replay of ERRORs. One that
    does not parse is graded: every replay's ERROR says where it stops."""
    try:
        statements = len(backend(engine).split(sql))
    except Failure:
        return
    if statements == 0:
        raise ArrivalBenchError(f"{path}: holds no SQL statement (only comments or "
                                "semicolons); a pipeline holds at least one statement")
