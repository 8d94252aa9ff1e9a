"""The command line (DESIGN §10): parse, call, print."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click
from rich.console import Console

from arrivalbench import __version__, render
from arrivalbench.engine import Limits
from arrivalbench.engine.cost import check_measurable
from arrivalbench.engine.duckdb import NAME as ENGINE_NAME
from arrivalbench.errors import ArrivalBenchError, ScriptError
from arrivalbench.grading import DEFAULT_SEEDS, grade_all, plan
from arrivalbench.schedules import KINDS
from arrivalbench.task import builtin_ids, load_spec
from arrivalbench.values import canonical_json

out = Console(highlight=False, soft_wrap=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arrivalbench")
def app() -> None:
    """Grade incremental data pipelines by running them again under time."""


@app.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def tasks(as_json: bool) -> None:
    """List the built-in tasks."""
    specs = [load_spec(t) for t in builtin_ids()]
    if as_json:
        click.echo(canonical_json([render.task_summary(s) for s in specs]))
    else:
        out.print(render.tasks_table(specs))


@app.command()
@click.argument("task")
@click.option("--schedule", type=click.Choice(KINDS), help="Print this schedule's batch plan.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--prompt", "variant", help="Print only the prompt of this variant.")
def show(task: str, schedule: str | None, seed: int, variant: str | None) -> None:
    """Show TASK (a built-in id or a folder): ticket, schemas, hazards and the agent's prompt."""
    from arrivalbench.prompts import build

    spec = load_spec(task)
    if schedule is not None:
        from arrivalbench.grading import schedule as make_schedule

        out.print(render.schedule_plan(spec, make_schedule(spec, schedule, seed)))
    elif variant is not None:
        click.echo(build(spec, variant))
    else:
        out.print(render.task_details(spec))
        out.rule("prompt (unhinted)")
        click.echo(build(spec, "unhinted"))


@app.command()
@click.argument("pipeline", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--task", "task", required=True, help="A built-in task id or a task folder.")
@click.option("--schedule", "kinds", multiple=True, type=click.Choice(KINDS),
              help="Grade only these schedules (repeatable). Default: snapshot, both controls "
                   "and every hazard the task declares.")
@click.option("--seeds", type=click.IntRange(min=1), default=DEFAULT_SEEDS, show_default=True,
              help="Seeds 0..N-1 for each schedule but snapshot.")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=Limits.statement_seconds,
              show_default=True, help="Seconds one statement may run.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--cost", "measure", is_flag=True,
              help="Also measure each replay's rows read and written, and read amplification.")
def grade(pipeline: Path, task: str, kinds: Sequence[str], seeds: int, timeout: float,
          as_json: bool, measure: bool) -> None:
    """Grade PIPELINE.sql on TASK. Exit 0 if every verdict is PASS, 1 otherwise."""
    spec = load_spec(task)
    script = read_script(pipeline)
    points = plan(spec, seeds, kinds)
    if measure:
        check_measurable(ENGINE_NAME, [p.schedule for p in points])
    limits = Limits(statement_seconds=timeout)
    verdicts, costs = [], []
    with render.progress(len(points), enabled=not as_json) as advance:
        for verdict, outcome in grade_all(spec, script, points, limits, measure):
            verdicts.append(verdict)
            costs.append(outcome.cost)
            advance(verdict.verdict)
    if as_json:
        click.echo(canonical_json(render.grade_document(spec, verdicts,
                                                        costs if measure else None)))
    else:
        out.print(render.grade_table(spec, pipeline, verdicts))
        if measure:
            out.print(render.cost_table(verdicts, costs))
        for block in render.failure_details(verdicts):
            out.print(block)
    sys.exit(0 if all(v.verdict == "PASS" for v in verdicts) else 1)


# -- gate (the corpus) ---------------------------------------------------------------------------


