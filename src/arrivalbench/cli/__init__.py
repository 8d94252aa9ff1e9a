"""The command line: parse, call, print."""

from __future__ import annotations

import shlex
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.text import Text

from arrivalbench import __version__, interrupts, render
from arrivalbench.core.engine import DEFAULT_ENGINE, ENGINES, EngineName, Limits, backend
from arrivalbench.core.engine.cost import Cost, check_measurable
from arrivalbench.core.grading import DEFAULT_SEEDS, grade_all, plan
from arrivalbench.core.schedules import KINDS
from arrivalbench.core.task import builtin_ids, load_spec
from arrivalbench.core.values import canonical_json
from arrivalbench.corpus.prompts import DEFAULT_VARIANT, VARIANTS
from arrivalbench.errors import REPORT_BUGS, ArrivalBenchError, missing_extra
from arrivalbench.explain import DEFAULT_BUDGET as EXPLAIN_BUDGET
from arrivalbench.sql.syntax import parse_problem
from arrivalbench.study.store import DEFAULT_RESULTS
from arrivalbench.words import count

# Rich wraps at word boundaries to the terminal's width (80 columns when not a terminal and
# COLUMNS is unset), so nothing is cut at a box edge when piped.
out = Console(highlight=False)

F = TypeVar("F", bound=Callable[..., Any])


# -- options shared by several commands ----------------------------------------------------------
# One spelling each. `--seed N` is always one seed; `--seeds N` always the count N of seeds
# 0..N-1 (its metavar and help say so), never a list or a single seed.


def results_option(help: str, dir_okay: bool = False) -> Callable[[F], F]:
    """`dir_okay`: the command says itself that a folder is not a results file."""
    return click.option("--results", type=click.Path(path_type=Path, dir_okay=dir_okay),
                        default=DEFAULT_RESULTS, show_default=True, envvar="ARRIVALBENCH_RESULTS",
                        show_envvar=True, help=help)


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
    return click.option("--executor", type=click.Choice(("local", "ray")), default="local",
                        show_default=True, help="local processes, or Ray (the 'ray' extra).")(f)


def engine_option(help: str = "The engine the pipelines run on (postgres needs the "
                                "'postgres' extra).") -> Callable[[F], F]:
    """`--engine duckdb|postgres`; an unknown name is a one-line usage error listing them."""
    return click.option("--engine", type=click.Choice(ENGINES), default=DEFAULT_ENGINE,
                        show_default=True, help=help)


def command_line() -> str:
    """The command line as typed, stored with a run."""
    ctx = click.get_current_context(silent=True)
    argv = ctx.find_root().obj.get("argv") if ctx is not None and ctx.find_root().obj else None
    return shlex.join(argv if argv is not None else sys.argv)


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
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed of --schedule.")
@click.option("--prompt", "variant", type=click.Choice(VARIANTS),
              help="Print only the prompt of this variant, exactly as the model gets it.")
@click.option("--json", "as_json", is_flag=True,
              help="With --schedule: print the schedule as an explicit delivery plan (JSON), "
                   "the format grade --plan reads.")
@engine_option("The engine the prompt is written for: its contract names it and its "
               "version, its schemas use its type names.")
def show(task: str, schedule: str | None, seed: int, variant: str | None, as_json: bool,
         engine: EngineName) -> None:
    """Show TASK (a built-in id or a folder): ticket, schemas, hazards and the agent's prompt."""
    from arrivalbench.corpus.prompts import build

    spec = load_spec(task)
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
        click.echo(build(spec, variant, engine=engine))
    else:
        out.print(render.task_details(spec))
        on = "" if engine == DEFAULT_ENGINE else f", {engine}"
        out.rule(f"prompt ({DEFAULT_VARIANT}{on})")
        out.print(render.prose(build(spec, DEFAULT_VARIANT, engine=engine)))


@app.command()
@click.argument("pipeline", type=click.Path(path_type=Path))
@click.option("--task", "task", required=True, metavar="TASK",
              help="A built-in task id or a task folder.")
@click.option("--select", "select", metavar="MODEL",
              help="For a dbt project: the model graded as the task's target (default: the "
                   "model named after the target).")
@click.option("--schedule", "kinds", multiple=True, type=click.Choice(KINDS),
              help="Grade only these schedules (repeatable). Default: snapshot, both controls "
                   "and every hazard the task declares.")
@seeds_option()
@click.option("--timeout", type=click.FloatRange(min=0.01), default=Limits.statement_seconds,
              show_default=True, help="Seconds one statement may run.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--every-batch", is_flag=True,
              help="Also compare the target after every completed run with the reference over "
                   "the records delivered so far; the first divergent batch joins the detail.")
