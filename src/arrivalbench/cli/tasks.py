"""`tasks`, `show`, `gate`, `idioms`, `init`: the corpus, what a script is made of, and a task
from your own data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from arrivalbench import render
from arrivalbench.cli.app import app
from arrivalbench.cli.console import out
from arrivalbench.cli.exits import verdict_status
from arrivalbench.cli.options import (
    Choice,
    engine_option,
    executor_option,
    json_option,
    landing_option,
    read_script,
    refuse_unless,
    schedule_choice,
    task_option,
    tier_option,
    workers_option,
)
from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName
from arrivalbench.core.task import Landing, TierChoice, load_spec, select
from arrivalbench.core.values import canonical_json
from arrivalbench.corpus.prompts import DEFAULT_VARIANT, VARIANTS
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.words import count, printable


@app.command()
@json_option("Print the list as JSON.")
@tier_option("all")
def tasks(as_json: bool, tier: TierChoice | None) -> None:
    """List the built-in tasks."""
    specs = [load_spec(t) for t in select((), tier, "all")]
    if as_json:
        click.echo(canonical_json([render.task_summary(s) for s in specs]))
    else:
        out.print(render.tasks_table(specs))


@app.command()
@click.argument("task")
@click.option("--schedule", type=schedule_choice(), help="Print this schedule's batch plan.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of --schedule.")
@click.option("--prompt", "variant", type=Choice(VARIANTS),
              help="Print only the prompt of this variant, exactly as the model gets it.")
@json_option("With --schedule: print the schedule as an explicit delivery plan (JSON), the "
             "format grade --plan reads.")
@engine_option("The engine the prompt is written for: its contract names it and its "
               "version, its schemas use its type names.")
@landing_option(help="The landing the prompt's contract states: point 3 as the batch alone "
                     "(batch) or as everything landed so far (accumulate).")
def show(task: str, schedule: str | None, seed: int, variant: str | None, as_json: bool,
         engine: EngineName, landing: Landing) -> None:
    """Show TASK (a built-in id or a folder): ticket, schemas, hazards and the agent's prompt."""
    from arrivalbench.corpus.prompts import build

    spec = load_spec(task)
    if schedule is None:
        refuse_unless(click.get_current_context(), "seed", "give --schedule KIND too",
                      "picks a schedule's seed")
    if as_json and schedule is None:
        raise ArrivalBenchError("--json prints a schedule's plan: give --schedule KIND too")
    if schedule is not None:
        from arrivalbench.core.grading import schedule as make_schedule

        sched = make_schedule(spec, schedule, seed)
        if as_json:
            from arrivalbench.core.plans import document

            click.echo(canonical_json(document(spec, sched)))
            return
        out.print(render.schedule_plan(spec, sched))
    elif variant is not None:
        click.echo(build(spec, variant, engine=engine, landing=landing))
    else:
        out.print(render.task_details(spec))
        on = "".join(f", {x}" for x in (engine, landing) if x not in (DEFAULT_ENGINE, "batch"))
        out.rule(f"prompt ({DEFAULT_VARIANT}{on})")
        out.print(render.prose(build(spec, DEFAULT_VARIANT, engine=engine, landing=landing)))



# -- gate (the corpus) ---------------------------------------------------------------------------


@app.command("gate")
@click.argument("task_refs", metavar="[TASK]...", nargs=-1)
@workers_option("Worker processes (default: the number of cores, at most 8).")
@engine_option("The engine the gold and the negatives run on: each task's pipelines for it, "
               "held to the hazards its negatives declare there.")
@executor_option
@tier_option("all")
def gate_command(task_refs: Sequence[str], workers: int | None, engine: EngineName,
                 executor: str, tier: TierChoice | None) -> None:
    """The admissibility gate on each TASK (a built-in id or a folder; default:
    every built-in task). Prints one line per failed check; exit 0 if all pass, 1 otherwise."""
    from arrivalbench.corpus import gate

    specs = gate.load(select(task_refs, tier, "all"))
    report = gate.run(specs, workers, engine=engine, executor=executor)
    for finding in report.findings:
        click.echo(finding.line())
    # Success is the command's answer (stdout); a failure's count goes beside the findings.
    click.echo(report.summary(), err=not report.ok)
    verdict_status(report.ok)



@app.command()
@click.argument("script", type=click.Path(path_type=Path, dir_okay=False))
@task_option("The task SCRIPT is written for (a built-in id or a task folder): its record "
             "keys decide batch_dedup, history_table and anti_join. Without it every column of "
             "the batch counts as a record key.")