@app.command("gate")
@click.argument("task_refs", metavar="[TASK]...", nargs=-1)
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the number of cores, at most 8).")
def gate_command(task_refs: Sequence[str], workers: int | None) -> None:
    """The admissibility gate (DESIGN §6) on each TASK (a built-in id or a folder; default:
    every built-in task). Prints one line per failed check; exit 0 if all pass, 1 otherwise."""
    from arrivalbench import gate

    specs = gate.load(task_refs or builtin_ids())
    report = gate.run(specs, workers)
    for finding in report.findings:
        click.echo(finding.line())
    click.echo(report.summary(), err=True)
    sys.exit(0 if report.ok else 1)


# -- run, regrade (grading at scale) -------------------------------------------------------------


@app.command("run")
@click.option("--arm", "arm_names", multiple=True,
              type=click.Choice(("gold", "negatives", "template")),
              help="A built-in arm (repeatable). Default, without --submissions: all three.")
@click.option("--submissions", type=click.Path(path_type=Path, file_okay=False),
              help="A folder of scripts: <task_id>.sql, or <task_id>/<n>.sql for replicates.")
@click.option("--arm-name", help="The arm name of --submissions (default: the folder's name).")
@click.option("--task", "task_refs", multiple=True,
              help="A built-in task id or a task folder (repeatable). Default: every built-in "
                   "task.")
@click.option("--seeds", type=click.IntRange(min=1), default=DEFAULT_SEEDS, show_default=True,
              help="Seeds 0..N-1 for each schedule but snapshot.")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False),
              default=Path("results/arrivalbench.duckdb"), show_default=True,
              help="The DuckDB results file; created if missing, added to if not.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes (Ray: CPUs). Default: the number of cores.")
@click.option("--executor", type=click.Choice(("local", "ray")), default="local",
              show_default=True, help="local processes, or Ray (the 'ray' extra).")
@click.option("--cost", "measure", is_flag=True,
              help="Also store each replay's rows read and written (the costs table).")
def run_command(arm_names: Sequence[str], submissions: Path | None, arm_name: str | None,
                task_refs: Sequence[str], seeds: int, results: Path, workers: int | None,
                executor: str, measure: bool) -> None:
    """Grade arms into a results file: every cell on snapshot, both controls and each declared
    hazard for every seed. Replays already in the file are not graded again, so the same command
    resumes an interrupted run and more arms add to the file."""
    import shlex

    from arrivalbench import grid

    argv = ["arrivalbench", "run", *(x for a in arm_names for x in ("--arm", a))]
    argv += ["--submissions", str(submissions)] if submissions is not None else []
    argv += ["--arm-name", arm_name] if arm_name is not None else []
    argv += [x for t in task_refs for x in ("--task", t)]
    argv += ["--seeds", str(seeds), "--results", str(results), "--executor", executor]
    argv += ["--workers", str(workers)] if workers is not None else []
    argv += ["--cost"] if measure else []
    summary = grid.run(results, arm_names, submissions, arm_name, task_refs, seeds, workers,
                       executor, command=shlex.join(argv), measure=measure)
    out.print(grid.summary_table(summary))


@app.command("regrade")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False),
              default=Path("results/arrivalbench.duckdb"), show_default=True,
              help="The results file to check (opened read-only).")
@click.option("--sample", type=click.IntRange(min=1),
              help="Re-run only N stored replays, drawn with a fixed seed.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes (Ray: CPUs). Default: the number of cores.")
@click.option("--executor", type=click.Choice(("local", "ray")), default="local",
              show_default=True)
def regrade_command(results: Path, sample: int | None, workers: int | None,
                    executor: str) -> None:
    """Re-run stored replays and compare verdict bytes. Prints each mismatch with its key and
    both verdicts; exit 0 when every byte matches, 1 on any mismatch."""
    from arrivalbench import grid

    report = grid.regrade(results, sample, workers, executor)
    for m in report.mismatches:
        task_digest, schedule, seed, artifact, engine, harness = m.key
        click.echo(f"mismatch: task {m.task} ({task_digest}) schedule {schedule} seed {seed} "
                   f"artifact {artifact} duckdb {engine} arrivalbench {harness}")
        click.echo(f"  stored:  {m.stored}")
        click.echo(f"  regrade: {m.now}")
    click.echo(f"regraded {report.checked} of {report.stored} stored replays in "
               f"{report.seconds:.1f} s: {len(report.mismatches)} mismatches"
               + (f", {report.skipped} not reproducible here (see warnings)"
                  if report.skipped else ""))
    sys.exit(1 if report.mismatches else 0)