@click.option("--plan", "plan_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Replay this explicit delivery plan (JSON, as show --json and explain "
                   "write it) instead of generated schedules.")
@click.option("--cost", "measure", is_flag=True,
              help="Also measure each replay's rows read and written, and read amplification.")
@engine_option("The engine PIPELINE runs on (the reference is always computed by DuckDB).")
@click.option("--env", "passed_env", multiple=True, metavar="NAME",
              help="For a dbt project: let env_var() read this variable of your environment "
                   "(repeatable). No other variable is there.")
@click.option("--replay-timeout", type=click.FloatRange(min=0, min_open=True),
              default=Limits.replay_seconds, show_default=True,
              help="Seconds one whole replay may run.")
@click.option("--load-timeout", type=click.FloatRange(min=0, min_open=True),
              default=Limits.load_seconds, show_default=True,
              help="Seconds loading a dbt project (parse and compile) may take.")
def grade(pipeline: Path, task: str, select: str | None, kinds: Sequence[str], seeds: int,
          timeout: float, as_json: bool, every_batch: bool, plan_file: Path | None,
          measure: bool, engine: EngineName, passed_env: Sequence[str], replay_timeout: float,
          load_timeout: float) -> None:
    """Grade PIPELINE (a .sql script or a dbt project folder) on TASK. Exit 0 if every verdict
    is PASS, 1 otherwise."""
    from arrivalbench.core import artifacts
    from arrivalbench.core.artifacts.script import Script

    backend(engine)  # a missing extra is one line before anything runs
    if pipeline.is_dir() and engine != "duckdb":
        raise ArrivalBenchError(f"{pipeline}: a dbt project runs on engine duckdb only; grade "
                                "it with --engine duckdb")
    spec = load_spec(task)
    limits = Limits(statement_seconds=timeout, replay_seconds=replay_timeout,
                    load_seconds=load_timeout)
    artifact = artifacts.load(pipeline, spec, select, passed_env, limits)
    script = artifact.sql if isinstance(artifact, Script) else None
    verdicts = []
    costs: list[Cost | None] = []
    differing: dict[str, object] | None = None
    if plan_file is not None:
        from arrivalbench.core.grading import grade_plan

        if kinds:
            raise ArrivalBenchError("--plan replays one plan: leave out --schedule")
        if measure:
            raise ArrivalBenchError("--cost measures generated schedules: leave out --plan")
        if script is None:
            raise ArrivalBenchError(f"--plan {plan_file}: plans replay SQL scripts; {pipeline} "
                                    "is a dbt project: grade it on generated schedules")
        verdicts.append(grade_plan(spec, script, plan_file, limits, every_batch,
                                   engine_name=engine))
    else:
        points = plan(spec, seeds, kinds)
        if measure:
            check_measurable(engine, script is not None)
        with render.progress(len(points), enabled=not as_json) as advance:
            for verdict, outcome in grade_all(spec, artifact, points, limits, every_batch,
                                              measure, engine_name=engine):
                verdicts.append(verdict)
                costs.append(outcome.cost)
                advance(verdict.status)
                if verdict.schedule == "snapshot":
                    from arrivalbench.core.grading import nondeterminism

                    differing = nondeterminism(spec, artifact, outcome, limits,
                                               engine_name=engine)
    document = render.grade_document(spec, verdicts, costs if measure else None)
    if differing is not None:
        document["nondeterministic"] = differing  # absent when deterministic: bytes unchanged
    if as_json:
        click.echo(canonical_json(document))
    else:
        # DuckDB's parser says where a script stops parsing; PostgreSQL's says it per statement.
        problem = parse_problem(script) if script is not None and engine == "duckdb" \
            else None
        if problem is not None:  # every replay is the same ERROR: say it once, with its place
            out.print(Text(f"{pipeline} does not parse: {problem.describe()}; every replay "
                           "is an ERROR", style=render.STYLE["ERROR"]))
        out.print(render.grade_table(spec, pipeline, verdicts))
        if measure:
            out.print(render.cost_table(verdicts, costs))
        for block in [] if problem is not None else render.failure_details(verdicts):
            out.print(block)
    if differing is not None:
        click.echo("warning: nondeterministic: a second snapshot replay gave a different final "
                   "table; these verdicts may not reproduce (random(), now(), LIMIT without a "
                   "total order?)", err=True)
    sys.exit(0 if all(v.status == "PASS" for v in verdicts) and differing is None else 1)


# -- explain (one failure, made small) -----------------------------------------------------------