@json_option("Print a sorted JSON list of tags.")
def idioms(script: Path, task: str | None, as_json: bool) -> None:
    """The idiom signature of SCRIPT: history_table, anti_join, batch_dedup, upsert,
    watermark_filter, select_star, full_recompute, transaction (unparsed: sqlglot could not
    read a statement)."""
    from arrivalbench.sql.idioms import signature

    spec = load_spec(task) if task is not None else None
    tags = signature(read_script(script), spec)
    if as_json:
        click.echo(canonical_json(tags))
    else:
        click.echo("\n".join(tags) if tags else "(no idiom found)")



def _pairs(option: str, values: Sequence[str], example: str) -> dict[str, str]:
    """NAME=VALUE options into a mapping, each bad one named."""
    found: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise ArrivalBenchError(f"{option} {value!r}: give NAME=VALUE, e.g. {option} "
                                    f"{example}")
        if name in found:
            raise ArrivalBenchError(f"{option} {name}: given twice; give it once")
        found[name] = rest
    return found


def _columns(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


@app.command("init")
@click.argument("folder", type=click.Path(path_type=Path, file_okay=False))
@click.option("--source", "sources", multiple=True, metavar="NAME=FILE",
              help="A source and its data file (.csv, .parquet, .jsonl); repeatable.")
@click.option("--key", "keys", multiple=True, metavar="NAME=COL[,COL]",
              help="The record key of a source: one record of the log; repeatable.")
@click.option("--event-time", "event_times", multiple=True, metavar="NAME=COL",
              help="The event time of a source (allows lateness, order and backfill hazards).")
@click.option("--reference", type=click.Path(path_type=Path, dir_okay=False),
              help="A .sql file with one SELECT over the sources by their bare names.")
@click.option("--target", help="The name of the table the pipeline keeps.")
@click.option("--target-key", metavar="COL[,COL]",
              help="The target's grain: one row per value of these columns.")
@click.option("--from-dbt", "project", type=click.Path(path_type=Path, file_okay=False),
              help="Instead of the options above: the task of a dbt project's incremental "
                   "model, with the model built with --full-refresh over --data as reference.")
@click.option("--data", type=click.Path(path_type=Path, file_okay=False),
              help="With --from-dbt: one data file per source table (<table>.csv, ...).")
@click.option("--model", metavar="MODEL",
              help="With --from-dbt: the incremental model (default: the only one).")
def init_command(folder: Path, sources: Sequence[str], keys: Sequence[str],
                 event_times: Sequence[str], reference: Path | None, target: str | None,
                 target_key: str | None, project: Path | None, data: Path | None,
                 model: str | None) -> None:
    """Write a task folder FOLDER from your own data: schemas inferred, the hazards the data
    allow, the template pipeline as gold; or, with --from-dbt, from a dbt project."""
    from arrivalbench.corpus.init import Request, build, from_dbt

    if project is not None:
        if sources or keys or event_times or reference or target or target_key:
            raise ArrivalBenchError("--from-dbt reads sources, keys and the reference from "
                                    "the project: leave out --source, --key, --event-time, "
                                    "--reference, --target and --target-key")
        if data is None:
            raise ArrivalBenchError("--from-dbt needs --data DIR: one data file per source "
                                    "table of the project")
        written = from_dbt(folder, project, data, model)
        grade_with = f"arrivalbench grade {project} --task {folder}"
    else:
        if data is not None or model is not None:
            raise ArrivalBenchError("--data and --model go with --from-dbt PROJECT")
        missing = [flag for flag, value in (("--source NAME=FILE", sources),
                                            ("--reference", reference), ("--target", target),
                                            ("--target-key", target_key)) if not value]
        if missing:
            raise ArrivalBenchError(f"give {', '.join(missing)} (or --from-dbt PROJECT --data "
                                    "DIR)")
        assert reference is not None and target is not None and target_key is not None
        written = build(Request(
            folder,
            {n: Path(f) for n, f in _pairs("--source", sources, "orders=orders.csv").items()},
            {n: _columns(c) for n, c in _pairs("--key", keys, "orders=order_id").items()},
            _pairs("--event-time", event_times, "orders=ordered_at"), reference, target,
            _columns(target_key)))
        grade_with = f"arrivalbench grade PIPELINE.sql --task {folder}"
    spec = written.spec
    lines = [f"wrote {folder}: {count(len(spec.sources), 'source')}, "
             f"{count(written.records, 'record')}, target {spec.target.name} "
             f"({', '.join(spec.target.key)})",
             f"hazards: {', '.join(spec.hazards)}",
             *(f"left out {hazard}: {why}" for hazard, why in written.dropped),
             f"next: describe the table in the ticket of {folder / 'task.yaml'} "
             + ("(reference.sql is the model's full refresh), then grade the project:"
                if project is not None else
                "(gold.sql is a correct template to start from), then grade a pipeline:"),
             f"  {grade_with}"]
    for line in lines:
        out.print(printable(line), soft_wrap=True, markup=False, highlight=False)