# -- generate, idioms (model arms) ---------------------------------------------------------------


@app.command()
@click.option("--model", required=True,
              help="PROVIDER/MODEL as Inspect AI names it: openai/gpt-4o, "
                   "anthropic/claude-sonnet-4-0, openrouter/..., mockllm/model (offline).")
@click.option("--prompt", "variant", type=click.Choice(("unhinted", "hazard_hint",
                                                        "architecture", "budget")),
              default="unhinted", show_default=True, help="The prompt variant.")
@click.option("--replicates", type=click.IntRange(min=1), default=1, show_default=True,
              help="Conversations per task (replicates 0..N-1).")
@click.option("--task", "task_refs", multiple=True,
              help="A built-in task id or a task folder (repeatable). Default: every built-in "
                   "task.")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False),
              default=Path("results/arrivalbench.duckdb"), show_default=True,
              help="The DuckDB results file; Inspect's logs go to <stem>.inspect-logs/ "
                   "beside it.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=8000, show_default=True,
              help="Output token cap of each model call; a reply cut there holds no script.")
@click.option("--base-url", help="The API's base URL, e.g. a local OpenAI-compatible server "
                                 "(http://127.0.0.1:8000/v1 with --model openai/NAME, spoken "
                                 "to over chat completions; set OPENAI_API_KEY to any value).")
@click.option("-M", "--model-arg", "model_args", multiple=True, metavar="KEY=VALUE",
              help="A model argument passed to Inspect's provider (repeatable), e.g. "
                   "-M responses_api=true.")
@click.option("--max-connections", type=click.IntRange(min=1),
              help="Concurrent model calls (Inspect's default per provider otherwise).")
@click.option("--max-retries", type=click.IntRange(min=0),
              help="Retries of a failed model call (Inspect's default otherwise); a call that "
                   "still fails leaves its sample as a cell with reason provider_error.")
@click.option("--seeds", type=click.IntRange(min=1), default=DEFAULT_SEEDS, show_default=True,
              help="Seeds 0..N-1 for each schedule but snapshot, when grading.")
@click.option("--workers", type=click.IntRange(min=1),
              help="Worker processes for grading. Default: the number of cores.")
@click.option("--dry-run", is_flag=True,
              help="Print the samples, the most model calls and a token estimate; call nothing.")
def generate(model: str, variant: str, replicates: int, task_refs: Sequence[str],
             results: Path, max_tokens: int, base_url: str | None, model_args: Sequence[str],
             max_connections: int | None, max_retries: int | None, seeds: int,
             workers: int | None, dry_run: bool) -> None:
    """Generate a model arm (<model>:<variant>) through Inspect AI, store it and grade it.

    Each task gets a conversation: the prompt, then up to 3 replies, each script run on the
    snapshot test with the error or the differing rows fed back; the last script is graded on
    every schedule. Samples already in the results file are not generated again."""
    from arrivalbench.agent import generate as generation

    request = generation.Request(
        model=model, variant=variant, replicates=replicates, tasks=tuple(task_refs),
        results=results, max_tokens=max_tokens, base_url=base_url, seeds=seeds,
        workers=workers, max_connections=max_connections, max_retries=max_retries,
        model_args=generation.parse_model_args(model_args))
    if dry_run:
        click.echo(generation.make_plan(request).describe())
        return
    outcome = generation.run(request)
    click.echo(outcome.describe())
    if outcome.grading is not None:
        from arrivalbench import grid

        out.print(grid.summary_table(outcome.grading))