@app.command("explain")
@click.argument("pipeline", type=click.Path(path_type=Path, dir_okay=False), required=False)
@click.option("--task", "task", help="A built-in task id or a task folder.")
@click.option("--schedule", "kind", type=click.Choice(KINDS),
              help="The schedule to explain. Default: the first failing one of a default grade.")
@click.option("--seed", type=click.IntRange(min=0),
              help="The seed to explain. Default: the first failing one, 0..4.")
@click.option("--budget", type=click.IntRange(min=1), default=EXPLAIN_BUDGET,
              show_default=True, help="Replays the shrinking may use.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Write a repro bundle here (a new or empty folder).")
@click.option("--timeout", type=click.FloatRange(min=0.01), default=Limits.statement_seconds,
              show_default=True, help="Seconds one statement may run.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False),
              help="Instead of one PIPELINE: explain every failing cell of this results file "
                   "and store the minimal plans in it (table minimal_plans).")
@click.option("--arm", "arms", multiple=True, help="With --results: only this arm (repeatable).")
@engine_option("The engine PIPELINE runs on; with --results, the engine whose failing cells "
               "are explained.")
def explain_command(pipeline: Path | None, task: str | None, kind: str | None, seed: int | None,
                    budget: int, out_dir: Path | None, timeout: float, as_json: bool,
                    results: Path | None, arms: Sequence[str], engine: EngineName) -> None:
    """Why PIPELINE fails on TASK: the first divergent batch, a minimal failing delivery plan,
    its timeline and (with --out) a repro bundle. Exit 0 if it passes, 1 if it fails."""
    from arrivalbench import explain as explaining
    from arrivalbench.explain import bundle
    from arrivalbench.explain.text import describe

    if results is not None:
        if pipeline is not None or task is not None or kind or seed is not None or out_dir:
            raise ArrivalBenchError("--results explains stored cells: leave out PIPELINE, "
                                    "--task, --schedule, --seed and --out")
        explain_study(results, budget, arms, Limits(statement_seconds=timeout), engine)
        return
    if pipeline is None or task is None:
        raise ArrivalBenchError("give PIPELINE and --task TASK (or --results FILE)")
    spec = load_spec(task)
    script = read_script(pipeline)
    if kind is not None:
        explaining.check_schedule(spec, kind)
    if out_dir is not None:
        bundle.check_out(out_dir)
    limits = Limits(statement_seconds=timeout)
    picked = explaining.pick(spec, script, kind, seed, limits, engine)
    if picked is None:
        where = f"{kind} " if kind else ""
        message = (f"{pipeline} passes {where}{'seed ' + str(seed) if seed is not None else ''}"
                   f" on {spec.id} with the every-batch check: nothing to explain").replace(
                       "  ", " ")
        if as_json:
            click.echo(canonical_json({"task": spec.id, "verdict": "PASS", "message": message}))
        else:
            click.echo(message)
        sys.exit(0)
    kind, seed = picked
    found = explaining.explain(spec, script, kind, seed, budget, limits, engine=engine)
    repro = None
    if out_dir is not None and found.shrunk is not None:
        repro = bundle.write(out_dir, spec, script, found.shrunk.schedule,
                             found.needs_every_batch, engine)
    doc = found.document(repro)
    if as_json:
        click.echo(canonical_json(doc))
    else:
        click.echo("\n".join(describe(doc)))
    sys.exit(0 if found.verdict == "PASS" and found.nondeterministic is None else 1)


def explain_study(results: Path, budget: int, arms: Sequence[str], limits: Limits,
                  engine: EngineName = DEFAULT_ENGINE) -> None:
    from arrivalbench.explain.study import explain_results

    summary = explain_results(results, budget, arms, limits,
                              note=lambda m: click.echo(m, err=True), engine=engine)
    click.echo(f"explained {summary.explained} failing artifacts ({summary.skipped} already "
               f"explained) into {results}, table minimal_plans")
    for name, cells in summary.shapes.items():
        click.echo(f"{cells:6}  {name}")


# -- gate (the corpus) ---------------------------------------------------------------------------


@app.command("gate")
@click.argument("task_refs", metavar="[TASK]...", nargs=-1)
@workers_option("Worker processes (default: the number of cores, at most 8).")
@engine_option("The engine the gold and the negatives run on: each task's pipelines for it, "
               "held to the hazards its negatives declare there.")