@app.command()
@click.argument("script", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--task", "task", default=None,
              help="The task SCRIPT is written for (a built-in id or a task folder): its record "
                   "keys decide batch_dedup, history_table and anti_join. Without it every "
                   "column of the batch counts as a record key.")
@click.option("--json", "as_json", is_flag=True, help="Print a sorted JSON list of tags.")
def idioms(script: Path, task: str | None, as_json: bool) -> None:
    """The idiom signature of SCRIPT: history_table, anti_join, batch_dedup, upsert,
    watermark_filter, select_star, full_recompute, transaction (unparsed: sqlglot could not
    read a statement)."""
    from arrivalbench.idioms import signature

    spec = load_spec(task) if task is not None else None
    tags = signature(read_script(script), spec)
    if as_json:
        click.echo(canonical_json(tags))
    else:
        click.echo("\n".join(tags) if tags else "(no idiom found)")


# -- report --------------------------------------------------------------------------------------


@app.command()
@click.option("--results", "results", type=click.Path(path_type=Path),
              default=Path("results/arrivalbench.duckdb"), show_default=True,
              help="The results file to read (never written).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("reports"), show_default=True,
              help="Folder for metrics.json, report.md, report.html, CSVs and figures.")
@click.option("--arm", "arms", multiple=True,
              help="Report only this arm (repeatable). Default: every arm in the file.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap over tasks.")
@click.option("--compare", nargs=2, metavar="ARM_A ARM_B", default=None,
              help="Also the shift of every metric from ARM_A to ARM_B on their common tasks, "
                   "with paired intervals, and the cells whose class changed.")
def report(results: Path, out_dir: Path, arms: Sequence[str], seed: int,
           compare: tuple[str, str] | None) -> None:
    """Tables, figures and 95% intervals of the arms in a results file."""
    try:
        from arrivalbench import report as reporting
        from arrivalbench.report.terminal import (
            changed_lines,
            comparison_table,
            notes,
            summary_table,
        )
    except ImportError as exc:
        raise ArrivalBenchError(f"report needs the 'report' extra ({exc.name} is missing); "
                                "pip install 'arrivalbench[report]'") from None
    written = reporting.write(results, out_dir, arms, seed, compare or ())
    out.print(summary_table(written.doc))
    if compare:
        out.print(comparison_table(written.doc))
        for line in changed_lines(written.doc):
            click.echo(line)
    for line in notes(written.doc):  # wrapped at word boundaries, not cut by the terminal
        out.print(f"[yellow]note:[/yellow] {line}", soft_wrap=False)
    out.print(f"wrote {len(written.files)} files to {written.out}: metrics.json, report.md, "
              f"report.html, CSVs, figures/", soft_wrap=False)


def read_script(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptError(f"{path}: no such file; give the path of a .sql script") from None
    except IsADirectoryError:
        raise ScriptError(f"{path}: is a folder; give the path of a .sql script") from None
    except UnicodeDecodeError:
        raise ScriptError(f"{path}: not UTF-8 text; save the script as UTF-8") from None
    except OSError as exc:
        raise ScriptError(f"{path}: cannot be read ({exc.strerror})") from None
    if not text.strip():
        raise ScriptError(f"{path}: empty; a pipeline holds at least one SQL statement")
    return text


def fail(message: str) -> NoReturn:
    click.echo(f"arrivalbench: error: {message}", err=True)
    sys.exit(2)


def main(argv: Sequence[str] | None = None) -> None:
    """Bad input of any kind ends in one line on standard error and exit status 2."""
    try:
        app.main(args=argv, prog_name="arrivalbench", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(2)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "arrivalbench"
        fail(f"{exc.format_message()} (see '{command} --help')")
    except (click.Abort, KeyboardInterrupt):
        fail("interrupted")
    except click.ClickException as exc:
        fail(exc.format_message())
    except ArrivalBenchError as exc:
        fail(str(exc))
    except BrokenPipeError:
        sys.exit(1)