@executor_option
def gate_command(task_refs: Sequence[str], workers: int | None, engine: EngineName,
                 executor: str) -> None:
    """The admissibility gate on each TASK (a built-in id or a folder; default:
    every built-in task). Prints one line per failed check; exit 0 if all pass, 1 otherwise."""
    from arrivalbench.corpus import gate

    specs = gate.load(task_refs or builtin_ids())
    report = gate.run(specs, workers, engine=engine, executor=executor)
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
@click.option("--allow-unmatched", is_flag=True,
              help="Grade --submissions even when some of its files name no task (they are "
                   "listed and left out).")
@tasks_option
@seeds_option()
@results_option("The DuckDB results file; created if missing, added to if not. A trial run "
                "belongs in a file of its own.")
@workers_option()
@executor_option
@click.option("--explain", "then_explain", is_flag=True,
              help="Then store the minimal failing plan of every failing cell (as explain "
                   "--results does).")
@click.option("--cost", "measure", is_flag=True,
              help="Also store each replay's rows read and written (the costs table).")
@engine_option("The engine every artifact runs on; gold and negatives are each task's "
               "pipelines for it. Verdicts of both engines live in one results file.")
def run_command(arm_names: Sequence[str], submissions: Path | None, arm_name: str | None,
                allow_unmatched: bool, task_refs: Sequence[str], seeds: int, results: Path,
                workers: int | None, executor: str, then_explain: bool, measure: bool,
                engine: EngineName) -> None:
    """Grade arms into a results file: every cell on snapshot, both controls and each declared
    hazard for every seed. Replays already in the file are not graded again, so the same command
    resumes an interrupted run and more arms add to the file."""
    from arrivalbench.cli.summary import summary_table
    from arrivalbench.study import grid

    summary = grid.run(results, arm_names, submissions, arm_name, task_refs, seeds, workers,
                       executor, command=command_line(), allow_unmatched=allow_unmatched,
                       measure=measure, engine=engine)
    out.print(summary_table(summary, out.width))
    if then_explain:
        explain_study(results, EXPLAIN_BUDGET, (), Limits(), engine)


@app.command("regrade")
@results_option("The results file to check (opened read-only).")
@click.option("--sample", type=click.IntRange(min=1), metavar="N",
              help="Re-run only N stored replays, drawn with a fixed seed.")
@workers_option()
@executor_option
def regrade_command(results: Path, sample: int | None, workers: int | None,
                    executor: str) -> None:
    """Re-run stored replays and compare verdict bytes. Prints each mismatch with its key and
    both verdicts; exit 0 when every byte matches, 1 on any mismatch."""
    from arrivalbench.study.regrade import regrade

    report = regrade(results, sample, workers, executor)
    for m in report.mismatches:
        task_digest, schedule, seed, artifact, engine, harness = m.key
        click.echo(f"mismatch: task {m.task} ({task_digest}) schedule {schedule} seed {seed} "
                   f"artifact {artifact} {engine_label(engine)} arrivalbench {harness}")
        click.echo(f"  stored:  {m.stored}")
        click.echo(f"  regrade: {m.now}")
    click.echo(f"regraded {report.checked} of {count(report.stored, 'stored replay')} in "
               f"{report.seconds:.1f} s: {count(len(report.mismatches), 'mismatch', 'mismatches')}"
               + (f", {report.skipped} not reproducible here (see warnings)"
                  if report.skipped else "")
               + (f", {len(report.nondeterministic)} differences in artifacts marked "
                  "nondeterministic (not counted)" if report.nondeterministic else ""))
    sys.exit(1 if report.mismatches else 0)


# -- generate, idioms (model arms) ---------------------------------------------------------------


@app.command()
@click.option("--model", required=True,
              help="PROVIDER/MODEL as Inspect AI names it: openai/gpt-4o, "
                   "anthropic/claude-sonnet-4-0, openrouter/..., mockllm/model (offline).")
@click.option("--prompt", "variant", type=click.Choice(VARIANTS), default=DEFAULT_VARIANT,
              show_default=True, help="The prompt variant.")
@click.option("--replicates", type=click.IntRange(min=1), default=1, show_default=True,
              help="Conversations per task (replicates 0..N-1).")
@tasks_option
@results_option("The DuckDB results file; Inspect's logs go to <stem>.inspect-logs/ beside "
                "it. Give a trial (mockllm/model, a test model) a file of its own.")
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
@seeds_option("Seeds 0..N-1 for each schedule but snapshot, when grading.")
@workers_option("Worker processes for grading. Default: the number of cores.")
@click.option("--dry-run", is_flag=True,
              help="Print the samples, the most model calls and a token estimate; call nothing.")
@engine_option("The engine the model writes for: the prompt names it, the snapshot test and "
               "the grading run there. Off DuckDB the arm is <model>:<variant>@<engine>.")
def generate(model: str, variant: str, replicates: int, task_refs: Sequence[str],
             results: Path, max_tokens: int, base_url: str | None, model_args: Sequence[str],
             max_connections: int | None, max_retries: int | None, seeds: int,
             workers: int | None, dry_run: bool, engine: EngineName) -> None:
    """Generate a model arm (<model>:<variant>) through Inspect AI, store it and grade it.

    Each task gets a conversation: the prompt, then up to 3 replies, each script run on the
    snapshot test with the error or the differing rows fed back; the last script is graded on
    every schedule. Samples already in the results file are not generated again."""
    from arrivalbench.agent import generate as generation

    request = generation.Request(
        model=model, variant=variant, replicates=replicates, tasks=tuple(task_refs),
        results=results, max_tokens=max_tokens, base_url=base_url, seeds=seeds,
        workers=workers, max_connections=max_connections, max_retries=max_retries,
        model_args=generation.parse_model_args(model_args), engine=engine)
    if dry_run:
        click.echo(generation.make_plan(request).describe())
        return
    outcome = generation.run(request)
    click.echo(outcome.describe())
    if outcome.grading is not None:
        from arrivalbench.cli.summary import summary_table

        out.print(summary_table(outcome.grading, out.width))


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
    from arrivalbench.sql.idioms import signature

    spec = load_spec(task) if task is not None else None
    tags = signature(read_script(script), spec)
    if as_json:
        click.echo(canonical_json(tags))
    else:
        click.echo("\n".join(tags) if tags else "(no idiom found)")


# -- report --------------------------------------------------------------------------------------


@app.command()
@results_option("The results file to read (never written).", dir_okay=True)
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
            engine_table,
            notes,
            split_lines,
            summary_table,
        )
    except ImportError as exc:
        raise missing_extra("report", "report", exc.name) from None
    written = reporting.write(results, out_dir, arms, seed, compare or ())
    out.print(summary_table(written.doc))
    if compare:
        out.print(comparison_table(written.doc))
        for line in changed_lines(written.doc):
            click.echo(line)
    if "engine_comparison" in written.doc:
        out.print(engine_table(written.doc))
        for line in split_lines(written.doc):
            out.print(line, soft_wrap=False, markup=False, highlight=False)
    for line in notes(written.doc):  # wrapped at word boundaries, not cut by the terminal
        out.print(f"[yellow]note:[/yellow] {line}", soft_wrap=False)
    out.print(f"wrote {len(written.files)} files to {written.out}: metrics.json, report.md, "
              f"report.html, CSVs, figures/", soft_wrap=False)


def engine_label(tag: str) -> str:
    """A key's engine version as words: `duckdb 2.0.1`, `postgres 18.1`."""
    from arrivalbench.study.store import engine_of

    return f"{DEFAULT_ENGINE} {tag}" if engine_of(tag) == DEFAULT_ENGINE else tag


def read_script(path: Path) -> str:
    from arrivalbench.core.artifacts.script import read_script as read

    return read(path, what="a .sql script")


def fail(message: str) -> NoReturn:
    click.echo(f"arrivalbench: error: {message}", err=True)
    sys.exit(2)


INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def _interrupted(owns_process: bool) -> NoReturn:
    if owns_process:
        # A second Ctrl-C while the interpreter shuts down would turn exit 130 into 1. Only
        # when this process is the command: an ignored SIGINT outlives `main` in a caller and
        # is inherited by every program it starts.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("arrivalbench: interrupted", err=True)
    sys.exit(INTERRUPTED)


def main(argv: Sequence[str] | None = None) -> None:
    """Exit status 2 with one line on standard error for bad input; 130 on Ctrl-C; for
    anything else (a bug) the traceback, a line saying it is a bug and where to report it, and
    exit status 1."""
    try:
        app.main(args=argv, prog_name="arrivalbench", standalone_mode=False,
                 obj={"argv": None if argv is None else ["arrivalbench", *argv]})
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(2)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "arrivalbench"
        fail(f"{exc.format_message()} (see '{command} --help')")
    except (click.Abort, KeyboardInterrupt):
        _interrupted(argv is None)
    except click.ClickException as exc:
        fail(exc.format_message())
    except ArrivalBenchError as exc:
        fail(str(exc))
    except BrokenPipeError:
        sys.exit(1)
    except Exception:
        if interrupts.pressed():  # an engine error that Ctrl-C caused is not a bug
            _interrupted(argv is None)
        traceback.print_exc()
        click.echo("arrivalbench: internal error: this is a bug in arrivalbench, not a problem "
                   f"with your input; please report it to {REPORT_BUGS}", err=True)
        sys.exit(1)
